package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/guardrun/guardrun/sandbox"
)

// Derive turns what the config allows into the profile every backend
// renders: the project writable, the docs read-only, .env masked (the
// project's, and at each zone's root where none exists yet), git's hooks
// and guardrun's config read-only inside the writable tree (their .git
// pinned, so that it cannot be renamed away), guardrun's state hidden, no
// network.
func ExampleDerive() {
	dir, err := os.MkdirTemp("", "guardrun-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	dir, _ = filepath.EvalSymlinks(dir)
	for _, d := range []string{"project/.git/hooks", "docs", "home/.local/state/guardrun"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	for _, f := range []string{"project/.env", "project/.guardrun.yaml"} {
		os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644)
	}
	project := filepath.Join(dir, "project")

	p, err := sandbox.Derive(sandbox.Spec{
		Zones: []sandbox.Zone{
			{Name: "project", Root: project, Writable: true},
			{Name: "docs", Root: filepath.Join(dir, "docs")},
		},
		DenyNames:    []string{".env"},
		ProtectNames: []string{".git/hooks"},
		Protect: []sandbox.Protected{
			{Path: filepath.Join(project, ".guardrun.yaml")},
			{Path: filepath.Join(dir, "home/.local/state/guardrun"), Hide: true},
		},
		Cwd:  project,
		Home: filepath.Join(dir, "home"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Paths are shown under $DIR, the temporary directory; the system's
	// own secrets (DefaultSystemDeny, resolved on this machine) are left
	// out of deny.
	show := func(name string, paths []string) {
		var rel []string
		for _, x := range paths {
			if sandbox.Within(x, dir) {
				rel = append(rel, "$DIR"+strings.TrimPrefix(x, dir))
			}
		}
		fmt.Printf("%-15s %s\n", name+":", strings.Join(rel, " "))
	}
	show("read-only", p.ReadOnly)
	show("read-write", p.ReadWrite)
	show("read-only over", p.ReadOnlyOver)
	show("deny", p.Deny)
	show("pinned", p.Pinned)
	show("cwd", []string{p.Cwd})
	fmt.Printf("network: %v, private /tmp: %v, unix sockets: %v\n", p.Network, p.PrivateTmp, p.Seccomp.AllowUnix)
	for _, path := range []string{"project/main.go", "project/.git/hooks/pre-commit", "docs/guide.md", "project/.env"} {
		read, write := p.Access(filepath.Join(dir, path))
		fmt.Printf("%s: read %v, write %v\n", path, read, write)
	}
	// Output:
	// read-only:      $DIR/docs
	// read-write:     $DIR/project
	// read-only over: $DIR/project/.git/hooks $DIR/project/.guardrun.yaml
	// deny:           $DIR/docs/.env $DIR/home/.local/state/guardrun $DIR/project/.env
	// pinned:         $DIR/project/.git
	// cwd:            $DIR/project
	// network: false, private /tmp: true, unix sockets: false
	// project/main.go: read true, write true
	// project/.git/hooks/pre-commit: read true, write false
	// docs/guide.md: read true, write false
	// project/.env: read false, write false
}
