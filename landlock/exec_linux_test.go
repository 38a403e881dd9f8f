package landlock

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/testing/testenv"
	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp/notify"
)

func requireLandlock(t *testing.T) {
	t.Helper()
	if err := Check(); err != nil {
		if os.Getenv("GUARDRUN_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("landlock unavailable (GUARDRUN_REQUIRE_SANDBOX=1): %v", err)
		}
		t.Skipf("landlock unavailable: %v", err)
	}
}

func workspace(t *testing.T, network bool) *sandbox.Profile {
	t.Helper()
	ws, err := os.MkdirTemp("/var/tmp", "guardrun-landlock-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	p, err := sandbox.Derive(sandbox.Spec{
		Zones:      []sandbox.Zone{{Name: "ws", Root: ws, Writable: true}},
		SystemRead: sandbox.DefaultSystemPaths,
		Cwd:        ws,
		Home:       ws,
		Network:    network,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, p *sandbox.Profile, connect []uint16, script string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Command(ctx, p, []string{"/bin/bash", "-c", script}, []string{"PATH=/usr/bin:/bin"}, Config{Accept: []string{AcceptDenyCreate}, ConnectTCP: connect, StateDir: testState})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	st, err := c.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return st, out.String()
}

// TestConnectTCPEnforced: with the proxy hook's port list, TCP connects
// reach the listed port and no other (the network being on, so that the
// seccomp filter lets the socket be made).
func TestConnectTCPEnforced(t *testing.T) {
	requireLandlock(t)
	p := workspace(t, true)
	var ports []string
	for range 2 {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	allowed, _ := strconv.Atoi(ports[0])
	script := `(exec 3<>/dev/tcp/127.0.0.1/` + ports[0] + `) && echo allowed-ok; (exec 3<>/dev/tcp/127.0.0.1/` + ports[1] + `) 2>&1 || echo other-refused`
	st, out := run(t, p, []uint16{uint16(allowed)}, script)
	if st != 0 || !strings.Contains(out, "allowed-ok") || !strings.Contains(out, "other-refused") || !strings.Contains(out, "Permission denied") {
		t.Errorf("status %d:\n%s", st, out)
	}
	// Without the hook, the network on: both reachable.
	_, out = run(t, p, nil, script)
	if strings.Contains(out, "other-refused") {
		t.Errorf("without ports, the network on:\n%s", out)
	}
}

// TestTmpDirRemoved: the command's $TMPDIR is its own and is gone
// after it ends, whatever it left there.
func TestTmpDirRemoved(t *testing.T) {
	requireLandlock(t)
	p := workspace(t, false)
	p.PrivateTmp = true
	st, out := run(t, p, nil, `mkdir -p "$TMPDIR/d/e" && echo x > "$TMPDIR/d/e/f" && chmod 0 "$TMPDIR/d" && echo "$TMPDIR"`)
	dir := strings.TrimSpace(out)
	if st != 0 || !strings.HasPrefix(dir, os.TempDir()) {
		t.Fatalf("status %d: %q", st, out)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left behind: %v", dir, err)
	}
	if filepath.Dir(dir) != filepath.Clean(os.TempDir()) {
		t.Errorf("TMPDIR %s", dir)
	}
}

// TestTmpDirUnusableBase: a $TMPDIR that names no directory (an agent's
// TMPDIR=/nonexistent, a file) does not refuse the command: its own
// $TMPDIR is made in /tmp instead, and removed after.
func TestTmpDirUnusableBase(t *testing.T) {
	requireLandlock(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{"/nonexistent", file, "relative"} {
		t.Setenv("TMPDIR", base)
		p := workspace(t, false)
		p.PrivateTmp = true
		st, out := run(t, p, nil, `echo x > "$TMPDIR/f" && echo "$TMPDIR"`)
		dir := strings.TrimSpace(out)
		if st != 0 || filepath.Dir(dir) != "/tmp" {
			t.Errorf("TMPDIR=%s: status %d, %q; want the command's $TMPDIR in /tmp", base, st, out)
			continue
		}
		if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("TMPDIR=%s: %s left behind: %v", base, dir, err)
		}
	}
}

// TestTmpDirRemovedUnprivileged runs TestTmpDirRemoved and
// TestTmpDirSweptAfterSIGKILL again as an unprivileged user when the
// suite runs as root: without CAP_DAC_READ_SEARCH a directory the command
// made mode 0 cannot be listed until its mode is given back, and the
// removal (and the sweep) must still get everything.
func TestTmpDirRemovedUnprivileged(t *testing.T) {
	const user = "guardrun-test"
	if os.Getenv("GUARDRUN_TEST_CHILD") != "" || os.Geteuid() != 0 {
		t.Skip("not root, or the re-executed copy: TestTmpDirRemoved covers it")
	}
	runAsUser(t, user, "TestTmpDirRemoved", "TestTmpDirSweptAfterSIGKILL")
}

// TestNotifyRegistry: a handler added to Cmd.Notify before Start serves
// the command's calls of that name: it reads the path the command passed
// and its answer is what the command's call returns.
func TestNotifyRegistry(t *testing.T) {
	requireLandlock(t)
	p := workspace(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Command(ctx, p, []string{"/usr/bin/python3", "-c", `
import os
try:
    os.getxattr("served/by/guardrun", "user.x")
except OSError as e:
    print("errno", e.errno)
`}, []string{"PATH=/usr/bin:/bin"}, Config{Accept: []string{AcceptDenyCreate}, StateDir: testState})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var paths []string
	if err := c.Notify.Handle("getxattr", func(r *notify.Request) notify.Response {
		path, err := r.ReadPath(r.Args[0])
		if err != nil {
			return notify.Fail(syscall.EFAULT)
		}
		mu.Lock()
		paths = append(paths, path)
		mu.Unlock()
		return notify.Fail(syscall.ENOTSUP)
	}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if st, err := c.Wait(); err != nil || st != 0 {
		t.Fatalf("status %d, %v\n%s", st, err, out.String())
	}
	if got := strings.TrimSpace(out.String()); got != "errno "+strconv.Itoa(int(syscall.ENOTSUP)) {
		t.Errorf("the command saw %q, want the handler's ENOTSUP", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) != 1 || paths[0] != "served/by/guardrun" {
		t.Errorf("the handler read %q", paths)
	}
}

// runAsUser runs the named tests of this test binary again as user (a
// copy of the binary the user can run, GUARDRUN_TEST_CHILD set) and
// fails unless each of them passed.
func runAsUser(t *testing.T, user string, tests ...string) {
	t.Helper()
	requireLandlock(t)
	testenv.LookPath(t, "runuser")
	testenv.User(t, user)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/var/tmp", "guardrun-landlock-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "landlock.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("runuser", "-u", user, "--", "env", "GUARDRUN_TEST_CHILD=1",
		"GUARDRUN_REQUIRE_SANDBOX="+os.Getenv("GUARDRUN_REQUIRE_SANDBOX"), "PATH=/usr/bin:/bin",
		bin, "-test.v", "-test.count=1", "-test.run=^("+strings.Join(tests, "|")+")$")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	passed := err == nil
	for _, name := range tests {
		passed = passed && strings.Contains(string(out), "--- PASS: "+name+" ")
	}
	if !passed {
		t.Fatalf("as %s: %v\n%s", user, err, out)
	}
}
