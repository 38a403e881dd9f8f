package rules

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoProcessImports keeps policy pure: it never reaches os/exec, pty or
// raw system call packages, so it can be tested without privileges.
// (syscall itself is under package os, so only a direct import counts;
// internal/sys/regfile, which sandbox reads files through, opens a file only
// when it is a regular one.)
func TestNoProcessImports(t *testing.T) {
	deps, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(deps)) {
		if dep == "os/exec" || dep == "golang.org/x/sys/unix" || strings.HasPrefix(dep, "github.com/creack/pty") ||
			strings.HasPrefix(dep, "github.com/guardrun/guardrun/") &&
				!strings.HasSuffix(dep, "/rules") && !strings.HasSuffix(dep, "/shellparse") && !strings.HasSuffix(dep, "/sandbox") && !strings.HasSuffix(dep, "/cmdsem") && !strings.HasSuffix(dep, "/internal/sys/regfile") {
			t.Errorf("rules depends on %s", dep)
		}
	}
	direct, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(direct)) {
		if imp == "syscall" || imp == "unsafe" {
			t.Errorf("rules imports %s", imp)
		}
	}
}
