//go:build linux

package runner

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDeviceNodeEscapes: the device nodes a command finds in /dev
// (/dev/null, /dev/zero, ..., /dev/tty) are the host's own devices.
// Whatever the command does to their mode, owner and times (as root it
// owns them; `chmod 000 /dev/null` would break the machine), the host's
// nodes stay as they were, and the devices still work for the next
// command. The probe tries from inside the sandbox; the host compares
// each node's mode, owner and change time after.
func TestDeviceNodeEscapes(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	for _, node := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"} {
		t.Run(node, func(t *testing.T) {
			var before unix.Stat_t
			if err := unix.Stat(node, &before); err != nil {
				t.Skipf("no %s on this host: %v", node, err)
			}
			status, out := f.run(t, nil, probePath, "devmeta", node)
			m := resultRE.FindStringSubmatch(out)
			switch {
			case status == 99 || strings.Contains(out, "NOT-SANDBOXED"):
				t.Fatalf("the probe found itself outside a sandbox and attempted nothing:\n%s", out)
			case m == nil:
				t.Fatalf("status %d, no result line:\n%s", status, out)
			}
			t.Logf("inside: %s", strings.TrimSpace(m[0]))
			var after unix.Stat_t
			if err := unix.Stat(node, &after); err != nil {
				t.Fatal(err)
			}
			// Any change of mode, owner or times sets the change time;
			// a terminal's modification time moves as it is used.
			if after.Mode != before.Mode || after.Uid != before.Uid || after.Gid != before.Gid || after.Ctim != before.Ctim {
				t.Errorf("the host's %s changed: mode %o uid %d gid %d mtime %v ctime %v, was mode %o uid %d gid %d mtime %v ctime %v",
					node, after.Mode, after.Uid, after.Gid, after.Mtim, after.Ctim, before.Mode, before.Uid, before.Gid, before.Mtim, before.Ctim)
				unix.Chmod(node, before.Mode&0o7777)
				unix.UtimesNano(node, []unix.Timespec{before.Atim, before.Mtim})
			}
		})
	}
	// The next command's /dev/null still takes writes.
	if status, out := f.run(t, nil, "/bin/sh", "-c", "echo x > /dev/null"); status != 0 {
		t.Errorf("after the attempts, a write to /dev/null in the sandbox failed (%d): %s", status, out)
	}
}
