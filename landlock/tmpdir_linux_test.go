package landlock

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/sandbox"
)

// TestTmpDirSweptAfterSIGKILL: the $TMPDIR of a command whose guardrun
// was killed with SIGKILL (left behind: nothing was there to remove it)
// is removed when another command ends, with what the command made
// there (a directory it made mode 0) and without following the link it
// left there; the $TMPDIR of a command still running is not touched, nor
// a directory without a lock file (an older guardrun's), nor one whose
// lock file is a link.
func TestTmpDirSweptAfterSIGKILL(t *testing.T) {
	requireLandlock(t)
	base, err := os.MkdirTemp("/var/tmp", "guardrun-sweep-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeTree(base) })
	tmp := filepath.Join(base, "tmp")
	ws := filepath.Join(base, "ws")
	for _, d := range []string{tmp, ws, filepath.Join(ws, "kept")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "kept/file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	// Neither may go: an older guardrun's directory, and a directory
	// whose lock file is a link to a free lock file.
	legacy := filepath.Join(tmp, tmpPrefix+"legacy")
	linked := filepath.Join(tmp, tmpPrefix+"linked")
	for _, d := range []string{legacy, linked} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "free.lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "free.lock"), linked+tmpLockSuffix); err != nil {
		t.Fatal(err)
	}

	// A guardrun (this test binary as a helper) runs a command that
	// fills its $TMPDIR, and is killed.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(self, "-test.run=^TestTmpSweepHelper$", "-test.count=1")
	helper.Env = append(os.Environ(), "GUARDRUN_SWEEP_HELPER_WS="+ws)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Process.Kill()
	stale := waitLine(t, filepath.Join(ws, "stale"))
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	if _, err := os.Lstat(filepath.Join(stale, "d")); err != nil {
		t.Fatalf("the killed guardrun's $TMPDIR is not there to sweep: %v", err)
	}

	// A command still running, in this process.
	p := sweepProfile(t, ws)
	c, err := Command(context.Background(), p, []string{"/bin/sh", "-c", `echo x > "$TMPDIR/mine" && echo "$TMPDIR" > live.tmp && mv live.tmp live && exec sleep 100`},
		[]string{"PATH=/usr/bin:/bin"}, Config{Accept: []string{AcceptDenyCreate}, StateDir: testState})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	live := waitLine(t, filepath.Join(ws, "live"))

	// Another command ends: the sweep.
	if st, out := run(t, p, nil, "true"); st != 0 {
		t.Fatalf("status %d: %s", st, out)
	}
	if _, err := os.Lstat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed guardrun's $TMPDIR %s is still there: %v", stale, err)
	}
	if _, err := os.Lstat(stale + tmpLockSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("its lock file is still there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "kept/file")); err != nil || string(b) != "x" {
		t.Errorf("the sweep followed the link in the $TMPDIR: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(live, "mine")); err != nil || string(b) != "x\n" {
		t.Errorf("the running command's $TMPDIR was touched: %q, %v", b, err)
	}
	for _, d := range []string{legacy, linked} {
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}

	if err := c.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if st, err := c.Wait(); err != nil || st != 143 {
		t.Fatalf("the running command: status %d, %v", st, err)
	}
	for _, p := range []string{live, live + tmpLockSuffix} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after its command: %v", p, err)
		}
	}
}

// TestTmpSweepHelper is TestTmpDirSweptAfterSIGKILL's guardrun: it runs
// a command that makes a directory mode 0 and a link out of its $TMPDIR,
// says where that is, and sleeps until the test kills this process.
func TestTmpSweepHelper(t *testing.T) {
	ws := os.Getenv("GUARDRUN_SWEEP_HELPER_WS")
	if ws == "" {
		t.Skip("the helper of TestTmpDirSweptAfterSIGKILL")
	}
	p := sweepProfile(t, ws)
	script := `mkdir -p "$TMPDIR/d/e" && echo x > "$TMPDIR/d/e/f" && chmod 0 "$TMPDIR/d" && ln -s "$PWD/kept" "$TMPDIR/link" &&
		echo "$TMPDIR" > stale.tmp && mv stale.tmp stale && exec sleep 100`
	c, err := Command(context.Background(), p, []string{"/bin/sh", "-c", script}, []string{"PATH=/usr/bin:/bin"}, Config{Accept: []string{AcceptDenyCreate}, StateDir: testState})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	st, err := c.Wait()
	t.Fatalf("the helper should have been killed; the command ended: %d, %v", st, err)
}

func sweepProfile(t *testing.T, ws string) *sandbox.Profile {
	t.Helper()
	p, err := sandbox.Derive(sandbox.Spec{
		Zones:      []sandbox.Zone{{Name: "ws", Root: ws, Writable: true}},
		SystemRead: sandbox.DefaultSystemPaths,
		Cwd:        ws,
		Home:       ws,
	})
	if err != nil {
		t.Fatal(err)
	}
	p.PrivateTmp = true
	return p
}

// waitLine waits (at most 20 s) for the file at path and returns its
// first line.
func waitLine(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not appear", path)
	return ""
}
