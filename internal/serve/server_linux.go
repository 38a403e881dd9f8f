package serve

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/internal/sys/ipc"
)

// requestTimeout bounds how long a client may take to send its request.
const requestTimeout = 10 * time.Second

// Server serves the run requests of guardrun processes started below
// `guardrun serve` (see the package doc).
type Server struct {
	cfg    Config
	ln     *ipc.Listener
	ctx    context.Context
	cancel context.CancelFunc
	// runs are the committed requests, which Close waits for; mu
	// guards closed, after which no request commits. A request not yet
	// committed may be stuck (a --config that is a FIFO): Close does
	// not wait for it, and its client falls back when serve exits.
	mu     sync.Mutex
	closed bool
	runs   sync.WaitGroup
	self   *procInfo
	env    *config.Env
	umask  uint32
	pidfd  bool // SO_PEERPIDFD works here
	// exePath is where the server's executable was when it started, and
	// exe that file (device and inode): see sameExecutable.
	exePath string
	exe     [2]uint64
	// limits is the server's /proc/self/limits and cgroup: see
	// sameLimits.
	limits string
	// guarded are the guarded variables (see guarded) of Config.Environ.
	guarded map[string]string
}

// Listen makes the server's socket in a new private directory under
// $XDG_RUNTIME_DIR (else the temporary directory) and learns what it
// compares its clients with: its own namespaces, seccomp filters,
// no_new_privs, terminal session, umask and environment.
func Listen(cfg Config) (*Server, error) {
	if cfg.Parse == nil || cfg.Report == nil {
		return nil, errors.New("serve: Config needs Parse and Report")
	}
	g, err := guardedOf(cfg.Environ)
	if err != nil {
		return nil, err
	}
	self, err := readProcInfo(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	umask, err := procUmask("self")
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	env, err := config.NewEnv()
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	exePath, exe, err := executable()
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	limits, err := procLimits("self")
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	ln, err := ipc.ListenPrivate("", "guardrun-serve-", "s")
	if err != nil {
		return nil, fmt.Errorf("serve: socket: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{cfg: cfg, ln: ln, ctx: ctx, cancel: cancel,
		self: self, env: env, umask: umask, pidfd: pidfdWorks(), guarded: g,
		exePath: exePath, exe: exe, limits: limits}, nil
}

// procLimits is the resource limits, control groups and LSM label of
// the process pid ("self" for this one), as /proc shows them.
func procLimits(pid string) (string, error) {
	l, err := readProc("/proc/" + pid + "/limits")
	if err != nil {
		return "", err
	}
	c, err := readProc("/proc/" + pid + "/cgroup")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, line := range strings.Split(string(l), "\n") {
		if len(line) < 26 {
			b.WriteString(line + "\n")
			continue
		}
		name, vals := strings.TrimSpace(line[:26]), strings.Fields(line[26:])
		switch {
		case name == "Max realtime priority" || name == "Max nice priority":
			// Lowered in the server by its first bwrap run, and for
			// every command by the sandbox anyway.
			continue
		case name == "Max open files" && len(vals) >= 2:
			// Go raises its own soft limit to the hard one (and gives
			// its children the one it started with).
			vals = vals[1:]
		}
		b.WriteString(name + " " + strings.Join(vals, " ") + "\n")
	}
	b.Write(c)
	// The LSM label (AppArmor profile, SELinux context): a client
	// confined by one the server is not would have its command run
	// unconfined by it. Without an LSM the read fails alike for both.
	if a, err := readProc("/proc/" + pid + "/attr/current"); err == nil {
		b.WriteString("\nlsm " + string(a))
	} else {
		b.WriteString("\nlsm unreadable")
	}
	return b.String(), nil
}

// sameLimits reports whether the client has the server's resource
// limits, control groups and LSM label (as checkPeer read them, under
// the pidfd that ties the pid to the client). A served command gets the
// server's: a client held to less (ulimit -f, -n, -u; a cgroup with a
// memory or pids limit; an AppArmor profile) would have its command
// escape them.
func (s *Server) sameLimits(peer *procInfo) bool {
	return peer.limits != "" && peer.limits == s.limits
}

// executable is the path and file (device, inode) of the running
// program.
func executable() (string, [2]uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		return "", [2]uint64{}, fmt.Errorf("own executable: %w", err)
	}
	p, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return "", [2]uint64{}, fmt.Errorf("own executable: %w", err)
	}
	return p, [2]uint64{st.Dev, st.Ino}, nil
}

// sameExecutable reports whether the server's executable is still the
// file at the path it was started from. Once guardrun is replaced there
// (an upgrade), the clients are the new guardrun and the server the old:
// it would decide and run their requests with the old code, and under
// landlock could not start its trampoline from the deleted file at all.
// Their requests are then their own.
func (s *Server) sameExecutable() bool {
	var st unix.Stat_t
	return unix.Stat(s.exePath, &st) == nil && [2]uint64{st.Dev, st.Ino} == s.exe
}

// Path is the socket, for GUARDRUN_SERVER.
func (s *Server) Path() string { return s.ln.Path() }

// Serve accepts clients until Close, each on its own goroutine. If
// accepting fails, it closes the socket (clients then run their
// requests themselves) and returns the error.
func (s *Server) Serve() error {
	for {
		c, peer, err := s.ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// Stop listening (the socket goes): clients queued or
			// still to come get no connection and run the usual way
			// instead of waiting for an accept that does not come.
			s.ln.Close()
			return fmt.Errorf("serve: accept: %w", err)
		}
		go s.handle(c, peer)
	}
}

// Close stops accepting, ends the commands still running (as guardrun
// being killed would: their sandboxes end, their end records are
// written), waits for them and removes the socket and its directory.
// Requests not committed yet are not waited for: they can no longer
// commit, and their clients run them the usual way.
func (s *Server) Close() {
	s.cancel()
	s.ln.Close()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.runs.Wait()
}

// commit counts a request as committed unless the server is closing.
func (s *Server) commit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.runs.Add(1)
	return true
}

// client is one connection's request under way.
type client struct {
	conn  *net.UnixConn
	files [4]*os.File // stdin, stdout, stderr, working directory
	mu    sync.Mutex  // serialises writes to conn
}

func (c *client) send(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.conn.Write(b)
	return err
}

func (c *client) closeFiles() {
	for _, f := range c.files {
		if f != nil {
			f.Close()
		}
	}
}

// handle serves one connection: a peer that fails the check is closed
// on (its guardrun then runs as if there were no server); a request the
// server does not take gets F; one it takes gets R, runs, and gets X
// with the exit status.
func (s *Server) handle(conn *net.UnixConn, cred ipc.Peer) {
	defer conn.Close()
	pid, peer, ok := s.checkPeer(conn, cred)
	if !ok {
		return
	}
	c := &client{conn: conn}
	conn.SetReadDeadline(time.Now().Add(requestTimeout))
	req, err := readRequest(conn, &c.files)
	defer c.closeFiles()
	if err != nil {
		return
	}
	conn.SetReadDeadline(time.Time{})
	committed, code := s.run(c, pid, peer, req)
	if !committed {
		c.send([]byte{msgFallback})
		return
	}
	c.send(exitMessage(code))
	s.runs.Done()
}

// run runs req if the server can run it as the client's own guardrun
// would; committed false means nothing was done and the client should.
func (s *Server) run(c *client, pid int, peer *procInfo, req *wireRequest) (committed bool, code int) {
	if len(req.Argv) < 2 || req.Umask != s.umask || !s.sameExecutable() || !s.sameLimits(peer) {
		return false, 0
	}
	env, ok := clientEnv(req.Environ)
	if !ok || !s.sameGuardrunEnv(env) {
		return false, 0
	}
	getenv := func(k string) string { return env.vars[k] }
	if !s.samePath(getenv("PATH")) {
		return false, 0
	}
	cwd, ok := clientCwd(c.files[3], getenv("PWD"))
	if !ok {
		return false, 0
	}
	opts, job, ok := s.cfg.Parse(req.Argv[1:], getenv)
	if !ok {
		return false, 0
	}
	if opts.Config != "" && !filepath.IsAbs(opts.Config) {
		// As the client's filepath.Abs would make it.
		opts.Config = filepath.Join(cwd, opts.Config)
	}
	if gc := getenv("GUARDRUN_CONFIG"); gc != "" && !filepath.IsAbs(gc) {
		// Relative to the working directory, which is the client's
		// here and not the server's.
		return false, 0
	}
	if opts.Session == "" && getenv("GUARDRUN_SESSION") == "" {
		// The session is the client's terminal's; serve only clients
		// whose terminal session is the server's.
		if peer.sid != s.self.sid || peer.tty != s.self.tty {
			return false, 0
		}
	}
	stderr := c.files[2]
	held := &heldWriter{}
	e := s.env.For(cwd, getenv)
	sess, err := request.OpenEnv(opts, e, request.IO{Stdin: c.files[0], Stdout: c.files[1], Stderr: held})
	if err != nil {
		return false, 0
	}
	cfg := sess.Loaded.Cfg
	switch {
	case !sess.Sandboxed, sess.NoSandbox != nil, cfg.Sandbox.Proxy:
		// Unsandboxed runs relay the process's own signals, and a
		// proxy asks for hosts while the command runs.
		return false, 0
	case !sess.Backend.ConfinesSignals():
		// A command that can signal outside its sandbox (landlock
		// without its signal scope, ABI 6, accepted as lost in the
		// config) could stop or kill the server, and with it every
		// client's run.
		return false, 0
	}
	sess.NoPerson = true

	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	sigs := make(chan os.Signal, 4)
	job.Cwd, job.Environ = cwd, env.list
	job.PID, job.Via, job.Signals = pid, "server", sigs
	job.Commit = func() error {
		if !s.commit() {
			return errors.New("serve: the server is closing")
		}
		if err := c.send([]byte{msgCommitted}); err != nil {
			s.runs.Done()
			return fmt.Errorf("serve: the client is gone: %w", err)
		}
		committed = true
		held.release(stderr)
		go func() {
			readSignals(ctx, c.conn, sigs)
			// The client is gone (or sent nonsense): as if guardrun
			// were killed, the command ends.
			cancel()
		}()
		return nil
	}
	io := request.IO{Stdin: c.files[0], Stdout: c.files[1], Stderr: stderr}
	err = sess.Run(ctx, job, io)
	if !committed {
		return false, 0
	}
	return true, s.cfg.Report(err, stderr)
}

// readSignals reads S messages from the client until EOF, passing the
// signals guardrun relays to sigs.
func readSignals(ctx context.Context, conn *net.UnixConn, sigs chan<- os.Signal) {
	var b [5]byte
	for {
		if _, err := io.ReadFull(conn, b[:]); err != nil || b[0] != msgSignal {
			return
		}
		var sig os.Signal
		switch n := int32(binary.LittleEndian.Uint32(b[1:])); syscall.Signal(n) {
		case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT:
			sig = syscall.Signal(n)
		default:
			continue
		}
		select {
		case sigs <- sig:
		case <-ctx.Done():
			return
		}
	}
}

// heldWriter keeps what is written to it until release, then passes
// it on: guardrun's warnings from loading the config reach the client's
// stderr only when the server takes the request (else the client's own
// guardrun prints them).
type heldWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	w   io.Writer
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w != nil {
		return h.w.Write(p)
	}
	return h.buf.Write(p)
}

func (h *heldWriter) release(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w.Write(h.buf.Bytes())
	h.buf.Reset()
	h.w = w
}

// readRequest reads the request's frame (package ipc's: the magic,
// the payload's length, the payload) with the four descriptors that come
// with its first bytes.
func readRequest(conn *net.UnixConn, files *[4]*os.File) (*wireRequest, error) {
	payload, fds, err := ipc.ReadFrame(conn, magic, maxRequest, len(files))
	if err != nil {
		return nil, err
	}
	copy(files[:], fds)
	if len(fds) != len(files) {
		return nil, errors.New("serve: the request did not come with 4 descriptors")
	}
	return decodeRequest(payload)
}

// environ is a client's environment: the list as the command gets it
// (first of duplicates kept, as Go's os.Environ does) and its values.
type environ struct {
	list []string
	vars map[string]string
}

func clientEnv(in []string) (environ, bool) {
	e := environ{vars: make(map[string]string, len(in))}
	for _, kv := range in {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return e, false
		}
		if _, dup := e.vars[k]; dup {
			continue
		}
		e.vars[k] = v
		e.list = append(e.list, kv)
	}
	return e, true
}

// guarded reports whether the variable k chooses something the server
// has fixed for its lifetime: where state, config and grants live
// (HOME, XDG_*, GUARDRUN_*), tracing. (PATH, which chose the bwrap the
// server runs, is compared by what it finds: see samePath.)
//
// GUARDRUN_SOCKET is not: the supervisor sets it for its agent after the
// server starts, and a request reads it from the client's environment
// alone (who would be asked, which is never the server's business: a
// request that needs a person is the client's; the directory hidden).
func guarded(k string) bool {
	return k == "HOME" || strings.HasPrefix(k, "XDG_") ||
		(strings.HasPrefix(k, "GUARDRUN_") && k != request.ServerEnvVar && k != "GUARDRUN_SOCKET")
}

// samePath reports whether a client whose PATH is path would run the
// bwrap the server runs.
func (s *Server) samePath(path string) bool {
	if path == os.Getenv("PATH") {
		return true
	}
	own, err := bwrap.Binary()
	if err != nil {
		return false
	}
	p, err := bwrap.FindIn(path)
	return err == nil && p == own
}

// guardedOf are the guarded variables of environ (the process's own
// when nil). Those that choose what the server fixes for its lifetime
// (HOME, XDG_*, GUARDRUN_TRACE) must be the process's own.
func guardedOf(environ []string) (map[string]string, error) {
	collect := func(env []string) map[string]string {
		g := map[string]string{}
		for _, kv := range env {
			if k, v, ok := strings.Cut(kv, "="); ok && guarded(k) {
				if _, dup := g[k]; !dup {
					g[k] = v
				}
			}
		}
		return g
	}
	own := collect(os.Environ())
	if environ == nil {
		return own, nil
	}
	g := collect(environ)
	fixed := func(k string) bool { return !strings.HasPrefix(k, "GUARDRUN_") || k == "GUARDRUN_TRACE" }
	for _, m := range []map[string]string{g, own} {
		for k := range m {
			v1, ok1 := g[k]
			v2, ok2 := own[k]
			if fixed(k) && (ok1 != ok2 || v1 != v2) {
				return nil, fmt.Errorf("serve: the served command's $%s is not guardrun's own", k)
			}
		}
	}
	return g, nil
}

// sameGuardrunEnv reports whether the client's guarded variables are
// those of the command served (Config.Environ), and no trace is asked
// for.
func (s *Server) sameGuardrunEnv(env environ) bool {
	if _, ok := env.vars["GUARDRUN_TRACE"]; ok {
		return false
	}
	n := 0
	for k, v := range env.vars {
		if guarded(k) {
			if own, ok := s.guarded[k]; !ok || own != v {
				return false
			}
			n++
		}
	}
	return n == len(s.guarded)
}

// clientCwd is the path of the client's working directory, as its own
// os.Getwd would say: $PWD when that names the same directory, else the
// directory's path. ok is false when it has none the server can name.
func clientCwd(f *os.File, pwd string) (string, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return "", false
	}
	same := func(p string) bool {
		var ps unix.Stat_t
		return unix.Stat(p, &ps) == nil && ps.Dev == st.Dev && ps.Ino == st.Ino
	}
	if filepath.IsAbs(pwd) && same(pwd) {
		return pwd, true
	}
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || !filepath.IsAbs(p) || !same(p) {
		return "", false
	}
	return p, true
}

// procUmask reads the Umask line of /proc/PID/status.
func procUmask(pid string) (uint32, error) {
	b, err := readProc("/proc/" + pid + "/status")
	if err != nil {
		return 0, err
	}
	v, ok := statusField(b, "Umask")
	if !ok {
		return 0, errors.New("no Umask in /proc/" + pid + "/status")
	}
	u, err := strconv.ParseUint(v, 8, 32)
	return uint32(u), err
}

func statusField(status []byte, name string) (string, bool) {
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}
