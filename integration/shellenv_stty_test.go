//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// TestRunShellEnvZshSTTY: zsh runs "stty $STTY" as shell code before a
// command whose assignments set STTY, when its input is a terminal and
// the command leads its own process group (job control, zsh -m). A
// script that does so through a nested zsh runs only what guardrun read,
// under either backend.
func TestRunShellEnvZshSTTY(t *testing.T) {
	requireSandbox(t)
	testenv.LookPath(t, "zsh")
	w := runWorld(t, shellEnvConfig+landlockAccept)
	landlockWorks(t, w, w.work)
	marker := filepath.Join(w.work, "stty-ran")
	scripts := []string{
		"zsh -m -c \"STTY=';touch " + marker + "' true\"",
		"zsh -o monitor -c \"STTY=';touch " + marker + "' true\"",
		"zsh -c \"setopt monitor; STTY=';touch " + marker + "' true\"",
		"zsh -m -c \"STTY=';touch " + marker + "' /bin/true\"",
		"zsh -m -c \"STTY=';touch " + marker + "' command true\"",
		"zsh -m -c \"STTY=';touch " + marker + "' echo\"",
	}
	for _, s := range scripts {
		for _, backend := range []string{"bwrap", "landlock"} {
			r := startOnPTY(t, w.work, w.env, nil, "--backend", backend, "--strict", "-c", s)
			code := r.wait()
			if exists(marker) {
				t.Errorf("%s %q: exit %d, the STTY code ran; stderr:\n%s", backend, s, code, r.stderr.String())
				os.Remove(marker)
			}
		}
	}
}
