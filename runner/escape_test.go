//go:build linux

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/guardrun/guardrun/landlock"
	"github.com/guardrun/guardrun/sandbox"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// escape is one attempt to get out, made by the probe inside the sandbox,
// with the check that nothing happened on the host.
type escape struct {
	name  string
	args  []string
	stdin *os.File
	host  func(t *testing.T) // the attempt left no trace on the host
	// restored: under landlock the attempt may succeed inside (protected
	// names are restored after the command, not kept read-only while it
	// runs); then the host check must still pass and the output must
	// name the path (or the protected path holding it) as restored or
	// moved aside. Under bwrap it is refused like any other attempt.
	restored string
	hostLL   func(t *testing.T) // the host check under landlock, when it differs
}

var restoredRE = regexp.MustCompile(`guardrun: protected ([^\s:]+)`)

// restoredLine reports whether out says that target, or a protected path
// holding it, was restored or moved aside.
func restoredLine(out, target string) bool {
	for _, m := range restoredRE.FindAllStringSubmatch(out, -1) {
		if sandbox.Within(target, m[1]) || sandbox.Within(m[1], target) {
			return true
		}
	}
	return false
}

var resultRE = regexp.MustCompile(`RESULT (\S+) (refused errno=(\S+)|ALLOWED.*|SETUP.*|spawned.*)`)

// probeResult is the probe's result line in out and its groups
// (resultRE). It fails the test when the probe found itself outside a
// sandbox (and attempted nothing) or printed no result.
func probeResult(t testing.TB, status int, out string) []string {
	t.Helper()
	m := resultRE.FindStringSubmatch(out)
	switch {
	case status == 99 || strings.Contains(out, "NOT-SANDBOXED"):
		t.Fatalf("the probe found itself outside a sandbox and attempted nothing:\n%s", out)
	case m == nil:
		t.Fatalf("status %d, no result line:\n%s", status, out)
	}
	return m
}

// TestEscapes makes each escape attempt inside the sandbox and checks
// that it was refused inside and left nothing on the host. Every attempt
// runs in the probe, which first proves it is inside the sandbox; if the
// sandbox does not come up, the test fails.
func TestEscapes(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)

	// Host-side listeners and victims.
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	abstract := "guardrun-test-" + f.marker
	ux, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer ux.Close()
	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { victim.Process.Kill(); victim.Wait() }()

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	// Raw: an injected byte would be readable at once, without a newline.
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		t.Fatal(err)
	}

	// A host descriptor without close-on-exec (dup clears the flag).
	leak, err := os.Open(f.secret)
	if err != nil {
		t.Fatal(err)
	}
	defer leak.Close()
	leakFD, err := syscall.Dup(int(leak.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(leakFD)
	if fl, _ := unix.FcntlInt(uintptr(leakFD), unix.F_GETFD, 0); fl&unix.FD_CLOEXEC != 0 {
		t.Fatal("dup'd descriptor unexpectedly close-on-exec")
	}

	noAccept := func(l net.Listener) func(*testing.T) {
		return func(t *testing.T) {
			type deadliner interface{ SetDeadline(time.Time) error }
			l.(deadliner).SetDeadline(time.Now().Add(100 * time.Millisecond))
			if c, err := l.Accept(); err == nil {
				c.Close()
				t.Errorf("the host listener %s got a connection", l.Addr())
			}
		}
	}
	usrPath := "/usr/guardrun-probe-" + f.marker

	attempts := []escape{
		{name: "write outside every zone", args: []string{"write", filepath.Join(f.outside, "pwned")}, host: absent(filepath.Join(f.outside, "pwned"))},
		{name: "write through a symlink in the zone", args: []string{"write", filepath.Join(f.ws, "link")}, host: absent(filepath.Join(f.outside, "target"))},
		{name: "append to ~/.bashrc", args: []string{"append", filepath.Join(f.home, ".bashrc")}, host: unchanged(filepath.Join(f.home, ".bashrc"), "# the user's bashrc\n")},
		{name: "write under /usr", args: []string{"write", usrPath}, host: absent(usrPath)},
		{name: "read a denied name in the zone", args: []string{"read", f.secret}},
		{name: "read a denied name deeper in the zone", args: []string{"read", filepath.Join(f.ws, "sub/.env")}},
		{name: "read a denied name linked out of the zones", args: []string{"read", filepath.Join(f.ws, "app/.env")}},
		{name: "hard-link a denied file to a readable name", args: []string{"link", f.secret, filepath.Join(f.ws, "sub/dir/linked")}, host: absent(filepath.Join(f.ws, "sub/dir/linked"))},
		{name: "move a denied file to a readable name", args: []string{"rename", f.secret, filepath.Join(f.ws, "sub/dir/moved")}, host: func(t *testing.T) {
			absent(filepath.Join(f.ws, "sub/dir/moved"))(t)
			unchanged(f.secret, secretText)(t)
		}},
		{name: "hard-link a zone file out of the zones", args: []string{"link", filepath.Join(f.ws, "Makefile"), filepath.Join(f.outside, "linked")}, host: absent(filepath.Join(f.outside, "linked"))},
		{name: "read ~/.ssh", args: []string{"read", filepath.Join(f.home, ".ssh/id_ed25519")}},
		{name: "edit guardrun's config", args: []string{"append", f.config}, host: unchanged(f.config, "mode: strict\n")},
		{name: "replace guardrun's config", args: []string{"write", f.config}, host: unchanged(f.config, "mode: strict\n")},
		{name: "create a config that does not exist yet", args: []string{"write", f.newConf}, host: absent(f.newConf)},
		{name: "create a denied name in the working directory", args: []string{"write", filepath.Join(f.ws, ".npmrc")}, host: absent(filepath.Join(f.ws, ".npmrc"))},
		{name: "create a directory at a denied name", args: []string{"mkdir", filepath.Join(f.ws, ".npmrc/x")}, host: absent(filepath.Join(f.ws, ".npmrc"))},
		{name: "read guardrun's state", args: []string{"read", filepath.Join(f.state, "audit.jsonl")}},
		{name: "write guardrun's state", args: []string{"write", filepath.Join(f.state, "audit.jsonl")}, host: unchanged(filepath.Join(f.state, "audit.jsonl"), "{}\n")},
		{name: "tcp to a host listener", args: []string{"tcp", tcp.Addr().String()}, host: noAccept(tcp)},
		{name: "udp to a host listener", args: []string{"udp", udp.LocalAddr().String()}, host: func(t *testing.T) {
			udp.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			if n, from, err := udp.ReadFrom(make([]byte, 100)); err == nil {
				t.Errorf("the host got a %d-byte datagram from %v", n, from)
			}
		}},
		{name: "connect to a host abstract unix socket", args: []string{"unix", abstract}, host: noAccept(ux)},
		{name: "use a capability (chown to another user)", args: []string{"chown", filepath.Join(f.ws, "Makefile")}, host: func(t *testing.T) {
			fi, err := os.Stat(filepath.Join(f.ws, "Makefile"))
			if err != nil || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
				t.Errorf("Makefile's owner changed: %v", err)
			}
		}},
		{name: "ptrace", args: []string{"ptrace"}},
		{name: "process_vm_readv", args: []string{"vm-readv"}},
		{name: "mount", args: []string{"mount"}},
		{name: "unshare(CLONE_NEWUSER)", args: []string{"unshare-user"}},
		{name: "clone(CLONE_NEWUSER)", args: []string{"clone-user"}},
		{name: "clone3(CLONE_NEWUSER)", args: []string{"clone3-user"}},
		{name: "keyctl", args: []string{"keyctl"}},
		{name: "io_uring_setup", args: []string{"io-uring"}},
		{name: "perf_event_open", args: []string{"perf"}},
		{name: "personality", args: []string{"personality"}},
		{name: "mknod a character device", args: []string{"mknod", filepath.Join(f.ws, "devnode")}, host: absent(filepath.Join(f.ws, "devnode"))},
		{name: "TIOCSTI on the host's terminal", args: []string{"tiocsti"}, stdin: tty, host: func(t *testing.T) {
			fds := []unix.PollFd{{Fd: int32(tty.Fd()), Events: unix.POLLIN}}
			if n, _ := unix.Poll(fds, 100); n > 0 {
				t.Error("input was injected into the host's terminal")
			}
		}},
		{name: "TIOCSTI on a terminal of its own", args: []string{"tiocsti-own"}},
		{name: "write to another terminal of the user", args: []string{"append", tty.Name()}, host: func(t *testing.T) {
			fds := []unix.PollFd{{Fd: int32(ptmx.Fd()), Events: unix.POLLIN}}
			if n, _ := unix.Poll(fds, 100); n > 0 {
				t.Error("the sandbox wrote to a terminal of the host")
			}
		}},
		{name: "signal a host process", args: []string{"kill", strconv.Itoa(victim.Process.Pid)}, host: func(t *testing.T) {
			if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
				t.Errorf("the host process is gone: %v", err)
			}
			if st, _ := os.ReadFile("/proc/" + strconv.Itoa(victim.Process.Pid) + "/stat"); strings.Contains(string(st), ") Z ") {
				t.Error("the host process was killed")
			}
		}},
		{name: "a detached process outliving the command", args: []string{"daemon", f.marker + "-daemon"}, host: func(t *testing.T) {
			if !waitFor(3*time.Second, func() bool { return len(markerProcesses(f.marker+"-daemon")) == 0 }) {
				t.Errorf("processes survived the sandbox: %q", markerProcesses(f.marker+"-daemon"))
			}
		}},
		{name: "a descriptor inherited from the parent", args: []string{"fds", strconv.Itoa(leakFD)}},
	}
	attempts = append(attempts, metadataEscapes(t, f)...)
	attempts = append(attempts, protectedEscapes(f, absent, unchanged)...)

	// Host daemons listening on unix sockets in a writable zone, a
	// read-only zone and a system directory: with no unix_sockets listed,
	// no new unix socket can be made, so none is reachable.
	for _, sock := range []struct{ where, path string }{
		{"a rw zone", filepath.Join(f.ws, "daemon.sock")},
		{"a ro zone", filepath.Join(f.home, "daemon.sock")},
		{"system_read", filepath.Join(f.sys, "daemon.sock")},
	} {
		l, err := net.Listen("unix", sock.path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		attempts = append(attempts, escape{name: "connect to a host unix socket in " + sock.where,
			args: []string{"unix-path", sock.path}, host: noAccept(l)})
	}

	// A host daemon reading datagrams on a unix socket in a rw zone,
	// reached from a socketpair (which stays allowed) by sendto.
	dgPath := filepath.Join(f.ws, "dgram.sock")
	dg, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: dgPath, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer dg.Close()
	dgNothing := func(t *testing.T) {
		dg.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		buf := make([]byte, 100)
		if n, _, err := dg.ReadFrom(buf); err == nil {
			t.Errorf("the host datagram socket got %q", buf[:n])
		}
	}
	attempts = append(attempts, escape{name: "send a datagram to a host unix socket from a socketpair",
		args: []string{"dgram-pair", dgPath}, host: dgNothing})
	// af_unix makes a SOCK_RAW socket a datagram one.
	attempts = append(attempts, escape{name: "send a datagram to a host unix socket from a SOCK_RAW socketpair",
		args: []string{"dgram-pair", dgPath, "raw"}, host: dgNothing})
	attempts = append(attempts, escape{name: "connect a SOCK_RAW socketpair end to a host unix socket and write",
		args: []string{"dgram-pair", dgPath, "raw", "connect"}, host: dgNothing})
	attempts = append(attempts, escape{name: "connect a seqpacket socketpair end to a host unix socket",
		args: []string{"dgram-pair", dgPath, "seqpacket", "connect"}, host: dgNothing})
	attempts = append(attempts, escape{name: "sendto a host unix socket from a stream socketpair end",
		args: []string{"dgram-pair", dgPath, "stream"}, host: dgNothing})

	var summary []string
	defer func() {
		// One line per attempt and the errno it met inside; the
		// unprivileged run's parent prints these too.
		t.Logf("summary (uid %d):\n%s", os.Geteuid(), strings.Join(summary, "\n"))
	}()
	for _, a := range attempts {
		t.Run(a.name, func(t *testing.T) {
			var stdin *os.File
			if a.stdin != nil {
				stdin = a.stdin
			}
			argv := append([]string{probePath}, a.args...)
			var status int
			var out string
			if stdin != nil {
				status, out = f.run(t, stdin, argv...)
			} else {
				status, out = f.run(t, nil, argv...)
			}
			m := probeResult(t, status, out)
			switch {
			case strings.HasPrefix(m[2], "ALLOWED") && landlockTest() && a.restored != "":
				if !restoredLine(out, a.restored) {
					t.Errorf("allowed inside, and the output does not say %s was restored or moved aside:\n%s", a.restored, out)
				}
				summary = append(summary, fmt.Sprintf("  %-45s %s", a.name, "(restored after the command)"))
			case strings.HasPrefix(m[2], "ALLOWED"):
				t.Errorf("NOT REFUSED: %s", strings.TrimSpace(m[0]))
			case strings.HasPrefix(m[2], "SETUP"):
				t.Fatalf("the probe could not set up the attempt: %s", strings.TrimSpace(m[0]))
			case status != 0:
				t.Errorf("status %d:\n%s", status, out)
			default:
				errno := m[3]
				if errno == "" {
					errno = "(" + m[2] + ")"
				}
				summary = append(summary, fmt.Sprintf("  %-45s %s", a.name, errno))
			}
			switch {
			case landlockTest() && a.hostLL != nil:
				a.hostLL(t)
			case a.host != nil:
				a.host(t)
			}
		})
	}
}

// TestProbeRefusesOnHost: the probe's own guard. Run directly, without a
// sandbox, it must attempt nothing. ("read" is harmless either way.)
func TestProbeRefusesOnHost(t *testing.T) {
	f := newFixture(t)
	cmd := exec.Command(probePath, "read", f.secret)
	cmd.Env = f.env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 99 || !strings.Contains(string(out), "NOT-SANDBOXED") {
		t.Errorf("probe on the host: %v\n%s", err, out)
	}
}

// protectedEscapes are the attempts on protected names (.git/config,
// .git/hooks, .bashrc, .envrc, .vscode: sandbox.DefaultProtect), existing
// and missing, at the top of the writable zone and nested: each way of
// writing, creating or replacing a file, and renaming the directory
// above one away.
func protectedEscapes(f *fixture, absent func(string) func(*testing.T), unchanged func(string, string) func(*testing.T)) []escape {
	type target struct {
		rel     string
		content string // "" when missing
	}
	targets := []target{
		{".git/config", gitConfigText},
		{"nested/.git/config", gitConfigText},
		{"deep/x/.envrc", "export A=1\n"},
		{".husky/pre-commit", "npx lint-staged\n"}, // core.hooksPath in .git/config
		{".git/modules/lib/config", gitConfigText}, // a submodule's git directory
		{".git/modules/lib/hooks/post-checkout", ""},
		{".git/hooks/pre-commit", ""},        // missing, in an existing protected directory
		{"nested/.git/hooks/pre-commit", ""}, // its protected directory is missing too
		{".bashrc", ""},
		{".vscode/settings.json", ""},
		{".claude/settings.json", "{}\n"},     // an agent's hooks run outside every sandbox
		{"nested/.envrc", ""},                 // a repository's root is protected like the zone's
		{"bare/config", gitConfigText},        // a bare repository: git uses it when run there
		{"wtree/.git", "gitdir: ../gstore\n"}, // a .git file: git follows it anywhere
		{"gstore/config", gitConfigText},      // the git directory it points to
	}
	// The writable directory the probe makes its replacement in when the
	// target's own directory takes none. Under landlock the workspace's
	// root has fixed entries (it holds the denied .env and guardrun's
	// config): use a directory that takes new files.
	scratchDir := f.ws
	if landlockTest() {
		scratchDir = filepath.Join(f.ws, "sub/dir")
	}
	var out []escape
	for _, tg := range targets {
		p := filepath.Join(f.ws, tg.rel)
		host := absent(p)
		ops := []string{"write", "create", "rename-over", "symlink-over", "hardlink"}
		if tg.content != "" {
			host = unchanged(p, tg.content)
			ops = []string{"write", "append", "rename-over", "symlink-over", "hardlink"}
		}
		for _, op := range ops {
			args := []string{op, p}
			if op != "write" && op != "append" && op != "create" {
				args = append(args, scratchDir)
			}
			out = append(out, escape{name: op + " protected " + tg.rel, args: args, host: host, restored: p})
		}
	}
	// Renaming the repository (or a directory above a protected name)
	// away would carry the read-only binds with it and leave the name
	// free for a fresh, writable one.
	for _, mv := range []struct{ dir, file, keep, content string }{
		{".git", "config", ".git/config", gitConfigText},
		{"nested", ".git/config", "nested/.git/config", gitConfigText},
		{"deep/x", ".envrc", "deep/x/.envrc", "export A=1\n"},
	} {
		dir := filepath.Join(f.ws, mv.dir)
		keep := filepath.Join(f.ws, mv.keep)
		out = append(out, escape{name: "rename " + mv.dir + " away and plant " + mv.file,
			args: []string{"move-away", dir, mv.file}, host: func(t *testing.T) {
				absent(dir + ".moved")(t)
				unchanged(keep, mv.content)(t)
			},
			// Under landlock the directory can be renamed where its
			// parent takes new entries: the planted file is replaced by
			// the original after the command, and the moved directory
			// keeps the user's data under its new name.
			restored: keep, hostLL: func(t *testing.T) {
				unchanged(keep, mv.content)(t)
				if _, err := os.Lstat(dir + ".moved"); err == nil {
					unchanged(filepath.Join(dir+".moved", mv.file), mv.content)(t)
				}
			}})
	}
	return out
}

// TestUnixSocketsListed: with sandbox.unix_sockets listing one socket,
// a command can connect to that one, and still not to an unlisted socket
// in its own writable zone, nor to a host abstract socket.
func TestUnixSocketsListed(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	listen := func(p string) net.Listener {
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	listed := listen(filepath.Join(f.outside, "listed.sock"))
	unlisted := listen(filepath.Join(f.ws, "unlisted.sock"))
	abstract := "guardrun-test-listed-" + f.marker
	ux, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer ux.Close()
	p, err := sandbox.Derive(sandbox.Spec{
		Zones: []sandbox.Zone{
			{Name: "ws", Root: f.ws, Writable: true},
			{Name: "probe", Root: filepath.Dir(probePath)},
		},
		SystemRead:  sandbox.DefaultSystemPaths,
		UnixSockets: []string{listed.Addr().String()},
		Cwd:         f.ws,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Seccomp.AllowUnix {
		t.Fatal("AllowUnix is off with a socket listed")
	}
	f.profile = p
	if landlockTest() {
		// Landlock cannot keep connect(2) to the listed sockets: the
		// profile is refused, naming them, unless the loss is accepted.
		var out bytes.Buffer
		_, err := RunWith(context.Background(), f.opts(), p, []string{probePath, "unix-path", unlisted.Addr().String()}, f.env, Stdio{Stdout: &out, Stderr: &out})
		var ue *landlock.UnenforceableError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), landlock.AcceptUnixSockets) || !strings.Contains(err.Error(), listed.Addr().String()) {
			t.Fatalf("want a refusal naming %s and the socket, got %v\n%s", landlock.AcceptUnixSockets, err, out.String())
		}
		if out.Len() != 0 {
			t.Errorf("something ran: %s", out.String())
		}
		f.accept = append(f.accept, landlock.AcceptUnixSockets)
	}
	accepted := make(chan string, 1)
	go func() {
		c, err := listed.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := make([]byte, 64)
		n, _ := c.Read(b)
		accepted <- string(b[:n])
	}()
	_, out := f.run(t, nil, probePath, "unix-path", listed.Addr().String())
	if !strings.Contains(out, "ALLOWED connected to") {
		t.Errorf("the listed socket was not reachable:\n%s", out)
	}
	select {
	case msg := <-accepted:
		if !strings.Contains(msg, "hello from inside the sandbox") {
			t.Errorf("the listed socket got %q", msg)
		}
	case <-time.After(5 * time.Second):
		t.Error("the host's listed socket got no connection")
	}
	type deadliner interface{ SetDeadline(time.Time) error }
	for _, tc := range []struct {
		name string
		args []string
		l    net.Listener
	}{
		{"an unlisted socket in the zone", []string{"unix-path", unlisted.Addr().String()}, unlisted},
		{"a host abstract socket", []string{"unix", abstract}, ux},
	} {
		if landlockTest() && tc.l == unlisted {
			continue // the accepted loss
		}
		status, out := f.run(t, nil, append([]string{probePath}, tc.args...)...)
		if m := resultRE.FindStringSubmatch(out); status != 0 || m == nil || !strings.HasPrefix(m[2], "refused") {
			t.Errorf("%s: status %d, want refused:\n%s", tc.name, status, out)
		}
		tc.l.(deadliner).SetDeadline(time.Now().Add(100 * time.Millisecond))
		if c, err := tc.l.Accept(); err == nil {
			c.Close()
			t.Errorf("%s: the host listener got a connection", tc.name)
		}
	}
}

// metadataEscapes are the attempts on file metadata (mode, owner,
// times, extended attributes) of files the command may not write: out
// of every zone, in a read-only zone, denied, system, guardrun's own
// config, a protected name; by path, through a read-only descriptor,
// through a symbolic link in the zone, and with another thread rewriting
// the path while the call is judged. Landlock has no rights for
// metadata: under landlock guardrun makes these calls itself after
// judging the object (bwrap's read-only mounts refuse them). The host
// check is the whole inode: mode, owner, times including ctime (which
// any of these calls moves), and the extended attributes.
func metadataEscapes(t *testing.T, f *fixture) []escape {
	t.Helper()
	keep := filepath.Join(f.outside, "keep")
	if err := unix.Setxattr(keep, "user.guardrun-keep", []byte("host"), 0); err != nil {
		t.Fatalf("setxattr on the fixture: %v", err)
	}
	// A link in the zone to a file out of every zone.
	toOutside := filepath.Join(f.ws, "sub/dir/to-outside")
	if err := os.Symlink(keep, toOutside); err != nil {
		t.Fatal(err)
	}
	// The race's two paths have the same length: the zone file and the
	// target out of the zones.
	raceZone := filepath.Join(f.ws, "race-zone-file")
	raceTarget := filepath.Join(f.outside, "race-file")
	for _, p := range []string{raceZone, raceTarget} {
		if err := os.WriteFile(p, []byte("race\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(raceZone) != len(raceTarget) {
		t.Fatalf("race paths of different lengths: %s %s", raceZone, raceTarget)
	}
	bashrc := filepath.Join(f.home, ".bashrc")
	key := filepath.Join(f.home, ".ssh/id_ed25519")
	sysFile := filepath.Join(f.sys, "keep")
	gitConfig := filepath.Join(f.ws, ".git/config")
	same := map[string]func(*testing.T){}
	for _, p := range []string{keep, bashrc, key, sysFile, f.config, gitConfig, raceTarget} {
		same[p] = inodeUnchanged(t, p)
	}
	type row struct {
		name   string
		args   []string
		victim string
	}
	rows := []row{
		{"chmod a file out of every zone", []string{"chmod", keep}, keep},
		{"chmod ~/.bashrc (read-only zone)", []string{"chmod", bashrc}, bashrc},
		{"chmod a denied file", []string{"chmod", key}, key},
		{"chmod a system file", []string{"chmod", sysFile}, sysFile},
		{"chmod guardrun's config", []string{"chmod", f.config}, f.config},
		{"chmod protected .git/config", []string{"chmod", gitConfig}, gitConfig},
		{"fchmod through a read-only descriptor", []string{"fchmod-ro", bashrc}, bashrc},
		{"chmod through a symlink in the zone", []string{"chmod", toOutside}, keep},
		{"chmod while a thread rewrites the path", []string{"chmod-race", raceZone, raceTarget}, raceTarget},
		{"chown a file out of every zone to another user", []string{"chown", keep}, keep},
		{"chown a file out of every zone to its owner", []string{"chown-self", keep}, keep},
		{"touch -d ~/.bashrc", []string{"utimes", bashrc}, bashrc},
		{"touch -d a file out of every zone", []string{"utimes", keep}, keep},
		{"setxattr on a file out of every zone", []string{"setxattr", keep}, keep},
		{"setxattr on guardrun's config", []string{"setxattr", f.config}, f.config},
		{"removexattr on a file out of every zone", []string{"removexattr", keep, "user.guardrun-keep"}, keep},
		// Inode flags: through a read-only descriptor (chattr's ioctls,
		// checked against the owner only) and by path (file_setattr),
		// neither of which Landlock sees.
		{"chattr +d ~/.bashrc through a read-only descriptor (FS_IOC_SETFLAGS)", []string{"setflags", bashrc}, bashrc},
		{"chattr +d guardrun's config through a read-only descriptor", []string{"setflags", f.config}, f.config},
		{"chattr +d a system file through a read-only descriptor", []string{"setflags", sysFile}, sysFile},
		{"chattr +d protected .git/config", []string{"setflags", gitConfig}, gitConfig},
		{"no-dump on ~/.bashrc through FS_IOC_FSSETXATTR on a read-only descriptor", []string{"fssetxattr", bashrc}, bashrc},
		{"no-dump on guardrun's config through FS_IOC_FSSETXATTR", []string{"fssetxattr", f.config}, f.config},
		{"file_setattr no-dump on a file out of every zone, by path", []string{"file-setattr", keep}, keep},
		{"file_setattr on guardrun's config, by path", []string{"file-setattr", f.config}, f.config},
		{"file_setattr on a denied file, by path", []string{"file-setattr", key}, key},
		{"file_getattr of a file out of every zone, by path", []string{"file-getattr", keep}, keep},
	}
	out := make([]escape, len(rows))
	for i, r := range rows {
		out[i] = escape{name: r.name, args: r.args, host: same[r.victim]}
	}
	return out
}

// inodeUnchanged records path's inode now (mode, owner, size,
// modification and change times, extended attributes, flags) and returns the
// check that it is the same later.
func inodeUnchanged(t *testing.T, path string) func(*testing.T) {
	t.Helper()
	snap := func() (string, error) {
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			return "", err
		}
		names := make([]byte, 4096)
		n, err := unix.Llistxattr(path, names)
		if err != nil {
			n = 0
		}
		// The inode flags (chattr's), read through a descriptor of the
		// test's own.
		flags := "?"
		if fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
			if v, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS); err == nil {
				flags = fmt.Sprintf("%#x", v)
			}
			unix.Close(fd)
		}
		return fmt.Sprintf("mode %o uid %d gid %d size %d mtime %d.%d ctime %d.%d xattrs %q flags %s",
			st.Mode, st.Uid, st.Gid, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec, names[:n], flags), nil
	}
	before, err := snap()
	if err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	return func(t *testing.T) {
		after, err := snap()
		if err != nil || after != before {
			t.Errorf("%s changed on the host:\n before %s\n after  %s (%v)", path, before, after, err)
		}
	}
}

// absent checks, after an attempt, that p does not exist on the host.
func absent(p string) func(*testing.T) {
	return func(t *testing.T) {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists on the host after the attempt (%v)", p, err)
		}
	}
}

// unchanged checks, after an attempt, that p still holds want on the host.
func unchanged(p, want string) func(*testing.T) {
	return func(t *testing.T) {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s changed on the host: %q, %v", p, b, err)
		}
	}
}

// TestDeniedNameRace: a command that keeps moving a directory holding a
// denied name aside, with an empty decoy at its name meanwhile, while
// other commands start: none of them may read the denied file at the
// name it was moved to. The profile finds denied names before the
// sandbox is built; a sandbox that masks by name would mask the decoy.
func TestDeniedNameRace(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	dir := filepath.Join(f.ws, "sub")
	t.Cleanup(func() {
		if _, err := os.Stat(dir + "-moved"); err == nil {
			os.RemoveAll(dir)
			os.Rename(dir+"-moved", dir)
		}
	})
	flipDone := make(chan string, 1)
	go func() {
		var out strings.Builder
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_, err := RunWith(ctx, f.opts(), f.profile, []string{probePath, "flip-dirs", dir, "15"}, f.env, Stdio{Stdout: &out, Stderr: &out})
		if err != nil {
			out.WriteString(err.Error())
		}
		flipDone <- out.String()
	}()
	time.Sleep(500 * time.Millisecond)
	runs, started := 0, 0
	var flip string
	deadline := time.Now().Add(14 * time.Second)
	for time.Now().Before(deadline) && flip == "" {
		select {
		case flip = <-flipDone:
		default:
		}
		var out strings.Builder
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		status, err := RunWith(ctx, f.opts(), f.profile, []string{probePath, "read", filepath.Join(dir+"-moved", ".env")}, f.env, Stdio{Stdout: &out, Stderr: &out})
		cancel()
		runs++
		if err != nil {
			continue // refused to start: the race cost a run, nothing leaked
		}
		started++
		if strings.Contains(out.String(), "NOT-SANDBOXED") {
			t.Fatalf("the probe found itself outside a sandbox:\n%s", out.String())
		}
		if strings.Contains(out.String(), "ALLOWED") {
			t.Fatalf("run %d read the denied file moved aside (status %d):\n%s", runs, status, out.String())
		}
	}
	if flip == "" {
		flip = <-flipDone
	}
	if !strings.Contains(flip, "flips") {
		t.Fatalf("the flipping command did not run:\n%s", flip)
	}
	// Refused at its first move (the directory is a mount point under
	// bwrap, Landlock refuses the rename), or it flipped and no run read.
	t.Logf("%d runs (%d started) against: %s", runs, started, strings.TrimSpace(flip))
}
