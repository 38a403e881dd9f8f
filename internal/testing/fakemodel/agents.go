//go:build unix

package fakemodel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The real agent CLIs, installed by scripts/agents-install.sh at the
// versions it pins, driven against the fake model in a throwaway HOME
// and project. Installing them downloads some 850 MB once, so tests that
// drive them run only when GUARDRUN_E2E_AGENTS=1 or
// GUARDRUN_REQUIRE_AGENTS=1 asks for them (make e2e-agents); they skip
// when the npm registry cannot be reached, except under
// GUARDRUN_REQUIRE_AGENTS=1.

// RequireAgents reports whether GUARDRUN_REQUIRE_AGENTS=1 is set: an agent
// that cannot be installed is a failure, not a skip.
func RequireAgents() bool { return os.Getenv("GUARDRUN_REQUIRE_AGENTS") == "1" }

// AgentsWanted reports whether the tests that drive real agent CLIs were
// asked for (GUARDRUN_E2E_AGENTS=1 or GUARDRUN_REQUIRE_AGENTS=1).
func AgentsWanted() bool { return RequireAgents() || os.Getenv("GUARDRUN_E2E_AGENTS") == "1" }

func missingAgent(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if RequireAgents() {
		t.Fatalf("%s (GUARDRUN_REQUIRE_AGENTS=1: the test cannot be skipped)", msg)
	}
	t.Skipf("%s (skipped; GUARDRUN_REQUIRE_AGENTS=1 makes this a failure)", msg)
}

// AgentNames are the agents the tests drive; keep in sync with the pins
// in scripts/agents-install.sh.
var AgentNames = []string{"claude", "codex", "gemini"}

// install is one run of scripts/agents-install.sh for every agent in
// agentNames, shared by the tests of this binary.
var install struct {
	once   sync.Once
	paths  map[string]string
	status int // the script's exit status, -1 when it did not run
	out    string
}

// AgentBinary installs the agents with scripts/agents-install.sh (a
// no-op when the cache holds them) and returns the path of agent's
// binary. It skips the test unless AgentsWanted.
func AgentBinary(t testing.TB, agent string) string {
	t.Helper()
	if !AgentsWanted() {
		t.Skip("drives real agent CLIs (about 850 MB to install once); set GUARDRUN_E2E_AGENTS=1 or run make e2e-agents")
	}
	install.once.Do(func() {
		_, self, _, ok := runtime.Caller(0)
		if !ok {
			install.status, install.out = -1, "cannot find the source tree"
			return
		}
		script := filepath.Join(filepath.Dir(self), "..", "..", "..", "scripts", "agents-install.sh")
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", append([]string{script}, AgentNames...)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
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

// World is one throwaway home and project.
type World struct {
	Home, Project string
	// Tmp is the agents' TMPDIR, so that what they leave in temporary
	// directories goes when the test ends.
	Tmp string
}

// NewWorld makes a home, a project holding README.md and a temporary
// directory under t's.
func NewWorld(t testing.TB) World {
	t.Helper()
	dir := t.TempDir()
	w := World{Home: filepath.Join(dir, "home"), Project: filepath.Join(dir, "project"), Tmp: filepath.Join(dir, "tmp")}
	for _, d := range []string{w.Home, w.Project, w.Tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	WriteFile(t, filepath.Join(w.Project, "README.md"), Readme)
	return w
}

// Readme is the project's README.md.
const Readme = "# a project for the fake model\n"

// WriteFile writes text to path, making its directory.
func WriteFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BaseEnv is the whole environment an agent gets: nothing of the
// person's, every update check, telemetry and error report off.
func (w World) BaseEnv(t testing.TB) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Dir(node) + ":/usr/local/bin:/usr/bin:/bin"
	return []string{
		"HOME=" + w.Home, "PATH=" + path, "TERM=dumb", "LANG=C.UTF-8", "SHELL=/bin/bash",
		"XDG_CONFIG_HOME=" + filepath.Join(w.Home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(w.Home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(w.Home, ".local/share"),
		"XDG_STATE_HOME=" + filepath.Join(w.Home, ".local/state"),
		"TMPDIR=" + w.Tmp, "CLAUDE_CODE_TMPDIR=" + w.Tmp,
		"NO_COLOR=1", "DO_NOT_TRACK=1", "NO_UPDATE_NOTIFIER=1",
	}
}

// Agent is how one CLI is driven offline.
type Agent struct {
	Name string
	// Shell is a step that runs command with the agent's shell tool.
	Shell func(command string) Step
	// Write is a step that writes text to name in the project with the
	// agent's file tool.
	Write func(w World, name, text string) Step
	// Command returns the argv and extra environment that run the agent
	// non-interactively on prompt against the server at url; hook, when
	// set, is a PreToolUse/BeforeTool hook command for its shell tool.
	Command func(t testing.TB, bin string, w World, url, hook string) (argv, env []string)
	// HookAllow and HookDeny are the agent's hook replies: allow with the command
	// rewritten, and deny with a reason (each a JSON line).
	HookAllow, HookDeny func(command, reason string) string
	// ShellToolName is tool_name in the hook's input for the shell tool.
	ShellToolName string
}

// Claude, Codex and Gemini are the agent CLIs the tests drive.
var Claude = Agent{
	Name: "claude",
	Shell: func(c string) Step {
		return Call("Bash", map[string]any{"command": c, "description": "run " + c})
	},
	Write: func(w World, name, text string) Step {
		return Call("Write", map[string]any{"file_path": filepath.Join(w.Project, name), "content": text})
	},
	Command: func(t testing.TB, bin string, w World, url, hook string) ([]string, []string) {
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
	HookAllow: func(command, reason string) string {
		return mustJSON(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PreToolUse", "permissionDecision": "allow",
			"permissionDecisionReason": reason, "updatedInput": map[string]any{"command": command},
		}})
	},
	HookDeny: func(_, reason string) string {
		return mustJSON(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason,
		}})
	},
	ShellToolName: "Bash",
}

var Codex = Agent{
	Name:  "codex",
	Shell: func(c string) Step { return Call("exec_command", map[string]any{"cmd": c}) },
	Write: func(_ World, name, text string) Step {
		var b strings.Builder
		fmt.Fprintf(&b, "*** Begin Patch\n*** Add File: %s\n", name)
		for _, line := range strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n") {
			fmt.Fprintf(&b, "+%s\n", strings.TrimSuffix(line, "\n"))
		}
		b.WriteString("*** End Patch\n")
		return Call("apply_patch", map[string]any{"input": b.String()})
	},
	Command: func(t testing.TB, bin string, w World, url, hook string) ([]string, []string) {
		codexHome := filepath.Join(w.Home, ".codex")
		// A model the CLI knows (gpt-5.5) gets the freeform apply_patch
		// tool; for an unknown one it declares no apply_patch at all.
		WriteFile(t, filepath.Join(codexHome, "config.toml"), `model = "gpt-5.5"
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
		argv := []string{bin, "exec", "--skip-git-repo-check", "-C", w.Project}
		if hook != "" {
			// Hooks given with -c are skipped as untrusted unless the
			// run bypasses hook trust.
			argv = append(argv, "--dangerously-bypass-hook-trust", "-c",
				`hooks.PreToolUse=[{matcher="^Bash$",hooks=[{type="command",command=`+strconv.Quote(hook)+`,timeout=30}]}]`)
		}
		argv = append(argv, "run the scripted steps")
		return argv, []string{"CODEX_HOME=" + codexHome, "FAKEMODEL_API_KEY=fakemodel"}
	},
	HookAllow:     Claude.HookAllow,
	HookDeny:      Claude.HookDeny,
	ShellToolName: "Bash",
}

var Gemini = Agent{
	Name: "gemini",
	Shell: func(c string) Step {
		return Call("run_shell_command", map[string]any{"command": c})
	},
	Write: func(_ World, name, text string) Step {
		return Call("write_file", map[string]any{"file_path": name, "content": text})
	},
	Command: func(t testing.TB, bin string, w World, url, hook string) ([]string, []string) {
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
		WriteFile(t, filepath.Join(w.Home, ".gemini", "settings.json"), mustJSON(settings))
		return []string{bin, "-p", "run the scripted steps", "--yolo"}, []string{
			"GEMINI_API_KEY=fakemodel", "GOOGLE_GEMINI_BASE_URL=" + url,
			"GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_CLI_NO_RELAUNCH=true",
		}
	},
	HookAllow: func(command, reason string) string {
		return mustJSON(map[string]any{"decision": "allow", "reason": reason, "hookSpecificOutput": map[string]any{
			"hookEventName": "BeforeTool", "tool_input": map[string]any{"command": command},
		}})
	},
	HookDeny: func(_, reason string) string {
		return mustJSON(map[string]any{"decision": "deny", "reason": reason})
	},
	ShellToolName: "run_shell_command",
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

// Run runs the agent to its end in w.Project and returns what it printed.
func Run(t testing.TB, a Agent, w World, srv *Server, hook string) string {
	t.Helper()
	bin := AgentBinary(t, a.Name)
	argv, env := a.Command(t, bin, w, srv.URL, hook)
	ctx, cancel := context.WithTimeout(context.Background(), agentTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = w.Project
	cmd.Env = append(w.BaseEnv(t), env...)
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
		t.Fatalf("%s did not finish within %v\noutput:\n%s\nrequests:\n%s", a.Name, agentTimeout, out.String(), srv.Summary())
	}
	if err != nil {
		t.Fatalf("%s: %v\noutput:\n%s\nrequests:\n%s", a.Name, err, out.String(), srv.Summary())
	}
	return out.String()
}
