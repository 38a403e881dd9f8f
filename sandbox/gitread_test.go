package sandbox

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestDeriveGitConfigNotAFile: a command in the workspace makes a
// directory shaped like a git directory whose config is a FIFO (or a
// link to one, or to /dev/zero: the test uses FIFOs, which cannot fill
// the machine's memory if the read is not bounded). Deriving the next
// command's profile reads that config for its hooks path: it must not
// wait for a writer forever (guardrun hung; a long-lived guardrun serve
// keeps a thread and the client's descriptors per request) nor read
// without end. What it cannot read leaves the directory protected as
// a git directory, as before. (A FIFO swapped in between the look and
// the open is a limitation: see the package doc.)
func TestDeriveGitConfigNotAFile(t *testing.T) {
	d := tree(t, "ws/fake/HEAD", "ws/fake/objects/", "ws/fake/refs/", "ws/fake/hooks/",
		"ws/other/HEAD", "ws/other/objects/", "ws/other/refs/", "ws/other/hooks/", "ws/.git")
	ws := d + "/ws"
	if err := syscall.Mkfifo(ws+"/fake/config", 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(ws+"/fifo", 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ws+"/fifo", ws+"/other/config"); err != nil {
		t.Fatal(err)
	}
	// A .git file whose gitdir line git follows: a FIFO behind a link.
	os.Remove(ws + "/.git")
	if err := os.Symlink(ws+"/fifo", ws+"/.git"); err != nil {
		t.Fatal(err)
	}
	deriveReturns(t, ws, func() {
		// A writer opens each FIFO.
		for _, f := range []string{ws + "/fake/config", ws + "/fifo"} {
			if w, err := os.OpenFile(f, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
	}, ws+"/fake/config", ws+"/fake/hooks/pre-commit", ws+"/other/hooks/pre-commit")
}

// deriveReturns derives the profile of ws (one rw zone, the default
// protected names), fails t if Derive has not returned within 10 s
// (calling unblock, for up to 10 s more, to let it go), and fails it for
// each of readOnly that the profile lets a command write.
func deriveReturns(t *testing.T, ws string, unblock func(), readOnly ...string) {
	t.Helper()
	done := make(chan *Profile, 1)
	go func() {
		p, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: ws, Writable: true}}, ProtectNames: DefaultProtect, Cwd: ws})
		if err != nil {
			t.Error(err)
		}
		done <- p
	}()
	select {
	case p := <-done:
		if p == nil {
			return
		}
		for _, x := range readOnly {
			if _, w := p.Access(x); w {
				t.Errorf("%s is writable", x)
			}
		}
	case <-time.After(10 * time.Second):
		t.Errorf("Derive still reads a git directory's config after 10 s")
		for give := time.After(10 * time.Second); ; {
			unblock()
			select {
			case <-done:
				return
			case <-give:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}
