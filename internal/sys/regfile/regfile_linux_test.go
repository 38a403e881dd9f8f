package regfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// opened watches path's inode with inotify and reports whether anything
// opened it while f ran.
func opened(t *testing.T, path string, f func()) bool {
	t.Helper()
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(in)
	if _, err := unix.InotifyAddWatch(in, path, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	f()
	buf := make([]byte, 4096)
	n, err := unix.Read(in, buf)
	if errors.Is(err, unix.EAGAIN) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// within runs f and fails the test if it has not returned in 5 s (an
// open that waits for a FIFO's writer).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still waiting after 5 s", what)
	}
}

func TestOpenRefusesWithoutOpening(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	targets := map[string]string{"a named pipe": fifo}
	if os.Geteuid() == 0 {
		// A character device of our own (the null device's numbers),
		// so that no other process's opens are counted.
		dev := filepath.Join(dir, "null")
		if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
		targets["a character device"] = dev
	}
	for what, target := range targets {
		link := filepath.Join(dir, "link-"+filepath.Base(target))
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{target, link} {
			var err error
			saw := opened(t, target, func() {
				within(t, p, func() { _, err = ReadFile(p, 1<<20) })
			})
			if saw {
				t.Errorf("%s (%s): opened, want refused before any open", what, p)
			}
			if !IsNotRegular(err) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), what) {
				t.Errorf("%s (%s): %v, want a not-regular error naming the path and %q", what, p, err, what)
			}
		}
	}
	if _, _, err := Open(dir); !IsNotRegular(err) || !strings.Contains(err.Error(), "a directory") {
		t.Errorf("a directory: %v, want refused as one", err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config")
	want := []byte("rules: []\n")
	if err := os.WriteFile(file, want, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("config", link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, link} {
		got, err := ReadFile(p, 100)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", p, got, err, want)
		}
	}
	var tl *TooLargeError
	if _, err := ReadFile(file, 4); !errors.As(err, &tl) || tl.Size != int64(len(want)) {
		t.Errorf("ReadFile over the limit: %v, want a TooLargeError with its size", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 100); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want ErrNotExist", err)
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(file, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(file, 100); !errors.Is(err, os.ErrPermission) {
			t.Errorf("a file without read permission: %v, want ErrPermission", err)
		}
	}
}
