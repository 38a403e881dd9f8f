package bwrap

import (
	"github.com/guardrun/guardrun/internal/cloexec"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/guardrun/guardrun/sandbox"
)

func maskProfile(ws string) *sandbox.Profile {
	return &sandbox.Profile{
		ReadWrite:    []string{ws},
		Deny:         []string{filepath.Join(ws, ".env"), filepath.Join(ws, "creds/key")},
		ReadOnlyOver: []string{filepath.Join(ws, "cfg.yaml")},
		Protected:    []string{filepath.Join(ws, "cfg.yaml")},
		Cwd:          ws,
	}
}

func TestMaskPlaceholdersRemoved(t *testing.T) {
	ws := t.TempDir()
	p := maskProfile(ws)
	h, err := holdMasks(p, newStatCache())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{".env", "creds", "cfg.yaml"} {
		fi, err := os.Lstat(filepath.Join(ws, n))
		if err != nil || !fi.IsDir() || !emptyDir(filepath.Join(ws, n)) {
			t.Errorf("%s: want an empty placeholder directory, got %v, %v", n, fi, err)
		}
	}
	h.release()
	ents, _ := os.ReadDir(ws)
	if len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// A placeholder another run is still masking (it holds the shared lock)
// stays; removing it would unmount that run's mask.
func TestMaskPlaceholderKeptWhileInUse(t *testing.T) {
	ws := t.TempDir()
	p := maskProfile(ws)
	first, err := holdMasks(p, newStatCache())
	if err != nil {
		t.Fatal(err)
	}
	second, err := holdMasks(p, newStatCache())
	if err != nil {
		t.Fatal(err)
	}
	first.release()
	if _, err := os.Lstat(filepath.Join(ws, ".env")); err != nil {
		t.Errorf("placeholder removed while another run holds it: %v", err)
	}
	second.release() // not its creator: leaves it
	if _, err := os.Lstat(filepath.Join(ws, ".env")); err != nil {
		t.Errorf("a run removed a placeholder it did not create: %v", err)
	}
}

// A directory the user filled meanwhile is not a placeholder any more.
func TestMaskPlaceholderWithContentKept(t *testing.T) {
	ws := t.TempDir()
	h, err := holdMasks(maskProfile(ws), newStatCache())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(ws, ".env"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".env", "x"), []byte("user data"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.release()
	if b, err := os.ReadFile(filepath.Join(ws, ".env", "x")); err != nil || string(b) != "user data" {
		t.Errorf("user's file: %q, %v", b, err)
	}
}

func TestCloseOnExecAll(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := cloexec.All(); err != nil {
		t.Fatal(err)
	}
	r1, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	if e != 0 || r1&syscall.FD_CLOEXEC == 0 {
		t.Errorf("fd %d not close-on-exec (%v)", fd, e)
	}
}

// Another run's placeholder, seen existing, removed by its creator before
// this run holds it (make -j2 in one tree): this run must not render a
// bind of the vanished path (bwrap: "Can't find source path") but make
// the mount point itself.
func TestMaskPlaceholderVanishedBeforeHold(t *testing.T) {
	ws := t.TempDir()
	p := maskProfile(ws)
	stat := newStatCache()
	for _, n := range []string{".env", "creds", "cfg.yaml"} {
		stat.created(filepath.Join(ws, n)) // seen, then removed by its creator
	}
	h, err := holdMasks(p, stat)
	if err != nil {
		t.Fatal(err)
	}
	args, err := Args(p, Options{SeccompFD: SeccompFD, StatusFD: StatusFD, Stat: stat.stat})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		if a != "--ro-bind" && a != "--bind" && a != "--ro-bind-try" {
			continue
		}
		if _, err := os.Lstat(args[i+1]); err != nil {
			t.Errorf("%s %s: source gone: %v", a, args[i+1], err)
		}
	}
	for _, n := range []string{".env", "creds", "cfg.yaml"} {
		if !emptyDir(filepath.Join(ws, n)) {
			t.Errorf("%s: no placeholder made", n)
		}
	}
	h.release()
	if ents, _ := os.ReadDir(ws); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// The same with only a protected name: seen as another run's empty
// directory, gone before this run looks into it. Nothing else makes this
// run start over, so the look itself must notice.
func TestMaskProtectedVanishedBeforeHold(t *testing.T) {
	ws := t.TempDir()
	cfg := filepath.Join(ws, "cfg.yaml")
	p := &sandbox.Profile{ReadWrite: []string{ws}, ReadOnlyOver: []string{cfg}, Protected: []string{cfg}, Cwd: ws}
	stat := newStatCache()
	stat.created(cfg) // seen, then removed by its creator
	h, err := holdMasks(p, stat)
	if err != nil {
		t.Fatal(err)
	}
	defer h.release()
	args, err := Args(p, Options{SeccompFD: SeccompFD, StatusFD: StatusFD, Stat: stat.stat})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		if (a == "--ro-bind" || a == "--bind") && args[i+1] == cfg {
			if _, err := os.Lstat(cfg); err != nil {
				t.Errorf("%s %s: source gone: %v", a, cfg, err)
			}
		}
	}
}
