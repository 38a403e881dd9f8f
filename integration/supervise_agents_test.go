//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSuperviseSaysHowAnAgentIsChecked starts programs under supervise
// by the names of agents guardrun knows and does not know (shell scripts
// standing in for them) and reads what supervise says at start.
func TestSuperviseSaysHowAnAgentIsChecked(t *testing.T) {
	requireSandbox(t)
	bin := t.TempDir()
	for _, name := range []string{"claude", "gemini", "my-agent"} {
		// It prints its arguments, so the test sees what supervise added.
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\necho \"agent args: $*\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	claudeRun := []string{
		"guardrun: Claude Code: its shell and file tools go through guardrun (hook added for this run with --settings)",
		`agent args: --settings {"hooks":{"PreToolUse":[{"matcher":"Bash|Write|Edit|MultiEdit|NotebookEdit|Read|Glob|Grep","hooks":[{"type":"command","command":"` + guardrunBin + ` hook claude-code","timeout":600}]}]}} -p hi`,
	}
	tests := []struct {
		name string
		argv []string
		// settings, when set, is the person's ~/.claude/settings.json,
		// into which guardrun integrate wires the hook first.
		settings string
		// says is what the terminal shows, in order.
		says []string
	}{
		{"claude gets the hook for the run", []string{"claude", "-p", "hi"}, "", claudeRun},
		// Claude Code ignores a settings file that fails its validation
		// whole, guardrun's hook in it with it.
		{"claude gets the hook for the run where its settings hold it", []string{"claude", "-p", "hi"}, `{"model": "opus"}`, claudeRun},
		{"an unknown agent is warned about", []string{"my-agent"}, "", []string{
			"guardrun: warning: my-agent is not an agent guardrun knows (Claude Code, Codex, Gemini CLI): only the commands it runs through $SHELL are checked; --trust-shell if that is all it runs",
			"agent args:",
		}},
		{"--trust-shell says it runs all through $SHELL", []string{"--trust-shell", "--", "my-agent"}, "", []string{"agent args:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, superviseConfig)
			w.env = append(unsetEnv(w.env, "PATH"), "PATH="+bin+":"+os.Getenv("PATH"))
			if tt.settings != "" {
				settings := filepath.Join(w.getenv("HOME"), ".claude", "settings.json")
				os.MkdirAll(filepath.Dir(settings), 0o755)
				os.WriteFile(settings, []byte(tt.settings), 0o644)
				if out, code := integrate(t, w, "claude-code"); code != 0 {
					t.Fatalf("integrate: %d %s", code, out)
				}
			}
			argv := append([]string{guardrunBin, "supervise"}, tt.argv...)
			if tt.argv[0] != "--trust-shell" {
				argv = append([]string{guardrunBin, "supervise", "--"}, tt.argv...)
			}
			term := startOnTTY(t, w, argv...)
			if code := term.wait(); code != 0 {
				t.Fatalf("exit %d: %s", code, term.screen())
			}
			var got []string
			for _, l := range strings.Split(strings.ReplaceAll(term.screen(), "\r\n", "\n"), "\n") {
				if l = strings.TrimSpace(l); l != "" {
					got = append(got, l)
				}
			}
			if diff := cmp.Diff(got, tt.says); diff != "" {
				t.Errorf("the terminal (-got +want):\n%s", diff)
			}
		})
	}
}

// TestSuperviseWithoutTheHookWiredSaysWhatToRun: Gemini CLI reads hooks
// only from its settings, and with no terminal to offer guardrun
// integrate on, supervise does not start it.
func TestSuperviseWithoutTheHookWiredSaysWhatToRun(t *testing.T) {
	w := newWorld(t, superviseConfig)
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "gemini"), []byte("#!/bin/sh\ntouch "+filepath.Join(w.work, "started")+"\n"), 0o755)
	w.env = append(unsetEnv(w.env, "PATH"), "PATH="+bin+":"+os.Getenv("PATH"))
	cmd := exec.Command(guardrunBin, "supervise", "--", "gemini")
	cmd.Dir, cmd.Env = w.work, w.env
	cmd.Stdin, _ = os.Open(os.DevNull)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	want := "guardrun: supervise: Gemini CLI reads hooks only from its settings files (the per-run system settings file must belong to root); run `guardrun integrate gemini` once"
	if code != 125 || !strings.Contains(string(out), want) || fileIn(t, w, "started") {
		t.Errorf("exit %d, output %q, agent started %v", code, out, fileIn(t, w, "started"))
	}
}
