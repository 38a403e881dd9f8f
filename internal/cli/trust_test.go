package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/config"
)

// TestTrustFIFO: a command run in a trusted project can replace its
// .guardrun.yaml with a named pipe (or a link to one). `guardrun trust
// --list` and `guardrun trust FILE` say so rather than wait for a
// writer forever.
func TestTrustFIFO(t *testing.T) {
	w := newWorld(t)
	content := "mode: approve-all\n"
	proj := w.write(t, ".guardrun.yaml", content)
	store := config.OpenTrustStore(approval.DefaultStateDir())
	if err := store.Trust(proj, []byte(content)); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(w.root, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		name  string
		place func() error
		args  []string
		want  string
		code  int
	}{
		{"list, a FIFO", func() error { return syscall.Mkfifo(proj, 0o644) }, []string{"trust", "--list"}, "changed since trusted", 0},
		{"list, a link to a FIFO", func() error { return os.Symlink(fifo, proj) }, []string{"trust", "--list"}, "changed since trusted", 0},
		{"trust, a FIFO", func() error { return syscall.Mkfifo(proj, 0o644) }, []string{"trust", proj}, "not a regular file", 1},
	} {
		t.Run(r.name, func(t *testing.T) {
			os.Remove(proj)
			if err := r.place(); err != nil {
				t.Fatal(err)
			}
			type res struct {
				out, errs string
				code      int
			}
			done := make(chan res, 1)
			go func() {
				out, errs, code := guardrun(t, r.args...)
				done <- res{out, errs, code}
			}()
			select {
			case got := <-done:
				if !strings.Contains(got.out+got.errs, r.want) || (got.code == 0) != (r.code == 0) {
					t.Fatalf("guardrun %s: exit %d, stdout %q, stderr %q; want %q", strings.Join(r.args, " "), got.code, got.out, got.errs, r.want)
				}
			case <-time.After(20 * time.Second):
				// Let the blocked open go so the test can end.
				if f, err := os.OpenFile(proj, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				t.Fatalf("guardrun %s waited on the FIFO", strings.Join(r.args, " "))
			}
		})
	}
}
