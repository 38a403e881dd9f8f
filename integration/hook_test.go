//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hookWorld is a project with sub and docs directories, configured as
// the agent tests are (agentRules), and the environment an agent gives
// its hook.
func hookWorld(t *testing.T) *world {
	t.Helper()
	w := newWorld(t, "")
	cfg := filepath.Join(filepath.Dir(w.work), "agents.yaml")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(agentRules, "PROJECT", w.work)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"sub", "docs"} {
		os.Mkdir(filepath.Join(w.work, d), 0o755)
	}
	w.env = append(unsetEnv(w.env, "GUARDRUN_CONFIG"), "GUARDRUN_CONFIG="+cfg, "CLAUDE_PROJECT_DIR="+w.work, "CLAUDE_CODE_SESSION_ID=s1")
	return w
}

// hook runs `guardrun hook agent` on input in the project and returns its
// answer and exit status.
func hook(t *testing.T, w *world, agent, input string) (map[string]any, string, int) {
	t.Helper()
	cmd := exec.Command(guardrunBin, "hook", agent)
	cmd.Dir, cmd.Env = w.work, w.env
	cmd.Stdin = strings.NewReader(input)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	var ans map[string]any
	if len(out) > 0 {
		if err := json.Unmarshal(out, &ans); err != nil {
			t.Fatalf("hook answer %q is not JSON: %v (stderr %s)", out, err, stderr.String())
		}
	}
	return ans, stderr.String(), code
}

func hookInput(w *world, event, tool string, input map[string]any) string {
	b, _ := json.Marshal(map[string]any{
		"session_id": "s1", "cwd": w.work, "hook_event_name": event, "tool_name": tool,
		"tool_input": input, "tool_use_id": "toolu_1", "permission_mode": "default",
	})
	return string(b)
}

// decision reads an answer as (decision, reason, rewritten command).
func decision(ans map[string]any) (string, string, string) {
	if ans == nil {
		return "", "", ""
	}
	if d, ok := ans["decision"].(string); ok {
		reason, _ := ans["reason"].(string)
		cmd := ""
		if h, ok := ans["hookSpecificOutput"].(map[string]any); ok {
			cmd, _ = h["tool_input"].(map[string]any)["command"].(string)
		}
		return d, reason, cmd
	}
	h, _ := ans["hookSpecificOutput"].(map[string]any)
	d, _ := h["permissionDecision"].(string)
	reason, _ := h["permissionDecisionReason"].(string)
	cmd := ""
	if in, ok := h["updatedInput"].(map[string]any); ok {
		cmd, _ = in["command"].(string)
	}
	return d, reason, cmd
}

func TestHookAnswersInTheAgentsOwnWords(t *testing.T) {
	requireSandbox(t)
	w := hookWorld(t)
	state := filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun")
	tests := []struct {
		name, agent, input string
		// decision and a part of the reason; rewritten says the command
		// was rewritten to run under guardrun.
		decision, reason string
		rewritten        bool
	}{
		{"an allowed command runs under guardrun", "codex", hookInput(w, "PreToolUse", "Bash", map[string]any{"command": "echo hi"}), "allow", "", true},
		{"a command that asks runs under guardrun too", "gemini", hookInput(w, "BeforeTool", "run_shell_command", map[string]any{"command": "touch x", "dir_path": "sub"}), "allow", "", true},
		{"a blocked command is denied with guardrun's line", "codex", hookInput(w, "PreToolUse", "Bash", map[string]any{"command": "sudo ls"}), "deny", `guardrun: blocked: sudo ls matches rule "sudo"`, false},
		{"claude asks in its own dialog", "claude-code", hookInput(w, "PreToolUse", "Bash", map[string]any{"command": "touch x", "description": "d"}), "ask", "guardrun: touch x needs approval", true},
		{"malformed input is denied", "claude-code", `{"tool_name": `, "deny", "guardrun: the hook input is not the JSON Claude Code sends", false},
		{"oversized input is denied", "gemini", `{"x": "` + strings.Repeat("a", 9<<20) + `"}`, "deny", "guardrun: the hook input is larger than 8 MiB", false},
		{"an unknown tool is denied", "claude-code", hookInput(w, "PreToolUse", "WebFetch", map[string]any{"url": "https://example.com"}), "deny", `tool "WebFetch" is not one guardrun knows`, false},
		{"an unknown field is denied", "codex", hookInput(w, "PreToolUse", "Bash", map[string]any{"command": "ls", "shell": "/bin/zsh"}), "deny", `field "shell" is not one guardrun knows`, false},
		{"a write in the project is left to the agent", "gemini", hookInput(w, "BeforeTool", "write_file", map[string]any{"file_path": "ok.txt", "content": "x"}), "", "", false},
		{"a write outside every zone is refused", "claude-code", hookInput(w, "PreToolUse", "Write", map[string]any{"file_path": "/etc/guardrun-test", "content": "x"}), "deny", "guardrun: blocked: write /etc/guardrun-test: the path is outside every rw zone", false},
		{"the agent's own settings are refused", "gemini", hookInput(w, "BeforeTool", "replace", map[string]any{"file_path": ".gemini/settings.json", "old_string": "a", "new_string": "b"}), "deny", ".gemini holds Gemini CLI's settings and hooks", false},
		{"guardrun's state is refused", "claude-code", hookInput(w, "PreToolUse", "Write", map[string]any{"file_path": filepath.Join(state, "tickets", "x.json"), "content": "{}"}), "deny", "guardrun: blocked:", false},
		{"a patch leaving the project is refused", "codex", hookInput(w, "PreToolUse", "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch\n"}), "deny", "escape.txt: the path is outside every rw zone", false},
		{"a search over a directory is refused", "claude-code", hookInput(w, "PreToolUse", "Grep", map[string]any{"pattern": "key"}), "deny", "search with the shell tool", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ans, stderr, code := hook(t, w, tt.agent, tt.input)
			d, reason, cmd := decision(ans)
			if code != 0 || d != tt.decision || !strings.Contains(reason, tt.reason) || (cmd != "") != tt.rewritten {
				t.Errorf("exit %d, decision %q, reason %q, command %q; want decision %q, a reason with %q, rewritten %v (stderr %s)",
					code, d, reason, cmd, tt.decision, tt.reason, tt.rewritten, stderr)
			}
			if tt.rewritten && !strings.Contains(cmd, guardrunBin+" --via "+tt.agent+" --workspace "+w.work) {
				t.Errorf("the rewrite %q does not run the command under guardrun --via %s in the project", cmd, tt.agent)
			}
		})
	}
}

// runRewritten runs a rewritten command as Claude Code runs a command
// (eval'd in bash with stdin from /dev/null), then prints where the
// shell is.
func runRewritten(t *testing.T, w *world, command string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "-c", `eval "$1" < /dev/null; s=$?; pwd -P; exit $s`, "bash", command)
	cmd.Dir, cmd.Env = w.work, append(append([]string{}, w.env...), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return string(out), code
}

func TestHookTicketApprovesItsCommandOnce(t *testing.T) {
	requireSandbox(t)
	w := hookWorld(t)
	ask := func(command string) string {
		ans, stderr, _ := hook(t, w, "claude-code", hookInput(w, "PreToolUse", "Bash", map[string]any{"command": command}))
		d, _, cmd := decision(ans)
		if d != "ask" || !strings.Contains(cmd, "--ticket ") {
			t.Fatalf("no ask with a ticket for %q: %v (stderr %s)", command, ans, stderr)
		}
		return cmd
	}
	first := ask("touch once.txt")
	type run struct {
		Status int
		Made   bool
	}
	var got []run
	try := func(command, file string, env ...string) {
		out, code := runRewritten(t, w, command, env...)
		t.Logf("%s: exit %d: %s", file, code, out)
		got = append(got, run{code, fileIn(t, w, file)})
	}
	// Another session of Claude Code, then the right one, then again.
	try(first, "once.txt", "CLAUDE_CODE_SESSION_ID=s2")
	second := ask("touch once.txt")
	try(second, "once.txt")
	os.Remove(filepath.Join(w.work, "once.txt"))
	try(second, "once.txt")
	// The ticket of one command on another.
	third := ask("touch mine.txt")
	try(strings.Replace(third, "touch mine.txt", "touch other.txt", 1), "other.txt")
	try(third, "mine.txt")
	want := []run{{77, false}, {0, true}, {77, false}, {77, false}, {77, false}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("runs of rewritten commands with tickets (-got +want):\n%s", diff)
	}
}

func TestHookCarriesClaudesWorkingDirectory(t *testing.T) {
	requireSandbox(t)
	w := hookWorld(t)
	type outcome struct {
		Command string
		// Pwd is where the agent's shell is after the command, below the
		// project.
		Pwd    string
		Status int
	}
	var got []outcome
	for _, c := range []string{"cd sub", "cd sub && false", "cd /nonexistent-guardrun-dir", "cd docs; trap 'echo mine' EXIT"} {
		ans, _, _ := hook(t, w, "claude-code", hookInput(w, "PreToolUse", "Bash", map[string]any{"command": c}))
		_, _, cmd := decision(ans)
		out, code := runRewritten(t, w, cmd)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		got = append(got, outcome{c, strings.TrimPrefix(lines[len(lines)-1], w.work), code})
	}
	want := []outcome{
		{"cd sub", "/sub", 0},
		{"cd sub && false", "/sub", 1},
		{"cd /nonexistent-guardrun-dir", "", 1},
		// Its own EXIT trap replaces guardrun's: the shell stays.
		{"cd docs; trap 'echo mine' EXIT", "", 0},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("where the agent's shell is after a cd (-got +want):\n%s", diff)
	}
}

// TestHookRewriteKeepsTheCommandWhole: whatever the model's command
// holds, the rewritten command hands it to guardrun as one script, in
// every shell the agents run it with, and nothing of it runs outside.
func TestHookRewriteKeepsTheCommandWhole(t *testing.T) {
	requireSandbox(t)
	w := hookWorld(t)
	audit := filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun", "audit.jsonl")
	// Outside every zone: only a command that ran outside the sandbox
	// could make it.
	out := filepath.Join(filepath.Dir(w.work), "outside")
	if err := os.Mkdir(out, 0o777); err != nil {
		t.Fatal(err)
	}
	pwned := filepath.Join(out, "pwned.txt")
	payloads := []string{
		`echo 'single' "double" \back`,
		"x'; echo pwned > pwned.txt; '",
		`x"; echo pwned > pwned.txt; "`,
		"echo $(echo pwned > pwned.txt) `echo pwned > pwned.txt`",
		"echo a\necho pwned > pwned.txt",
		`echo '\''; echo pwned > pwned.txt; echo '\''`,
		"echo \\'; echo pwned > pwned.txt #",
		"echo 'ünïcødé' \t tab",
		"-c 'echo pwned > pwned.txt'",
		"echo ok } ; echo pwned > pwned.txt ; {",
		`echo ok) ; echo pwned > pwned.txt ; (`,
	}
	for i := range payloads {
		payloads[i] = strings.ReplaceAll(payloads[i], "pwned.txt", pwned)
	}
	shells := []string{"bash"}
	if _, err := exec.LookPath("zsh"); err == nil {
		shells = append(shells, "zsh")
	}
	if _, err := exec.LookPath("dash"); err == nil {
		shells = append(shells, "dash")
	}
	for _, agent := range []string{"claude-code", "codex"} {
		for _, sh := range shells {
			for _, p := range payloads {
				ans, _, _ := hook(t, w, agent, hookInput(w, "PreToolUse", "Bash", map[string]any{"command": p}))
				d, reason, cmd := decision(ans)
				if cmd == "" {
					// Refused by the hook: nothing ran at all.
					t.Logf("%s %q: %s %s", agent, p, d, reason)
					continue
				}
				before, _ := os.ReadFile(audit)
				c := exec.Command(sh, "-c", cmd)
				c.Dir, c.Env = w.work, w.env
				c.Stdin, _ = os.Open(os.DevNull)
				output, _ := c.CombinedOutput()
				after, _ := os.ReadFile(audit)
				var scripts []string
				for _, line := range strings.Split(strings.TrimSpace(string(after[len(before):])), "\n") {
					var rec struct{ Script string }
					json.Unmarshal([]byte(line), &rec)
					if rec.Script != "" && (len(scripts) == 0 || scripts[len(scripts)-1] != rec.Script) {
						scripts = append(scripts, rec.Script)
					}
				}
				if len(scripts) != 1 || scripts[0] != p {
					t.Errorf("%s in %s: guardrun got %q for %q (output %s)", agent, sh, scripts, p, output)
				}
				if fileExists(pwned) {
					t.Fatalf("%s in %s: %q made %s outside the sandbox (output %s)", agent, sh, p, pwned, output)
				}
			}
		}
	}
}
