package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// repoTree makes a work tree like a small project right after a few
// commits: sources in a few directories and a .git with loose objects
// spread over its 256 fan-out directories.
func repoTree(tb testing.TB, files, objects int) string {
	tb.Helper()
	root := tb.TempDir()
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	git := filepath.Join(root, ".git")
	for _, d := range []string{"hooks", "info", "refs/heads", "refs/tags", "objects/pack", "objects/info", "logs/refs/heads"} {
		must(os.MkdirAll(filepath.Join(git, d), 0o755))
	}
	for _, f := range []string{"HEAD", "config", "description", "index"} {
		must(os.WriteFile(filepath.Join(git, f), []byte("x\n"), 0o644))
	}
	for i := range objects {
		d := filepath.Join(git, "objects", fmt.Sprintf("%02x", i%256))
		must(os.MkdirAll(d, 0o755))
		must(os.WriteFile(filepath.Join(d, fmt.Sprintf("%038x", i)), nil, 0o444))
	}
	for i := range files {
		d := filepath.Join(root, fmt.Sprintf("pkg%d", i%20))
		must(os.MkdirAll(d, 0o755))
		must(os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.go", i)), nil, 0o644))
	}
	return root
}

func repoSpec(root string) Spec {
	return Spec{
		Zones:        []Zone{{Name: "workspace", Root: root, Writable: true}},
		SystemRead:   DefaultSystemPaths,
		DenyNames:    []string{".env"},
		ProtectNames: DefaultProtect,
		Cwd:          root,
		Home:         "/nonexistent-home",
	}
}

// BenchmarkDeriveRepo derives the profile of a project of 300 files whose
// .git holds 3000 loose objects: what every command in it pays.
func BenchmarkDeriveRepo(b *testing.B) {
	spec := repoSpec(repoTree(b, 300, 3000))
	b.ResetTimer()
	for range b.N {
		if _, err := Derive(spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeriveSmall is BenchmarkDeriveRepo for a project just
// initialised: a few files, a few objects.
func BenchmarkDeriveSmall(b *testing.B) {
	spec := repoSpec(repoTree(b, 5, 10))
	b.ResetTimer()
	for range b.N {
		if _, err := Derive(spec); err != nil {
			b.Fatal(err)
		}
	}
}
