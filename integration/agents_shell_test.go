//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

// TestAgentsWithGuardrunAsTheirShell makes guardrun the shell the agent
// runs its commands with, by environment only: Claude Code takes
// $CLAUDE_CODE_SHELL when its path holds "bash", Gemini CLI runs the
// first bash on PATH. Their wrappers around each command are not asked
// about (there is nobody to ask here): the command inside is judged,
// audited as the agent's and run in the sandbox; Claude Code's cd moves
// its next command. (Codex takes the account's shell from the user
// database, which a test does not change.)
func TestAgentsWithGuardrunAsTheirShell(t *testing.T) {
	for _, a := range []fakemodel.Agent{fakemodel.Claude, fakemodel.Gemini} {
		t.Run(a.Name, func(t *testing.T) {
			r := newRig(t, a, func(r *rig) []fakemodel.Step {
				return []fakemodel.Step{
					a.Shell("cd sub"),
					a.Shell("pwd"),
					a.Shell("echo hi from $0"),
					a.Shell("touch asked.txt"),
					fakemodel.Say("done"),
				}
			})
			// guardrun under a name holding "bash", first on PATH.
			dir := filepath.Join(r.w.Tmp, "guardrun-bash")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(guardrunBin, filepath.Join(dir, "bash")); err != nil {
				t.Fatal(err)
			}
			path := ""
			for _, kv := range r.env {
				if p, ok := strings.CutPrefix(kv, "PATH="); ok {
					path = p
				}
			}
			r.env = append(unsetEnv(r.env, "PATH"), "PATH="+dir+":"+path, "CLAUDE_CODE_SHELL="+filepath.Join(dir, "bash"))
			out := r.run()
			for i := 0; i < 4; i++ {
				t.Logf("step %d: %q", i, r.result(i))
			}
			// Claude Code keeps the directory of the cd; Gemini CLI starts
			// every command in the project.
			pwd := r.w.Project
			if a.Name == "claude" {
				pwd = filepath.Join(r.w.Project, "sub")
			}
			type outcome struct {
				Pwd, Hi, Asked bool
				Refused        bool
			}
			got := outcome{
				Pwd:     strings.Contains(r.result(1), pwd) && (a.Name != "gemini" || !strings.Contains(r.result(1), "/sub")),
				Hi:      strings.Contains(r.result(2), "hi from /bin/bash"),
				Asked:   r.exists("asked.txt"),
				Refused: strings.Contains(r.result(3), "guardrun: denied (no terminal to ask; interactive mode acts as strict): touch asked.txt needs approval"),
			}
			if d := cmp.Diff(got, outcome{Pwd: true, Hi: true, Refused: true}); d != "" {
				t.Errorf("%s with guardrun as its shell (-got +want):\n%s\noutput:\n%s\nrequests:\n%s", a.Name, d, out, r.srv.Summary())
			}
			r.audited([]string{"cd sub", "pwd", "echo hi from $0", "touch asked.txt"}, nil)
		})
	}
}
