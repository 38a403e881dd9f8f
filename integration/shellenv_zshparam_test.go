//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// TestRunShellEnvZshSpecialParams: zsh defines a function, an alias or
// a command's path through an assignment to its functions, aliases,
// galiases or commands parameters, and globs the word of ${x:-word},
// qualifiers included; the bash-shaped reading saw assignments and an
// echo. They ask: nothing runs, under either backend.
func TestRunShellEnvZshSpecialParams(t *testing.T) {
	requireSandbox(t)
	testenv.LookPath(t, "zsh")
	w := runWorld(t, shellEnvConfig+landlockAccept)
	landlockWorks(t, w, w.work)
	marker := filepath.Join(w.work, "zsh-param-ran")
	if err := os.WriteFile(filepath.Join(w.work, "a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	scripts := []string{
		"zsh -c 'functions[true]=\"touch " + marker + "\"; true'",
		"zsh -c 'aliases[true]=\"touch " + marker + "\"; eval true'",
		"zsh -c 'galiases[X]=\"; touch " + marker + "\"; eval echo X'",
		"zsh -c 'commands[true]=/usr/bin/touch; command true " + marker + "'",
		"zsh -c \"echo \\${x:-*(e:'touch " + marker + "':)}\"",
	}
	for _, s := range scripts {
		for _, backend := range []string{"bwrap", "landlock"} {
			_, stderr, code := runPlain(t, w, "", nil, "--backend", backend, "--strict", "-c", s)
			if exists(marker) || code != 77 {
				t.Errorf("%s %q: exit %d (want 77), code ran %v; stderr:\n%s", backend, s, code, exists(marker), stderr)
				os.Remove(marker)
			}
		}
	}
}
