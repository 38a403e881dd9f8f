package bwrap

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestEmptyDirFIFO: emptyDir is asked about a path Lstat saw as
// a directory, in a tree a running command writes: swapped for a FIFO
// in between, it must answer at once (no, not an empty directory)
// rather than wait in open for a writer, with every later command.
func TestEmptyDirFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, link} {
		done := make(chan bool, 1)
		go func() { done <- emptyDir(p) }()
		select {
		case got := <-done:
			if got {
				t.Errorf("emptyDir(%s) = true, want false", p)
			}
		case <-time.After(5 * time.Second):
			// Let the open go, so the test ends.
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			t.Errorf("emptyDir(%s): still waiting after 5 s", p)
		}
	}
	if !emptyDir(empty) {
		t.Errorf("emptyDir(%s) = false, want true", empty)
	}
}
