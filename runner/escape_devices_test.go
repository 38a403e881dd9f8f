//go:build linux

package runner

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
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
			m := probeResult(t, status, out)
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

// TestDeviceStdioEscapes: a command's standard input or output may be one
// of the host's device nodes: /dev/null when guardrun's caller gives it
// none (runner.Stdio's nil, which os/exec opens), the `< /dev/null` an
// agent's wrapper adds, or a caller's own `> /dev/null`. The command's
// descriptor, and its /proc/self/fd link, must not reach the host's node
// either: the probe changes mode, owner and times to what they are and
// sets an ACL, and the host checks the node (its change time moves with
// any of those).
func TestDeviceStdioEscapes(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	open := func(t *testing.T, name string, flag int) *os.File {
		fl, err := os.OpenFile(name, flag, 0)
		if err != nil {
			t.Skipf("no %s on this host: %v", name, err)
		}
		t.Cleanup(func() { fl.Close() })
		return fl
	}
	for _, tc := range []struct {
		name string
		node string
		// stdin and stdout are opened on node (nil: none); stdout's
		// descriptor is handed to the probe as 3.
		stdin, stdout int
		nilStdin      bool
	}{
		{name: "stdin given as none is the host's /dev/null", node: "/dev/null", nilStdin: true},
		{name: "stdin opened on /dev/null by the caller", node: "/dev/null", stdin: os.O_RDONLY},
		{name: "stdin opened on /dev/zero by the caller", node: "/dev/zero", stdin: os.O_RDONLY},
		{name: "stdout opened on /dev/null by the caller", node: "/dev/null", stdout: os.O_WRONLY},
		{name: "stdout opened on /dev/full by the caller", node: "/dev/full", stdout: os.O_WRONLY | os.O_APPEND},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.node); err != nil {
				t.Skipf("no %s on this host: %v", tc.node, err)
			}
			var before unix.Stat_t
			unix.Stat(tc.node, &before)
			unchanged := inodeUnchanged(t, tc.node)
			hadACL := hasXattr(tc.node, "system.posix_acl_access")
			var out bytes.Buffer
			stdio := Stdio{Stdout: &out, Stderr: &out}
			argv := []string{probePath, "devstdio", "0"}
			if !tc.nilStdin && tc.stdout == 0 {
				stdio.Stdin = open(t, tc.node, tc.stdin)
			}
			if tc.stdout != 0 {
				// The probe's stdout is where the test reads its result:
				// the node goes in as 1 and is moved to 3.
				stdio.Stdout = open(t, tc.node, tc.stdout)
				argv = []string{"/bin/sh", "-c", `exec 3>&1 1>&2; exec "$0" devstdio 3`, probePath}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			status, err := RunWith(ctx, f.opts(), f.profile, argv, f.env, stdio)
			if err != nil {
				t.Fatalf("sandbox did not start: %v\n%s", err, out.String())
			}
			m := probeResult(t, status, out.String())
			t.Logf("inside: %s", strings.TrimSpace(m[0]))
			unchanged(t)
			if !hadACL && hasXattr(tc.node, "system.posix_acl_access") {
				unix.Removexattr(tc.node, "system.posix_acl_access")
			}
			unix.Chmod(tc.node, before.Mode&0o7777)
		})
	}
}

// TestDeviceNodeOtherPaths: the host's device nodes and /dev's own
// directories by the other ways a command can name or change them: inode
// flags and extended attributes of /dev/null, the sandbox's devpts
// (/dev/ptmx), /dev/shm and /dev/pts, /dev/null through /proc/.../root,
// and taking the copy's mount away to reach bwrap's bind of the host's
// node under it. Each host inode named stays as it was (mode, owner,
// times, extended attributes, flags); the rows marked refused must also
// fail inside. (The host's /dev itself is TestDevDirectory's.)
func TestDeviceNodeOtherPaths(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	for _, tc := range []struct {
		name    string
		args    []string
		host    []string
		refused bool
		// errno, when set, is the refusal's: a permission check that
		// passed would fail otherwise.
		errno string
	}{
		{"chattr +d /dev/null through a read-only descriptor", []string{"setflags", "/dev/null"}, []string{"/dev/null"}, false, ""},
		{"no-dump on /dev/null through FS_IOC_FSSETXATTR", []string{"fssetxattr", "/dev/null"}, []string{"/dev/null"}, false, ""},
		{"file_setattr no-dump on /dev/null by path", []string{"file-setattr", "/dev/null"}, []string{"/dev/null"}, false, ""},
		{"setxattr on /dev/null", []string{"setxattr", "/dev/null"}, []string{"/dev/null"}, false, ""},
		{"touch /dev/null through /proc/self/root", []string{"devtouch", "/proc/self/root/dev/null"}, []string{"/dev/null"}, false, ""},
		{"touch /dev/urandom through the sandbox's pid 1's root", []string{"devtouch", "/proc/1/root/dev/urandom"}, []string{"/dev/urandom"}, false, ""},
		{"touch /dev/ptmx", []string{"devtouch", "/dev/ptmx"}, []string{"/dev/ptmx", "/dev/pts/ptmx"}, false, ""},
		{"touch /dev/pts/ptmx", []string{"devtouch", "/dev/pts/ptmx"}, []string{"/dev/ptmx", "/dev/pts/ptmx"}, false, ""},
		{"touch /dev/pts", []string{"devtouch", "/dev/pts"}, []string{"/dev/pts"}, false, ""},
		{"touch /dev/shm", []string{"devtouch", "/dev/shm"}, []string{"/dev/shm"}, false, ""},
		{"touch /dev/console", []string{"devtouch", "/dev/console"}, []string{"/dev/console"}, false, ""},
		{"unmount the copy of /dev/null to reach the host's under it", []string{"devunmount", "/dev/null"}, []string{"/dev/null"}, true, ""},
		{"unmount the copy of /dev/tty to reach the host's under it", []string{"devunmount", "/dev/tty"}, []string{"/dev/tty"}, true, ""},
		{"hard link /dev/null into the workspace", []string{"link", "/dev/null", filepath.Join(f.ws, "null")}, []string{"/dev/null"}, true, ""},
		{"metadata calls through an O_PATH descriptor of /dev/null", []string{"opath-meta", "/dev/null"}, []string{"/dev/null"}, false, ""},
		{"metadata calls through an O_PATH descriptor of a denied file (bound to the host's /dev/null read-only)", []string{"opath-meta", f.secret}, []string{"/dev/null", f.secret}, true, ""},
		{"metadata calls through an O_PATH descriptor of /etc/shadow (the same)", []string{"opath-meta", "/etc/shadow"}, []string{"/dev/null", "/etc/shadow"}, true, ""},
		{"make a device node in the workspace", []string{"mknod", filepath.Join(f.ws, "null")}, nil, true, ""},
		{"make a device node in the sandbox's own /dev", []string{"mknod", "/dev/null2"}, nil, true, ""},
		{"make a device node in /dev/shm", []string{"mknod", "/dev/shm/null"}, nil, true, ""},
		{"an ACL on /dev/null", []string{"setacl", "/dev/null"}, []string{"/dev/null"}, false, ""},
		{"an ACL on /dev/tty", []string{"setacl", "/dev/tty"}, []string{"/dev/tty"}, false, ""},
		{"open /dev/null by its handle", []string{"handle", "/dev/null"}, []string{"/dev/null"}, true, ""},
		{"watch the file system of the copy of /dev/null (fanotify)", []string{"fanotify", "/dev/null"}, nil, true, ""},
		{"zero the kernel's entropy count through /dev/random (RNDZAPENTCNT)", []string{"ioctl-ro", "/dev/random", "0x5204"}, []string{"/dev/random"}, true, ""},
		{"clear the kernel's entropy pool through /dev/urandom (RNDCLEARPOOL)", []string{"ioctl-ro", "/dev/urandom", "0x5206"}, []string{"/dev/urandom"}, true, ""},
		{"credit entropy through /dev/random (RNDADDTOENTCNT)", []string{"ioctl-ro", "/dev/random", "0x40045201"}, []string{"/dev/random"}, true, ""},
		{"reseed the kernel's generator through /dev/urandom (RNDRESEEDCRNG)", []string{"ioctl-ro", "/dev/urandom", "0x5207"}, []string{"/dev/urandom"}, true, ""},
		// On the file system the copies are on (the state directory's),
		// with an argument the kernel refuses once the permission check
		// has passed (thawing what is not frozen, trimming nothing).
		{"thaw the copies' file system through /dev/null (FITHAW)", []string{"ioctl-ro", "/dev/null", "0xc0045878"}, []string{"/dev/null"}, true, "EPERM"},
		{"trim the copies' file system through /dev/zero (FITRIM)", []string{"ioctl-ro", "/dev/zero", "0xc0185879"}, []string{"/dev/zero"}, true, "EPERM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var checks []func(*testing.T)
			for _, h := range tc.host {
				if _, err := os.Lstat(h); err != nil {
					t.Skipf("no %s on this host: %v", h, err)
				}
				checks = append(checks, inodeUnchanged(t, h))
			}
			status, out := f.run(t, nil, append([]string{probePath}, tc.args...)...)
			m := probeResult(t, status, out)
			switch {
			case tc.refused && !strings.HasPrefix(m[2], "refused"):
				t.Errorf("NOT REFUSED: %s", strings.TrimSpace(m[0]))
			case tc.errno != "" && m[3] != tc.errno:
				t.Errorf("refused with %s, want %s: %s", m[3], tc.errno, strings.TrimSpace(m[0]))
			}
			t.Logf("inside: %s", strings.TrimSpace(m[0]))
			for _, check := range checks {
				check(t)
			}
		})
	}
}

// TestDevDirectory: the command's /dev is bwrap's; a chmod, chown or
// touch of it leaves the host's /dev as it was. (Its times are not
// compared: guardrun's copies of the device nodes may be made in the
// host's /dev, in a directory of their own.)
func TestDevDirectory(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	var before unix.Stat_t
	if err := unix.Stat("/dev", &before); err != nil {
		t.Fatal(err)
	}
	status, out := f.run(t, nil, probePath, "devmeta", "/dev")
	m := probeResult(t, status, out)
	t.Logf("inside: %s", strings.TrimSpace(m[0]))
	var after unix.Stat_t
	if err := unix.Stat("/dev", &after); err != nil {
		t.Fatal(err)
	}
	if after.Mode != before.Mode || after.Uid != before.Uid || after.Gid != before.Gid {
		t.Errorf("the host's /dev changed: mode %o uid %d gid %d, was mode %o uid %d gid %d", after.Mode, after.Uid, after.Gid, before.Mode, before.Uid, before.Gid)
		unix.Chmod("/dev", before.Mode&0o7777)
		unix.Lchown("/dev", int(before.Uid), int(before.Gid))
	}
}

func hasXattr(path, name string) bool {
	_, err := unix.Lgetxattr(path, name, nil)
	return err == nil
}

// TestDeviceTerminalOutput: a command whose standard output is /dev/tty
// (`guardrun -c ... > /dev/tty`) gets a copy of /dev/tty there, and
// bwrap's /dev/console, which it binds from the name of its standard
// output when that is a terminal, is the copy too: neither the
// descriptor nor /dev/console reaches the host's /dev/tty. The command
// runs from a helper whose controlling terminal is a pty of the test's.
func TestDeviceTerminalOutput(t *testing.T) {
	requireSandbox(t)
	if landlockTest() {
		t.Skip("under landlock /dev/console is the host's, judged like any name outside the zones (TestDeviceNodeOtherPaths)")
	}
	f := newFixture(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	go io.Copy(io.Discard, ptmx)
	var out bytes.Buffer
	helper := exec.Command(os.Args[0], "-test.run=^TestDeviceTerminalOutputHelper$", "-test.count=1", "-test.v")
	helper.Env = append(os.Environ(), "GUARDRUN_TEST_HELPER=terminal-output", "GUARDRUN_TEST_HELPER_BASE="+f.base, "GUARDRUN_TEST_PROBE="+probePath)
	helper.Stdin, helper.Stdout, helper.Stderr = tty, &out, &out
	helper.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := helper.Run(); err != nil {
		t.Errorf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
}

// TestDeviceTerminalOutputHelper is TestDeviceTerminalOutput's helper;
// it does nothing in a normal run.
func TestDeviceTerminalOutputHelper(t *testing.T) {
	if os.Getenv("GUARDRUN_TEST_HELPER") != "terminal-output" {
		t.Skip("helper process for TestDeviceTerminalOutput")
	}
	f := fixtureAt(t, os.Getenv("GUARDRUN_TEST_HELPER_BASE"), false)
	ttyOut, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("no controlling terminal: %v", err)
	}
	defer ttyOut.Close()
	var before unix.Stat_t
	if err := unix.Stat("/dev/tty", &before); err != nil {
		t.Fatal(err)
	}
	hadACL := hasXattr("/dev/tty", "system.posix_acl_access")
	for _, attempt := range [][]string{{"devstdio", "3"}, {"devtouch", "/dev/console"}} {
		var out bytes.Buffer
		argv := append([]string{"/bin/sh", "-c", `exec 3>&1 1>&2; exec "$0" "$@"`, probePath}, attempt...)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		status, err := RunWith(ctx, f.opts(), f.profile, argv, f.env, Stdio{Stdout: ttyOut, Stderr: &out})
		cancel()
		if err != nil {
			t.Fatalf("sandbox did not start: %v\n%s", err, out.String())
		}
		m := probeResult(t, status, out.String())
		t.Logf("%s inside: %s", attempt[0], strings.TrimSpace(m[0]))
		var after unix.Stat_t
		if err := unix.Stat("/dev/tty", &after); err != nil {
			t.Fatal(err)
		}
		if after.Mode != before.Mode || after.Uid != before.Uid || after.Gid != before.Gid || after.Ctim != before.Ctim {
			t.Errorf("%s: the host's /dev/tty changed: mode %o uid %d gid %d ctime %v, was mode %o uid %d gid %d ctime %v",
				attempt[0], after.Mode, after.Uid, after.Gid, after.Ctim, before.Mode, before.Uid, before.Gid, before.Ctim)
			unix.Chmod("/dev/tty", before.Mode&0o7777)
			unix.Lchown("/dev/tty", int(before.Uid), int(before.Gid))
			unix.UtimesNano("/dev/tty", []unix.Timespec{before.Atim, before.Mtim})
		}
		if !hadACL && hasXattr("/dev/tty", "system.posix_acl_access") {
			t.Errorf("%s: the host's /dev/tty was given an ACL", attempt[0])
			unix.Removexattr("/dev/tty", "system.posix_acl_access")
		}
	}
}

// TestDeviceOtherTerminal: a caller may hand a command /dev/tty opened
// while another terminal was its controlling one (a served command whose
// client runs in a pty of its own). Opened again by guardrun, /dev/tty is
// guardrun's terminal, where a person may be answering its questions: the
// command must never get that one instead. It is refused, saying why.
func TestDeviceOtherTerminal(t *testing.T) {
	requireSandbox(t)
	if landlockTest() || os.Geteuid() != 0 {
		t.Skip("the host's /dev/tty is handed over as it is: no copy is opened (as root under bwrap only)")
	}
	f := newFixture(t)
	open := func() (*os.File, *os.File, *bytes.Buffer, chan struct{}) {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ptmx.Close(); tty.Close() })
		var seen bytes.Buffer
		done := make(chan struct{})
		go func() { io.Copy(&seen, ptmx); close(done) }()
		return ptmx, tty, &seen, done
	}
	_, guardrunTTY, onGuardrun, _ := open()
	_, otherTTY, _, _ := open()
	var out bytes.Buffer
	helper := exec.Command(os.Args[0], "-test.run=^TestDeviceOtherTerminalHelper$", "-test.count=1", "-test.v")
	helper.Env = append(os.Environ(), "GUARDRUN_TEST_HELPER=other-terminal", "GUARDRUN_TEST_HELPER_BASE="+f.base,
		"GUARDRUN_TEST_PROBE="+probePath, "GUARDRUN_TEST_HELPER_TTY="+guardrunTTY.Name())
	helper.Stdin, helper.Stdout, helper.Stderr = otherTTY, &out, &out
	helper.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := helper.Run(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
	time.Sleep(100 * time.Millisecond)
	if strings.Contains(onGuardrun.String(), "written-by-the-command") {
		t.Errorf("the command wrote to guardrun's own terminal, not the one it was handed")
	}
	if !strings.Contains(out.String(), "not guardrun's own") {
		t.Errorf("the command was not refused for the other terminal's /dev/tty:\n%s", out.String())
	}
}

// TestDeviceOtherTerminalHelper is TestDeviceOtherTerminal's helper: it
// opens /dev/tty on the terminal it starts with, takes the test's other
// pty as its controlling terminal, and runs a command with the first
// /dev/tty as standard output. It does nothing in a normal run.
func TestDeviceOtherTerminalHelper(t *testing.T) {
	if os.Getenv("GUARDRUN_TEST_HELPER") != "other-terminal" {
		t.Skip("helper process for TestDeviceOtherTerminal")
	}
	f := fixtureAt(t, os.Getenv("GUARDRUN_TEST_HELPER_BASE"), false)
	first, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("no controlling terminal: %v", err)
	}
	defer first.Close()
	signal.Ignore(syscall.SIGHUP)
	if err := unix.IoctlSetInt(int(first.Fd()), unix.TIOCNOTTY, 0); err != nil {
		t.Fatalf("TIOCNOTTY: %v", err)
	}
	second, err := os.OpenFile(os.Getenv("GUARDRUN_TEST_HELPER_TTY"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if err := unix.IoctlSetInt(int(second.Fd()), unix.TIOCSCTTY, 0); err != nil {
		t.Fatalf("TIOCSCTTY: %v", err)
	}
	var out bytes.Buffer
	status, err := RunWith(context.Background(), f.opts(), f.profile, []string{"/bin/sh", "-c", "echo written-by-the-command"}, f.env, Stdio{Stdout: first, Stderr: &out})
	t.Logf("status %d, error %v, output %q", status, err, out.String())
}
