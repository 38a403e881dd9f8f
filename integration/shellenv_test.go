//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunShellStartupEnvDropped: what guardrun analysed is what the
// shell runs, whatever the environment it inherits. An exported function
// under an allowed command's name, a $BASH_ENV file, shell options and a
// CDPATH are not passed to the command's shell (under either backend);
// other variables are.
func TestRunShellStartupEnvDropped(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, runConfig+landlockAccept)
	landlockWorks(t, w, w.work)
	marker := filepath.Join(w.work, "ran")
	if err := os.WriteFile(filepath.Join(w.work, "env.sh"), []byte("touch "+marker+"-bash-env\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(w.work, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	extra := []string{
		"BASH_ENV=" + filepath.Join(w.work, "env.sh"),
		"ENV=" + filepath.Join(w.work, "env.sh"),
		"BASH_FUNC_true%%=() { touch " + marker + "-function; }",
		"BASH_FUNC_cd%%=() { touch " + marker + "-cd-function; }",
		"SHELLOPTS=xtrace",
		"BASHOPTS=lastpipe",
		"PS4=$(touch " + marker + "-ps4)+ ",
		"CDPATH=/",
		"KEEP_ME=kept",
	}
	// true runs unasked under runConfig; the rest is approved.
	script := `true; set -x; cd etc && pwd; echo "$KEEP_ME"; echo x | read v; echo "lastpipe:${v:-off}"`
	for _, backend := range []string{"bwrap", "landlock"} {
		stdout, stderr, code := runPlain(t, w, "", extra, "--backend", backend, "--approve-all", "-c", script)
		want := filepath.Join(w.work, "etc") + "\nkept\nlastpipe:off\n"
		if code != 0 || stdout != want {
			t.Errorf("%s: exit %d, stdout %q, want 0 and %q; stderr:\n%s", backend, code, stdout, want, stderr)
		}
		if strings.Contains(stderr, "+ true") {
			t.Errorf("%s: SHELLOPTS=xtrace traced the script from its start:\n%s", backend, stderr)
		}
		matches, _ := filepath.Glob(marker + "*")
		for _, m := range matches {
			t.Errorf("%s: %s was made: the inherited shell state ran", backend, m)
			os.Remove(m)
		}
	}
}
