package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		p, root string
		want    bool
	}{
		{"/app", "/app", true},
		{"/app/x", "/app", true},
		{"/app_backup", "/app", false},
		{"/app_backup/x", "/app", false},
		{"/ap", "/app", false},
		{"/", "/app", false},
		{"/anything", "/", true},
		{"/", "/", true},
		{"/a/b/c", "/a/b", true},
		{"/a/bc", "/a/b", false},
		{"/a", "/a/b", false},
		{"/app/x", "/ap", false},
		{"/apx", "/ap", false},
		{"/ap/", "/ap", true},
	} {
		if got := Within(tc.p, tc.root); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.p, tc.root, got, tc.want)
		}
	}
}

func TestDepth(t *testing.T) {
	for p, want := range map[string]int{"/": 0, "/a": 1, "/a/b": 2, "/a/b/c": 3} {
		if got := Depth(p); got != want {
			t.Errorf("Depth(%q) = %d, want %d", p, got, want)
		}
	}
}

func TestResolve(t *testing.T) {
	dir := realTemp(t)
	mk := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	mk("real/sub")
	mk("other")
	link("real", "rel")                      // relative link
	link(filepath.Join(dir, "other"), "abs") // absolute link
	link("real/sub", "deep")
	link("loop1", "loop2")
	link("loop2", "loop1")
	link("/", "root")

	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", "real/sub", "real/sub"},
		{"relative link", "rel/sub", "real/sub"},
		{"absolute link", "abs/x", "other/x"},
		{"missing tail is lexical", "rel/nope/deeper", "real/nope/deeper"},
		{"dot dot after a link is the target's parent", "deep/..", "real"},
		{"dot dot lexically inside", "real/sub/../sub", "real/sub"},
		{"doubled slashes", "real//sub", "real/sub"},
		{"trailing slash", "real/sub/", "real/sub"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(dir + "/" + tc.in) // raw: keep // and trailing /
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, tc.want); got != want {
				t.Errorf("Resolve(%s) = %s, want %s", tc.in, got, want)
			}
		})
	}
	if got, err := Resolve(filepath.Join(dir, "root")); err != nil || got != "/" {
		t.Errorf("link to / resolved to %q, %v; want /", got, err)
	}
	if _, err := Resolve(filepath.Join(dir, "loop1/x")); err == nil {
		t.Error("symlink loop: want an error")
	}
}

// realTemp is t.TempDir with its own symlinks resolved, so expected
// values can be compared with resolved ones.
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestResolverMatchesResolve: the remembering resolver Derive uses gives
// Resolve's answer for every path, in any order of asking, with
// symlinks, missing parts and /proc among them.
func TestResolverMatchesResolve(t *testing.T) {
	d := tree(t, "a/b/c/f", "a/b/d/", "a/l -> b", "a/abs -> $T/a/b/d", "a/b/up -> ..", "a/dangle -> $T/nowhere/x", "a/b/c/self -> $T/a/b/c")
	paths := []string{
		d + "/a", d + "/a/b", d + "/a/b/c", d + "/a/b/c/f", d + "/a/b/c/missing", d + "/a/b/missing/deeper",
		d + "/a/l", d + "/a/l/c/f", d + "/a/abs/x", d + "/a/b/up/b/c", d + "/a/dangle", d + "/a/dangle/y",
		d + "/a/b/c/self/f", d + "/a/b/c/f/under-a-file", "/proc/self/fd", "/proc/self/fd/0", "/dev/stdin",
	}
	reversed := slices.Clone(paths)
	slices.Reverse(reversed)
	for _, order := range [][]string{paths, reversed} {
		rs := newResolver()
		for _, p := range order {
			want, werr := Resolve(p)
			got, gerr := rs.resolve(p)
			if got != want || (werr == nil) != (gerr == nil) {
				t.Errorf("resolve(%s) = %q, %v; Resolve: %q, %v", p, got, gerr, want, werr)
			}
		}
	}
}
