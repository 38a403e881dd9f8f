package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadRegularAttacks: what a sandboxed command can put where a
// config file is read (a project file, the user config,
// $GUARDRUN_CONFIG): ReadRegular refuses each without waiting and reads
// only a regular file, also through a link.
func TestReadRegularAttacks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(dir, "reg.yaml")
	if err := os.WriteFile(reg, []byte("mode: approve-all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := func(to string) string {
		p := filepath.Join(dir, "l-"+filepath.Base(to))
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	loop := filepath.Join(dir, "loop")
	os.Symlink(loop, loop)
	rows := []struct {
		name, path, want string
	}{
		{"a FIFO", fifo, "not a regular file"},
		{"a link to a FIFO", link(fifo), "not a regular file"},
		{"a directory", dir, "not a regular file"},
		{"a link to /dev/zero", link("/dev/zero"), "not a regular file"},
		{"/dev/null", "/dev/null", "not a regular file"},
		{"a link loop", loop, "too many levels"},
		{"a link to a regular file", link(reg), ""},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			type res struct {
				data []byte
				err  error
			}
			done := make(chan res, 1)
			go func() {
				data, err := ReadRegular(r.path)
				done <- res{data, err}
			}()
			select {
			case got := <-done:
				if r.want == "" {
					if got.err != nil || !strings.Contains(string(got.data), "approve-all") {
						t.Fatalf("ReadRegular(%s): %q, %v", r.path, got.data, got.err)
					}
					return
				}
				if got.err == nil || !strings.Contains(got.err.Error(), r.want) {
					t.Fatalf("ReadRegular(%s): %v; want an error saying %q", r.path, got.err, r.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("ReadRegular(%s) waited", r.path)
			}
		})
	}
}
