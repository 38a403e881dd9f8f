package shellparse

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testenv"
)

// TestDeps keeps the package pure: it parses and never runs anything, so
// nothing in its dependency graph may start processes, make raw system
// calls or reach into the rest of guardrun.
func TestDeps(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	if _, err := os.Stat(goBin); err != nil {
		testenv.Missing(t, "no go command: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}\t{{.Standard}}\t{{join .Imports \" \"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const self = "github.com/guardrun/guardrun/shellparse"
	forbidden := []string{"os/exec", "golang.org/x/sys/unix", "github.com/creack/pty"}
	seen := false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.SplitN(line, "\t", 3)
		if len(fields) != 3 {
			t.Fatalf("unexpected go list line %q", line)
		}
		pkg, std, imports := fields[0], fields[1] == "true", strings.Fields(fields[2])
		if pkg == self {
			seen = true
		}
		for _, bad := range forbidden {
			if pkg == bad || strings.HasPrefix(pkg, bad+"/") {
				t.Errorf("%s depends on %s", self, pkg)
			}
		}
		if strings.HasPrefix(pkg, "github.com/guardrun/guardrun/") && pkg != self {
			t.Errorf("%s depends on %s; it must stay at the bottom of the import graph", self, pkg)
		}
		// The standard library reaches syscall through os; what must
		// not happen is code outside it calling syscall directly.
		if !std {
			for _, imp := range imports {
				if imp == "syscall" {
					t.Errorf("%s imports syscall (via %s)", self, pkg)
				}
			}
		}
	}
	if !seen {
		t.Fatalf("go list did not report %s", self)
	}
}
