package seccomp

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDeps keeps the platform split honest: without cgo, or off Linux,
// the package must build without libseccomp; and nothing outside tests
// starts processes (the filter is loaded by bwrap, not here).
func TestDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	list := func(env []string, args ...string) []string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"list"}, args...)...)
		cmd.Env = append(cmd.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list %v %v: %v\n%s", env, args, err, out)
		}
		return strings.Fields(string(out))
	}
	const lib = "github.com/seccomp/libseccomp-golang"
	for _, env := range [][]string{
		{"GOOS=linux", "CGO_ENABLED=0"},
		{"GOOS=darwin", "CGO_ENABLED=0"},
	} {
		if deps := list(env, "-deps", "-f", "{{.ImportPath}}", "."); slices.Contains(deps, lib) {
			t.Errorf("%v: the stub depends on %s", env, lib)
		}
	}
	for _, env := range [][]string{
		{"GOOS=linux", "CGO_ENABLED=1"},
		{"GOOS=darwin", "CGO_ENABLED=0"},
	} {
		if imps := list(env, "-f", `{{join .Imports " "}}`, "."); slices.Contains(imps, "os/exec") {
			t.Errorf("%v: the package imports os/exec", env)
		}
	}
}
