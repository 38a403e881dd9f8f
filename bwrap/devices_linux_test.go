package bwrap

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// TestDeviceCopies: as root, a command's /dev/null is a copy made for it,
// in the state directory (Config.FilterCache) or else in the host's /dev,
// and gone when the command has ended; the standard input guardrun gives a
// command with none is that same /dev/null (`[ /dev/stdin -ef /dev/null ]`,
// as on the host), and a chmod or touch of it, by name or through the
// descriptor, leaves the host's node as it was.
func TestDeviceCopies(t *testing.T) {
	cache := rootCopiesCache(t, "as an unprivileged user the host's nodes are bound: their owner, root, is not the command")
	for _, tc := range []struct {
		name, cache, under string
	}{
		{"in the state directory", cache, cache},
		{"in the host's /dev without one", "", "/dev"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fs unix.Statfs_t
			if err := unix.Statfs(tc.under, &fs); err != nil || fs.Flags&unix.ST_NODEV != 0 {
				t.Skipf("%s is on a file system mounted nodev (%v): no copies there", tc.under, err)
			}
			var before unix.Stat_t
			if err := unix.Stat("/dev/null", &before); err != nil {
				t.Fatal(err)
			}
			p := runProfile(t, t.TempDir())
			// The mount's root in its file system: the copy's path there.
			const script = `[ /dev/stdin -ef /dev/null ] || echo "stdin is not /dev/null"
chmod 666 /dev/null; touch /dev/null; chmod 666 /proc/self/fd/0
awk '$5 == "/dev/null" { print "copy " $4 }' /proc/self/mountinfo`
			c, err := Command(context.Background(), p, []string{"/bin/sh", "-c", script}, []string{"PATH=/usr/bin:/bin"}, Config{FilterCache: tc.cache})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			c.Cmd.Stdout, c.Cmd.Stderr = &out, &out
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			if status, err := c.Wait(); err != nil || status != 0 {
				t.Fatalf("status %d, %v:\n%s", status, err, out.String())
			}
			var copies []string
			for _, l := range strings.Split(out.String(), "\n") {
				if rest, ok := strings.CutPrefix(l, "copy "); ok {
					copies = append(copies, rest)
				} else if l != "" {
					t.Error(l)
				}
			}
			if len(copies) == 0 {
				t.Fatalf("no mount at /dev/null inside:\n%s", out.String())
			}
			// The last mount at /dev/null is the one the command sees.
			dir := filepath.Dir(copies[len(copies)-1])
			if tc.under == "/dev" {
				dir = filepath.Join("/dev", dir)
			}
			if !strings.HasPrefix(filepath.Base(dir), ".guardrun-dev-") || filepath.Dir(dir) != tc.under {
				t.Errorf("the command's /dev/null is %s, not a copy in %s", copies[len(copies)-1], tc.under)
			}
			if _, err := os.Lstat(dir); !os.IsNotExist(err) {
				t.Errorf("the copies' directory %s is left after the command (%v)", dir, err)
			}
			var after unix.Stat_t
			if err := unix.Stat("/dev/null", &after); err != nil {
				t.Fatal(err)
			}
			if after.Ctim != before.Ctim || after.Mode != before.Mode {
				t.Errorf("the host's /dev/null changed: mode %o ctime %v, was %o %v", after.Mode, after.Ctim, before.Mode, before.Ctim)
			}
		})
	}
}

// TestDeviceCopiesAtOnce: commands running at the same time each have
// their own copies: a mode one gives its /dev/null is not what the
// other finds, and both directories are gone after.
func TestDeviceCopiesAtOnce(t *testing.T) {
	cache := rootCopiesCache(t, "as an unprivileged user the host's nodes are bound: their owner, root, is not the command")
	p := runProfile(t, t.TempDir())
	modes := []string{"600", "604"}
	outs := make([]bytes.Buffer, len(modes))
	var cmds []*Cmd
	for i, m := range modes {
		// Each sets its mode, waits for the other to have set its own,
		// and says what it finds.
		script := `chmod ` + m + ` /dev/null; sleep 1; stat -c %a /dev/null`
		c, err := Command(context.Background(), p, []string{"/bin/sh", "-c", script}, []string{"PATH=/usr/bin:/bin"}, Config{FilterCache: cache})
		if err != nil {
			t.Fatal(err)
		}
		c.Cmd.Stdout, c.Cmd.Stderr = &outs[i], &outs[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	for i, c := range cmds {
		if status, err := c.Wait(); err != nil || status != 0 {
			t.Errorf("command %d: status %d, %v:\n%s", i, status, err, outs[i].String())
		}
		if got := strings.TrimSpace(outs[i].String()); got != modes[i] {
			t.Errorf("command %d gave its /dev/null mode %s and found %q", i, modes[i], got)
		}
	}
	left, _ := filepath.Glob(filepath.Join(cache, ".guardrun-dev-*"))
	if len(left) != 0 {
		t.Errorf("left in the state directory after both: %v", left)
	}
}

// TestStaleCopiesRemoved: the directory of copies a guardrun killed with
// SIGKILL leaves (it never got to remove it) is removed by the next
// command that makes copies there; one a running command holds is not.
func TestStaleCopiesRemoved(t *testing.T) {
	cache := rootCopiesCache(t, "as an unprivileged user no copies are made")
	var fs unix.Statfs_t
	if err := unix.Statfs(cache, &fs); err != nil || fs.Flags&unix.ST_NODEV != 0 {
		t.Skipf("%s is on a file system mounted nodev (%v): no copies there", cache, err)
	}
	defer func(d time.Duration) { staleAfter = d }(staleAfter)
	staleAfter = 0 // the test's directories are all new
	stale, err := os.MkdirTemp(cache, copiesPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, "null"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	held, err := os.MkdirTemp(cache, copiesPrefix)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	p := runProfile(t, t.TempDir())
	c, err := Command(context.Background(), p, []string{"/bin/true"}, []string{"PATH=/usr/bin:/bin"}, Config{FilterCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if status, err := c.Wait(); err != nil || status != 0 {
		t.Fatalf("status %d, %v", status, err)
	}
	left, _ := filepath.Glob(filepath.Join(cache, copiesPrefix+"*"))
	if d := cmp.Diff(left, []string{held}); d != "" {
		t.Errorf("directories of copies left (-got +want):\n%s", d)
	}
}

// rootCopiesCache skips (saying why) unless the test runs as root with
// bwrap, where commands get copies of the device nodes, and returns a
// state directory for them, removed after the test.
func rootCopiesCache(t *testing.T, why string) string {
	t.Helper()
	requireBwrap(t)
	if os.Geteuid() != 0 {
		t.Skip(why)
	}
	cache, err := os.MkdirTemp("/var/tmp", "guardrun-devices-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(cache) })
	return cache
}
