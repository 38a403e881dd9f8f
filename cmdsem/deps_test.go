package cmdsem

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDeps keeps the package a pure table: standard library only, no
// processes, no system calls, nothing else of guardrun.
func TestDeps(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	if _, err := os.Stat(goBin); err != nil {
		t.Skipf("go command not found: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}\t{{.Standard}}\t{{join .Imports \" \"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const self = "github.com/guardrun/guardrun/cmdsem"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "\t", 3)
		pkg, std := f[0], f[1] == "true"
		switch {
		case pkg == self:
			// The table reads no files and runs nothing itself.
			for _, imp := range strings.Fields(f[2]) {
				if imp == "os" || imp == "os/exec" || imp == "syscall" || imp == "unsafe" {
					t.Errorf("%s imports %s", self, imp)
				}
			}
		case pkg == "os/exec":
			t.Errorf("%s depends on %s", self, pkg)
		case !std:
			t.Errorf("%s depends on %s; it must use the standard library only", self, pkg)
		}
	}
}
