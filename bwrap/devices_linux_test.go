package bwrap

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// deviceParent is a fresh directory where this process may make device
// nodes; the test is skipped where it may not (not root, or nodev).
func deviceParent(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("only root's device nodes are copied")
	}
	dir := t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Flags&unix.ST_NODEV != 0 {
		t.Skipf("%s is on a file system mounted nodev", dir)
	}
	if err := unix.Mknod(filepath.Join(dir, "probe"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Skipf("cannot make device nodes here: %v", err)
	}
	os.Remove(filepath.Join(dir, "probe"))
	return dir
}

// TestCopyDevices: each copy is the host's device with its mode and
// owner, and the directory of copies is gone after remove.
func TestCopyDevices(t *testing.T) {
	parent := deviceParent(t)
	d := copyDevices([]string{parent}, hostDevices)
	if d == nil {
		t.Fatal("no copies were made")
	}
	var got, want []string
	for _, n := range hostDevices {
		var st unix.Stat_t
		if unix.Stat(n, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Uid == 0 {
			want = append(want, n)
		}
	}
	for _, b := range d.binds() {
		got = append(got, b[1])
		var host, cp unix.Stat_t
		if err := unix.Stat(b[1], &host); err != nil {
			t.Fatal(err)
		}
		if err := unix.Lstat(b[0], &cp); err != nil {
			t.Fatal(err)
		}
		type meta struct {
			Mode, Uid, Gid uint32
			Rdev           uint64
		}
		if diff := cmp.Diff(meta{cp.Mode, cp.Uid, cp.Gid, cp.Rdev}, meta{host.Mode, host.Uid, host.Gid, host.Rdev}); diff != "" {
			t.Errorf("the copy of %s (-got +want):\n%s", b[1], diff)
		}
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("nodes copied (-got +want):\n%s", diff)
	}
	d.remove()
	if _, err := os.Stat(d.dir); !os.IsNotExist(err) {
		t.Errorf("the copies' directory %s is still there after remove: %v", d.dir, err)
	}
}

// TestCopyDevicesSweepsLeftovers: a directory of copies a guardrun
// killed mid-command left is removed by the next command's copies once
// it is older than deviceCopyAge; a newer one (a command setting up),
// another user's, and a file of that name stay.
func TestCopyDevicesSweepsLeftovers(t *testing.T) {
	parent := deviceParent(t)
	old := time.Now().Add(-2 * deviceCopyAge)
	mk := func(name string, uid int, mtime time.Time) {
		p := filepath.Join(parent, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mknod(filepath.Join(p, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	mk(devicePrefix+"left", 0, old)
	mk(devicePrefix+"setting-up", 0, time.Now())
	mk(devicePrefix+"other-user", 65534, old)
	if err := os.WriteFile(filepath.Join(parent, devicePrefix+"file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(parent, devicePrefix+"file"), old, old)

	d := copyDevices([]string{parent}, hostDevices)
	if d == nil {
		t.Fatal("no copies were made")
	}
	defer d.remove()
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		if p := filepath.Join(parent, e.Name()); p != d.dir {
			got = append(got, e.Name())
		}
	}
	want := []string{devicePrefix + "file", devicePrefix + "other-user", devicePrefix + "setting-up"}
	slices.Sort(got)
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("left in the directory besides the new copies (-got +want):\n%s", diff)
	}
}
