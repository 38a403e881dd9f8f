package bwrap

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/guardrun/guardrun/internal/sys/cloexec"
	"github.com/guardrun/guardrun/internal/testing/testenv"
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
	h, err := holdMasks(p, newStatCache(p))
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
// stays; removing it would unmount that run's mask. The last run to
// hold it removes it, creator or not.
func TestMaskPlaceholderKeptWhileInUse(t *testing.T) {
	ws := t.TempDir()
	p := maskProfile(ws)
	first, err := holdMasks(p, newStatCache(p))
	if err != nil {
		t.Fatal(err)
	}
	second, err := holdMasks(p, newStatCache(p))
	if err != nil {
		t.Fatal(err)
	}
	first.release()
	for _, n := range []string{".env", "creds", "cfg.yaml"} {
		if !emptyDir(filepath.Join(ws, n)) {
			t.Errorf("placeholder %s removed while another run holds it", n)
		}
	}
	second.release()
	if ents, _ := os.ReadDir(ws); len(ents) != 0 {
		t.Errorf("the last holder left placeholders behind: %v", ents)
	}
}

// An empty directory of the user's own at a masked name is held as a
// mount point, and never removed.
func TestMaskUsersEmptyDirKept(t *testing.T) {
	ws := t.TempDir()
	p := maskProfile(ws)
	for _, mode := range []os.FileMode{0o755, 0o555} {
		if err := os.Mkdir(filepath.Join(ws, ".env"), mode); err != nil {
			t.Fatal(err)
		}
		h, err := holdMasks(p, newStatCache(p))
		if err != nil {
			t.Fatal(err)
		}
		h.release()
		if !emptyDir(filepath.Join(ws, ".env")) {
			t.Errorf("mode %o: the user's empty .env directory was removed", mode)
		}
		os.Remove(filepath.Join(ws, ".env"))
	}
}

// A denied path below another run's placeholder (creds/key under its
// creds) is masked at that placeholder: nothing is made inside it (which
// a user without CAP_DAC_OVERRIDE could not do: mode 0555), and whichever
// run ends last removes it.
func TestMaskUnderAnotherRunsPlaceholder(t *testing.T) {
	for _, firstEnds := range []bool{true, false} {
		ws := t.TempDir()
		p := maskProfile(ws)
		first, err := holdMasks(p, newStatCache(p))
		if err != nil {
			t.Fatal(err)
		}
		stat := newStatCache(p)
		second, err := holdMasks(p, stat)
		if err != nil {
			t.Fatal(err)
		}
		if !emptyDir(filepath.Join(ws, "creds")) {
			t.Errorf("the second run made something inside the first's placeholder")
		}
		args, err := Args(p, Options{SeccompFD: SeccompFD, StatusFD: StatusFD, Stat: stat.stat})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(args, filepath.Join(ws, "creds")) || slices.Contains(args, filepath.Join(ws, "creds/key")) {
			t.Errorf("the mask is not on the placeholder creds: %q", args)
		}
		if firstEnds {
			first.release()
			second.release()
		} else {
			second.release()
			first.release()
		}
		if ents, _ := os.ReadDir(ws); len(ents) != 0 {
			t.Errorf("first ends first %v: left behind: %v", firstEnds, ents)
		}
	}
}

// A directory the user filled meanwhile is not a placeholder any more.
func TestMaskPlaceholderWithContentKept(t *testing.T) {
	ws := t.TempDir()
	h, err := holdMasks(maskProfile(ws), newStatCache(maskProfile(ws)))
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
	stat := newStatCache(p)
	for _, n := range []string{".env", "creds", "cfg.yaml"} {
		seenExisting(stat, filepath.Join(ws, n)) // seen, then removed by its creator
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
	stat := newStatCache(p)
	seenExisting(stat, cfg) // seen, then removed by its creator
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
	c, err := Command(context.Background(), p, []string{"/bin/sh", "-c", script}, []string{"PATH=/usr/bin:/bin"}, Config{})
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

// TestMaskConcurrentRuns: sandboxes started and ended at once in one
// tree (make -j of many recipes) all start, each keeps its masks, and
// nothing is left in the tree after the last one.
func TestMaskConcurrentRuns(t *testing.T) {
	requireBwrap(t)
	ws := t.TempDir()
	p := runProfile(t, ws)
	const workers, runs = 4, 6
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range runs {
				status, out := runIn(t, p, `[ -z "$(ls -A creds; ls -A .vscode; ls -A .bashrc)" ] && ! mkdir .vscode/x 2>/dev/null && ! mkdir creds/key 2>/dev/null && echo > out-`+strconv.Itoa(w)+`-`+strconv.Itoa(i))
				if status != 0 {
					t.Errorf("worker %d run %d: status %d\n%s", w, i, status, out)
				}
			}
		}()
	}
	wg.Wait()
	ents, _ := os.ReadDir(ws)
	var left []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "out-") {
			left = append(left, e.Name())
		}
	}
	if len(left) != 0 || len(ents) != workers*runs {
		t.Errorf("%d outputs of %d; left behind: %q", len(ents)-len(left), workers*runs, left)
	}
}

// seenExisting makes stat answer that path is an existing directory (as
// another run's placeholder was when this run looked), whatever is there.
func seenExisting(stat *statCache, path string) {
	stat.m[path] = statResult{exists: true, isDir: true}
}
