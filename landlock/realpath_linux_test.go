package landlock

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRealPath: the path guardrun judges an object by is the kernel's
// name for it when that name leads back to it here; an unlinked file is
// named by its last path (its directory is on its mount); what is not a
// path, or is named by a path that now leads elsewhere, has none.
func TestRealPath(t *testing.T) {
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	open := func(p string) (int, unix.Stat_t) {
		t.Helper()
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			t.Fatal(err)
		}
		return fd, st
	}
	file := filepath.Join(real, "f")
	os.WriteFile(file, nil, 0o644)
	fd, st := open(file)
	if p, ok := realPath(fd, &st); !ok || p != file {
		t.Errorf("a file: %q %v, want %q", p, ok, file)
	}

	// Unlinked, and unlinked while another name stays.
	gone := filepath.Join(real, "gone")
	os.WriteFile(gone, nil, 0o644)
	gfd, gst := open(gone)
	os.Remove(gone)
	if p, ok := realPath(gfd, &gst); !ok || p != gone {
		t.Errorf("an unlinked file: %q %v, want %q", p, ok, gone)
	}
	one, other := filepath.Join(real, "one"), filepath.Join(real, "other")
	os.WriteFile(one, nil, 0o644)
	os.Link(one, other)
	ofd, _ := open(one)
	os.Remove(one)
	var ost unix.Stat_t
	unix.Fstat(ofd, &ost)
	if p, ok := realPath(ofd, &ost); !ok || p != one {
		t.Errorf("an unlinked name of a linked file: %q %v, want %q", p, ok, one)
	}

	// A name that leads elsewhere now: the file was replaced.
	moved := filepath.Join(real, "moved")
	os.WriteFile(moved, nil, 0o644)
	mfd, mst := open(moved)
	os.Rename(moved, moved+".old")
	os.WriteFile(moved, nil, 0o644)
	if p, ok := realPath(mfd, &mst); !ok || p != moved+".old" {
		t.Errorf("a renamed file: %q %v, want %q", p, ok, moved+".old")
	}
	mst.Ino++ // as if the kernel named another inode
	if p, ok := realPath(mfd, &mst); ok {
		t.Errorf("a name leading to another inode: %q accepted", p)
	}

	var pp [2]int
	if err := unix.Pipe2(pp[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pp[0])
	defer unix.Close(pp[1])
	var pst unix.Stat_t
	unix.Fstat(pp[0], &pst)
	if p, ok := realPath(pp[0], &pst); ok {
		t.Errorf("a pipe has the path %q", p)
	}
	mfdFd, err := unix.MemfdCreate("x", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(mfdFd)
	var mmst unix.Stat_t
	unix.Fstat(mfdFd, &mmst)
	if p, ok := realPath(mfdFd, &mmst); ok {
		t.Errorf("a memfd has the path %q", p)
	}
}
