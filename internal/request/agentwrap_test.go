package request

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/agents"
	"github.com/guardrun/guardrun/internal/config"
)

// agentEnv is the environment the captured scripts came with (see
// testdata/agents/README): /TEST/ is the run's directory.
func agentEnv(k string) string {
	switch k {
	case "HOME":
		return "/TEST/home"
	case "TMPDIR", "CLAUDE_CODE_TMPDIR":
		return "/TEST/tmp"
	}
	return ""
}

func agentScript(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "agents", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const (
	claudeSource = "source /TEST/home/.claude/shell-snapshots/snapshot-bash-1796156866945-5u3s8h.sh 2>/dev/null || true && "
	claudeRest   = `{ \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && { \builtin unalias -- 'unsetenv'; \builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true && `
	claudeBash   = claudeSource + `\builtin shopt -u extglob 2>/dev/null || true && ` + claudeRest
	claudeZsh    = claudeSource + `\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_EQUALS 2>/dev/null || true && ` + claudeRest
	claudeBoth   = claudeSource + `{ \builtin shopt -u extglob || \builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_EQUALS; } >/dev/null 2>&1 || true && ` + claudeRest
	claudePwd    = " && pwd -P >| /TEST/tmp/claude-1f5e-cwd"
)

// TestRecognizeWrapperWrappers: the scripts the agents send are their
// wrappers, and the command inside is the one the model asked for.
func TestRecognizeWrapperWrappers(t *testing.T) {
	claude := func(cmd string, null bool) *Wrapper {
		return &Wrapper{Agent: agents.Claude, Command: cmd, NullStdin: null}
	}
	for _, tc := range []struct {
		name   string
		script string
		want   *Wrapper
	}{
		{"Claude Code: ls", agentScript(t, "claude-wrapper-0.txt"), claude("ls", true)},
		{"Claude Code: cd sub", agentScript(t, "claude-wrapper-1.txt"), claude("cd sub", true)},
		{"Claude Code: pwd", agentScript(t, "claude-wrapper-2.txt"), claude("pwd", true)},
		{"Claude Code: a here-document keeps its input", agentScript(t, "claude-wrapper-3.txt"), claude("cat <<EOF\nx'y\nEOF", false)},
		{"Claude Code: quotes in the command", agentScript(t, "claude-wrapper-4.txt"), claude(`echo 'a'"b" $HOME`, true)},
		{"Claude Code without a snapshot (-c -l)", strings.TrimPrefix(claudeBash, claudeSource) + "eval 'make test' < /dev/null" + claudePwd, claude("make test", true)},
		{"Claude Code for zsh", claudeZsh + "eval ls < /dev/null" + claudePwd, claude("ls", true)},
		{"Claude Code for a shell named bash and zsh", claudeBoth + "eval ls < /dev/null" + claudePwd, claude("ls", true)},
		{"Claude Code without the which line", strings.Replace(claudeBash, `{ \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && `, "", 1) + "eval ls < /dev/null" + claudePwd, claude("ls", true)},
		{"Gemini CLI: ls", agentScript(t, "gemini-wrapper-0.txt"), &Wrapper{Agent: agents.Gemini, Command: "ls"}},
		{"Gemini CLI: a here-document", agentScript(t, "gemini-wrapper-1.txt"), &Wrapper{Agent: agents.Gemini, Command: "cat <<EOF\nx'y\nEOF"}},
		{"Gemini CLI: a final backslash", agentScript(t, "gemini-wrapper-2.txt"), &Wrapper{Agent: agents.Gemini, Command: `echo a \ `}},
		{"Codex: sleep 4", agentScript(t, "codex-wrapper-0.txt"), &Wrapper{Agent: agents.Codex, Command: "sleep 4"}},
		{"Codex: ls", agentScript(t, "codex-wrapper-1.txt"), &Wrapper{Agent: agents.Codex, Command: "ls"}},
		{"Codex: a here-document", agentScript(t, "codex-wrapper-2.txt"), &Wrapper{Agent: agents.Codex, Command: "cat <<EOF\nx'y\nEOF"}},
		{"Claude Code making its snapshot", agentScript(t, "claude-snapshot-script.txt"), &Wrapper{Agent: agents.Claude, Decline: "guardrun does not make Claude Code's shell snapshot"}},
		{"Codex making its snapshot", agentScript(t, "codex-snapshot-script.txt"), &Wrapper{Agent: agents.Codex, Decline: "guardrun does not make Codex's shell snapshot"}},
		{"Codex checking its snapshot", agentScript(t, "codex-snapshot-check.txt"), &Wrapper{Agent: agents.Codex, Decline: "guardrun does not make Codex's shell snapshot"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RecognizeWrapper(tc.script, agentEnv)
			if got != nil {
				got.CwdFile = ""
				if tc.want.Decline != "" && strings.HasPrefix(got.Decline, tc.want.Decline) {
					got.Decline = tc.want.Decline
				}
			}
			if d := cmp.Diff(got, tc.want); d != "" {
				t.Errorf("(-got +want):\n%s", d)
			}
		})
	}
}

func TestRecognizeWrapperCwdFile(t *testing.T) {
	a := RecognizeWrapper(agentScript(t, "claude-wrapper-1.txt"), agentEnv)
	if a == nil || a.CwdFile != "/TEST/tmp/claude-8747-cwd" {
		t.Fatalf("got %+v, want the cwd file /TEST/tmp/claude-8747-cwd", a)
	}
}

// TestRecognizeWrapperLookalikes: a command that claims to be an agent's
// wrapper but is not exactly one is no wrapper, and is judged as the
// ordinary script it is.
func TestRecognizeWrapperLookalikes(t *testing.T) {
	claudeLs := agentScript(t, "claude-wrapper-0.txt")
	gemini := agentScript(t, "gemini-wrapper-0.txt")
	codex := agentScript(t, "codex-wrapper-1.txt")
	geminiWith := func(cmd string) string { return strings.Replace(gemini, "\nls\n", "\n"+cmd+"\n", 1) }
	for _, tc := range []struct{ name, script string }{
		{"Claude Code: a command before", "touch x; " + claudeLs},
		{"Claude Code: a command before, on its own line", "touch x\n" + claudeLs},
		{"Claude Code: a command after with &&", claudeLs + " && touch x"},
		{"Claude Code: a command after with ;", claudeLs + "; touch x"},
		{"Claude Code: a command after on a new line", claudeLs + "\ntouch x"},
		{"Claude Code: a comment after", claudeLs + " # x"},
		{"Claude Code: run in the background", claudeLs + " &"},
		{"Claude Code: the eval target is a variable", claudeBash + `eval "$CMD" < /dev/null` + claudePwd},
		{"Claude Code: eval of two words", claudeBash + "eval ls touch < /dev/null" + claudePwd},
		{"Claude Code: eval of two quoted words", claudeBash + "eval 'ls' 'x' < /dev/null" + claudePwd},
		{"Claude Code: eval of $'...'", claudeBash + "eval $'ls' < /dev/null" + claudePwd},
		{"Claude Code: eval of a glob", claudeBash + "eval l* < /dev/null" + claudePwd},
		{"Claude Code: eval of a brace expansion", claudeBash + "eval {ls,x} < /dev/null" + claudePwd},
		{"Claude Code: eval of a backslash", claudeBash + `eval l\s < /dev/null` + claudePwd},
		{"Claude Code: eval of a substitution in double quotes", claudeBash + `eval "ls $(touch x)" < /dev/null` + claudePwd},
		{"Claude Code: the command breaks out of its quotes", claudeBash + "eval 'ls' ; touch x ; 'y' < /dev/null" + claudePwd},
		{"Claude Code: the command breaks out with &&", claudeBash + "eval 'ls' && touch x && eval 'y' < /dev/null" + claudePwd},
		{"Claude Code: eval's input from another file", claudeBash + "eval ls < /etc/passwd" + claudePwd},
		{"Claude Code: eval's output redirected", claudeBash + "eval ls > /tmp/x" + claudePwd},
		{"Claude Code: not another command than eval", claudeBash + "command ls < /dev/null" + claudePwd},
		{"Claude Code: pwd written with > (not >|)", claudeBash + "eval ls < /dev/null && pwd -P > /TEST/tmp/claude-1f5e-cwd"},
		{"Claude Code: the cwd file outside the temporary directory", claudeBash + "eval ls < /dev/null && pwd -P >| /TEST/home/claude-1f5e-cwd"},
		{"Claude Code: a cwd file of another name", claudeBash + "eval ls < /dev/null && pwd -P >| /TEST/tmp/notes"},
		{"Claude Code: the cwd file from a variable", claudeBash + `eval ls < /dev/null && pwd -P >| "$F"`},
		{"Claude Code: the cwd file with ..", claudeBash + "eval ls < /dev/null && pwd -P >| /TEST/tmp/../home/claude-1f5e-cwd"},
		{"Claude Code: another file sourced", strings.Replace(claudeBash, "/TEST/home/.claude/shell-snapshots/snapshot-bash-1796156866945-5u3s8h.sh", "/TEST/work/setup.sh", 1) + "eval ls < /dev/null" + claudePwd},
		{"Claude Code: extglob turned on", strings.Replace(claudeBash, "shopt -u extglob", "shopt -s extglob", 1) + "eval ls < /dev/null" + claudePwd},
		{"Claude Code: a piece left out", strings.Replace(claudeBash, `{ \builtin unalias -- 'unsetenv'; \builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true && `, "", 1) + "eval ls < /dev/null" + claudePwd},
		{"Claude Code: another name forgotten", strings.Replace(claudeBash, "'unsetenv'", "'ls'", 2) + "eval ls < /dev/null" + claudePwd},
		{"Claude Code: || for &&", strings.Replace(claudeLs, " && pwd", " || pwd", 1)},
		{"Claude Code: an empty command", claudeBash + "eval '' < /dev/null" + claudePwd},

		{"Gemini CLI: a command after", gemini + "\ntouch x"},
		{"Gemini CLI: a command before", "touch x; " + gemini},
		{"Gemini CLI: the command leaves the subshell", geminiWith("ls\n)\ntouch x\n(\necho")},
		{"Gemini CLI: the command joins another subshell", geminiWith("ls\n) && (\necho")},
		{"Gemini CLI: the command pipes into another subshell", geminiWith("ls\n) | (\necho")},
		{"Gemini CLI: an unfinished here-document", geminiWith("cat <<EOF")},
		{"Gemini CLI: the trap changed", strings.Replace(gemini, `jobs -p > "$_bgpids_file"`, "touch x", 1)},
		{"Gemini CLI: the file from a substitution", strings.Replace(gemini, "_bgpids_file=/TEST/tmp/gemini-shell-3ZjGw8/bgpids.tmp", "_bgpids_file=$(touch x)", 1)},
		{"Gemini CLI: another file", strings.Replace(gemini, "/TEST/tmp/gemini-shell-3ZjGw8/bgpids.tmp", "/TEST/home/.bashrc", 1)},
		{"Gemini CLI: an empty command", geminiWith("")},

		{"Codex: a command after", codex + "; touch x"},
		{"Codex: a command after on a new line", codex + "\ntouch x"},
		{"Codex: the command breaks out of its quotes", strings.Replace(codex, "-c 'ls'", "-c 'ls'; touch x; 'y'", 1)},
		{"Codex: the command from a variable", strings.Replace(codex, "-c 'ls'", `-c "$CMD"`, 1)},
		{"Codex: another command than exec", strings.Replace(codex, "exec '/bin/bash' -c", "command '/bin/bash' -c", 1)},
		{"Codex: a line changed", strings.Replace(codex, "else export CODEX_SESSION_ID; fi", "else touch x; fi", 1)},
		{"Codex: the snapshot line changed", strings.Replace(codex, ">/dev/null 2>&1; then :; fi", ">/dev/null 2>&1; then touch x; fi", 1)},
		{"Codex: a command before", "touch x\n" + codex},

		{"a snapshot script naming another file", "SNAPSHOT_FILE=/TEST/work/x.sh\necho hi"},
		{"a snapshot check of another file", `set -e; . "/TEST/work/x.sh"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.script == claudeLs || tc.script == gemini || tc.script == codex {
				t.Fatal("the row changes nothing")
			}
			if a := RecognizeWrapper(tc.script, agentEnv); a != nil {
				t.Errorf("recognised as %+v; want an ordinary script", a)
			}
		})
	}
}

// TestAgentCommandIsJudged: a wrapped command gets the decision the
// command alone gets, not the wrapper's.
func TestAgentCommandIsJudged(t *testing.T) {
	gemini, codex, codexSnapshot := agentScript(t, "gemini-wrapper-0.txt"), agentScript(t, "codex-wrapper-1.txt"), agentScript(t, "codex-snapshot-script.txt")
	w := newWorld(t, testConfig)
	_, l, err := config.LoadProcess(config.Flags{Config: w.config})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, script string
		want         string
	}{
		{"Claude Code: echo", claudeBash + "eval 'echo hi' < /dev/null" + claudePwd, "allow"},
		{"Claude Code: rm", claudeBash + "eval 'rm -rf x' < /dev/null" + claudePwd, "block"},
		{"Gemini CLI: echo", strings.Replace(gemini, "\nls\n", "\necho hi\n", 1), "allow"},
		{"Codex: echo", strings.Replace(codex, "-c 'ls'", "-c 'echo hi'", 1), "allow"},
		{"Codex making its snapshot", codexSnapshot, "block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &Job{Script: tc.script, Wrapper: RecognizeWrapper(tc.script, agentEnv)}
			if j.Wrapper == nil {
				t.Fatal("not recognised")
			}
			if j.Wrapper.Decline == "" {
				j.Script = j.Wrapper.Command
			}
			if got := DecideJob(l, j, w.work).Decision.String(); got != tc.want {
				t.Errorf("decision %s, want %s", got, tc.want)
			}
		})
	}
}

// TestWriteCwdFile: the file gets the directory and a newline; a link,
// a FIFO or a directory there is left alone.
func TestWriteCwdFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "claude-1-cwd")
	os.WriteFile(f, []byte("/old/and/longer/than/the/new/one\n"), 0o600)
	if err := writeCwdFile(f, "/new"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(f); string(b) != "/new\n" {
		t.Errorf("file holds %q, want %q", b, "/new\n")
	}
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep\n"), 0o600)
	link := filepath.Join(dir, "claude-2-cwd")
	os.Symlink(target, link)
	fifo := filepath.Join(dir, "claude-3-cwd")
	if err := syscallMkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "claude-4-cwd")
	os.Mkdir(sub, 0o700)
	for _, p := range []string{link, fifo, sub} {
		if err := writeCwdFile(p, "/new"); err == nil {
			t.Errorf("%s: written", p)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep\n" {
		t.Errorf("the link's target holds %q", b)
	}
}

func syscallMkfifo(p string) error { return syscall.Mkfifo(p, 0o600) }
