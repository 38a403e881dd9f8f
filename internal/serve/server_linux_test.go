package serve_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/internal/cli"
	"github.com/guardrun/guardrun/internal/serve"
	"github.com/guardrun/guardrun/internal/testing/testenv"
	"github.com/guardrun/guardrun/landlock"
)

// startServer starts a server in a fresh home, state and work directory
// (the process environment is the clients' too).
func startServer(t testing.TB) (srv *serve.Server, work, audit string) {
	t.Helper()
	return startServerConfig(t, "")
}

// startServerConfig is startServer with $GUARDRUN_CONFIG naming a file
// outside the work directory with config, unless config is "". "{work}"
// in config is the work directory.
func startServerConfig(t testing.TB, config string) (srv *serve.Server, work, audit string) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		testenv.Missing(t, "bubblewrap (bwrap) is not installed")
	}
	if out, err := exec.Command("bwrap", "--unshare-user", "--unshare-pid", "--ro-bind", "/", "/", "--proc", "/proc", "true").CombinedOutput(); err != nil {
		testenv.Missing(t, "bwrap cannot create namespaces: %s", out)
	}
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("GUARDRUN_CONFIG", "")
	if config != "" {
		f := filepath.Join(root, "guardrun.yaml")
		if err := os.WriteFile(f, []byte(strings.ReplaceAll(config, "{work}", work)), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("GUARDRUN_CONFIG", f)
	}
	t.Setenv("GUARDRUN_SESSION", "served-test")
	srv, err := serve.Listen(serve.Config{Parse: cli.ParseRun, Report: cli.Report})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv, work, filepath.Join(home, ".local", "state", "guardrun", "audit.jsonl")
}

// conn is one client of the test's own, speaking the protocol as the C
// client does.
type conn struct {
	c      *net.UnixConn
	stdout *os.File // the read end of the command's stdout
	stderr *os.File
}

func dial(t testing.TB, srv *serve.Server, dir string, args ...string) *conn {
	t.Helper()
	return dialEnv(t, srv, dir, os.Environ(), args...)
}

// dialEnv is dial with the client's environment env.
func dialEnv(t testing.TB, srv *serve.Server, dir string, env []string, args ...string) *conn {
	t.Helper()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: srv.Path(), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	or, ow, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	er, ew, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	cwd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	um := unix.Umask(0o22)
	unix.Umask(um)
	req := serve.EncodeRequest(append([]string{"guardrun"}, args...), env, uint32(um))
	rights := unix.UnixRights(int(in.Fd()), int(ow.Fd()), int(ew.Fd()), cwd)
	if _, _, err := c.WriteMsgUnix(req, rights, nil); err != nil {
		t.Fatal(err)
	}
	in.Close()
	ow.Close()
	ew.Close()
	unix.Close(cwd)
	t.Cleanup(func() { or.Close(); er.Close() })
	return &conn{c: c, stdout: or, stderr: er}
}

// reply reads the server's first answer: 'R', 'F', or 0 when it closed.
func (c *conn) reply(t testing.TB) byte {
	t.Helper()
	var b [1]byte
	if _, err := io.ReadFull(c.c, b[:]); err != nil {
		return 0
	}
	return b[0]
}

// exit reads the X message.
func (c *conn) exit(t testing.TB) int {
	t.Helper()
	var b [5]byte
	if _, err := io.ReadFull(c.c, b[:]); err != nil || b[0] != 'X' {
		t.Fatalf("no exit status: %q %v", b, err)
	}
	return int(int32(binary.LittleEndian.Uint32(b[1:])))
}

func (c *conn) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	m := binary.LittleEndian.AppendUint32([]byte{'S'}, uint32(sig))
	if _, err := c.c.Write(m); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentRuns: many clients at once (make -j) each get their own
// command's output and exit status, and each run is audited as served,
// under either backend.
func TestConcurrentRuns(t *testing.T) {
	t.Run("bwrap", func(t *testing.T) { concurrentRuns(t, "bwrap") })
	t.Run("landlock", func(t *testing.T) {
		if err := landlock.Check(); err != nil {
			testenv.Missing(t, "the landlock backend cannot run here: %v", err)
		}
		concurrentRuns(t, "landlock")
	})
}

func concurrentRuns(t *testing.T, backend string) {
	srv, work, audit := startServer(t)
	const n = 8
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		c := dial(t, srv, work, "--backend", backend, "--approve-all", "-c", fmt.Sprintf("echo out %d; echo err %d >&2; exit %d", i, i, i+1))
		wg.Add(1)
		go func(i int, c *conn) {
			defer wg.Done()
			if r := c.reply(t); r != 'R' {
				t.Errorf("client %d: reply %q, want R", i, r)
				return
			}
			code := c.exit(t)
			c.c.Close()
			out, _ := io.ReadAll(c.stdout)
			errOut, _ := io.ReadAll(c.stderr)
			if code != i+1 || string(out) != fmt.Sprintf("out %d\n", i) || string(errOut) != fmt.Sprintf("err %d\n", i) {
				t.Errorf("client %d: exit %d stdout %q stderr %q", i, code, out, errOut)
			}
		}(i, c)
	}
	wg.Wait()
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2*n {
		t.Fatalf("%d audit records, want %d", len(lines), 2*n)
	}
	runs := map[string]int{}
	for _, l := range lines {
		var r struct {
			Via, Run, Session, Sandbox string
			PID                        int
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Via != "server" || r.Session != "served-test" || r.PID != os.Getpid() || r.Sandbox != backend {
			t.Errorf("record %s", l)
		}
		runs[r.Run]++
	}
	if len(runs) != n {
		t.Errorf("%d run ids, want %d", len(runs), n)
	}
}

// TestSignalsPerClient: a client's signal reaches its own command only;
// the server's own signals reach none.
func TestSignalsPerClient(t *testing.T) {
	t.Run("bwrap", func(t *testing.T) { signalsPerClient(t, "bwrap") })
	t.Run("landlock", func(t *testing.T) {
		if err := landlock.Check(); err != nil {
			testenv.Missing(t, "the landlock backend cannot run here: %v", err)
		}
		signalsPerClient(t, "landlock")
	})
}

func signalsPerClient(t *testing.T, backend string) {
	srv, work, _ := startServer(t)
	a := dial(t, srv, work, "--backend", backend, "--approve-all", "-c", "sleep 20")
	b := dial(t, srv, work, "--backend", backend, "--approve-all", "-c", "sleep 20")
	if a.reply(t) != 'R' || b.reply(t) != 'R' {
		t.Fatal("not served")
	}
	time.Sleep(300 * time.Millisecond) // both sandboxes up
	a.signal(t, syscall.SIGINT)
	if code := a.exit(t); code != 130 {
		t.Errorf("a: exit %d after SIGINT, want 130", code)
	}
	b.c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var x [1]byte
	if _, err := b.c.Read(x[:]); err == nil {
		t.Fatalf("b ended with a's signal: %q", x)
	}
	b.c.SetReadDeadline(time.Time{})
	b.signal(t, syscall.SIGTERM)
	if code := b.exit(t); code != 143 {
		t.Errorf("b: exit %d after SIGTERM, want 143", code)
	}
}

// TestFallbackAnswers: what the server does not run gets F, with
// nothing written to the client.
func TestFallbackAnswers(t *testing.T) {
	srv, work, audit := startServer(t)
	for _, args := range [][]string{
		{"--approve-all", "explain", "-c", "true"},
		{"--mode", "bogus", "-c", "true"},
		{"-c"},
		{"--"},
		{"-c", "touch x"}, // interactive: a person would be asked
	} {
		c := dial(t, srv, work, args...)
		if r := c.reply(t); r != 'F' {
			t.Errorf("%q: reply %q, want F", args, r)
		}
		c.c.Close()
		if out, _ := io.ReadAll(c.stderr); len(out) != 0 {
			t.Errorf("%q: the server wrote %q", args, out)
		}
	}
	if _, err := os.Stat(audit); err == nil {
		b, _ := os.ReadFile(audit)
		t.Errorf("a fallback was audited: %s", b)
	}
}

// TestEnvironment: a client whose state, config or session variables
// differ from the server's, or whose PATH finds another bwrap, gets F; a
// PATH that finds the same bwrap is served.
func TestEnvironment(t *testing.T) {
	srv, work, _ := startServer(t)
	with := func(kv ...string) []string {
		env := os.Environ()
		for _, x := range kv {
			k, _, _ := strings.Cut(x, "=")
			var out []string
			for _, e := range env {
				if !strings.HasPrefix(e, k+"=") {
					out = append(out, e)
				}
			}
			env = append(out, x)
		}
		return env
	}
	fake := t.TempDir()
	if err := os.WriteFile(filepath.Join(fake, "bwrap"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	for _, tc := range []struct {
		name string
		env  []string
		want byte
	}{
		{"same", os.Environ(), 'R'},
		{"PATH finding the same bwrap", with("PATH=" + empty + ":" + os.Getenv("PATH")), 'R'},
		{"PATH finding another bwrap", with("PATH=" + fake + ":" + os.Getenv("PATH")), 'F'},
		{"XDG_STATE_HOME", with("XDG_STATE_HOME=" + t.TempDir()), 'F'},
		{"HOME", with("HOME=" + t.TempDir()), 'F'},
		{"GUARDRUN_SESSION", with("GUARDRUN_SESSION=other"), 'F'},
		{"GUARDRUN_TRACE", with("GUARDRUN_TRACE=1"), 'F'},
	} {
		c := dialEnv(t, srv, work, tc.env, "--approve-all", "-c", "true")
		if r := c.reply(t); r != tc.want {
			t.Errorf("%s: reply %q, want %q", tc.name, r, tc.want)
		}
		if tc.want == 'R' {
			if code := c.exit(t); code != 0 {
				t.Errorf("%s: exit %d", tc.name, code)
			}
		}
		c.c.Close()
	}
}

func TestMain(m *testing.M) {
	if p := os.Getenv("SERVE_TEST_PEER"); p != "" {
		os.Exit(peerMain(p))
	}
	os.Exit(m.Run())
}

// peerMain is a client started in another namespace by
// TestPeerOtherNamespace: it sends a well-formed request and prints the
// first answer (R, F, or closed).
func peerMain(path string) int {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	cwd, err := unix.Open(".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	um := unix.Umask(0o22)
	unix.Umask(um)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SERVE_TEST_PEER=") {
			env = append(env, kv)
		}
	}
	req := serve.EncodeRequest([]string{"guardrun", "--approve-all", "-c", "true"}, env, uint32(um))
	if _, _, err := c.WriteMsgUnix(req, unix.UnixRights(0, 1, 2, cwd), nil); err != nil {
		fmt.Println("closed")
		return 0
	}
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		fmt.Println("closed")
		return 0
	}
	if b[0] == 'R' {
		// Wait for the exit status: leaving now would cancel the run.
		io.Copy(io.Discard, c)
	}
	fmt.Println(string(b[:]))
	return 0
}

// TestPeerOtherNamespace: a client in another user namespace (as in a
// bwrap sandbox), or with no_new_privs the server lacks (as under the
// landlock backend), is closed on without an answer; the same client
// outside gets one.
func TestPeerOtherNamespace(t *testing.T) {
	srv, work, audit := startServer(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The confined peers are made by programs of their own: after a
	// landlock run this process is not dumpable, and cannot write the
	// id maps of a user namespace it would make itself.
	run := func(pre ...string) string {
		t.Helper()
		cmd := exec.Command(exe)
		if len(pre) > 0 {
			cmd = exec.Command(pre[0], append(pre[1:], exe)...)
		}
		cmd.Dir, cmd.Env = work, append(os.Environ(), "SERVE_TEST_PEER="+srv.Path())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("peer: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	testenv.LookPath(t, "unshare")
	testenv.LookPath(t, "setpriv")
	if got := run(); got != "R" {
		t.Fatalf("an unconfined peer got %q, want R: the test's peer is wrong", got)
	}
	if got := run("unshare", "--user"); got != "closed" {
		t.Errorf("a peer in another user namespace got %q, want closed", got)
	}
	if got := run("setpriv", "--no-new-privs"); got != "closed" {
		t.Errorf("a peer with no_new_privs got %q, want closed", got)
	}
	b, _ := os.ReadFile(audit)
	if n := strings.Count(string(b), `"outcome":"ran"`); n != 1 {
		t.Errorf("%d runs audited, want the unconfined peer's only:\n%s", n, b)
	}
}

// unprivUser is the user the server's tests run as a second time when
// the suite runs as root (runner's tests use the same one).
const unprivUser = "guardrun-test"

// TestAsUnprivilegedUser re-runs the server's tests as an unprivileged
// user: the peer check and the runs must work without root.
func TestAsUnprivilegedUser(t *testing.T) {
	runAsUnprivileged(t, "TestConcurrentRuns", "TestSignalsPerClient", "TestFallbackAnswers", "TestEnvironment", "TestPeerOtherNamespace")
}

// runAsUnprivileged runs the named tests of this binary again as
// unprivUser (created when missing) and fails unless each passed there.
// It skips when not root, or when it is that copy already.
func runAsUnprivileged(t *testing.T, names ...string) {
	t.Helper()
	if os.Getenv("GUARDRUN_TEST_CHILD") != "" {
		t.Skip("already the re-executed copy")
	}
	if os.Geteuid() != 0 {
		t.Skip("running as an unprivileged user already: the other tests cover it")
	}
	startServer(t) // skips without the sandbox
	testenv.LookPath(t, "runuser")
	testenv.User(t, unprivUser)
	dir, err := os.MkdirTemp("", "serve-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "serve.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("runuser", "-u", unprivUser, "--", "env",
		"GUARDRUN_TEST_CHILD=1",
		"GUARDRUN_REQUIRE_SANDBOX="+os.Getenv("GUARDRUN_REQUIRE_SANDBOX"),
		"PATH=/usr/local/bin:/usr/bin:/bin",
		bin, "-test.v", "-test.count=1", "-test.run=^("+strings.Join(names, "|")+")$")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as %s: %v\n%s", unprivUser, err, out)
	}
	for _, name := range names {
		if !strings.Contains(string(out), "--- PASS: "+name) {
			t.Errorf("as %s, %s did not pass:\n%s", unprivUser, name, out)
		}
	}
}

// TestDeepRuntimeDir: with $XDG_RUNTIME_DIR and $TMPDIR too deep for a
// unix socket's path (108 bytes), the server still listens (in /tmp)
// and takes connections, where it used to fail to bind.
func TestDeepRuntimeDir(t *testing.T) {
	deep := t.TempDir()
	for len(deep) < 120 {
		deep = filepath.Join(deep, "a-rather-long-directory-name")
	}
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", deep)
	t.Setenv("TMPDIR", deep)
	srv, err := serve.Listen(serve.Config{Parse: cli.ParseRun, Report: cli.Report})
	if err != nil {
		t.Fatalf("Listen with a deep runtime directory: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	defer func() {
		srv.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	if p := srv.Path(); !strings.HasPrefix(p, "/tmp/guardrun-serve-") || len(p) > 107 {
		t.Fatalf("socket at %q, want one in /tmp that fits a sockaddr_un", p)
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: srv.Path(), Net: "unix"})
	if err != nil {
		t.Fatalf("connecting to the server: %v", err)
	}
	c.Close()
}
