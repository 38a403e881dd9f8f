package cmdsem

import (
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// TestDeps keeps the package a pure table: standard library only, no
// processes, no system calls, nothing else of guardrun.
func TestDeps(t *testing.T) {
	const self = "github.com/guardrun/guardrun/cmdsem"
	for _, d := range testenv.Deps(t) {
		switch {
		case d.Path == self:
			// The table reads no files and runs nothing itself.
			for _, imp := range d.Imports {
				if imp == "os" || imp == "os/exec" || imp == "syscall" || imp == "unsafe" {
					t.Errorf("%s imports %s", self, imp)
				}
			}
		case d.Path == "os/exec":
			t.Errorf("%s depends on %s", self, d.Path)
		case !d.Standard:
			t.Errorf("%s depends on %s; it must use the standard library only", self, d.Path)
		}
	}
}
