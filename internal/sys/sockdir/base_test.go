package sockdir

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestTempDirLinks: $TMPDIR (or $XDG_RUNTIME_DIR) inside the
// workspace, a directory a sandboxed command can replace with a link
// between two commands (`export TMPDIR := $(CURDIR)/t` in a Makefile
// run with SHELL=guardrun). The next guardrun must not make its sockets,
// or the next command's own $TMPDIR, where the link points: /tmp
// instead. A directory this user cannot write is /tmp too.
func TestTempDirLinks(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("macOS's own $TMPDIR is reached through a link")
	}
	work := t.TempDir()
	real := filepath.Join(work, "t")
	elsewhere := filepath.Join(work, "elsewhere")
	for _, d := range []string{real, elsewhere, filepath.Join(elsewhere, "t")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(work, "link")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	readonly := filepath.Join(work, "ro")
	if err := os.Mkdir(readonly, 0o555); err != nil {
		t.Fatal(err)
	}
	rows := []struct{ name, tmp, want string }{
		{"a directory", real, real},
		{"a directory, trailing slash", real + "/", real + "/"},
		{"a link to a directory", link, "/tmp"},
		{"a path through a linked directory", filepath.Join(link, "t"), "/tmp"},
		{"/proc/self/cwd (the working directory)", "/proc/self/cwd", "/tmp"},
		{"/proc/self/root/tmp", "/proc/self/root/tmp", "/tmp"},
		{"a path longer than PATH_MAX", "/" + strings.Repeat("x/", 3000), "/tmp"},
		// What the kernel reaches: t is no link.
		{"a path with ..", real + "/../t", real + "/../t"},
	}
	if os.Geteuid() != 0 {
		rows = append(rows, struct{ name, tmp, want string }{"a directory this user cannot write", readonly, "/tmp"})
	}
	for _, r := range rows {
		t.Setenv("TMPDIR", r.tmp)
		if got := TempDir(); got != r.want {
			t.Errorf("TMPDIR=%.60s (%s): TempDir() = %q, want %q", r.tmp, r.name, got, r.want)
		}
		t.Setenv("TMPDIR", "/tmp")
		xdg := func(k string) string {
			if k == "XDG_RUNTIME_DIR" {
				return r.tmp
			}
			return ""
		}
		want := r.want
		if want == "/tmp" {
			want = TempDir()
		}
		if got := Base(xdg); got != want {
			t.Errorf("XDG_RUNTIME_DIR=%.60s (%s): Base() = %q, want %q", r.tmp, r.name, got, want)
		}
	}
}

// TestTempDirShared: a $TMPDIR (or $XDG_RUNTIME_DIR) another user
// can rename in: theirs, or writable by group or others without the
// sticky bit. They could move guardrun's socket directory aside and put
// their own in its place, and the clients of `guardrun serve` would send
// them commands and environments: /tmp instead. A sticky directory
// (/tmp itself, /var/tmp) and this user's own 0700 one are used.
func TestTempDirShared(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("macOS's own $TMPDIR is reached through a link")
	}
	root := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		t.Helper()
		d := filepath.Join(root, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		return d
	}
	rows := []struct{ name, dir, want string }{
		{"this user's 0700", mk("own", 0o700), ""},
		{"this user's, sticky and world-writable", mk("sticky", 0o777|os.ModeSticky), ""},
		{"world-writable, not sticky", mk("world", 0o777), "/tmp"},
		{"group-writable, not sticky", mk("group", 0o770), "/tmp"},
		{"/var/tmp", "/var/tmp", ""},
	}
	if os.Geteuid() == 0 {
		other := mk("other", 0o755)
		if err := os.Chown(other, 1, 1); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, struct{ name, dir, want string }{"another user's, writable by this one (root)", other, "/tmp"})
	}
	for _, r := range rows {
		want := r.want
		if want == "" {
			want = r.dir
		}
		t.Setenv("TMPDIR", r.dir)
		if got := TempDir(); got != want {
			t.Errorf("TMPDIR %s: TempDir() = %q, want %q", r.name, got, want)
		}
	}
}

// TestMakeBase: what an environment can name as the base
// ($XDG_RUNTIME_DIR, $TMPDIR). A base that does not exist, or is
// longer than a path may be, is an error (nothing is made elsewhere
// silently); a deep base falls back to a fresh private directory in
// /tmp, never one that already exists.
func TestMakeBase(t *testing.T) {
	short, deep := deepBase(t)
	for _, base := range []string{filepath.Join(short, "missing"), "/" + strings.Repeat("x/", 3000)} {
		if dir, err := Make(base, "sockdir-test-", "control.sock"); err == nil {
			os.Remove(dir)
			t.Errorf("Make(%.40q...) = %q; want an error", base, dir)
		}
	}
	seen := map[string]bool{}
	for range 20 {
		dir, err := Make(deep, "sockdir-test-", "control.sock")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(dir)
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || seen[dir] || !strings.HasPrefix(dir, "/tmp/") {
			t.Fatalf("Make(deep) = %q (%v, %v): want a fresh private directory in /tmp", dir, fi, err)
		}
		seen[dir] = true
	}
}
