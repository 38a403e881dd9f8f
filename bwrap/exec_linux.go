package bwrap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/guardrun/guardrun/internal/sys/cloexec"
	"golang.org/x/sys/unix"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/guardrun/guardrun/internal/sys/trace"
	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
	"github.com/guardrun/guardrun/seccomp/notify"
)

// WaitDelay is how long a cancelled sandbox has, after SIGTERM, before
// bwrap is killed (and with it, through --die-with-parent and the pid
// namespace, everything inside).
var WaitDelay = 5 * time.Second

// Cmd is a command prepared to run inside the sandbox. Set Cmd.Stdin,
// Cmd.Stdout and Cmd.Stderr before Start; pass *os.File values for a
// terminal to reach the command directly.
type Cmd struct {
	// Cmd runs bwrap. Its Path, Args, Env, ExtraFiles, SysProcAttr,
	// Cancel and WaitDelay are set by Command; change them and the
	// guarantees are gone.
	Cmd *exec.Cmd

	seccomp *os.File
	// command is the command's own seccomp program, applied by the
	// proxy bridge (nil without the proxy).
	command *os.File
	// verify is a verified command's helper and server (nil: none).
	verify *verified
	// kept, closed by release, lets the thread that forked bwrap go
	// (startFromKeptThread).
	kept    chan struct{}
	statusR *os.File
	statusW *os.File
	masks   *heldMasks
	// devices are copies of the host's device nodes, for a caller that
	// owns those (root; see copyDevices).
	devices *deviceCopies

	mu          sync.Mutex
	initPid     int         // the sandbox's pid 1, as the host sees it
	init        *os.Process // the same, held by pidfd where the kernel has them
	done        bool        // Wait returned: pids may be reused
	forked      bool        // the init was seen with a child: the command's process exists
	interrupted syscall.Signal
	sent        syscall.Signal // the last signal delivered to the sandbox's group
	st          sandboxStatus
	statusDone  chan struct{} // closed at end of file on the status pipe
	released    bool
}

type sandboxStatus struct {
	started  bool // bwrap reported the sandbox's init
	exited   bool // bwrap reported the command's exit code
	exitCode int
}

// Config is what Command takes besides the profile and the command, as
// values its caller holds: where compiled filters are kept and, for a
// profile with Proxy, the route to guardrun's proxy.
type Config struct {
	// FilterCache is the directory where compiled seccomp programs are
	// kept between processes (seccomp.BuildCached); it must be outside
	// every zone, such as guardrun's state directory, which the sandbox
	// hides. Empty: none are kept. Run as root, a command's copies of
	// the device nodes (copyDevices) are made there too; in /dev when it
	// is empty or its file system is mounted nodev.
	FilterCache string
	// Proxy is the route to the proxy, required for a profile with
	// Proxy and not used otherwise.
	Proxy *ProxyRoute
	// BridgeVerb is the verb of the guardrun binary (Proxy.Exe) that
	// runs the bridge (netproxy.BridgeVerb), required with Proxy.
	BridgeVerb string
	// Verify, when set, runs the command verified: guardrun's own
	// binary (HelperExe, bound read-only inside as the bridge is) loads
	// a filter with a listener before it execs the command and hands
	// the listener to guardrun, which serves every exec and write-like
	// call of the command (notify.Verifier), resolving its paths inside
	// the sandbox's root.
	Verify    *notify.Verify
	HelperExe string
}

// Command prepares argv to run in the sandbox p with environment env
// (filtered by sandbox.CommandEnv). The first word of argv is looked up
// on the sandbox's PATH, inside. Nothing runs until Start.
//
// For a profile with Proxy, the sandbox's first process is the bridge
// (BridgeArgv), reached through cfg.Proxy: bwrap's filter is the profile's with
// socket(AF_UNIX) allowed (Seccomp.AllowUnix), which the bridge needs
// once to hand its listener over, and the bridge applies the profile's
// own filter (unix sockets refused) to itself before it executes argv.
func Command(ctx context.Context, p *sandbox.Profile, argv []string, env []string, cfg Config) (*Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("bwrap: no command")
	}
	if p == nil {
		return nil, errors.New("bwrap: no profile")
	}
	route := cfg.Proxy
	bin, err := lookBwrap()
	if err != nil {
		return nil, err
	}
	c := &Cmd{statusDone: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			c.release()
		}
	}()
	end := trace.Phase("seccomp")
	outer := p.Seccomp
	helper := ""
	if cfg.Verify != nil {
		if !filepath.IsAbs(cfg.HelperExe) {
			end()
			return nil, errors.New("bwrap: a verified command needs guardrun's own binary (Config.HelperExe)")
		}
		if c.verify, err = prepareVerify(p, cfg.Verify, cfg.FilterCache); err != nil {
			end()
			return nil, err
		}
		helper = cfg.HelperExe
		argv = c.verify.helperArgv(argv)
	}
	if p.Proxy {
		if route == nil {
			end()
			return nil, errors.New("bwrap: the profile reaches the network through the proxy, but no route to it was given")
		}
		if cfg.BridgeVerb == "" {
			end()
			return nil, errors.New("bwrap: the profile reaches the network through the proxy, but the bridge's verb was not given (Config.BridgeVerb)")
		}
		// The bridge connects to the proxy's socket once, then applies
		// the command's own filter (unix sockets refused: the profile
		// has Proxy, so AllowUnix is off) and executes the command.
		outer.AllowUnix = true
		if c.command, err = filterFile(p.Seccomp, cfg.FilterCache); err != nil {
			end()
			return nil, err
		}
		argv = BridgeArgv(cfg.BridgeVerb, route.Token, argv)
	}
	c.seccomp, err = filterFile(outer, cfg.FilterCache)
	end()
	if err != nil {
		return nil, err
	}
	end = trace.Phase("bwrap args")
	// Masks for paths that do not exist yet are mount points bwrap would
	// create; make (and lock) them here so they can be removed after.
	// One stat per path for both steps.
	stat := newStatCache(p)
	if c.masks, err = holdMasks(p, stat); err != nil {
		return nil, err
	}
	c.devices = copyDevices([]string{cfg.FilterCache, "/dev"}, hostDevices)
	args, err := Args(p, Options{SeccompFD: SeccompFD, StatusFD: StatusFD, Stat: stat.stat, Proxy: route, Helper: helper, Devices: c.devices.binds()})
	if err != nil {
		return nil, err
	}
	end()
	if c.statusR, c.statusW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("bwrap: status pipe: %w", err)
	}

	cmd := exec.CommandContext(ctx, bin, append(append(args, "--"), argv...)...)
	cmd.Env = sandbox.CommandEnv(p, env)
	// Only these two descriptors cross (Start marks every other one
	// close-on-exec), and bwrap closes both before the command runs.
	cmd.ExtraFiles = []*os.File{c.seccomp, c.statusW}
	if c.command != nil || c.verify != nil {
		// bwrap leaves descriptors it was not told about open: the
		// bridge reads and closes this one before the command runs.
		cmd.ExtraFiles = append(cmd.ExtraFiles, c.command)
	}
	if c.verify != nil {
		// The same: the helper reads the filter and closes both.
		cmd.ExtraFiles = append(cmd.ExtraFiles, c.verify.helper.Filter, c.verify.helper.Theirs)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Out of the caller's process group: a ^C on the terminal
		// reaches guardrun, which relays it to the command (Signal)
		// instead of killing bwrap's monitor and, with it, everything.
		Setpgid: true,
		// No Pdeathsig: bwrap's monitor arms --die-with-parent itself,
		// before it lets the sandbox's init go on. Killed earlier (by a
		// Pdeathsig of ours), the monitor would leave that init blocked
		// for ever on its start-up eventfd, holding the command's stdio
		// open. Left alive, it sets the sandbox up and runs the command
		// to its end. From --die-with-parent on, guardrun's death ends
		// the monitor and, through the pid namespace, everything inside.
	}
	cmd.Cancel = func() error { return c.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = WaitDelay
	c.Cmd = cmd
	ok = true
	return c, nil
}

// Close releases what Command prepared, for a Cmd that will not be
// started. After Start, Wait does this.
func (c *Cmd) Close() {
	if c.Cmd.Process == nil {
		c.release()
	}
}

// Start starts bwrap and returns once bwrap has created the sandbox's
// init (or failed before that), so that Signal can reach the command from
// then on. The seccomp program and the write end of the status pipe are
// closed here, in the parent, once bwrap holds them.
func (c *Cmd) Start() error {
	defer trace.Phase("bwrap start")()
	if err := cloexec.All(); err != nil {
		c.release()
		return fmt.Errorf("bwrap: mark descriptors close-on-exec: %w", err)
	}
	if err := lowerSchedLimits(); err != nil {
		c.release()
		return err
	}
	if err := c.devices.stdio(&c.Cmd.Stdin, &c.Cmd.Stdout, &c.Cmd.Stderr); err != nil {
		c.release()
		return err
	}
	err := c.startFromKeptThread()
	c.devices.closeOpened()
	c.seccomp.Close()
	c.seccomp = nil
	if c.command != nil {
		c.command.Close()
		c.command = nil
	}
	c.statusW.Close()
	c.statusW = nil
	if err != nil {
		c.release()
		return fmt.Errorf("bwrap: start: %w", err)
	}
	// bwrap reports the init's pid right after clone, before the
	// sandbox is set up; reading it here (rather than racing a goroutine)
	// means a signal that arrives after Start is never sent to bwrap
	// itself.
	dec := json.NewDecoder(bufio.NewReader(c.statusR))
	c.readStatus(dec, true)
	if c.verify != nil {
		if err := c.verify.handshake(); err != nil {
			_ = c.Cmd.Process.Kill()
			_ = c.Cmd.Wait()
			c.release()
			return err
		}
	}
	// Stops at end of file: bwrap's monitor, the last writer, has exited.
	go func() {
		c.readStatus(dec, false)
		_, _ = io.Copy(io.Discard, c.statusR)
		close(c.statusDone)
	}()
	return nil
}

// startFromKeptThread starts bwrap from an OS thread that stays until
// the sandbox has ended (release). bwrap's --die-with-parent is a
// parent-death signal, which the kernel sends when the thread that
// forked bwrap ends, not the process: a thread of guardrun that ends
// early (one locked to a goroutine that returned, as a notification
// server's workers are) would take the sandbox with it.
func (c *Cmd) startFromKeptThread() error {
	c.kept = make(chan struct{})
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := c.Cmd.Start()
		started <- err
		if err == nil {
			<-c.kept
		}
		// Nothing about the thread changed: it goes back to the pool.
		runtime.UnlockOSThread()
	}()
	return <-started
}

// readStatus follows bwrap's --json-status-fd: one JSON object when the
// sandbox's init exists, another with the exit code when the command
// ends. With first set it stops after the init's pid; otherwise at end of
// file, when bwrap and everything inside are gone.
func (c *Cmd) readStatus(dec *json.Decoder, first bool) {
	for {
		var m struct {
			ChildPid *int `json:"child-pid"`
			ExitCode *int `json:"exit-code"`
		}
		if err := dec.Decode(&m); err != nil {
			return
		}
		if m.ChildPid != nil && *m.ChildPid > 1 {
			// Hold the init by pidfd while it certainly exists (it
			// cannot have been reaped: bwrap has not even set it up).
			p, _ := os.FindProcess(*m.ChildPid)
			c.mu.Lock()
			c.st.started = true
			c.initPid, c.init = *m.ChildPid, p
			c.mu.Unlock()
			if first {
				return
			}
		}
		if m.ExitCode != nil {
			c.mu.Lock()
			c.st.exited, c.st.exitCode = true, *m.ExitCode
			c.mu.Unlock()
		}
	}
}

// Signal delivers sig to the sandboxed command. bwrap's init (pid 1
// inside) does not relay signals, and a signal to bwrap itself would kill
// its monitor, which through --die-with-parent ends the sandbox with
// SIGKILL, except during setup, when bwrap has not armed that yet and the
// sandbox would be orphaned (bubblewrap issue #633). So:
//
//   - once the init has forked the command's process, the signal goes to
//     the process group of the sandbox's session (bwrap --new-session
//     makes init the leader and the command inherits the group); init
//     ignores it, as pid 1 does for signals it has no handler for, and
//     the command gets it, like a terminal's foreground job;
//   - during setup, until that fork, the sandbox's init is killed, which
//     ends the whole pid namespace, and Wait reports 128+sig. That
//     includes the instant after the init's setsid and before its fork,
//     when the group holds the init alone: a signal to it then was
//     dropped, and the command ran to its end as if it had never been
//     sent;
//   - before bwrap has created the init, bwrap itself is signalled.
//
// Whether the init has forked is looked up before the group is
// signalled, never after: a child seen then is in the group when the
// signal is sent; one forked after the look-up goes with the init.
func (c *Cmd) Signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("bwrap: unsupported signal %v", sig)
	}
	c.mu.Lock()
	pid, init, done, forked := c.initPid, c.init, c.done, c.forked
	c.mu.Unlock()
	if done {
		return os.ErrProcessDone
	}
	if init != nil {
		if err := init.Signal(syscall.Signal(0)); err != nil {
			return os.ErrProcessDone // the sandbox is ending by itself
		}
		if !forked {
			has, err := hasChild(pid)
			// A look-up that fails (no /proc to read) keeps the group
			// signal, as if the command ran.
			forked = has || err != nil
			if has {
				c.mu.Lock()
				c.forked = true
				c.mu.Unlock()
			}
		}
		if forked {
			err := syscall.Kill(-pid, s)
			if err == nil {
				c.mu.Lock()
				c.sent = s
				c.mu.Unlock()
			}
			if err == nil || !errors.Is(err, syscall.ESRCH) {
				return err
			}
		}
		c.mu.Lock()
		c.interrupted = s
		c.mu.Unlock()
		return init.Signal(syscall.SIGKILL)
	}
	if c.Cmd.Process == nil {
		return errors.New("bwrap: not started")
	}
	return c.Cmd.Process.Signal(s)
}

// hasChild reports whether process pid has a child: through
// /proc/PID/task/PID/children where the kernel has it
// (CONFIG_PROC_CHILDREN), else by reading every process's parent in
// /proc. The sandbox's init is single-threaded, so its main task's
// children are all of them. err is set when neither could be read.
func hasChild(pid int) (bool, error) {
	p := strconv.Itoa(pid)
	if b, err := os.ReadFile("/proc/" + p + "/task/" + p + "/children"); err == nil {
		return len(bytes.TrimSpace(b)) > 0, nil
	}
	return hasChildScan(pid)
}

// hasChildScan is hasChild through the parents in /proc.
func hasChildScan(pid int) (bool, error) {
	p := strconv.Itoa(pid)
	d, err := os.Open("/proc")
	if err != nil {
		return false, err
	}
	defer d.Close()
	buf := make([]byte, 512)
	for {
		names, err := d.Readdirnames(256)
		for _, n := range names {
			if n[0] < '1' || n[0] > '9' || n == p {
				continue
			}
			if ppid, ok := parentOf(n, buf); ok && ppid == pid {
				return true, nil
			}
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// parentOf reads the parent pid of process name (a /proc entry) from
// its stat line, into buf.
func parentOf(name string, buf []byte) (int, bool) {
	fd, err := unix.Open("/proc/"+name+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	n, err := unix.Read(fd, buf)
	unix.Close(fd)
	if err != nil || n <= 0 {
		return 0, false
	}
	// "pid (comm) state ppid ...": comm may hold anything, parentheses
	// too; the last ')' ends it.
	line := buf[:n]
	i := bytes.LastIndexByte(line, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(line[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}

// Wait waits for the sandbox to end and returns the command's exit status
// (128+N for a signal, as sh reports it). err is set only when the
// sandbox did not start or the command could not be run (bwrap has
// printed why on the command's stderr).
func (c *Cmd) Wait() (int, error) {
	defer trace.Phase("command")()
	werr := c.Cmd.Wait()
	// bwrap wrote its last status before exiting; the pipe's end of file
	// follows at once unless something else still holds the write end,
	// which nothing should: do not hang on it.
	select {
	case <-c.statusDone:
	case <-time.After(2 * time.Second):
	}
	c.mu.Lock()
	c.done = true
	st, interrupted, sent := c.st, c.interrupted, c.sent
	c.mu.Unlock()
	c.release()

	if st.exited {
		if interrupted != 0 && st.exitCode == 128+int(syscall.SIGKILL) {
			// The init was killed for the signal in the instant it
			// forked and executed the command: bwrap reports the
			// command's death by that kill.
			return 128 + int(interrupted), nil
		}
		return st.exitCode, nil
	}
	if interrupted != 0 {
		// Signalled during setup: the command never ran, as if it had
		// been killed at once.
		return 128 + int(interrupted), nil
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if sent != 0 && st.started && ee.ExitCode() == 128+int(sent) {
			// The signal reached the sandbox's group after setsid but
			// before the command was executed: the init reported the
			// death, bwrap no status (it reports one only for a command
			// that was executed) and exited 128+sig.
			return 128 + int(sent), nil
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && st.started {
			// bwrap itself was killed (WaitDelay, or a signal that
			// arrived before the command had a process group): the
			// sandbox and the command went with it.
			return 128 + int(ws.Signal()), nil
		}
		return 0, fmt.Errorf("bwrap: the sandbox did not start (%v)", ee)
	}
	if werr != nil {
		return 0, fmt.Errorf("bwrap: %w", werr)
	}
	return 0, errors.New("bwrap: the sandbox ended without reporting the command's status")
}

// release closes what Command opened and removes the mount points it
// created, once nothing uses them.
func (c *Cmd) release() {
	if c.released {
		return
	}
	c.released = true
	for _, f := range []*os.File{c.seccomp, c.command, c.statusR, c.statusW} {
		if f != nil {
			f.Close()
		}
	}
	if c.init != nil {
		c.init.Release()
	}
	c.masks.release()
	c.devices.remove()
	// The sandbox has ended: nothing is left to call.
	c.verify.close()
	if c.kept != nil {
		close(c.kept)
	}
}

var (
	filterMu sync.Mutex
	filters  = map[sandbox.SeccompPolicy]*os.File{}
)

// filterFile returns a descriptor for the policy's BPF program, read
// position at the start. The filter is built once per process (there are
// two policies, and compiling costs more than bwrap's own startup), kept
// in cacheDir between processes (seccomp.BuildCached; "" for none); each
// sandbox then gets its own open file description of the same sealed
// file, reopened through /proc/self/fd, so that concurrent sandboxes do
// not share a read position.
func filterFile(pol sandbox.SeccompPolicy, cacheDir string) (*os.File, error) {
	filterMu.Lock()
	defer filterMu.Unlock()
	tmpl, ok := filters[pol]
	if !ok {
		f, err := seccomp.BuildCached(pol, cacheDir)
		if err != nil {
			return nil, fmt.Errorf("bwrap: seccomp filter: %w", err)
		}
		tmpl, err = f.File()
		f.Release()
		if err != nil {
			return nil, fmt.Errorf("bwrap: seccomp filter: %w", err)
		}
		if fi, err := tmpl.Stat(); err != nil || !fi.Mode().IsRegular() {
			// Not reopenable (a pipe would be drained by the first
			// reader): build per sandbox.
			tmpl.Close()
			f, err := seccomp.Build(pol)
			if err != nil {
				return nil, fmt.Errorf("bwrap: seccomp filter: %w", err)
			}
			defer f.Release()
			return f.File()
		}
		filters[pol] = tmpl
	}
	f, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(tmpl.Fd())), os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("bwrap: seccomp filter: reopen: %w", err)
	}
	return f, nil
}

// statCache is Options.Stat over the host, asking each path once.
//
// A placeholder (isPlaceholder) strictly inside one of the writable
// trees counts as missing: it is another run's mount point, or one a
// killed run left, and a mask goes on it as on the missing path it
// stands for. Seen as an existing directory, the first missing
// component of a deeper denied path would be inside it (creds/key under
// creds), where this run could not make a mount point (mode 0555, for
// a user without CAP_DAC_OVERRIDE) or would make one that kept the
// placeholder from being removed. For the same reason a mount point
// this run makes (holdMasks) keeps its "missing" answer.
type statCache struct {
	m      map[string]statResult
	within []string // the writable trees
}

type statResult struct {
	isDir, exists, emptyFile bool
}

func newStatCache(p *sandbox.Profile) *statCache {
	return &statCache{m: map[string]statResult{}, within: p.ReadWrite}
}

func (s *statCache) get(p string) statResult {
	if r, ok := s.m[p]; ok {
		return r
	}
	var r statResult
	if fi, err := os.Stat(p); err == nil {
		r = statResult{isDir: fi.IsDir(), exists: true, emptyFile: fi.Mode().IsRegular() && fi.Size() == 0}
		if isPlaceholder(fi) && slices.ContainsFunc(s.within, func(w string) bool { return p != w && sandbox.Within(p, w) }) {
			r = statResult{}
		}
	}
	s.m[p] = r
	return r
}

func (s *statCache) stat(p string) (isDir, exists bool) {
	r := s.get(p)
	return r.isDir, r.exists
}

// reset forgets every answer.
func (s *statCache) reset() { clear(s.m) }

// lowerSchedLimits takes from guardrun, and so from bwrap and the
// command, what the user's resource limits would let the command do to
// its own scheduling that starves guardrun and bwrap's monitor: a
// real-time policy (RLIMIT_RTPRIO, soft and hard, to 0) and a nice value
// below guardrun's (RLIMIT_NICE to at most 20 minus that value, the
// kernel's encoding, which is what getpriority(2) returns raw). Both are
// 0 by default, and then nothing changes. guardrun itself never needs
// either; the hard limits are lowered for good. The landlock backend's
// keeper does the same for its command (landlock/nest_cgo_linux.go).
func lowerSchedLimits() error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_RTPRIO, &lim); err != nil {
		return fmt.Errorf("bwrap: getrlimit RLIMIT_RTPRIO: %w", err)
	}
	if lim.Cur != 0 || lim.Max != 0 {
		if err := unix.Setrlimit(unix.RLIMIT_RTPRIO, &unix.Rlimit{}); err != nil {
			return fmt.Errorf("bwrap: lower RLIMIT_RTPRIO: %w", err)
		}
	}
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		return fmt.Errorf("bwrap: getpriority: %w", err)
	}
	if err := unix.Getrlimit(unix.RLIMIT_NICE, &lim); err != nil {
		return fmt.Errorf("bwrap: getrlimit RLIMIT_NICE: %w", err)
	}
	if to, lower := niceLimit(prio, lim); lower {
		if err := unix.Setrlimit(unix.RLIMIT_NICE, &to); err != nil {
			return fmt.Errorf("bwrap: lower RLIMIT_NICE: %w", err)
		}
	}
	return nil
}

// niceLimit is the RLIMIT_NICE that keeps a process whose getpriority(2)
// value is prio (20 minus its nice value) from becoming nicer than it is,
// and whether lim must be lowered to it (soft and hard alike).
func niceLimit(prio int, lim unix.Rlimit) (unix.Rlimit, bool) {
	ceiling := uint64(prio)
	if lim.Cur != unix.RLIM_INFINITY && lim.Cur <= ceiling && lim.Max == lim.Cur {
		return lim, false
	}
	v := ceiling
	if lim.Cur != unix.RLIM_INFINITY && lim.Cur < ceiling {
		v = lim.Cur
	}
	return unix.Rlimit{Cur: v, Max: v}, true
}
