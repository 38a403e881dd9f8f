// Command probe makes one escape attempt from inside guardrun's sandbox
// and reports whether it was refused. The runner's tests start it through
// runner.RunWith and check the host side.
//
// It refuses to attempt anything unless it can prove it is inside a
// sandbox: its user and pid namespaces must differ from the host's (the
// test passes those in the environment) and the test's marker must be
// set. Run anywhere else it exits 99 without trying.
//
// Output: one line `RESULT <attempt> refused errno=<E>` (exit 0) or
// `RESULT <attempt> ALLOWED <detail>` (exit 1). Exit 2 is a usage or setup
// error.
package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	exitRefused    = 0
	exitAllowed    = 1
	exitUsage      = 2
	exitNotSandbox = 99
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe ATTEMPT [ARG...]")
		os.Exit(exitUsage)
	}
	name, args := os.Args[1], os.Args[2:]
	// "sleep" is not an attempt: it is the long-lived process the
	// survival tests look for, and it is started by other attempts.
	// "group-sleep" is the same in a process group of its own: guardrun's
	// signals for the command reach it only if they are relayed to it.
	if name == "sleep" || name == "group-sleep" {
		if name == "group-sleep" {
			if err := syscall.Setpgid(0, 0); err != nil {
				fmt.Fprintln(os.Stderr, "probe: setpgid:", err)
				os.Exit(exitUsage)
			}
		}
		d, _ := strconv.Atoi(arg(args, 0))
		time.Sleep(time.Duration(d) * time.Second)
		return
	}
	if err := insideSandbox(); err != nil {
		fmt.Printf("NOT-SANDBOXED %s: %v\n", name, err)
		os.Exit(exitNotSandbox)
	}
	f, ok := attempts[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "probe: unknown attempt %q\n", name)
		os.Exit(exitUsage)
	}
	err := f(args)
	var allowed allowedError
	switch {
	case errors.As(err, &allowed):
		fmt.Printf("RESULT %s ALLOWED %s\n", name, allowed.detail)
		os.Exit(exitAllowed)
	case errors.Is(err, errSetup):
		fmt.Printf("RESULT %s SETUP %v\n", name, err)
		os.Exit(exitUsage)
	case err == nil:
		fmt.Printf("RESULT %s ALLOWED (no error)\n", name)
		os.Exit(exitAllowed)
	default:
		fmt.Printf("RESULT %s refused errno=%s (%v)\n", name, errnoName(err), err)
		os.Exit(exitRefused)
	}
}

// insideSandbox proves, before any attempt, that this process is not on
// the host, and the marker only the test's Run call sets is present.
// Under bwrap the namespaces the test saw on the host must differ from
// ours. Under landlock (GUARDRUN_PROBE_BACKEND=landlock) there are no
// namespaces: the process must have no_new_privs and a seccomp filter,
// and a file the test made outside every zone (GUARDRUN_PROBE_CANARY)
// must be unreadable with EACCES, which only Landlock does to root.
func insideSandbox() error {
	if os.Getenv("GUARDRUN_PROBE_MARKER") == "" {
		return errors.New("GUARDRUN_PROBE_MARKER not set")
	}
	if os.Getenv("GUARDRUN_PROBE_BACKEND") == "landlock" {
		return insideLandlock()
	}
	for _, ns := range []string{"user", "pid", "mnt"} {
		host := os.Getenv("GUARDRUN_PROBE_HOST_NS_" + strings.ToUpper(ns))
		if host == "" {
			return fmt.Errorf("host %s namespace not given", ns)
		}
		mine, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			return fmt.Errorf("read own %s namespace: %w", ns, err)
		}
		if mine == host {
			return fmt.Errorf("same %s namespace as the host (%s)", ns, mine)
		}
	}
	return nil
}

func insideLandlock() error {
	// Raw system calls: os.ReadFile would start the Go runtime's poller,
	// whose descriptors the fds attempt would then find.
	st, err := rawRead("/proc/self/status")
	if err != nil {
		return fmt.Errorf("read own status: %w", err)
	}
	for _, want := range []string{"NoNewPrivs:\t1\n", "Seccomp:\t2\n"} {
		if !strings.Contains(string(st), want) {
			return fmt.Errorf("no %q in /proc/self/status", strings.TrimSpace(want))
		}
	}
	canary := os.Getenv("GUARDRUN_PROBE_CANARY")
	if canary == "" {
		return errors.New("GUARDRUN_PROBE_CANARY not set")
	}
	_, err = rawRead(canary)
	if !errors.Is(err, syscall.EACCES) {
		return fmt.Errorf("the canary %s outside every zone is not refused with EACCES (%v)", canary, err)
	}
	return nil
}

func rawRead(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}

type allowedError struct{ detail string }

func (a allowedError) Error() string { return "allowed: " + a.detail }

func allowed(format string, a ...any) error { return allowedError{fmt.Sprintf(format, a...)} }

var errSetup = errors.New("setup")

func setup(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errSetup, fmt.Sprintf(format, a...))
}

func arg(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}

func errnoName(err error) string {
	var e syscall.Errno
	if errors.As(err, &e) {
		if n := unix.ErrnoName(e); n != "" {
			return n
		}
		return strconv.Itoa(int(e))
	}
	return "none"
}

var attempts = map[string]func([]string) error{
	"write":        attemptWrite,
	"append":       attemptAppend,
	"read":         attemptRead,
	"mkdir":        attemptMkdir,
	"chown":        attemptChown,
	"link":         attemptLink,
	"rename":       attemptRename,
	"tcp":          attemptTCP,
	"udp":          attemptUDP,
	"unix":         attemptUnix,
	"ptrace":       attemptPtrace,
	"vm-readv":     attemptVMReadv,
	"mount":        attemptMount,
	"unshare-user": attemptUnshareUser,
	"clone-user":   attemptCloneUser,
	"clone3-user":  attemptClone3User,
	"keyctl":       attemptKeyctl,
	"io-uring":     attemptIOUring,
	"perf":         attemptPerf,
	"personality":  attemptPersonality,
	"mknod":        attemptMknod,
	"tiocsti":      attemptTIOCSTI,
	"tiocsti-own":  attemptTIOCSTIOwn,
	"kill":         attemptKill,
	"daemon":       attemptDaemon,
	"fds":          attemptFds,
	"create":       attemptCreate,
	"rename-over":  attemptRenameOver,
	"symlink-over": attemptSymlinkOver,
	"hardlink":     attemptHardlink,
	"move-away":    attemptMoveAway,
	"unix-path":    attemptUnixPath,
	"dgram-pair":   attemptDgramPair,
	"chmod":        attemptChmod,
	"fchmod-ro":    attemptFchmodRO,
	"chown-self":   attemptChownSelf,
	"utimes":       attemptUtimes,
	"setxattr":     attemptSetxattr,
	"removexattr":  attemptRemovexattr,
	"chmod-race":   attemptChmodRace,
}

// write PATH: create or truncate PATH and write to it.
func attemptWrite(a []string) error {
	f, err := os.OpenFile(arg(a, 0), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteString("written from inside the sandbox\n"); err != nil {
		return err
	}
	return allowed("wrote %s", arg(a, 0))
}

// append PATH: append to an existing file.
func attemptAppend(a []string) error {
	f, err := os.OpenFile(arg(a, 0), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteString("echo appended from inside the sandbox\n"); err != nil {
		return err
	}
	return allowed("appended to %s", arg(a, 0))
}

// read PATH: read a file's contents.
func attemptRead(a []string) error {
	b, err := os.ReadFile(arg(a, 0))
	if err != nil {
		return err
	}
	if len(b) == 0 {
		// An empty read reveals nothing (a masked file reads as empty on
		// some renderers); the secret files the tests plant are not empty.
		return syscall.ENODATA
	}
	return allowed("read %d bytes of %s", len(b), arg(a, 0))
}

// link SRC DST: hard-link SRC to DST and read it through the new name.
func attemptLink(a []string) error {
	if err := os.Link(arg(a, 0), arg(a, 1)); err != nil {
		return err
	}
	return attemptRead([]string{arg(a, 1)})
}

// rename SRC DST: move SRC to DST and read it there.
func attemptRename(a []string) error {
	if err := os.Rename(arg(a, 0), arg(a, 1)); err != nil {
		return err
	}
	return attemptRead([]string{arg(a, 1)})
}

// chown PATH: give a file in a writable zone to another user, which
// needs CAP_CHOWN: root's capabilities must be gone inside.
func attemptChown(a []string) error {
	if err := os.Lchown(arg(a, 0), 4242, 4242); err != nil {
		return err
	}
	return allowed("chowned %s to 4242", arg(a, 0))
}

// mkdir PATH: create a directory (and its parents).
func attemptMkdir(a []string) error {
	if err := os.MkdirAll(arg(a, 0), 0o755); err != nil {
		return err
	}
	return allowed("created %s", arg(a, 0))
}

// tcp ADDR: connect and send a line.
func attemptTCP(a []string) error {
	c, err := net.DialTimeout("tcp", arg(a, 0), 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintln(c, "hello from inside the sandbox")
	return allowed("connected to %s", arg(a, 0))
}

// udp ADDR: send a datagram (with the raw socket calls, so that the
// refusal shows at socket or sendto, not in a resolver).
func attemptUDP(a []string) error {
	ap, err := net.ResolveUDPAddr("udp4", arg(a, 0))
	if err != nil {
		return setup("address %q: %v", arg(a, 0), err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	sa := &unix.SockaddrInet4{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To4())
	if err := unix.Sendto(fd, []byte("hello from inside the sandbox"), 0, sa); err != nil {
		return err
	}
	return allowed("sent a datagram to %s", arg(a, 0))
}

// unix NAME: connect to the abstract unix socket @NAME.
func attemptUnix(a []string) error {
	c, err := net.DialTimeout("unix", "@"+arg(a, 0), 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintln(c, "hello from inside the sandbox")
	return allowed("connected to @%s", arg(a, 0))
}

// child starts a sleeping copy of this program to be the victim of the
// process-inspection attempts (a child: allowed by Yama and by DAC).
func child() (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, setup("executable: %v", err)
	}
	c := exec.Command(self, "sleep", "30")
	if err := c.Start(); err != nil {
		return nil, setup("start child: %v", err)
	}
	return c, nil
}

func stop(c *exec.Cmd) {
	_ = c.Process.Kill()
	_ = c.Wait()
}

// ptrace: attach to a child process.
func attemptPtrace([]string) error {
	c, err := child()
	if err != nil {
		return err
	}
	defer stop(c)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.PtraceSeize(c.Process.Pid); err != nil {
		return err
	}
	_ = unix.PtraceDetach(c.Process.Pid)
	return allowed("attached to pid %d", c.Process.Pid)
}

// vm-readv: read a child's memory with process_vm_readv.
func attemptVMReadv([]string) error {
	c, err := child()
	if err != nil {
		return err
	}
	defer stop(c)
	buf := make([]byte, 8)
	local := []unix.Iovec{{Base: &buf[0], Len: 8}}
	// Any mapped address will do; the filter refuses before the kernel
	// looks. Use our own main's address: the child runs the same binary
	// (position-independent, so it may differ; EFAULT then still proves
	// the call was not refused).
	remote := []unix.RemoteIovec{{Base: uintptr(unsafe.Pointer(&buf[0])), Len: 8}}
	_, err = unix.ProcessVMReadv(c.Process.Pid, local, remote, 0)
	if err != nil && !errors.Is(err, unix.EFAULT) {
		return err
	}
	return allowed("process_vm_readv reached the kernel (%v)", err)
}

// mount: mount a tmpfs.
func attemptMount([]string) error {
	dir, err := os.MkdirTemp("", "mnt")
	if err != nil {
		return setup("mkdtemp: %v", err)
	}
	defer os.Remove(dir)
	if err := unix.Mount("none", dir, "tmpfs", 0, ""); err != nil {
		return err
	}
	_ = unix.Unmount(dir, 0)
	return allowed("mounted a tmpfs")
}

// unshare-user: unshare(CLONE_NEWUSER) in a single-threaded child (the
// Go runtime does it between fork and exec; in a multi-threaded process
// the kernel would say EINVAL whatever the policy).
func attemptUnshareUser([]string) error {
	return forkWith(&syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWUSER})
}

// clone-user: clone(CLONE_NEWUSER).
func attemptCloneUser([]string) error {
	return forkWith(&syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER})
}

func forkWith(attr *syscall.SysProcAttr) error {
	self, err := os.Executable()
	if err != nil {
		return setup("executable: %v", err)
	}
	c := exec.Command(self, "sleep", "0")
	c.SysProcAttr = attr
	if err := c.Run(); err != nil {
		var e syscall.Errno
		if errors.As(err, &e) {
			return e
		}
		return err
	}
	return allowed("a child ran in a new user namespace")
}

// clone3-user: the raw clone3 system call with CLONE_NEWUSER; seccomp
// cannot look inside clone3's argument struct, so it must refuse clone3
// altogether.
func attemptClone3User([]string) error {
	type cloneArgs struct {
		flags, pidfd, childTID, parentTID, exitSignal, stack, stackSize, tls, setTID, setTIDSize, cgroup uint64
	}
	ca := cloneArgs{flags: unix.CLONE_NEWUSER, exitSignal: uint64(syscall.SIGCHLD)}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pid, _, e := syscall.RawSyscall(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&ca)), unsafe.Sizeof(ca), 0)
	if e != 0 {
		return e
	}
	if pid == 0 {
		// The child: leave at once, touching nothing.
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(int(pid), &ws, 0, nil)
	return allowed("clone3 created pid %d in a new user namespace", pid)
}

// keyctl: join a new session keyring.
func attemptKeyctl([]string) error {
	if _, err := unix.KeyctlJoinSessionKeyring("guardrun-probe"); err != nil {
		return err
	}
	return allowed("joined a session keyring")
}

// io-uring: io_uring_setup.
func attemptIOUring([]string) error {
	var params [120]byte
	fd, _, e := syscall.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
	if e != 0 {
		return e
	}
	syscall.Close(int(fd))
	return allowed("io_uring_setup returned fd %d", fd)
}

// perf: perf_event_open on ourselves, user space only, which
// perf_event_paranoid=2 would otherwise allow.
func attemptPerf([]string) error {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Bits:   unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv,
	}
	fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return allowed("perf_event_open returned fd %d", fd)
}

// personality: turn off address space randomisation.
func attemptPersonality([]string) error {
	const addrNoRandomize = 0x0040000
	_, _, e := syscall.Syscall(unix.SYS_PERSONALITY, addrNoRandomize, 0, 0)
	if e != 0 {
		return e
	}
	return allowed("personality(ADDR_NO_RANDOMIZE) succeeded")
}

// mknod PATH: create a character device (1,3: /dev/null's numbers).
func attemptMknod(a []string) error {
	if err := unix.Mknod(arg(a, 0), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		return err
	}
	return allowed("created a character device at %s", arg(a, 0))
}

const tiocsti = unix.TIOCSTI

// tiocsti: push input into the terminal on stdin (the host's pty), once
// with the plain request and once with garbage in the high 32 bits, which
// the kernel ignores and a careless filter does not.
func attemptTIOCSTI([]string) error {
	return injectAll(0)
}

func injectAll(fd int) error {
	var last error
	for _, req := range []uint64{tiocsti, 0xdeadbeef_00000000 | tiocsti} {
		c := byte('#')
		_, _, e := syscall.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(unsafe.Pointer(&c)))
		if e == 0 {
			return allowed("TIOCSTI (request %#x) injected input", req)
		}
		last = e
	}
	return last
}

// tiocsti-own: make a pty of our own our controlling terminal and inject
// into it. Harmless if it worked (it is the sandbox's own terminal), and
// the kernel would allow it, so only the seccomp filter can refuse.
func attemptTIOCSTIOwn([]string) error {
	// Closing a controlling terminal hangs up its session: us.
	signal.Ignore(syscall.SIGHUP)
	if _, err := unix.Setsid(); err != nil {
		// Already a session leader (landlock starts the command in a
		// session of its own, without a terminal): that is what setsid
		// is for here.
		if sid, _ := unix.Getsid(0); sid != os.Getpid() {
			return setup("setsid: %v", err)
		}
	}
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EACCES) {
		return err // no terminal of its own to be had (landlock)
	}
	if err != nil {
		return setup("open ptmx: %v", err)
	}
	defer unix.Close(master)
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		return setup("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(master, unix.TIOCGPTN)
	if err != nil {
		return setup("ptsname: %v", err)
	}
	// Without O_NOCTTY: a session leader opening a terminal acquires it.
	slave, err := unix.Open("/dev/pts/"+strconv.Itoa(n), unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return setup("open slave: %v", err)
	}
	defer unix.Close(slave)
	if err := unix.IoctlSetInt(slave, unix.TIOCSCTTY, 0); err != nil && !errors.Is(err, unix.EPERM) {
		return setup("TIOCSCTTY: %v", err)
	}
	return injectAll(slave)
}

// kill PID: signal a host process by its host pid.
func attemptKill(a []string) error {
	pid, err := strconv.Atoi(arg(a, 0))
	if err != nil || pid <= 1 {
		return setup("pid %q", arg(a, 0))
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	return allowed("sent SIGKILL to pid %d (which, inside, is %s)", pid, comm(pid))
}

func comm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return "unknown"
	}
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// daemon MARKER: leave a detached process behind (new session, ignoring
// SIGHUP, its own stdio) and exit at once. Refusal is checked on the
// host: nothing named MARKER may outlive the sandbox.
func attemptDaemon(a []string) error {
	self, err := os.Executable()
	if err != nil {
		return setup("executable: %v", err)
	}
	c := exec.Command(self, "sleep", "300", arg(a, 0))
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		return setup("start: %v", err)
	}
	fmt.Printf("RESULT daemon spawned pid %d (the host checks that it does not survive)\n", c.Process.Pid)
	_ = c.Process.Release()
	os.Exit(exitRefused)
	return nil
}

// fds [N]: list descriptors beyond stdio that were inherited, and check
// that the host's descriptor N is not open. Raw system calls only: the Go
// runtime's poller would add descriptors of its own.
func attemptFds(a []string) error {
	dir, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return setup("open /proc/self/fd: %v", err)
	}
	var names []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.Getdents(dir, buf)
		if err != nil {
			unix.Close(dir)
			return setup("getdents: %v", err)
		}
		if n == 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
	var extra []string
	for _, name := range names {
		n, err := strconv.Atoi(name)
		if err != nil || n <= 2 || n == dir {
			continue
		}
		t, _ := os.Readlink("/proc/self/fd/" + name)
		extra = append(extra, name+" -> "+t)
	}
	unix.Close(dir)
	if want := arg(a, 0); want != "" {
		n, _ := strconv.Atoi(want)
		var st unix.Stat_t
		if err := unix.Fstat(n, &st); err == nil {
			return allowed("host descriptor %d is open inside", n)
		}
	}
	if len(extra) > 0 {
		return allowed("inherited descriptors: %s", strings.Join(extra, ", "))
	}
	return syscall.EBADF
}

// create PATH: create PATH, which must not exist yet.
func attemptCreate(a []string) error {
	f, err := os.OpenFile(arg(a, 0), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	f.WriteString("created from inside the sandbox\n")
	return allowed("created %s", arg(a, 0))
}

// scratch makes a file (or, with link set, a symbolic link to /tmp/evil)
// next to path if its directory takes one, else in fallback, and returns
// its name: the replacement a rename puts in place.
func scratch(path, fallback string, link bool) (string, error) {
	for _, dir := range []string{filepath.Dir(path), fallback} {
		p := filepath.Join(dir, ".probe-scratch-"+strconv.Itoa(os.Getpid()))
		var err error
		if link {
			err = os.Symlink("/tmp/evil", p)
		} else {
			err = os.WriteFile(p, []byte("replaced from inside the sandbox\n"), 0o644)
		}
		if err == nil {
			return p, nil
		}
	}
	return "", setup("no writable directory for a scratch file near %s or in %s", path, fallback)
}

// rename-over PATH WRITABLE-DIR: rename a new file over PATH (the way
// editors and git replace files), made next to it if its directory is
// writable, else in WRITABLE-DIR.
func attemptRenameOver(a []string) error {
	return renameOver(arg(a, 0), arg(a, 1), false)
}

// symlink-over PATH WRITABLE-DIR: the same with a symbolic link.
func attemptSymlinkOver(a []string) error {
	return renameOver(arg(a, 0), arg(a, 1), true)
}

func renameOver(path, fallback string, link bool) error {
	tmp, err := scratch(path, fallback, link)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return allowed("renamed a new %s over %s", map[bool]string{false: "file", true: "symlink"}[link], path)
}

// hardlink PATH WRITABLE-DIR: if PATH exists, give it a second name in
// WRITABLE-DIR (through which it could then be written); if not, create
// it as a hard link to a file of our own.
func attemptHardlink(a []string) error {
	path, dir := arg(a, 0), arg(a, 1)
	if _, err := os.Lstat(path); err == nil {
		alias := filepath.Join(dir, ".probe-alias-"+strconv.Itoa(os.Getpid()))
		if err := os.Link(path, alias); err != nil {
			return err
		}
		f, err := os.OpenFile(alias, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			os.Remove(alias)
			return err
		}
		defer f.Close()
		defer os.Remove(alias)
		if _, err := f.WriteString("appended through a hard link\n"); err != nil {
			return err
		}
		return allowed("wrote %s through the hard link %s", path, alias)
	}
	src, err := scratch(filepath.Join(dir, "x"), dir, false)
	if err != nil {
		return err
	}
	defer os.Remove(src)
	if err := os.Link(src, path); err != nil {
		return err
	}
	return allowed("created %s as a hard link", path)
}

// move-away DIR FILE: rename DIR out of the way, then create DIR/FILE in
// a fresh DIR (what a protected path's parent being renamable would
// allow).
func attemptMoveAway(a []string) error {
	dir, file := arg(a, 0), arg(a, 1)
	if err := os.Rename(dir, dir+".moved"); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(file)), 0o755); err != nil {
		return allowed("renamed %s away (then mkdir: %v)", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte("planted\n"), 0o644); err != nil {
		return allowed("renamed %s away (then write: %v)", dir, err)
	}
	return allowed("renamed %s away and planted %s", dir, filepath.Join(dir, file))
}

// unix-path PATH: connect to the unix socket at PATH and send a line.
func attemptUnixPath(a []string) error {
	c, err := net.DialTimeout("unix", arg(a, 0), 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintln(c, "hello from inside the sandbox")
	return allowed("connected to %s", arg(a, 0))
}

// dgram-pair PATH [raw|seqpacket|stream] [connect]: send a datagram to
// the unix socket at PATH from one end of a socketpair (no
// socket(AF_UNIX) needed: a datagram pair may still name any peer with
// sendto). raw asks for SOCK_RAW, which af_unix makes a datagram socket
// (past a filter on SOCK_DGRAM alone); seqpacket and stream ask for the
// pairs that stay. connect connects the end to PATH first (a datagram
// socket may connect again) and sends without an address.
func attemptDgramPair(a []string) error {
	typ := unix.SOCK_DGRAM
	switch arg(a, 1) {
	case "raw":
		typ = unix.SOCK_RAW
	case "seqpacket":
		typ = unix.SOCK_SEQPACKET
	case "stream":
		typ = unix.SOCK_STREAM
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	to := &unix.SockaddrUnix{Name: arg(a, 0)}
	if arg(a, 2) == "connect" {
		if err := unix.Connect(fds[0], to); err != nil {
			return err
		}
		if _, err := unix.Write(fds[0], []byte("hello from inside the sandbox")); err != nil {
			return err
		}
		return allowed("connected a socketpair end to %s and sent", arg(a, 0))
	}
	if err := unix.Sendto(fds[0], []byte("hello from inside the sandbox"), 0, to); err != nil {
		return err
	}
	return allowed("sent a datagram to %s", arg(a, 0))
}

// chmod PATH: make PATH setuid and writable by everyone (following a
// symbolic link, as chmod does).
func attemptChmod(a []string) error {
	if err := os.Chmod(arg(a, 0), 0o4777); err != nil {
		return err
	}
	return allowed("chmod 4777 %s", arg(a, 0))
}

// fchmod-ro PATH: open PATH read-only (which the sandbox may allow) and
// change its mode through the descriptor.
func attemptFchmodRO(a []string) error {
	f, err := os.Open(arg(a, 0))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Chmod(0o777); err != nil {
		return err
	}
	return allowed("fchmod 777 on a read-only descriptor of %s", arg(a, 0))
}

// chown-self PATH: chown PATH to its own owner, which the owner may do
// (it still changes the inode: ctime, set-user-ID bits).
func attemptChownSelf(a []string) error {
	if err := os.Chown(arg(a, 0), os.Getuid(), os.Getgid()); err != nil {
		return err
	}
	return allowed("chowned %s to %d:%d", arg(a, 0), os.Getuid(), os.Getgid())
}

// utimes PATH: set PATH's times to 2000-01-01 (touch -d).
func attemptUtimes(a []string) error {
	t := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(arg(a, 0), t, t); err != nil {
		return err
	}
	return allowed("set the times of %s to %v", arg(a, 0), t)
}

// setxattr PATH: set the extended attribute user.guardrun-probe.
func attemptSetxattr(a []string) error {
	if err := unix.Setxattr(arg(a, 0), "user.guardrun-probe", []byte("set from inside the sandbox"), 0); err != nil {
		return err
	}
	return allowed("set user.guardrun-probe on %s", arg(a, 0))
}

// removexattr PATH NAME: remove the extended attribute NAME.
func attemptRemovexattr(a []string) error {
	if err := unix.Removexattr(arg(a, 0), arg(a, 1)); err != nil {
		return err
	}
	return allowed("removed %s from %s", arg(a, 1), arg(a, 0))
}

// chmod-race ZONE-FILE TARGET: chmod a file the sandbox may change while
// another thread keeps rewriting the path buffer to TARGET, so that a
// sandbox that checks the path and then lets the kernel read it again
// would change TARGET. Allowed if TARGET's mode ever becomes the one
// asked for.
func attemptChmodRace(a []string) error {
	zone, target := arg(a, 0), arg(a, 1)
	if len(zone) != len(target) {
		return setup("the two paths must have the same length (%q, %q)", zone, target)
	}
	var buf [4096]byte
	copy(buf[:], zone)
	stop := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		p := unsafe.Pointer(&buf[0])
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			src := zone
			if i%2 == 1 {
				src = target
			}
			for j := 0; j < len(src); j++ {
				*(*byte)(unsafe.Add(p, j)) = src[j]
			}
		}
	}()
	defer close(stop)
	var refused error
	const mode = 0o4777
	fdcwd := unix.AT_FDCWD
	for i := 0; i < 3000; i++ {
		_, _, e := syscall.Syscall6(unix.SYS_FCHMODAT, uintptr(fdcwd), uintptr(unsafe.Pointer(&buf[0])), mode, 0, 0, 0)
		// Report the refusal of the target rather than a torn path's
		// ENOENT, when there is one.
		if e != 0 && (refused == nil || refused == syscall.ENOENT) {
			refused = e
		}
		var st unix.Stat_t
		if unix.Stat(target, &st) == nil && st.Mode&0o7777 == mode {
			return allowed("the racing thread's path %s was changed (%d calls)", target, i+1)
		}
	}
	if refused == nil {
		return setup("the race never reached %s in 3000 calls", target)
	}
	return refused
}
