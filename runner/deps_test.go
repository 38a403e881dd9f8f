package runner

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestBackendDeps: runner imports the backends and never the reverse,
// and no backend imports another (what bwrap and landlock share lies in
// sandbox, seccomp and netproxy), on Linux and macOS.
func TestBackendDeps(t *testing.T) {
	const mod = "github.com/guardrun/guardrun/"
	backends := []string{mod + "bwrap", mod + "landlock", mod + "seatbelt"}
	for _, goos := range []string{"linux", "darwin"} {
		for _, b := range backends {
			cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", b)
			cmd.Env = append(cmd.Environ(), "GOOS="+goos)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps %s (GOOS=%s): %v", b, goos, err)
			}
			for _, dep := range strings.Fields(string(out)) {
				if dep != b && (slices.Contains(backends, dep) || dep == mod+"runner") {
					t.Errorf("GOOS=%s: %s imports %s", goos, b, dep)
				}
			}
		}
	}
}
