package serve_test

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/internal/serve"
	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// Attacks on the server's side of the protocol: malformed and
// misleading requests from a client of the test's own. Each row asserts
// that nothing ran (the server closes, or answers F), nothing was
// audited, and the server keeps no descriptor of the attempt.

// openFDs counts this process's open descriptors (the server's too).
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// settleFDs waits until the process has at most n descriptors open and
// reports how many it has.
func settleFDs(t *testing.T, n int) int {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		got := openFDs(t)
		if got <= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// frame is a request's bytes as a client of the test's own sends them.
type frame struct {
	argv, env []string
	umask     uint32
}

func (f frame) bytes() []byte {
	env := f.env
	if env == nil {
		env = os.Environ()
	}
	um := f.umask
	if um == 0 {
		um = uint32(unix.Umask(0o22))
		unix.Umask(int(um))
	}
	return serve.EncodeRequest(append([]string{"guardrun"}, f.argv...), env, um)
}

// rawSend connects and sends the segments, the first with the given
// descriptors; it returns the connection.
func rawSend(t *testing.T, srv *serve.Server, fds []int, segs ...[]byte) *net.UnixConn {
	t.Helper()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: srv.Path(), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for i, s := range segs {
		var oob []byte
		if i == 0 && len(fds) > 0 {
			oob = unix.UnixRights(fds...)
		}
		if _, _, err := c.WriteMsgUnix(s, oob, nil); err != nil {
			// The server may close first; what it answered is the test.
			break
		}
	}
	return c
}

// answer is the server's first byte ('R', 'F'), 0 when it closed, or
// 'T' when it said nothing for d.
func answer(c *net.UnixConn, d time.Duration) byte {
	c.SetReadDeadline(time.Now().Add(d))
	defer c.SetReadDeadline(time.Time{})
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return 'T'
		}
		return 0
	}
	return b[0]
}

// stdio are descriptors 0-2 and a working directory for a raw request.
func stdio(t *testing.T, dir string) []int {
	t.Helper()
	var fds []int
	for i := 0; i < 3; i++ {
		f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		fds = append(fds, int(f.Fd()))
	}
	d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(d) })
	return append(fds, d)
}

func TestMalformedRequests(t *testing.T) {
	srv, work, audit := startServer(t)
	touch := frame{argv: []string{"--approve-all", "-c", "touch ran"}}
	good := touch.bytes()
	u32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	withLen := func(payload []byte) []byte {
		return append(append([]byte("GRS1"), u32(uint32(len(payload)))...), payload...)
	}
	// A payload: argc, args, envc, env, umask, built by hand.
	payload := func(parts ...[]byte) []byte {
		var p []byte
		for _, x := range parts {
			p = append(p, x...)
		}
		return p
	}
	str := func(s string) []byte { return append(u32(uint32(len(s))), s...) }
	argv := payload(u32(4), str("guardrun"), str("--approve-all"), str("-c"), str("touch ran"))
	um := u32(0o22)
	file := filepath.Join(work, "afile")
	os.WriteFile(file, nil, 0o644)
	deleted := filepath.Join(work, "deleted")
	os.Mkdir(deleted, 0o755)

	rows := []struct {
		name  string
		fds   func(t *testing.T) []int
		segs  [][]byte
		want  byte // 0: closed without an answer; 'F'
		setup func(t *testing.T)
	}{
		{name: "bad-magic", segs: [][]byte{append([]byte("GRS2"), good[4:]...)}},
		{name: "length-over-limit", segs: [][]byte{append([]byte("GRS1"), u32(9<<20)...)}},
		{name: "length-short-of-payload", segs: [][]byte{append(append([]byte("GRS1"), u32(uint32(len(good)-8-3))...), good[8:]...)}},
		{name: "argc-overflow", segs: [][]byte{withLen(payload(u32(0xffffffff), str("guardrun")))}},
		{name: "arg-length-past-end", segs: [][]byte{withLen(payload(u32(1), u32(1000), []byte("guardrun")))}},
		{name: "bytes-after-umask", segs: [][]byte{withLen(payload(argv, u32(0), um, []byte("x")))}},
		{name: "no-umask", segs: [][]byte{withLen(payload(argv, u32(0)))}},
		{name: "no-descriptors", fds: func(t *testing.T) []int { return nil }, segs: [][]byte{good}},
		{name: "three-descriptors", fds: func(t *testing.T) []int { return stdio(t, work)[:3] }, segs: [][]byte{good}},
		{name: "five-descriptors", fds: func(t *testing.T) []int { s := stdio(t, work); return append(s, s[0]) }, segs: [][]byte{good}},
		{name: "descriptors-after-first-bytes", fds: func(t *testing.T) []int { return nil }, segs: [][]byte{good[:8], good[8:]}},
		{name: "half-request-then-close", segs: [][]byte{good[:len(good)/2]}},
		{name: "env-without-equals", segs: [][]byte{withLen(payload(argv, u32(1), str("NOEQUALS"), um))}, want: 'F'},
		{name: "env-empty-name", segs: [][]byte{frame{argv: touch.argv, env: append(os.Environ(), "=x")}.bytes()}, want: 'F'},
		{name: "argv0-only", segs: [][]byte{frame{argv: []string{}}.bytes()}, want: 'F'},
		{name: "other-umask", segs: [][]byte{frame{argv: touch.argv, umask: 0o077}.bytes()}, want: 'F'},
		{name: "other-state-dir", segs: [][]byte{frame{argv: touch.argv, env: append([]string{"XDG_STATE_HOME=/tmp"}, os.Environ()...)}.bytes()}, want: 'F'},
		{name: "trace-asked", segs: [][]byte{frame{argv: touch.argv, env: append(os.Environ(), "GUARDRUN_TRACE=1")}.bytes()}, want: 'F'},
		{name: "missing-guarded-variable", segs: [][]byte{frame{argv: touch.argv, env: without(os.Environ(), "XDG_CONFIG_HOME")}.bytes()}, want: 'F'},
		{name: "cwd-is-a-file", fds: func(t *testing.T) []int {
			s := stdio(t, work)
			f, err := unix.Open(file, unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { unix.Close(f) })
			return append(s[:3], f)
		}, segs: [][]byte{good}, want: 'F'},
		{name: "cwd-deleted", fds: func(t *testing.T) []int {
			s := stdio(t, deleted)
			if err := os.Remove(deleted); err != nil {
				t.Fatal(err)
			}
			return s
		}, segs: [][]byte{frame{argv: touch.argv, env: append([]string{"PWD=" + work}, os.Environ()...)}.bytes()}, want: 'F'},
		{name: "pwd-names-another-directory", fds: func(t *testing.T) []int {
			// $PWD names the work directory, the descriptor another one.
			return stdio(t, os.TempDir())
		}, segs: [][]byte{frame{argv: touch.argv, env: append([]string{"PWD=" + work}, os.Environ()...)}.bytes()}, want: 'R'},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			fdsf := r.fds
			if fdsf == nil {
				fdsf = func(t *testing.T) []int { return stdio(t, work) }
			}
			fds := fdsf(t)
			base := openFDs(t)
			c := rawSend(t, srv, fds, r.segs...)
			if r.name == "half-request-then-close" {
				c.CloseWrite()
			}
			got := answer(c, 15*time.Second)
			if r.want == 'R' {
				// Served (or left to the client), but never in the
				// directory $PWD names instead of the descriptor's.
				if got != 'R' && got != 'F' {
					t.Fatalf("answer %q, want R or F", got)
				}
				io.ReadAll(c)
				if _, err := os.Stat(filepath.Join(work, "ran")); err == nil {
					t.Error("the command ran where $PWD, not the descriptor, points")
				}
				os.Remove(filepath.Join(os.TempDir(), "ran"))
				return
			}
			if got != r.want {
				t.Errorf("answer %q, want %q", got, r.want)
			}
			c.Close()
			if n := settleFDs(t, base); n > base {
				t.Errorf("%d descriptors open after the attempt, %d before", n, base)
			}
			if _, err := os.Stat(filepath.Join(work, "ran")); err == nil {
				t.Error("the command ran")
			}
			if b, err := os.ReadFile(audit); err == nil && len(b) > 0 {
				t.Errorf("the attempt was audited: %s", b)
			}
		})
	}
}

func without(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if len(kv) > len(name) && kv[:len(name)+1] == name+"=" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// TestSilentClient: a client that connects and says nothing does
// not hold up another's run.
func TestSilentClient(t *testing.T) {
	srv, work, _ := startServer(t)
	silent := rawSend(t, srv, nil)
	_ = silent
	c := dial(t, srv, work, "--approve-all", "-c", "echo hi")
	done := make(chan byte, 1)
	go func() { done <- c.reply(t) }()
	select {
	case r := <-done:
		if r != 'R' {
			t.Fatalf("reply %q, want R", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a silent client held up another client's request")
	}
	if code := c.exit(t); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestSignalsOutsideTheSet: a client's S messages pass on only the
// signals guardrun relays (INT, TERM, HUP, QUIT); a SIGKILL or SIGSTOP
// asked for is not sent to the command.
func TestSignalsOutsideTheSet(t *testing.T) {
	srv, work, _ := startServer(t)
	c := dial(t, srv, work, "--approve-all", "-c", "sleep 1; echo finished")
	if c.reply(t) != 'R' {
		t.Fatal("not served")
	}
	time.Sleep(300 * time.Millisecond)
	c.signal(t, syscall.SIGSTOP)
	c.signal(t, syscall.SIGKILL)
	c.signal(t, syscall.Signal(0))
	c.signal(t, syscall.Signal(-1))
	if code := c.exit(t); code != 0 {
		t.Errorf("exit %d, want 0: a signal outside the set reached the command", code)
	}
	c.c.Close()
	if out, _ := io.ReadAll(c.stdout); string(out) != "finished\n" {
		t.Errorf("stdout %q", out)
	}
}

// TestPeerCredentials: a peer of the same user whose other
// credentials differ from the server's (gid, groups: a command would
// get the server's) is closed on; the same peer with the
// server's credentials is served.
func TestPeerCredentials(t *testing.T) {
	srv, work, _ := startServer(t)
	testenv.LookPath(t, "setpriv")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		name string
		args []string // setpriv's
		root bool     // needs root to make
		want string
	}{
		{"same-credentials", []string{"--reuid", strconv.Itoa(os.Geteuid())}, false, "R"},
		{"other-gid", []string{"--regid", "65534", "--keep-groups"}, true, "closed"},
		{"other-group-list", []string{"--groups", "65534"}, true, "closed"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if r.root && os.Geteuid() != 0 {
				t.Skip("needs root to start a peer with other credentials")
			}
			cmd := exec.Command("setpriv", append(r.args, exe)...)
			cmd.Dir, cmd.Env = work, append(os.Environ(), "SERVE_TEST_PEER="+srv.Path())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("peer: %v\n%s", err, out)
			}
			if got := strings.TrimSpace(string(out)); got != r.want {
				t.Errorf("peer got %q, want %q", got, r.want)
			}
		})
	}
}

// TestHostileClientsUnprivileged re-runs this file's tests as an
// unprivileged user (see TestAsUnprivilegedUser).
func TestHostileClientsUnprivileged(t *testing.T) {
	runAsUnprivileged(t, "TestMalformedRequests", "TestSilentClient", "TestSignalsOutsideTheSet", "TestPeerCredentials")
}

// TestClientGoneAtCommit: a client that goes away as soon as the
// server has committed leaves a command that does not run on (or is
// ended) and a start and an end record, as a guardrun killed at that
// moment would.
func TestClientGoneAtCommit(t *testing.T) {
	srv, work, audit := startServer(t)
	c := dial(t, srv, work, "--approve-all", "-c", "sleep 2; echo > finished")
	if c.reply(t) != 'R' {
		t.Fatal("not served")
	}
	c.c.Close()
	time.Sleep(3 * time.Second)
	if _, err := os.Stat(filepath.Join(work, "finished")); err == nil {
		t.Error("the command ran on after its client went away")
	}
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"outcome":"started"`) || strings.Contains(lines[1], `"outcome":"started"`) {
		t.Errorf("records, want a start and an end:\n%s", b)
	}
}
