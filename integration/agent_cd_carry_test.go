//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

// autoenvRC is a person's shell startup that, like autoenv or rvm,
// replaces cd with a function that sources a file of the directory it
// enters; for zsh, a chpwd hook that does the same.
const autoenvRC = `cd() { builtin cd "$@" || return; if [ -f .autorun ]; then . ./.autorun; fi; }
`
const autoenvZshRC = `chpwd() { if [ -f .autorun ]; then . ./.autorun; fi; }
`

// TestAgentsClaudeCdCarriedByGuardrunRunsNoShellFunction: the cd that
// guardrun carries out of the sandbox into Claude Code's own shell is the
// shell's builtin: a cd function or chpwd hook in the person's startup
// files, which Claude Code's shell snapshot keeps, must not run there on
// a directory the model chose and filled.
func TestAgentsClaudeCdCarriedByGuardrunRunsNoShellFunction(t *testing.T) {
	shells := []struct{ name, shell, rcFile, rc string }{
		{"bash", "/bin/bash", ".bashrc", autoenvRC},
		{"zsh", "/usr/bin/zsh", ".zshrc", autoenvZshRC},
	}
	for _, sh := range shells {
		t.Run(sh.name, func(t *testing.T) {
			if _, err := os.Stat(sh.shell); err != nil {
				t.Skipf("no %s: %v", sh.shell, err)
			}
			a := fakemodel.Claude
			var marker string
			r := newRig(t, a, func(r *rig) []fakemodel.Step {
				marker = filepath.Join(filepath.Dir(r.w.Home), "ran-outside")
				return []fakemodel.Step{
					a.Write(r.w, "sub/.autorun", "echo ran > "+marker+"\n"),
					a.Shell("cd sub"),
					a.Shell("pwd"),
					fakemodel.Say("done"),
				}
			})
			fakemodel.WriteFile(t, filepath.Join(r.w.Home, sh.rcFile), sh.rc)
			fakemodel.WriteFile(t, filepath.Join(r.w.Home, ".bash_profile"), ". ~/.bashrc\n")
			r.env = append(unsetEnv(r.env, "SHELL"), "SHELL="+sh.shell)
			if out, code := r.guardrun("integrate", "claude-code"); code != 0 {
				t.Fatalf("integrate: %d %s", code, out)
			}
			out := r.run()
			for i := 0; i < 3; i++ {
				t.Logf("step %d: %q", i, r.result(i))
			}
			type outcome struct{ Autorun, InSub, RanOutside bool }
			got := outcome{r.exists("sub/.autorun"), strings.HasSuffix(strings.TrimSpace(r.result(2)), "/sub"), fileExists(marker)}
			if diff := cmp.Diff(got, outcome{Autorun: true, InSub: true}); diff != "" {
				t.Errorf("a cd carried into Claude Code's %s (-got +want):\n%s\noutput:\n%s", sh.name, diff, out)
			}
		})
	}
}

// TestHookCdCarriedRunsNoShellFunction is the same without Claude Code:
// the rewritten command eval'd as Claude Code evals it, after the
// person's functions, in bash and zsh.
func TestHookCdCarriedRunsNoShellFunction(t *testing.T) {
	requireSandbox(t)
	w := hookWorld(t)
	marker := filepath.Join(filepath.Dir(w.work), "ran-outside")
	if err := os.WriteFile(filepath.Join(w.work, "sub", ".autorun"), []byte("echo ran > "+marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ans, _, _ := hook(t, w, "claude-code", hookInput(w, "PreToolUse", "Bash", map[string]any{"command": "cd sub"}))
	_, _, rewritten := decision(ans)
	if rewritten == "" {
		t.Fatalf("cd sub was not rewritten: %v", ans)
	}
	type outcome struct {
		Shell      string
		Pwd        string
		RanOutside bool
	}
	var got, want []outcome
	for _, sh := range []struct{ name, rc string }{{"bash", autoenvRC}, {"zsh", autoenvZshRC}} {
		if _, err := exec.LookPath(sh.name); err != nil {
			continue
		}
		os.Remove(marker)
		c := exec.Command(sh.name, "-c", sh.rc+`eval "$1" < /dev/null; pwd -P`, sh.name, rewritten)
		c.Dir, c.Env = w.work, w.env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v: %s", sh.name, err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		got = append(got, outcome{sh.name, strings.TrimPrefix(lines[len(lines)-1], w.work), fileExists(marker)})
		want = append(want, outcome{sh.name, "/sub", false})
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("a cd carried out of the sandbox (-got +want):\n%s", diff)
	}
}

// TestHookCdCarriedOnlyFromARunScript: the directory carried out of the
// sandbox comes only from a script that ran, by the report guardrun
// reads back: a refused command carries none, and the descriptor the
// agent's shell reads it from is not the script's to write.
func TestHookCdCarriedOnlyFromARunScript(t *testing.T) {
	requireSandbox(t)
	w := hookWorld(t)
	tests := []struct {
		command string
		// pwd is where the agent's shell is after the command, below the
		// project.
		pwd string
	}{
		{"cd sub && touch x", ""},      // touch asks; no one to ask here
		{"cd sub; echo / >&3", "/sub"}, // the report descriptor is not the script's
		{"cd /", "/"},                  // carried; Claude Code puts its shell back in the project
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			ans, _, _ := hook(t, w, "claude-code", hookInput(w, "PreToolUse", "Bash", map[string]any{"command": tt.command}))
			d, reason, cmd := decision(ans)
			if cmd == "" {
				t.Fatalf("not rewritten: %s %s", d, reason)
			}
			out, _ := runRewritten(t, w, cmd, "CLAUDE_CODE_SESSION_ID=other")
			lines := strings.Split(strings.TrimSpace(out), "\n")
			got := strings.TrimPrefix(lines[len(lines)-1], w.work)
			if got != tt.pwd {
				t.Errorf("the agent's shell is in %q after %q, want %q (output %s)", got, tt.command, tt.pwd, out)
			}
		})
	}
}
