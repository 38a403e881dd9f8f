package sockdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// deepBase makes a fresh directory (short) and one below it too deep for
// a socket path (deep).
func deepBase(t *testing.T) (short, deep string) {
	t.Helper()
	short = t.TempDir()
	deep = short
	for len(deep) < MaxPath {
		deep = filepath.Join(deep, "a-rather-long-directory-name")
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	return short, deep
}

func TestMake(t *testing.T) {
	short, deep := deepBase(t)
	for _, c := range []struct {
		name, base, want string
	}{
		{"fits", short, short + "/"},
		{"too deep", deep, "/tmp/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, err := Make(c.base, "sockdir-test-", "control.sock")
			if err != nil {
				t.Fatal(err)
			}
			defer os.Remove(dir)
			if !strings.HasPrefix(dir, c.want) || len(filepath.Join(dir, "control.sock")) > MaxPath {
				t.Errorf("Make(%q) = %q, want a directory in %s whose socket fits", c.base, dir, c.want)
			}
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: mode %v, want 0700", dir, fi.Mode().Perm())
			}
		})
	}
	if entries, _ := os.ReadDir(deep); len(entries) != 0 {
		t.Errorf("Make left %d entries in the base it did not use", len(entries))
	}
}

func TestBase(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ xdg, tmp, want string }{
		{dir, "", dir},
		{"relative", "", "/tmp"},
		{filepath.Join(dir, "missing"), dir, dir},
		{"", dir, dir},
		{"", "/nonexistent", "/tmp"},
		{"", file, "/tmp"},
		{"", "relative", "/tmp"},
		{file, file, "/tmp"},
	} {
		t.Setenv("TMPDIR", c.tmp)
		got := Base(func(k string) string {
			if k == "XDG_RUNTIME_DIR" {
				return c.xdg
			}
			return ""
		})
		if got != c.want {
			t.Errorf("Base with XDG_RUNTIME_DIR=%q, TMPDIR=%q = %q, want %q", c.xdg, c.tmp, got, c.want)
		}
	}
}
