package shellparse

import (
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// TestDeps keeps the package pure: it parses and never runs anything, so
// nothing in its dependency graph may start processes, make raw system
// calls or reach into the rest of guardrun but cmdsem's option reader.
func TestDeps(t *testing.T) {
	const self = "github.com/guardrun/guardrun/shellparse"
	const cmdsemPkg = "github.com/guardrun/guardrun/cmdsem"
	forbidden := []string{"os/exec", "golang.org/x/sys/unix", "github.com/creack/pty"}
	seen := false
	for _, d := range testenv.Deps(t) {
		pkg, std, imports := d.Path, d.Standard, d.Imports
		if pkg == self {
			seen = true
		}
		for _, bad := range forbidden {
			if pkg == bad || strings.HasPrefix(pkg, bad+"/") {
				t.Errorf("%s depends on %s", self, pkg)
			}
		}
		// cmdsem (the option table and its getopt reader, standard
		// library only, as its own test keeps it) is the one part of
		// guardrun below it.
		if strings.HasPrefix(pkg, "github.com/guardrun/guardrun/") && pkg != self && pkg != cmdsemPkg {
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
