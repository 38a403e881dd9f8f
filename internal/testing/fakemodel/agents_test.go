//go:build unix

package fakemodel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

// These tests drive the real agent CLIs, installed by
// scripts/agents-install.sh at the versions it pins, against the fake
// model, in a throwaway HOME and project. They skip when the npm registry
// cannot be reached, except under GUARDRUN_REQUIRE_AGENTS=1.

// requireAgents reports whether GUARDRUN_REQUIRE_AGENTS=1 is set: an agent
// that cannot be installed is a failure, not a skip.
func requireAgents() bool { return os.Getenv("GUARDRUN_REQUIRE_AGENTS") == "1" }

func missingAgent(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if requireAgents() {
		t.Fatalf("%s (GUARDRUN_REQUIRE_AGENTS=1: the test cannot be skipped)", msg)
	}
	t.Skipf("%s (skipped; GUARDRUN_REQUIRE_AGENTS=1 makes this a failure)", msg)
}

// The agents the tests drive; keep in sync with the pins in
// scripts/agents-install.sh.
var agentNames = []string{"claude", "codex", "gemini"}

// install is one run of scripts/agents-install.sh for every agent in
// agentNames, shared by the tests of this binary.
var install struct {
	once   sync.Once
	paths  map[string]string
	status int // the script's exit status, -1 when it did not run
	out    string
}

// agentBinary installs the agents with scripts/agents-install.sh (a
// no-op when the cache holds them) and returns the path of agent's binary.
func agentBinary(t *testing.T, agent string) string {
	t.Helper()
	if testing.Short() && !requireAgents() {
		t.Skip("drives real agent CLIs; skipped in -short mode")
	}
	install.once.Do(func() {
		script, err := filepath.Abs("../../../scripts/agents-install.sh")
		if err != nil {
			install.status, install.out = -1, err.Error()
			return
		}
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", append([]string{script}, agentNames...)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		install.out = strings.TrimSpace(stderr.String())
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			install.status = exit.ExitCode()
		case err != nil:
			install.status, install.out = -1, err.Error()
		}
		install.paths = map[string]string{}
		for _, line := range strings.Split(stdout.String(), "\n") {
			if name, path, ok := strings.Cut(line, "\t"); ok {
				install.paths[name] = path
			}
		}
	})
	switch {
	case install.status == 3:
		missingAgent(t, "cannot install %s: %s", agent, install.out)
	case install.status != 0:
		t.Fatalf("agents-install.sh: exit %d: %s", install.status, install.out)
	case install.paths[agent] == "":
		t.Fatalf("agents-install.sh printed no path for %s: %s", agent, install.out)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missingAgent(t, "no node to run %s: %v", agent, err)
	}
	return install.paths[agent]
}

// world is one throwaway home and project.
type world struct {
	home, project string
	// tmp is the agents' TMPDIR, so that what they leave in temporary
	// directories goes when the test ends.
	tmp string
}

func newWorld(t *testing.T) world {
	t.Helper()
	dir := t.TempDir()
	w := world{home: filepath.Join(dir, "home"), project: filepath.Join(dir, "project"), tmp: filepath.Join(dir, "tmp")}
	for _, d := range []string{w.home, w.project, w.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(w.project, "README.md"), readme)
	return w
}

const readme = "# a project for the fake model\n"

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// baseEnv is the whole environment an agent gets: nothing of the
// person's, every update check, telemetry and error report off.
func (w world) baseEnv(t *testing.T) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Dir(node) + ":/usr/local/bin:/usr/bin:/bin"
	return []string{
		"HOME=" + w.home, "PATH=" + path, "TERM=dumb", "LANG=C.UTF-8", "SHELL=/bin/bash",
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(w.home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(w.home, ".local/share"),
		"XDG_STATE_HOME=" + filepath.Join(w.home, ".local/state"),
		"TMPDIR=" + w.tmp, "CLAUDE_CODE_TMPDIR=" + w.tmp,
		"NO_COLOR=1", "DO_NOT_TRACK=1", "NO_UPDATE_NOTIFIER=1",
	}
}

// agent is how one CLI is driven offline.
type agent struct {
	name string
	// shell is a step that runs command with the agent's shell tool.
	shell func(command string) fakemodel.Step
	// write is a step that writes text to name in the project with the
	// agent's file tool.
	write func(w world, name, text string) fakemodel.Step
	// command returns the argv and extra environment that run the agent
	// non-interactively on prompt against the server at url; hook, when
	// set, is a PreToolUse/BeforeTool hook command for its shell tool.
	command func(t *testing.T, bin string, w world, url, hook string) (argv, env []string)
	// hookAnswers are the agent's hook replies: allow with the command
	// rewritten, and deny with a reason (each a JSON line).
	hookAllow, hookDeny func(command, reason string) string
	// shellToolName is tool_name in the hook's input for the shell tool.
	shellToolName string
}

var claude = agent{
	name: "claude",
	shell: func(c string) fakemodel.Step {
		return fakemodel.Call("Bash", map[string]any{"command": c, "description": "run " + c})
	},
	write: func(w world, name, text string) fakemodel.Step {
		return fakemodel.Call("Write", map[string]any{"file_path": filepath.Join(w.project, name), "content": text})
	},
	command: func(t *testing.T, bin string, w world, url, hook string) ([]string, []string) {
		argv := []string{bin, "-p", "run the scripted steps", "--allowedTools", "Bash", "Write"}
		if hook != "" {
			settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": []any{
				map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": hook, "timeout": 30}}},
			}}})
			argv = append(argv, "--settings", string(settings))
		}
		return argv, []string{
			"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=fakemodel",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
			"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		}
	},
	hookAllow: func(command, reason string) string {
		return mustJSON(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PreToolUse", "permissionDecision": "allow",
			"permissionDecisionReason": reason, "updatedInput": map[string]any{"command": command},
		}})
	},
	hookDeny: func(_, reason string) string {
		return mustJSON(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason,
		}})
	},
	shellToolName: "Bash",
}

var codex = agent{
	name:  "codex",
	shell: func(c string) fakemodel.Step { return fakemodel.Call("exec_command", map[string]any{"cmd": c}) },
	write: func(_ world, name, text string) fakemodel.Step {
		var b strings.Builder
		fmt.Fprintf(&b, "*** Begin Patch\n*** Add File: %s\n", name)
		for _, line := range strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n") {
			fmt.Fprintf(&b, "+%s\n", strings.TrimSuffix(line, "\n"))
		}
		b.WriteString("*** End Patch\n")
		return fakemodel.Call("apply_patch", map[string]any{"input": b.String()})
	},
	command: func(t *testing.T, bin string, w world, url, hook string) ([]string, []string) {
		codexHome := filepath.Join(w.home, ".codex")
		// A model the CLI knows (gpt-5.5) gets the freeform apply_patch
		// tool; for an unknown one it declares no apply_patch at all.
		writeFile(t, filepath.Join(codexHome, "config.toml"), `model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = "`+url+`/v1"
wire_api = "responses"
env_key = "FAKEMODEL_API_KEY"

[features]
plugins = false
remote_plugin = false

[analytics]
enabled = false

[otel]
exporter = "none"
`)
		argv := []string{bin, "exec", "--skip-git-repo-check", "-C", w.project}
		if hook != "" {
			// Hooks given with -c are skipped as untrusted unless the
			// run bypasses hook trust.
			argv = append(argv, "--dangerously-bypass-hook-trust", "-c",
				`hooks.PreToolUse=[{matcher="^Bash$",hooks=[{type="command",command=`+strconv.Quote(hook)+`,timeout=30}]}]`)
		}
		argv = append(argv, "run the scripted steps")
		return argv, []string{"CODEX_HOME=" + codexHome, "FAKEMODEL_API_KEY=fakemodel"}
	},
	hookAllow:     claude.hookAllow,
	hookDeny:      claude.hookDeny,
	shellToolName: "Bash",
}

var gemini = agent{
	name: "gemini",
	shell: func(c string) fakemodel.Step {
		return fakemodel.Call("run_shell_command", map[string]any{"command": c})
	},
	write: func(_ world, name, text string) fakemodel.Step {
		return fakemodel.Call("write_file", map[string]any{"file_path": name, "content": text})
	},
	command: func(t *testing.T, bin string, w world, url, hook string) ([]string, []string) {
		settings := map[string]any{
			"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
			"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
			"privacy":   map[string]any{"usageStatisticsEnabled": false},
			"telemetry": map[string]any{"enabled": false},
		}
		if hook != "" {
			// In the user settings of the throwaway home: a file named by
			// GEMINI_CLI_SYSTEM_SETTINGS_PATH is read only when it and
			// every directory above it belong to root and are writable by
			// no one else, which no temporary directory is.
			settings["hooks"] = map[string]any{"BeforeTool": []any{map[string]any{
				"matcher": "run_shell_command",
				"hooks":   []any{map[string]any{"name": "fakemodel-test", "type": "command", "command": hook, "timeout": 30000}},
			}}}
		}
		writeFile(t, filepath.Join(w.home, ".gemini", "settings.json"), mustJSON(settings))
		return []string{bin, "-p", "run the scripted steps", "--yolo"}, []string{
			"GEMINI_API_KEY=fakemodel", "GOOGLE_GEMINI_BASE_URL=" + url,
			"GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_CLI_NO_RELAUNCH=true",
		}
	},
	hookAllow: func(command, reason string) string {
		return mustJSON(map[string]any{"decision": "allow", "reason": reason, "hookSpecificOutput": map[string]any{
			"hookEventName": "BeforeTool", "tool_input": map[string]any{"command": command},
		}})
	},
	hookDeny: func(_, reason string) string {
		return mustJSON(map[string]any{"decision": "deny", "reason": reason})
	},
	shellToolName: "run_shell_command",
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// agentTimeout bounds one agent run.
const agentTimeout = 90 * time.Second

// run runs the agent to its end in w.project and returns what it printed.
func run(t *testing.T, a agent, w world, srv *fakemodel.Server, hook string) string {
	t.Helper()
	bin := agentBinary(t, a.name)
	argv, env := a.command(t, bin, w, srv.URL, hook)
	ctx, cancel := context.WithTimeout(context.Background(), agentTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = w.project
	cmd.Env = append(w.baseEnv(t), env...)
	cmd.Stdin = nil // /dev/null: none of them may wait for input
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The agent and everything it starts form one process group, killed
	// together when the run overstays.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within %v\noutput:\n%s\nrequests:\n%s", a.name, agentTimeout, out.String(), srv.Summary())
	}
	if err != nil {
		t.Fatalf("%s: %v\noutput:\n%s\nrequests:\n%s", a.name, err, out.String(), srv.Summary())
	}
	return out.String()
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestAgentsRunScriptedTools(t *testing.T) {
	for _, a := range []agent{claude, codex, gemini} {
		t.Run(a.name, func(t *testing.T) {
			w := newWorld(t)
			const written = "written by the agent's file tool\n"
			srv := fakemodel.Start(t,
				a.shell("ls"),
				a.shell("cat README.md"),
				a.shell("touch made-by-agent.txt"),
				a.write(w, "written.txt", written),
				fakemodel.Say("done"),
			)
			out := run(t, a, w, srv, "")

			type outcome struct {
				Played      int
				Exhausted   bool
				MadeByAgent bool
				Written     string
				// Results says, per step, whether its tool output reached
				// the model and held what the step should have shown.
				Results []bool
			}
			got := outcome{Played: srv.Played(), MadeByAgent: exists(filepath.Join(w.project, "made-by-agent.txt"))}
			if b, err := os.ReadFile(filepath.Join(w.project, "written.txt")); err == nil {
				got.Written = string(b)
			}
			for _, r := range srv.Requests() {
				got.Exhausted = got.Exhausted || r.Exhausted
			}
			for i, want := range []string{"README.md", strings.TrimSpace(readme), "", "written.txt"} {
				res, ok := srv.ToolResult(i)
				got.Results = append(got.Results, ok && strings.Contains(res.Output, want))
				t.Logf("step %d result: %q", i, res.Output)
			}
			want := outcome{Played: 5, MadeByAgent: true, Written: written, Results: []bool{true, true, true, true}}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("%s run (-got +want):\n%s\noutput:\n%s\nrequests:\n%s", a.name, diff, out, srv.Summary())
			}
		})
	}
}

// hookScript writes a hook that logs each input it gets on stdin into
// dir/hook-N.json and answers: the allow reply for a command that names
// hook-rewrite-me, the deny reply for one that names hook-deny-me, and
// nothing (the agent's default) otherwise.
func hookScript(t *testing.T, dir, allow, deny string) string {
	t.Helper()
	path := filepath.Join(dir, "hook.sh")
	writeFile(t, path, `#!/bin/sh
n=$(ls `+shQuote(dir)+` | grep -c '^hook-.*\.json$')
in=$(cat)
printf '%s\n' "$in" > `+shQuote(dir)+`/hook-$n.json
case $in in
*hook-rewrite-me*) printf '%s\n' `+shQuote(allow)+` ;;
*hook-deny-me*) printf '%s\n' `+shQuote(deny)+` ;;
esac
exit 0
`)
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

type hookInput struct {
	Event   string
	Tool    string
	Command string
}

func hookInputs(t *testing.T, dir string) []hookInput {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "hook-*.json"))
	n := func(f string) int {
		i, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "hook-"), ".json"))
		return i
	}
	sort.Slice(files, func(i, j int) bool { return n(files[i]) < n(files[j]) })
	var got []hookInput
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var in struct {
			Event     string `json:"hook_event_name"`
			Tool      string `json:"tool_name"`
			ToolInput struct {
				Command string `json:"command"`
			} `json:"tool_input"`
		}
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatalf("%s: %v: %s", f, err, b)
		}
		got = append(got, hookInput{in.Event, in.Tool, in.ToolInput.Command})
	}
	return got
}

// TestAgentsHookRewritesAndDenies wires a pre-tool hook for one run of
// each agent, without touching a file outside the throwaway home, and
// records what the model receives when the hook rewrites a command and
// when it refuses one.
func TestAgentsHookRewritesAndDenies(t *testing.T) {
	const reason = "refused by the test hook: hook-deny-me is not allowed"
	tests := []struct {
		agent agent
		event string
		// rewritten is the tool output the model gets for the rewritten
		// command, denied the one for the refused command.
		rewrittenSuffix string
		denied          string
	}{
		{claude, "PreToolUse", "(Bash completed with no output)",
			"PreToolUse:Bash hook error: " + reason},
		{codex, "PreToolUse", "Process exited with code 0\nOriginal token count: 0\nOutput:\n",
			"Command blocked by PreToolUse hook: " + reason + ". Command: touch hook-deny-me.txt"},
		{gemini, "BeforeTool", "</untrusted_context>\n\n[System] Tool input parameters were modified by a hook before execution.",
			"Tool execution blocked: " + reason},
	}
	for _, tt := range tests {
		a := tt.agent
		t.Run(a.name, func(t *testing.T) {
			w := newWorld(t)
			hookDir := filepath.Join(filepath.Dir(w.home), "hook")
			if err := os.Mkdir(hookDir, 0o755); err != nil {
				t.Fatal(err)
			}
			hook := hookScript(t, hookDir,
				a.hookAllow("touch hook-rewritten.txt", "rewritten by the test hook"),
				a.hookDeny("touch hook-deny-me.txt", reason))
			srv := fakemodel.Start(t,
				a.shell("touch hook-rewrite-me.txt"),
				a.shell("touch hook-deny-me.txt"),
				fakemodel.Say("done"),
			)
			out := run(t, a, w, srv, hook)

			type outcome struct {
				Files     []string
				Hook      []hookInput
				Rewritten bool
				Denied    string
			}
			var got outcome
			entries, _ := os.ReadDir(w.project)
			for _, e := range entries {
				got.Files = append(got.Files, e.Name())
			}
			got.Hook = hookInputs(t, hookDir)
			r0, _ := srv.ToolResult(0)
			got.Rewritten = strings.HasSuffix(r0.Output, tt.rewrittenSuffix)
			r1, _ := srv.ToolResult(1)
			got.Denied = r1.Output
			t.Logf("model got for the rewritten command: %q", r0.Output)
			t.Logf("model got for the denied command: %q (is_error %v)", r1.Output, r1.IsError)
			want := outcome{
				Files: []string{"README.md", "hook-rewritten.txt"},
				Hook: []hookInput{
					{tt.event, a.shellToolName, "touch hook-rewrite-me.txt"},
					{tt.event, a.shellToolName, "touch hook-deny-me.txt"},
				},
				Rewritten: true,
				Denied:    tt.denied,
			}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("%s with a hook (-got +want):\n%s\noutput:\n%s\nrequests:\n%s", a.name, diff, out, srv.Summary())
			}
		})
	}
}
