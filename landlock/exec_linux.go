package landlock

import (
	"context"
	"errors"
	"fmt"
	"github.com/guardrun/guardrun/internal/sys/cloexec"
	"github.com/guardrun/guardrun/internal/sys/trace"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
	"github.com/guardrun/guardrun/seccomp/notify"
)

// WaitDelay is how long a cancelled command has, after SIGTERM, before
// it is killed.
var WaitDelay = 5 * time.Second

const (
	createRulesetVersion = 1 << 0
	rulePathBeneath      = 1
	ruleNetPort          = 2
)

// rulesetAttr is struct landlock_ruleset_attr up to ABI 6 (scoped); the
// kernel accepts a larger or smaller struct as long as what it does not
// know is zero.
type rulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

// pathBeneathAttr is struct landlock_path_beneath_attr, which the kernel
// packs: 12 bytes, which this layout's first 12 match.
type pathBeneathAttr struct {
	allowed uint64
	fd      int32
	_       int32
}

type netPortAttr struct {
	allowed uint64
	port    uint64
}

// ABI returns the running kernel's Landlock ABI version, or 0 and why
// when it has none.
func ABI() (int, error) {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, createRulesetVersion)
	if e != 0 {
		switch e {
		case unix.ENOSYS:
			return 0, errors.New("the kernel has no Landlock (Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK)")
		case unix.EOPNOTSUPP:
			//lint:ignore ST1005 Landlock is a proper name
			return 0, errors.New("Landlock is built into the kernel but not enabled: add landlock to the lsm= boot parameter")
		}
		return 0, fmt.Errorf("landlock: %w", e)
	}
	return int(v), nil
}

// Check reports whether the landlock backend works here: Landlock, and
// the seccomp filter it shares with the bwrap backend.
func Check() error {
	if _, err := ABI(); err != nil {
		return err
	}
	return seccomp.Supported()
}

// Cmd is a command prepared to run under Landlock and the seccomp
// filter. Set Cmd.Stdin, Cmd.Stdout and Cmd.Stderr before Start.
type Cmd struct {
	// Cmd runs the command itself. Its Path, Args, Env, Dir,
	// SysProcAttr, Cancel and WaitDelay are set by Command.
	Cmd     *exec.Cmd
	Ruleset *Ruleset

	// Restored says, one line per path, what was put back or moved
	// aside after the command (Ruleset.Watch); set by Wait.
	Restored []string

	// Notify is the notification registry: the system calls of the
	// command that guardrun serves in user space, with their handlers
	// (see package seccomp/notify). Add handlers before Start; Start
	// routes every name it holds to user space in the command's filter
	// and serves them until Wait. Empty, no listener is made.
	Notify *notify.Registry

	snaps []snap
	// release lets go of snaps as the snapshot other commands starting
	// meanwhile share (takeHeld).
	release func()
	// share is the directory through which snaps are shared with other
	// guardrun processes (shareDir); "" when nothing is watched.
	share  string
	policy sandbox.SeccompPolicy
	// filterCache is where compiled filters are kept (Config.FilterCache).
	filterCache string
	server      *notify.Server
	// verified: the command is verified (Config.Verify), and starts
	// behind notify's helper, which loads the routed filter.
	verified bool
	// dirs serves the entries of Ruleset.Served (nil: none).
	dirs *dirs
	// Notes say, one line each, what the command met that the landlock
	// backend could not do as bwrap does; set by Wait.
	Notes []string

	finish chan struct{} // closed when the command has been waited for
	ended  chan struct{} // closed when the restricted thread is gone
	swept  chan struct{} // closed when sweepTmp, started with the command, is done
	mu     sync.Mutex
	done   bool
}

// Command prepares argv to run under p with environment env (filtered as
// sandbox.CommandEnv filters it), configured by cfg. A profile the
// ruleset cannot enforce is an *UnenforceableError. Nothing runs until
// Start.
//
// A profile with the proxy (sandbox.network: proxy) reaches it at
// cfg.Proxy, a loopback address of the host. The command may open TCP
// sockets only (AF_INET and AF_INET6 SOCK_STREAM; UDP, raw, ICMP, SCTP,
// netlink and unix sockets are refused, listen too), Landlock lets TCP
// connect to the proxy's port only and bind to none, and connect(2)
// itself is served by guardrun (the "connect" handler, ProxyConnect),
// which connects the command's socket only to the proxy's address and
// port: Landlock matches the port on any address, the handler closes
// that gap.
func Command(ctx context.Context, p *sandbox.Profile, argv, env []string, cfg Config) (*Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("landlock: no command")
	}
	if p == nil {
		return nil, errors.New("landlock: no profile")
	}
	connectTCP := cfg.ConnectTCP
	if p.Proxy {
		var err error
		if connectTCP, err = proxyPorts(cfg.Proxy); err != nil {
			return nil, err
		}
	}
	c, err := command(ctx, p, argv, env, cfg, connectTCP)
	if err != nil || !p.Proxy {
		return c, err
	}
	if err := c.Notify.Handle("connect", ProxyConnect(cfg.Proxy)); err != nil {
		return nil, err
	}
	return c, nil
}

// command is Command with the TCP ports the command may connect to.
func command(ctx context.Context, p *sandbox.Profile, argv, env []string, cfg Config, connectTCP []uint16) (*Cmd, error) {
	// No pid or IPC namespace: see SeccompPolicy.HostShared.
	pc := *p
	pc.Seccomp.HostShared = true
	p = &pc
	abi, err := ABI()
	if err != nil {
		return nil, err
	}
	end := trace.Phase("seccomp")
	calls := notifyCalls()
	if bindServed(commandPolicy(p)) {
		calls = append(calls, "bind")
	}
	_, _, err = filterProgram(p.Seccomp, seccomp.Routes(calls...), cfg.FilterCache)
	end()
	if err != nil {
		return nil, err
	}
	defer trace.Phase("landlock rules")()
	var tmp string
	if p.PrivateTmp {
		if tmp, err = makeTmp(); err != nil {
			return nil, fmt.Errorf("landlock: the command's temporary directory: %w", err)
		}
	}
	makeShareDir(cfg.StateDir)
	rs, err := Build(p, Options{ABI: abi, TmpDir: tmp, ConnectTCP: connectTCP, Accept: cfg.Accept, Self: selfExe()})
	if err != nil {
		removeTmp(tmp)
		return nil, err
	}
	share := ""
	if len(rs.Watch) > 0 {
		if share, err = shareDir(cfg.StateDir, p, rs); err != nil {
			removeTmp(tmp)
			return nil, err
		}
	}
	cenv := Env(p, env, tmp)
	path, err := lookPath(argv[0], cenv)
	if err != nil {
		removeTmp(tmp)
		return nil, err
	}
	cmd := exec.CommandContext(ctx, path)
	cmd.Args = argv
	cmd.Env = cenv
	cmd.Dir = p.Cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// No controlling terminal (TIOCSTI and job-control signals
		// cannot reach the user's terminal) and a process group of its
		// own, which Signal addresses.
		Setsid: true,
		// Tied to the restricted thread, which lives until the command
		// has been waited for: if guardrun dies, so does the command
		// (nested: its keeper, which then ends the whole domain).
		Pdeathsig: syscall.SIGKILL,
	}
	c := &Cmd{Cmd: cmd, Ruleset: rs, Notify: notify.NewRegistry(), policy: commandPolicy(p), filterCache: cfg.FilterCache,
		finish: make(chan struct{}), ended: make(chan struct{}), share: share}
	var vr *notify.Verifier
	if cfg.Verify != nil {
		if !notify.HelperAvailable || selfExe() == "" {
			removeTmp(tmp)
			return nil, errors.New("landlock: a verified command needs a guardrun built with cgo: it is started behind guardrun's own helper, which loads the verified filter")
		}
		c.policy.Verify, c.verified = true, true
		jr := judgeRuleset(rs)
		vr = notify.NewVerifier(cfg.Verify, notify.VerifierConfig{
			// What the command can write while it runs: the protected
			// names in a writable tree too, which Landlock lets it
			// change (they are restored after it), so that a write there
			// is held and nothing runs from a mapping of one.
			Writable: func(path string) bool {
				return jr.MetadataWritable(p, path) || slices.ContainsFunc(p.ReadWrite, func(root string) bool { return sandbox.Within(path, root) })
			},
			Always: func(path string) bool {
				return jr.TmpDir != "" && sandbox.Within(path, jr.TmpDir)
			},
		})
	}
	// File metadata: Landlock has no rights for it, so guardrun makes
	// those calls for the command, where it may write.
	var checkMeta func(*notify.Request, string) error
	if vr != nil {
		checkMeta = vr.CheckMetadata
	}
	if err := registerMetadata(c.Notify, p, rs, checkMeta); err != nil {
		removeTmp(tmp)
		return nil, err
	}
	// Watches: Landlock does not check them; guardrun adds them where
	// the command may read.
	if err := registerWatch(c.Notify, p, rs); err != nil {
		removeTmp(tmp)
		return nil, err
	}
	// Binds with the network on: Landlock does not scope abstract unix
	// names, which are the host's; guardrun refuses them.
	if bindServed(c.policy) {
		if err := c.Notify.Handle("bind", AbstractBind); err != nil {
			removeTmp(tmp)
			return nil, err
		}
	}
	// Directories whose entries Landlock must keep fixed: guardrun
	// changes them for the command. A verified command's writes are
	// made by guardrun too, on the same threads.
	if len(rs.Served) > 0 || vr != nil {
		c.dirs = newDirs(p, rs, cfg.StateDir)
		fs := &notify.FileServer{Decide: c.dirs.decide, After: c.dirs.done}
		routes := dirRoutes()
		if vr != nil {
			fs.Decide = func(r *notify.Request, fc *notify.FileCall, dst, src *notify.Located) (notify.Performer, error) {
				if err := vr.CheckFile(r, fc, dst, src); err != nil {
					return notify.Performer{}, err
				}
				return c.dirs.decide(r, fc, dst, src)
			}
			routes = notify.VerifyRoutes()
		}
		for name, when := range routes {
			h := fs.Handle
			if slices.Contains(notify.ExecCalls, name) {
				h = vr.HandleExec
			}
			if err := c.Notify.HandleWhen(name, when, h); err != nil {
				removeTmp(tmp)
				return nil, err
			}
		}
		if r, ok := seccomp.BindRoute(c.policy); ok && vr != nil && !bindServed(c.policy) {
			// With unix sockets listed: a socket's file on a path is
			// a create like any other. (With the network on,
			// AbstractBind refuses every unix path already.)
			if err := c.Notify.HandleWhen(r.Name, r.Any, func(r *notify.Request) notify.Response { return fs.HandleBind(r, nil) }); err != nil {
				removeTmp(tmp)
				return nil, err
			}
		}
	}
	cmd.Cancel = func() error { return c.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = WaitDelay
	return c, nil
}

// Env is the command's environment: env filtered by sandbox.CommandEnv,
// with TMPDIR the command's own directory (none: unset), and HOME and PWD
// the profile's.
func Env(p *sandbox.Profile, env []string, tmp string) []string {
	out := sandbox.CommandEnv(p, env)
	out = slices.DeleteFunc(out, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
	if tmp != "" {
		out = append(out, "TMPDIR="+tmp)
	}
	if p.Home != "" {
		out = append(out, "HOME="+p.Home)
	}
	if p.Cwd != "" {
		out = append(out, "PWD="+p.Cwd)
	}
	return out
}

// lookPath finds name on the command's PATH, as a shell inside would.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("landlock: %s: command not found on the command's PATH", name)
}

// Start applies the ruleset and the seccomp filter to a new OS thread
// that is never given back to the Go scheduler, and starts the command
// from it: Go's fork clones the calling thread, so the command inherits
// the thread's Landlock domain, filter and no_new_privs, while every
// other thread of guardrun stays unrestricted. With the signal scope the
// command gets a domain nested below the thread's (nest_linux.go), so it
// cannot signal the thread; the thread is never the main one. The thread waits until
// the command has ended, then ends every process left in its domain (see
// Wait), and exits with its goroutine.
func (c *Cmd) Start() error {
	defer trace.Phase("landlock start")()
	if err := cloexec.All(); err != nil {
		removeTmp(c.Ruleset.TmpDir)
		return fmt.Errorf("landlock: mark descriptors close-on-exec: %w", err)
	}
	// The restricted thread shares the command's Landlock domain, and
	// Landlock lets a domain reach its own tasks through /proc: without
	// this, the command could read guardrun's environment (the secrets
	// env_deny keeps from it) and memory at /proc/PID/task/TID/environ
	// and mem. Not dumpable, those need CAP_SYS_PTRACE, which the
	// command does not have.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		removeTmp(c.Ruleset.TmpDir)
		return fmt.Errorf("landlock: make guardrun not dumpable: %w", err)
	}
	var routes []seccomp.Route
	if c.Notify != nil {
		routes = c.Notify.Routes()
	}
	filter, nrs, err := filterProgram(c.policy, routes, c.filterCache)
	if err != nil {
		removeTmp(c.Ruleset.TmpDir)
		return err
	}
	var helper *notify.Helper
	if c.verified {
		// The routed filter (execs among its calls) is loaded by the
		// helper, after its exec: routed on this thread, the start's own
		// exec would wait for an answer while Go's fork of it holds a
		// processor of the runtime that a collection stopping the world
		// waits for (measured: two verified commands starting at once
		// in guardrun serve never went on). This thread gets the policy
		// alone, which lets every routed call through to the helper's.
		if helper, err = c.newHelper(filter); err != nil {
			removeTmp(c.Ruleset.TmpDir)
			return err
		}
		thread := c.policy
		thread.Verify = false
		if filter, _, err = filterProgram(thread, nil, c.filterCache); err != nil {
			helper.Close()
			removeTmp(c.Ruleset.TmpDir)
			return err
		}
	}
	if c.dirs != nil {
		if err := c.dirs.prepare(); err != nil {
			c.dirs.close()
			removeTmp(c.Ruleset.TmpDir)
			return err
		}
	}
	snaps, release, err := takeHeld(c.share, c.Ruleset.Watch)
	if err != nil {
		removeTmp(c.Ruleset.TmpDir)
		return err
	}
	c.snaps, c.release = snaps, release
	errc := make(chan error, 1)
	// Never unlocked: the thread dies with this goroutine.
	goOffMain(func() {
		defer close(c.ended)
		listener, err := restrictThread(c.Ruleset, filter, len(nrs) > 0 && helper == nil, c.dirs)
		if err != nil {
			helper.Close()
			errc <- err
			return
		}
		if listener >= 0 {
			// Served by guardrun's other threads, which are not
			// restricted; close-on-exec (the kernel makes it so), so
			// the command never holds it.
			srv, err := notify.Serve(listener, c.Notify, nrs)
			if err != nil {
				unix.Close(listener)
				errc <- err
				return
			}
			c.server = srv
		}
		if err := c.startCmd(); err != nil {
			helper.Close()
			errc <- fmt.Errorf("landlock: start %s: %w", c.Cmd.Args[0], err)
			return
		}
		if helper != nil {
			srv, err := helper.Handshake(c.Notify, nrs, HandshakeTimeout)
			if err != nil {
				_ = c.Cmd.Process.Kill()
				_ = c.Cmd.Wait()
				errc <- fmt.Errorf("landlock: %w", err)
				return
			}
			c.server = srv
		}
		errc <- nil
		<-c.finish
		if c.Ruleset.Scoped&ScopeSignal != 0 {
			endDomain()
		}
	})
	err = <-errc
	if err != nil {
		<-c.ended
		c.stopServer()
		if c.dirs != nil {
			c.dirs.close()
		}
		release()
		removeTmp(c.Ruleset.TmpDir)
		return err
	}
	// What commands of guardruns killed before their cleanup left,
	// while this one runs (Wait waits for it).
	c.swept = make(chan struct{})
	go func() {
		defer close(c.swept)
		sweepTmp()
	}()
	return nil
}

// HandshakeTimeout bounds how long Start waits for a verified command's
// helper to hand over its listener.
var HandshakeTimeout = 30 * time.Second

// newHelper readies notify's helper for a verified command: the routed
// filter prog for it to load, and c.Cmd started behind it ("EXE
// notify.HelperArg FILTER-FD SOCKET-FD ARGV...", with guardrun's own
// executable as EXE, which the ruleset lets the command execute).
func (c *Cmd) newHelper(prog []byte) (*notify.Helper, error) {
	file, err := seccomp.ProgramFile(prog)
	if err != nil {
		return nil, fmt.Errorf("landlock: the verified command's filter: %w", err)
	}
	h, err := notify.NewHelper(file)
	if err != nil {
		return nil, fmt.Errorf("landlock: %w", err)
	}
	fd := 3 + len(c.Cmd.ExtraFiles)
	c.Cmd.ExtraFiles = append(c.Cmd.ExtraFiles, h.Filter, h.Theirs)
	c.Cmd.Args = h.Argv("guardrun", fd, fd+1, c.Cmd.Args)
	c.Cmd.Path = nestExe
	return h, nil
}

// stopServer stops serving notifications: from then on a routed call
// fails with ENOSYS.
func (c *Cmd) stopServer() {
	if c.server != nil {
		_ = c.server.Stop()
	}
}

// endDomain ends every process in the calling thread's Landlock domain
// but the caller: kill(-1) reaches every process the caller may signal,
// and the domain's signal scope limits that to the processes the command
// started, wherever they have been reparented. Only call it from a
// thread whose domain has ScopeSignal: elsewhere it would kill every
// process of the user.
func endDomain() {
	// Belt and braces: guardrun's parent is outside the domain, so with
	// the scope in force even a null signal to it is refused. (Not
	// guardrun itself: Landlock lets threads of one process signal each
	// other.) If it is not refused, kill(-1) would reach every process of
	// the user: leave the leftovers rather than that.
	if err := unix.Kill(os.Getppid(), 0); !errors.Is(err, unix.EPERM) {
		return
	}
	for range 2 {
		_ = unix.Kill(-1, unix.SIGKILL)
	}
}

// Signal delivers sig to the command's process group.
func (c *Cmd) Signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("landlock: unsupported signal %v", sig)
	}
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	if done || c.Cmd.Process == nil {
		return os.ErrProcessDone
	}
	err := syscall.Kill(-c.Cmd.Process.Pid, s)
	if errors.Is(err, syscall.ESRCH) {
		// Left its group (setpgid): the command itself.
		return c.Cmd.Process.Signal(s)
	}
	return err
}

// Wait waits for the command and returns its exit status (128+N for
// signal N, as sh reports it). Then everything the command left running
// is ended (with ScopeSignal) and its temporary directory removed, and
// the sweep of those killed guardruns left (started with the command)
// is waited for.
func (c *Cmd) Wait() (int, error) {
	end := trace.Phase("command")
	werr := c.Cmd.Wait()
	end()
	defer trace.Phase("landlock cleanup")()
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
	close(c.finish)
	<-c.ended
	// Every process of the command has ended (endDomain): stop serving
	// its calls. In the background: waiting for the idle worker to see
	// it is not worth the command's time, and nothing is left to call.
	if c.server != nil || c.dirs != nil {
		go func() {
			c.stopServer()
			if c.dirs != nil {
				c.dirs.close()
			}
		}()
	}
	if c.dirs != nil {
		// Every process of the command has ended: nothing can take a
		// directory from the pool any more.
		c.dirs.removeDirPool()
		c.dirs.mu.Lock()
		c.Notes = slices.Clone(c.dirs.report)
		c.dirs.mu.Unlock()
	}
	// Every process of the command has ended (endDomain): put back
	// what it changed among the watched paths.
	c.Restored = restore(c.snaps, time.Now())
	if c.release != nil {
		c.release()
	}
	removeTmp(c.Ruleset.TmpDir)
	if c.swept != nil {
		<-c.swept
	}
	if st := c.Cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Exited():
				return ws.ExitStatus(), nil
			case ws.Signaled():
				return 128 + int(ws.Signal()), nil
			}
		}
	}
	if werr != nil {
		return 0, fmt.Errorf("landlock: %w", werr)
	}
	return 0, errors.New("landlock: the command ended without an exit status")
}

// Close releases what Command prepared, for a Cmd that will not be
// started.
func (c *Cmd) Close() {
	if c.Cmd.Process == nil {
		removeTmp(c.Ruleset.TmpDir)
	}
}

// unlockTree gives the user back every permission on the directory name
// in parent and on each directory beneath it, following no link. Each is
// changed before it is read: a directory the command made mode 0 cannot
// be listed until then (filepath.Walk reads first, and for a user without
// CAP_DAC_READ_SEARCH it left such a directory, and the whole $TMPDIR,
// behind).
func unlockTree(parent int, name string) {
	fd, err := unix.Openat(parent, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	// An O_PATH descriptor takes no fchmod; its /proc name does.
	_ = unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), 0o700)
	rfd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(rfd), name)
	defer f.Close()
	ents, _ := f.ReadDir(-1)
	for _, e := range ents {
		if e.IsDir() {
			unlockTree(rfd, e.Name())
		}
	}
}

// restrictThread applies rs and the filter to the calling thread only:
// no_new_privs, the Landlock domain and the seccomp filter are per
// thread unless asked otherwise (TSYNC), and this asks nothing else.
// With listen, the filter is loaded with a listener for its user-space
// system calls (SECCOMP_FILTER_FLAG_NEW_LISTENER) whose descriptor is
// returned (else -1).
//
// With d (served directories), the pool's files get their rules too,
// d's plain thread is restricted by the same ruleset before this one,
// and d's wide thread by the ruleset with the served directories' wide
// rights added after this one: the command never has them.
func restrictThread(rs *Ruleset, filter []byte, listen bool, d *dirs) (int, error) {
	var extra []fdRule
	if d != nil {
		extra = d.fileRules()
	}
	fd, err := buildRuleset(rs, extra, nil)
	if err != nil {
		return -1, err
	}
	defer unix.Close(fd)
	if d != nil {
		// The threads that make calls for the command: a ruleset of
		// their own (a dup would share this one's rules), and for the
		// served directories one with their wide rights added.
		if err := d.startThreads(rs, fd, extra); err != nil {
			return -1, err
		}
	}
	if err := dropCaps(); err != nil {
		return -1, err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, fmt.Errorf("landlock: no_new_privs: %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0); e != 0 {
		return -1, fmt.Errorf("landlock: restrict: %w", e)
	}
	if len(filter) == 0 || len(filter)%8 != 0 {
		return -1, errors.New("landlock: no seccomp program")
	}
	prog := unix.SockFprog{Len: uint16(len(filter) / 8), Filter: (*unix.SockFilter)(unsafe.Pointer(&filter[0]))}
	defer runtime.KeepAlive(filter)
	if !listen {
		if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); e != 0 {
			return -1, fmt.Errorf("landlock: load the seccomp filter: %w", e)
		}
		return -1, nil
	}
	// WAIT_KILLABLE_RECV (Linux 5.19): once guardrun has received a
	// call, only a fatal signal interrupts it, so a Go program's
	// preemption signals do not make it start over.
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	lfd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	if e == unix.EINVAL {
		lfd, _, e = unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&prog)))
	}
	switch e {
	case 0:
		return int(lfd), nil
	case unix.EBUSY:
		return -1, errors.New("landlock: guardrun already runs under a seccomp filter with a listener (inside another sandbox that serves system calls, such as guardrun's own landlock backend); the backend needs its own listener to serve file metadata calls: run guardrun outside it, or use the bwrap backend")
	case unix.EINVAL:
		return -1, errors.New("landlock: the kernel cannot hand system calls to guardrun (seccomp user notification needs Linux 5.0 or later): file metadata calls cannot be confined; use the bwrap backend")
	}
	return -1, fmt.Errorf("landlock: load the seccomp filter with a listener: %w", e)
}

// dropCaps drops every capability of the calling thread, as bwrap's
// --cap-drop ALL: the bounding set (so that exec as root does not get
// them back), the ambient set, and the effective, permitted and
// inheritable sets. Root stays uid 0 without root's powers (reading
// /proc/kcore, overriding file modes). Without CAP_SETPCAP (an
// ordinary user) there is no bounding set to drop.
func dropCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("landlock: clear ambient capabilities: %w", err)
	}
	for c := 0; c <= unix.CAP_LAST_CAP+24; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the kernel's last capability
		}
		if err != nil && !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("landlock: drop capability %d from the bounding set: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("landlock: drop capabilities: %w", err)
	}
	return nil
}

// buildRuleset makes a Landlock ruleset descriptor with rs's rules and
// ports, and the rules on descriptors extra and wide.
func buildRuleset(rs *Ruleset, extra, wide []fdRule) (int, error) {
	attr := rulesetAttr{handledFS: rs.HandledFS, handledNet: rs.HandledNet, scoped: rs.Scoped}
	r, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return -1, fmt.Errorf("landlock: create ruleset: %w", e)
	}
	fd := int(r)
	ok := false
	defer func() {
		if !ok {
			unix.Close(fd)
		}
	}()
	for _, r := range rs.Rules {
		if err := addPathRule(fd, r); err != nil {
			return -1, err
		}
	}
	for _, port := range rs.ConnectTCP {
		na := netPortAttr{allowed: NetConnectTCP, port: uint64(port)}
		if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(fd), ruleNetPort, uintptr(unsafe.Pointer(&na)), 0, 0, 0); e != 0 {
			return -1, fmt.Errorf("landlock: rule for TCP port %d: %w", port, e)
		}
	}
	for _, r := range append(slices.Clone(extra), wide...) {
		pa := pathBeneathAttr{allowed: r.access & rs.HandledFS, fd: int32(r.fd)}
		if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(fd), rulePathBeneath, uintptr(unsafe.Pointer(&pa)), 0, 0, 0); e != 0 {
			return -1, fmt.Errorf("landlock: rule for %s: %w", r.what, e)
		}
	}
	ok = true
	return fd, nil
}

func addPathRule(rsfd int, r Rule) error {
	pfd, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) {
			return nil // gone, or swapped for a link, since Build: nothing to grant
		}
		return fmt.Errorf("landlock: open %s: %w", r.Path, err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("landlock: stat %s: %w", r.Path, err)
	}
	acc := r.Access
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return nil
	case unix.S_IFDIR:
	default:
		acc &= fileRights
	}
	if acc == 0 {
		return nil
	}
	pa := pathBeneathAttr{allowed: acc, fd: int32(pfd)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rsfd), rulePathBeneath, uintptr(unsafe.Pointer(&pa)), 0, 0, 0); e != 0 {
		return fmt.Errorf("landlock: rule for %s: %w", r.Path, e)
	}
	return nil
}

type filterKey struct {
	pol    sandbox.SeccompPolicy
	routes string
}

type program struct {
	prog []byte
	nrs  map[int32]string
}

var (
	filterMu sync.Mutex
	filters  = map[filterKey]program{}
)

// filterProgram returns the BPF program for pol with the system calls
// in routes routed to user space, and their numbers, built once per
// process and kept in cacheDir between processes ("" for none).
func filterProgram(pol sandbox.SeccompPolicy, routes []seccomp.Route, cacheDir string) ([]byte, map[int32]string, error) {
	routes = slices.Clone(routes)
	slices.SortFunc(routes, func(a, b seccomp.Route) int { return strings.Compare(a.Name, b.Name) })
	var key strings.Builder
	for _, r := range routes {
		fmt.Fprintf(&key, "%s%v;", r.Name, r.Any)
	}
	k := filterKey{pol, key.String()}
	filterMu.Lock()
	defer filterMu.Unlock()
	if p, ok := filters[k]; ok {
		return p.prog, p.nrs, nil
	}
	var f *seccomp.Filter
	var nrs map[int32]string
	var err error
	if len(routes) == 0 {
		f, err = seccomp.BuildCached(pol, cacheDir)
	} else {
		f, nrs, err = seccomp.BuildRoutesCached(pol, routes, cacheDir)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("landlock: seccomp filter: %w", err)
	}
	defer f.Release()
	prog, err := f.BPF()
	if err != nil {
		return nil, nil, fmt.Errorf("landlock: seccomp filter: %w", err)
	}
	filters[k] = program{prog, nrs}
	return prog, nrs, nil
}
