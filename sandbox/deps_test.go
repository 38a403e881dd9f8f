package sandbox

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps the package pure: it must never start processes, make
// raw system calls or touch terminals, on any platform. (The standard
// library's os package uses syscall itself, so syscall is checked among
// the direct imports only; so does internal/sys/regfile, which opens a file
// only when it is a regular one.)
func TestDeps(t *testing.T) {
	list := func(goos string, args ...string) []string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"list"}, args...)...)
		cmd.Env = append(cmd.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %v (GOOS=%s): %v", args, goos, err)
		}
		return strings.Fields(string(out))
	}
	for _, goos := range []string{"linux", "darwin"} {
		for _, dep := range list(goos, "-deps", "-f", "{{.ImportPath}}", ".") {
			switch {
			case dep == "os/exec",
				strings.HasPrefix(dep, "golang.org/x/"),
				strings.HasPrefix(dep, "github.com/creack/pty"),
				strings.Contains(dep, ".") && !strings.HasPrefix(dep, "github.com/guardrun/guardrun/sandbox") && dep != "github.com/guardrun/guardrun/internal/sys/regfile":
				t.Errorf("GOOS=%s: forbidden dependency %s", goos, dep)
			}
		}
		for _, imp := range list(goos, "-f", `{{join .Imports " "}}`, ".") {
			if imp == "syscall" || imp == "unsafe" {
				t.Errorf("GOOS=%s: sandbox imports %s", goos, imp)
			}
		}
	}
}
