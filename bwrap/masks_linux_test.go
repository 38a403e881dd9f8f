package bwrap

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/guardrun/guardrun/internal/cloexec"
	"github.com/guardrun/guardrun/internal/testenv"
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

// runProfile is a sandbox over ws (writable) and the system, with
// denied paths whose first missing components are one and several
// levels up, and the built-in protected names (all missing in ws).
func runProfile(t *testing.T, ws string) *sandbox.Profile {
	t.Helper()
	p, err := sandbox.Derive(sandbox.Spec{
		Zones:        []sandbox.Zone{{Name: "ws", Root: ws, Writable: true}},
		SystemRead:   sandbox.DefaultSystemPaths,
		Deny:         []string{filepath.Join(ws, "creds/key"), filepath.Join(ws, "secrets/prod/a/key")},
		DenyNames:    []string{".env"},
		ProtectNames: sandbox.DefaultProtect,
		Cwd:          ws,
		Home:         ws,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func requireBwrap(t *testing.T) {
	t.Helper()
	if err := Check(); err != nil {
		testenv.Missing(t, "bwrap unavailable: %v", err)
	}
}

// runIn runs script in p's sandbox and returns its status and output.
func runIn(t *testing.T, p *sandbox.Profile, script string) (int, string) {
	t.Helper()
	c, err := Command(context.Background(), p, []string{"/bin/sh", "-c", script}, []string{"PATH=/usr/bin:/bin"})
	if err != nil {
		t.Error(err)
		return -1, ""
	}
	var out bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Errorf("start: %v", err)
		return -1, ""
	}
	status, err := c.Wait()
	if err != nil {
		t.Errorf("wait: %v\n%s", err, out.String())
	}
	return status, out.String()
}

// TestMaskNestedPlaceholderRemoved: a denied path whose parent is
// missing too is masked at the first missing component, the placeholder
// Command made, and nothing is left in the tree after the command (bwrap
// made a mount point inside the placeholder when the mask went on the
// path below it, and the placeholder stayed for ever).
func TestMaskNestedPlaceholderRemoved(t *testing.T) {
	requireBwrap(t)
	ws := t.TempDir()
	p := runProfile(t, ws)
	status, out := runIn(t, p, `for d in creds secrets; do
		if mkdir $d/x 2>/dev/null || [ -n "$(ls -A $d)" ]; then echo "$d: writable or not empty"; fi
	done; echo ok`)
	if status != 0 || out != "ok\n" {
		t.Errorf("status %d:\n%s", status, out)
	}
	if ents, _ := os.ReadDir(ws); len(ents) != 0 {
		var names []string
		filepath.WalkDir(ws, func(p string, _ fs.DirEntry, _ error) error { names = append(names, p); return nil })
		t.Errorf("left behind: %q", names[1:])
	}
}
