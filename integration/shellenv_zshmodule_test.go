//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// TestRunShellEnvZshModulePath: zsh loads a module from $module_path the
// first time a script uses one of its parameters or builtins
// ($commands, zstyle), so a module_path naming the project ran a shared
// object the project holds. Assigning module_path asks: the script runs
// nothing, under either backend.
func TestRunShellEnvZshModulePath(t *testing.T) {
	requireSandbox(t)
	testenv.LookPath(t, "zsh")
	testenv.LookPath(t, "gcc")
	w := runWorld(t, shellEnvConfig+landlockAccept)
	landlockWorks(t, w, w.work)
	marker := filepath.Join(w.work, "module-ran")
	src := filepath.Join(t.TempDir(), "m.c")
	code := "#include <fcntl.h>\n__attribute__((constructor)) static void f(void) { close(open(\"" + marker + "\", O_CREAT|O_WRONLY, 0644)); }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(w.work, "zsh"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"parameter", "zutil"} {
		if out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", filepath.Join(w.work, "zsh", m+".so"), src).CombinedOutput(); err != nil {
			testenv.Missing(t, "gcc cannot build a shared object: %v\n%s", err, out)
		}
	}
	scripts := []string{
		"zsh -c 'module_path=(.); echo $commands[ls]'",
		"zsh -c 'module_path=(.) ; zstyle :x y z; echo'",
		"zsh -c 'module_path+=(.); echo $options[xtrace]'",
		"zsh -c 'MODULE_PATH=.; echo $commands[ls]'",
		"zsh -c 'typeset -a module_path=(.); echo $functions[x]'",
	}
	for _, s := range scripts {
		for _, backend := range []string{"bwrap", "landlock"} {
			_, stderr, code := runPlain(t, w, "", nil, "--backend", backend, "--strict", "-c", s)
			if exists(marker) {
				t.Errorf("%s %q: exit %d, the module in the project was loaded; stderr:\n%s", backend, s, code, stderr)
				os.Remove(marker)
			}
		}
	}
}

// TestRunShellEnvZshGlobQualifier: zsh runs the code of an e glob
// qualifier for each file a pattern matches, and expands a value again
// for the (e) parameter flag, $(...) included; the bash-shaped reading
// saw an echo. Both ask: the script runs nothing, under either backend.
func TestRunShellEnvZshGlobQualifier(t *testing.T) {
	requireSandbox(t)
	testenv.LookPath(t, "zsh")
	w := runWorld(t, shellEnvConfig+landlockAccept)
	landlockWorks(t, w, w.work)
	marker := filepath.Join(w.work, "qualifier-ran")
	if err := os.WriteFile(filepath.Join(w.work, "a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	scripts := []string{
		"zsh -c \"echo *(e:'touch " + marker + "':)\"",
		"zsh -c \"echo a(e:'touch " + marker + "':)\"",
		"zsh -c \"echo a(+'{touch " + marker + "}')\"",
		"zsh -c 'x=\\$\\(touch\\ " + marker + "\\); echo ${(e)x}'",
		"zsh -c 'x=\\$\\(touch\\ " + marker + "\\); echo \"${(e)x}\"'",
		"zsh -c 'x=\\$\\(touch\\ " + marker + "\\); echo ${(Le)x}'",
		// GLOB_SUBST (${~x}) globs the value: qualifiers in it run too;
		// (P) reads the name a value holds, subscript included.
		"zsh -c \"x='*(e:touch\t" + marker + ":)'; echo \\${~x}\"",
		"zsh -c \"x='*(e:touch\t" + marker + ":)'; echo \\$~x\"",
		"zsh -c \"x='a[\\$(touch " + marker + ")]'; echo \\${(P)x}\"",
		// With GLOB_SUBST on, a plain $x is globbed.
		"zsh -o globsubst -c \"x='*(e:touch\t" + marker + ":)'; echo \\$x\"",
		"zsh --glob-subst -c \"x='*(e:touch\t" + marker + ":)'; echo \\$x\"",
		"zsh --emulate sh -c \"x='*(e:touch\t" + marker + ":)'; echo \\$x\"",
		"zsh -c \"options[globsubst]=on; x='*(e:touch\t" + marker + ":)'; echo \\$x\"",
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
