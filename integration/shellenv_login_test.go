//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRunShellEnvLoginArgv0: exec -a with a name that starts with -
// makes bash a login shell, which runs ~/.bash_profile (or ~/.profile)
// before its -c code, as bash -l does; so does zsh's ARGV0=-bash. It asks: nothing runs, under
// either backend.
func TestRunShellEnvLoginArgv0(t *testing.T) {
	requireSandbox(t)
	home := t.TempDir()
	w := runWorld(t, shellEnvConfig+"    home: {root: "+home+", mode: ro}\n"+landlockAccept)
	landlockWorks(t, w, w.work)
	marker := filepath.Join(w.work, "profile-ran")
	for _, n := range []string{".bash_profile", ".profile"} {
		if err := os.WriteFile(filepath.Join(home, n), []byte("touch "+marker+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"exec -a -bash bash -c true", "exec -a -sh /bin/bash -c true", "bash -l -c true", "exec -l bash -c true", "exec -cl bash -c true", "zsh -c 'ARGV0=-bash bash -c true'"} {
		for _, backend := range []string{"bwrap", "landlock"} {
			_, stderr, code := runPlain(t, w, "", []string{"HOME=" + home}, "--backend", backend, "--strict", "-c", s)
			if exists(marker) || code != 77 {
				t.Errorf("%s %q: exit %d (want 77), profile ran %v; stderr:\n%s", backend, s, code, exists(marker), stderr)
				os.Remove(marker)
			}
		}
	}
}
