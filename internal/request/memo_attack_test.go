package request

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestProjectFileSwappedForFIFO: a command in the workspace swaps
// .guardrun.yaml between a regular file and a FIFO, so that guardrun's
// walk up sees a file and its read opens the FIFO, which waits for a
// writer that never comes: guardrun (and a long-lived guardrun serve,
// one of its threads and the client's descriptors per request) would
// hang. A project file that is not a regular file when read is an
// error, at once.
func TestProjectFileSwappedForFIFO(t *testing.T) {
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	proj := filepath.Join(work, ProjectFile)
	reg, fifo := filepath.Join(work, "reg"), filepath.Join(work, "fifo")
	put := func() {
		if err := os.WriteFile(reg, []byte(blockMakeForTest), 0o644); err != nil {
			t.Error(err)
		}
		os.Remove(fifo)
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Error(err)
		}
	}
	put()
	if err := os.Rename(reg, proj); err != nil {
		t.Fatal(err)
	}
	stopFlipping := flipping(func() {
		put()
		os.Rename(fifo, proj)
		os.Rename(reg, proj)
	})
	e := &Env{Cwd: work, Home: home, pwHome: home, ConfigHome: filepath.Join(home, ".config"),
		StateDir: filepath.Join(home, ".local", "state", "guardrun"), Getenv: func(string) string { return "" }}
	done := make(chan int)
	go func() {
		n := 0
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); n++ {
			Load(Options{}, e)
		}
		done <- n
	}()
	select {
	case n := <-done:
		t.Logf("%d loads", n)
	case <-time.After(10 * time.Second):
		t.Errorf("a load hangs on a FIFO put in place of the project file")
	}
	stopFlipping()
	// Release a load that hangs: a writer opens the FIFO now in place.
	for i := 0; i < 100; i++ {
		select {
		case <-done:
			return
		default:
		}
		if f, err := os.OpenFile(proj, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const blockMakeForTest = "shell:\n  rules:\n    - {pattern: make, allowed: false}\n"
