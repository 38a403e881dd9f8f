//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wrapperConfig lets echo, pwd, cd and cat run and asks for everything
// else (touch): under --strict every ask is refused.
var wrapperConfig = configWithRules(`    - pattern: pwd
      approval: false
    - pattern: cd
      approval: false
`)

// TestShOptionsBeforeScript: options after -c are options, as bash
// reads them, and the script judged is the one bash runs: Claude Code's
// -c -l 'SCRIPT' ran SCRIPT unjudged.
func TestShOptionsBeforeScript(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, strings.Replace(superviseConfig, "    - pattern: touch\n      approval: true\n", "    - pattern: touch\n      allowed: false\n", 1))
	for _, args := range [][]string{
		{"--approve-all", "-c", "-l", "touch made"},
		{"--approve-all", "-c", "-i", "touch made"},
		{"--approve-all", "-c", "-e", "-l", "touch made", "zero"},
		{"--approve-all", "-co", "errexit", "touch made"},
	} {
		_, stderr, code := runPlain(t, w, "", nil, args...)
		if code != 77 || !strings.Contains(stderr, "guardrun: blocked: touch made") || exists(filepath.Join(w.work, "made")) {
			t.Errorf("%q: exit %d (want 77, blocked), made %v; stderr:\n%s", args, code, exists(filepath.Join(w.work, "made")), stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "-l", `echo "[$0] [$1] [$-]"`, "zero", "one"}, "[zero] [one] [hBc]\n"},
		{[]string{"-c", "-e", `echo "[$-]"`}, "[ehBc]\n"},
		{[]string{"-O", "extglob", "-c", `shopt extglob`}, ""},
	} {
		stdout, stderr, code := runPlain(t, w, "", nil, append([]string{"--approve-all"}, tc.args...)...)
		if code != 0 || tc.want != "" && stdout != tc.want {
			t.Errorf("%q: exit %d, stdout %q (want %q); stderr:\n%s", tc.args, code, stdout, tc.want, stderr)
		}
	}
	if out, stderr, code := runPlain(t, w, "", nil, "explain", "-c", "-l", "echo x"); code != 0 || !strings.Contains(out, "decision: allow") {
		t.Errorf("explain -c -l: exit %d\n%s%s", code, out, stderr)
	}
	if _, stderr, code := runPlain(t, w, "", nil, "--approve-all", "-kc", "echo x"); code != 2 || !strings.Contains(stderr, "-k (keyword) is not supported") {
		t.Errorf("-kc: exit %d (want 2); stderr:\n%s", code, stderr)
	}
}

// claudeWrapper is Claude Code's line around cmd (as it sent it, with
// its snapshot), for the world: the snapshot in its home, the cwd file
// in its temporary directory.
func claudeWrapper(w *world, cmd, cwdFile string) string {
	q := "'" + strings.ReplaceAll(cmd, "'", `'"'"'`) + "'"
	return "source " + filepath.Join(w.getenv("HOME"), ".claude", "shell-snapshots", "snapshot-bash-1796156866945-5u3s8h.sh") +
		` 2>/dev/null || true && \builtin shopt -u extglob 2>/dev/null || true && { \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && { \builtin unalias -- 'unsetenv'; \builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true && eval ` +
		q + " < /dev/null && pwd -P >| " + cwdFile
}

func geminiWrapper(w *world, cmd string) string {
	return "shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=" + w.tmp + "/gemini-shell-3ZjGw8/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n" +
		cmd + "\n)\n__code=$?\nexit $__code"
}

func codexWrapper(t *testing.T, w *world, cmd string) string {
	t.Helper()
	b, err := os.ReadFile("../internal/request/testdata/agents/codex-wrapper-1.txt")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(b), "-c 'ls'", "-c '"+strings.ReplaceAll(cmd, "'", `'"'"'`)+"'", 1)
}

// TestWrapperCommandIsTheRequest: an agent's line around a command is
// not asked about (under --strict it would be refused): the command
// inside is judged, audited and run; Claude Code's working directory
// moves with a cd, through its cwd file, which guardrun writes.
func TestWrapperCommandIsTheRequest(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, wrapperConfig)
	if err := os.Mkdir(filepath.Join(w.work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"CLAUDE_CODE_TMPDIR=" + w.tmp}
	cwdFile := filepath.Join(w.tmp, "claude-8747-cwd")

	// cd sub, then pwd where Claude Code starts its next command: the
	// directory its wrapper's pwd -P >| would have left in the file.
	stdout, stderr, code := runPlain(t, w, "", env, "--strict", "-c", claudeWrapper(w, "cd sub", cwdFile))
	got, _ := os.ReadFile(cwdFile)
	if code != 0 || string(got) != filepath.Join(w.work, "sub")+"\n" {
		t.Fatalf("cd sub: exit %d, cwd file %q (want %q)\nstdout %s\nstderr %s", code, got, filepath.Join(w.work, "sub")+"\n", stdout, stderr)
	}
	next := strings.TrimSuffix(string(got), "\n")
	cwdFile2 := filepath.Join(w.tmp, "claude-a2bd-cwd")
	stdout, stderr, code = runPlain(t, w, next, env, "--strict", "-c", "-l", claudeWrapper(w, "pwd", cwdFile2))
	if got2, _ := os.ReadFile(cwdFile2); code != 0 || stdout != next+"\n" || string(got2) != next+"\n" {
		t.Errorf("pwd in %s: exit %d, stdout %q, cwd file %q\nstderr %s", next, code, stdout, got2, stderr)
	}
	// The directory is the one the shell ended in, however the command
	// got there; after a failure, or where the shell could not report
	// it (a trap of the command's own), the file is left alone.
	for _, tc := range []struct {
		cmd  string
		env  string
		want string
	}{
		{`cd "$D"`, "D=sub", filepath.Join(w.work, "sub") + "\n"},
		{"cd sub; false", "", ""},
		{"trap 'echo bye' EXIT; cd sub", "", ""},
	} {
		f := filepath.Join(w.tmp, "claude-c0de-cwd")
		os.Remove(f)
		e := env
		if tc.env != "" {
			e = append(e, tc.env)
		}
		_, stderr, _ := runPlain(t, w, "", e, "--approve-all", "-c", claudeWrapper(w, tc.cmd, f))
		if got, _ := os.ReadFile(f); string(got) != tc.want {
			t.Errorf("%s: cwd file %q, want %q\nstderr %s", tc.cmd, got, tc.want, stderr)
		}
	}

	for _, tc := range []struct {
		agent, script, stdout string
	}{
		{"Claude Code", claudeWrapper(w, `echo "hi from $0"`, filepath.Join(w.tmp, "claude-1-cwd")), "hi from /bin/bash\n"},
		{"Gemini CLI", geminiWrapper(w, "echo hi"), "hi\n"},
		{"Codex", codexWrapper(t, w, "echo 'hi there'"), "hi there\n"},
	} {
		stdout, stderr, code := runPlain(t, w, "", env, "--strict", "-c", tc.script)
		if code != 0 || stdout != tc.stdout {
			t.Errorf("%s: exit %d, stdout %q (want %q)\nstderr %s", tc.agent, code, stdout, tc.stdout, stderr)
		}
	}
	// The audit holds the commands, not the wrappers.
	for _, cmd := range []string{"cd sub", "pwd", `echo "hi from $0"`, "echo hi", "echo 'hi there'"} {
		if recs := recordsOf(auditRecords(t, w), cmd); len(recs) != 2 || recs[1]["outcome"] != "ran" || recs[1]["decided_by"] != "rule" {
			t.Errorf("audit records of %q: %v", cmd, recs)
		}
	}

	// What the command asks for is asked; what it is refused stays
	// refused.
	for _, tc := range []struct {
		agent, script string
	}{
		{"Claude Code", claudeWrapper(w, "touch made", filepath.Join(w.tmp, "claude-2-cwd"))},
		{"Gemini CLI", geminiWrapper(w, "touch made")},
		{"Codex", codexWrapper(t, w, "touch made")},
	} {
		_, stderr, code := runPlain(t, w, "", env, "--strict", "-c", tc.script)
		if code != 77 || !strings.Contains(stderr, "guardrun: denied (strict mode): touch made needs approval") || exists(filepath.Join(w.work, "made")) {
			t.Errorf("%s touch: exit %d (want 77), made %v\nstderr %s", tc.agent, code, exists(filepath.Join(w.work, "made")), stderr)
		}
	}
}

// TestWrapperLookalikes: a command that claims to be an agent's wrapper
// but does more is judged as the ordinary script it is: under --strict
// its extra command is refused, and nothing runs.
func TestWrapperLookalikes(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, wrapperConfig)
	env := []string{"CLAUDE_CODE_TMPDIR=" + w.tmp}
	cwd := filepath.Join(w.tmp, "claude-1-cwd")
	made := filepath.Join(w.work, "made")
	for _, tc := range []struct{ name, script string }{
		{"Claude Code's line after another command", "touch made; " + claudeWrapper(w, "echo hi", cwd)},
		{"Claude Code's line before another command", claudeWrapper(w, "echo hi", cwd) + " && touch made"},
		{"a command breaking out of Claude Code's quotes", strings.Replace(claudeWrapper(w, "echo hi", cwd), "eval 'echo hi'", "eval 'echo hi'; touch made; eval ''", 1)},
		{"Claude Code's eval of a variable", strings.Replace(claudeWrapper(w, "echo hi", cwd), "eval 'echo hi'", `C="touch made"; eval "$C"`, 1)},
		{"a command leaving Gemini CLI's subshell", geminiWrapper(w, "echo hi\n)\ntouch made\n(\necho")},
		{"Gemini CLI's wrapper with a command after", geminiWrapper(w, "echo hi") + "\ntouch made"},
		{"a command after Codex's exec", codexWrapper(t, w, "echo hi") + "; touch made"},
	} {
		_, stderr, code := runPlain(t, w, "", env, "--strict", "-c", tc.script)
		if code != 77 || exists(made) || !strings.Contains(stderr, "guardrun: denied (strict mode)") {
			t.Errorf("%s: exit %d (want 77), made %v\nstderr %s", tc.name, code, exists(made), stderr)
		}
	}
	if exists(cwd) {
		t.Error("a lookalike wrote Claude Code's cwd file")
	}
}

// TestWrapperSnapshotNotMade: the scripts that make an agent's shell
// snapshot are refused without asking (guardrun runs commands without
// one); the agent goes on without it.
func TestWrapperSnapshotNotMade(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, wrapperConfig)
	snap := filepath.Join(w.getenv("HOME"), ".claude", "shell-snapshots", "snapshot-bash-1796156866945-5u3s8h.sh")
	script := "SNAPSHOT_FILE=" + snap + "\n      echo '# Snapshot file' >| \"$SNAPSHOT_FILE\"\n"
	_, stderr, code := runPlain(t, w, "", nil, "--approve-all", "-c", "-l", script)
	if code != 77 || exists(snap) || !strings.Contains(stderr, "guardrun does not make Claude Code's shell snapshot") {
		t.Errorf("exit %d (want 77), snapshot made %v\nstderr %s", code, exists(snap), stderr)
	}
}
