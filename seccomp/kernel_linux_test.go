//go:build cgo && linux

package seccomp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// The test binary re-executes itself with these set to act as a child
// that installs the filter and then probes it. The filter cannot be
// removed once installed, hence the separate process.
const (
	childEnv    = "GUARDRUN_SECCOMP_TEST_CHILD" // "net", "nonet" or "x32"
	childDirEnv = "GUARDRUN_SECCOMP_TEST_DIR"
	installed   = "filter installed"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child installs the filter and reports, one line per probe, what each
// system call returned. It exits non-zero, having tried nothing, unless
// the kernel confirms the filter is in place.
func child(mode string) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "child: "+format+"\n", args...)
		return 3
	}
	f, err := Build(sandbox.SeccompPolicy{AllowNetwork: mode == "net" || mode == "tcponly", InetStreamOnly: mode == "tcponly"})
	if err != nil {
		return fail("build: %v", err)
	}
	prog, err := f.BPF()
	if err != nil {
		return fail("bpf: %v", err)
	}
	if err := install(prog); err != nil {
		return fail("install: %v", err)
	}
	if m, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil || m != 2 {
		return fail("PR_GET_SECCOMP = %d, %v: not in filter mode", m, err)
	}
	fmt.Println(installed)

	if mode == "x32" {
		// Must not return: the filter kills the whole process.
		unix.Syscall(x32SyscallBit|unix.SYS_GETPID, 0, 0, 0)
		fmt.Println("survived an x32 system call")
		return 0
	}

	devnull, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail("open /dev/null: %v", err)
	}
	dir := os.Getenv(childDirEnv)
	path := func(name string) uintptr {
		p, err := unix.BytePtrFromString(filepath.Join(dir, name))
		if err != nil {
			panic(err)
		}
		return uintptr(unsafe.Pointer(p))
	}
	var (
		b       byte
		termios unix.Termios
		pair    [2]int32
		// Variables, not constants: uintptr(0xdeadbeef00005412)
		// does not compile on 32-bit architectures.
		junkTIOCSTI uint64 = 0xdeadbeef00005412
		junkAFINET  uint64 = 0x100000002
		atFDCWD            = ^uintptr(99) // AT_FDCWD (-100), sign-extended as an int argument is
		fdNull             = uintptr(devnull)
		charDevice         = uintptr(unix.S_IFCHR | 0o600)
		fifo               = uintptr(unix.S_IFIFO | 0o600)
		devNullRdev        = uintptr(unix.Mkdev(1, 3))
	)
	// Each probe is harmless even without a filter: the arguments are
	// invalid or the effect is private to this process. Sockets that
	// open are closed.
	probes := []struct {
		name string
		call func() (uintptr, unix.Errno)
	}{
		{"getpid", sys(unix.SYS_GETPID)},
		{"unshare CLONE_NEWUSER", sys(unix.SYS_UNSHARE, unix.CLONE_NEWUSER)},
		{"unshare CLONE_FS", sys(unix.SYS_UNSHARE, unix.CLONE_FS)},
		// NEWUSER with FS is EINVAL to the kernel: nothing is
		// created even if the filter let it through.
		{"clone CLONE_NEWUSER", sys(unix.SYS_CLONE, unix.CLONE_NEWUSER|unix.CLONE_FS)},
		{"clone3", sys(unix.SYS_CLONE3, 0, 0)},
		{"fsopen", sys(unix.SYS_FSOPEN, 0, 0)},
		{"open_tree_attr", sys(467, ^uintptr(0), 0, 0, 0, 0)},
		{"mount", sys(unix.SYS_MOUNT, 0, 0, 0, 0, 0)},
		{"ptrace", sys(unix.SYS_PTRACE, unix.PTRACE_PEEKDATA, 0x7ffffff0, 0, 0)},
		{"process_vm_readv", sys(unix.SYS_PROCESS_VM_READV, 0x7ffffff0, 0, 0, 0, 0, 0)},
		{"bpf", sys(unix.SYS_BPF, 0xffff, 0, 0)},
		{"perf_event_open", sys(unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0), 0)},
		{"keyctl", sys(unix.SYS_KEYCTL, 0xffff, 0, 0)},
		{"userfaultfd", sys(unix.SYS_USERFAULTFD, 0xffff)},
		{"io_uring_setup", sys(unix.SYS_IO_URING_SETUP, 0, 0)},
		{"setns", sys(unix.SYS_SETNS, ^uintptr(0), 0)},
		{"chroot", sys(unix.SYS_CHROOT, 0)},
		{"personality query", sys(unix.SYS_PERSONALITY, 0xffffffff)},
		{"personality PER_LINUX32", sys(unix.SYS_PERSONALITY, 0x0008)},
		{"ioctl TIOCSTI", sys(unix.SYS_IOCTL, fdNull, unix.TIOCSTI, uintptr(unsafe.Pointer(&b)))},
		{"ioctl TIOCSTI with junk", sys(unix.SYS_IOCTL, fdNull, uintptr(junkTIOCSTI), uintptr(unsafe.Pointer(&b)))},
		{"ioctl TIOCLINUX", sys(unix.SYS_IOCTL, fdNull, unix.TIOCLINUX, uintptr(unsafe.Pointer(&b)))},
		{"ioctl TIOCSETD", sys(unix.SYS_IOCTL, fdNull, unix.TIOCSETD, uintptr(unsafe.Pointer(&b)))},
		{"ioctl TCGETS", sys(unix.SYS_IOCTL, fdNull, unix.TCGETS, uintptr(unsafe.Pointer(&termios)))},
		{"socket AF_UNIX", closing(sys(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0))},
		{"socket AF_INET", closing(sys(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0))},
		{"socket AF_INET with junk", closing(sys(unix.SYS_SOCKET, uintptr(junkAFINET), unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0))},
		{"socket AF_PACKET", closing(sys(unix.SYS_SOCKET, unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0))},
		{"socket AF_NETLINK raw", closing(sys(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE))},
		{"socket AF_INET raw", closing(sys(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP))},
		{"socket AF_INET MPTCP", closing(sys(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 262))},
		{"socket AF_INET6 TCP", closing(sys(unix.SYS_SOCKET, unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP))},
		{"socket AF_INET UDP", closing(sys(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0))},
		{"socket AF_INET6 UDP", closing(sys(unix.SYS_SOCKET, unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0))},
		{"socket AF_INET ping", closing(sys(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP))},
		{"socket AF_INET SCTP", closing(sys(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_SCTP))},
		{"sendto MSG_FASTOPEN", sys(unix.SYS_SENDTO, ^uintptr(0), 0, 0, unix.MSG_FASTOPEN, 0, 0)},
		{"listen", sys(unix.SYS_LISTEN, ^uintptr(0), 1)},
		{"socket AF_ALG", closing(sys(unix.SYS_SOCKET, unix.AF_ALG, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0))},
		{"socket AF_VSOCK", closing(sys(unix.SYS_SOCKET, unix.AF_VSOCK, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0))},
		{"socket AF_TIPC", closing(sys(unix.SYS_SOCKET, unix.AF_TIPC, unix.SOCK_RDM|unix.SOCK_CLOEXEC, 0))},
		{"socketpair AF_UNIX", sys(unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0, uintptr(unsafe.Pointer(&pair)))},
		{"socketpair AF_UNIX dgram", sys(unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0, uintptr(unsafe.Pointer(&pair)))},
		{"socketpair AF_UNIX seqpacket", sys(unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0, uintptr(unsafe.Pointer(&pair)))},
		{"socketpair AF_INET", sys(unix.SYS_SOCKETPAIR, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0, uintptr(unsafe.Pointer(&pair)))},
		{"mknodat S_IFCHR", sys(unix.SYS_MKNODAT, atFDCWD, path("null"), charDevice, devNullRdev)},
		{"mknodat S_IFIFO", sys(unix.SYS_MKNODAT, atFDCWD, path("fifo"), fifo, 0)},
	}
	for _, p := range probes {
		_, errno := p.call()
		res := "ok"
		if errno != 0 {
			res = unix.ErrnoName(errno)
		}
		fmt.Printf("%s: %s\n", p.name, res)
	}
	runtime.KeepAlive(&b)
	runtime.KeepAlive(&termios)
	runtime.KeepAlive(&pair)
	return 0
}

func sys(nr uintptr, args ...uintptr) func() (uintptr, unix.Errno) {
	var a [6]uintptr
	copy(a[:], args)
	return func() (uintptr, unix.Errno) {
		r, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
		return r, e
	}
}

func closing(call func() (uintptr, unix.Errno)) func() (uintptr, unix.Errno) {
	return func() (uintptr, unix.Errno) {
		fd, e := call()
		if e == 0 {
			unix.Close(int(fd))
		}
		return fd, e
	}
}

// install loads prog the way bwrap does (no_new_privs, then the program
// as it was exported) and synchronises it onto every thread of the Go
// runtime.
func install(prog []byte) error {
	insns := make([]unix.SockFilter, len(prog)/8)
	for i := range insns {
		b := prog[8*i:]
		insns[i] = unix.SockFilter{
			Code: binary.NativeEndian.Uint16(b),
			Jt:   b[2],
			Jf:   b[3],
			K:    binary.NativeEndian.Uint32(b[4:]),
		}
	}
	fprog := unix.SockFprog{Len: uint16(len(insns)), Filter: &insns[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(insns)
	if e != 0 {
		return fmt.Errorf("seccomp(SET_MODE_FILTER): %w", e)
	}
	if r != 0 {
		return fmt.Errorf("seccomp(SET_MODE_FILTER): thread %d could not be synchronised", r)
	}
	return nil
}

// requireKernel skips when this kernel cannot run the filter, unless CI
// says a sandbox is required.
func requireKernel(t *testing.T) {
	t.Helper()
	if err := Supported(); err != nil {
		testenv.Missing(t, "no seccomp filter here: %v", err)
	}
}

// runChild runs the test binary as a child in mode. It fails the test
// unless the child confirmed the filter was installed, and returns the
// child's report (without that line) and how it ended.
func runChild(t *testing.T, mode string) (map[string]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childDirEnv+"="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	sc := bufio.NewScanner(&stdout)
	if !sc.Scan() || sc.Text() != installed {
		t.Fatalf("the child did not install the filter (%v): stdout %q, stderr %q", runErr, stdout.String(), stderr.String())
	}
	report := map[string]string{}
	for sc.Scan() {
		name, res, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			t.Fatalf("child: unexpected line %q", sc.Text())
		}
		report[name] = res
	}
	if stderr.Len() > 0 {
		t.Logf("child stderr: %s", stderr.String())
	}
	return report, runErr
}

func TestKernel(t *testing.T) {
	requireKernel(t)
	common := map[string]string{
		"getpid":                       "ok",
		"unshare CLONE_NEWUSER":        "EPERM",
		"unshare CLONE_FS":             "EPERM",
		"clone CLONE_NEWUSER":          "EPERM",
		"clone3":                       "ENOSYS",
		"fsopen":                       "ENOSYS",
		"open_tree_attr":               "ENOSYS",
		"mount":                        "EPERM",
		"ptrace":                       "EPERM",
		"process_vm_readv":             "EPERM",
		"bpf":                          "EPERM",
		"perf_event_open":              "EPERM",
		"keyctl":                       "EPERM",
		"userfaultfd":                  "EPERM",
		"io_uring_setup":               "EPERM",
		"setns":                        "EPERM",
		"chroot":                       "EPERM",
		"personality query":            "ok",
		"personality PER_LINUX32":      "EPERM",
		"ioctl TIOCSTI":                "EPERM",
		"ioctl TIOCSTI with junk":      "EPERM",
		"ioctl TIOCLINUX":              "EPERM",
		"ioctl TIOCSETD":               "EPERM",
		"ioctl TCGETS":                 "ENOTTY", // reached the kernel
		"socket AF_UNIX":               "EPERM",  // no unix_sockets listed
		"socketpair AF_UNIX":           "ok",
		"socketpair AF_UNIX dgram":     "EPERM", // sendto could name any datagram socket
		"socketpair AF_UNIX seqpacket": "ok",
		"socket AF_ALG":                "EAFNOSUPPORT",
		"socket AF_VSOCK":              "EAFNOSUPPORT",
		"socket AF_TIPC":               "EAFNOSUPPORT",
		"mknodat S_IFCHR":              "EPERM",
		"mknodat S_IFIFO":              "ok",
	}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range common {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		mode string
		want map[string]string
	}{
		{"nonet", with(map[string]string{
			"socket AF_INET":           "EAFNOSUPPORT",
			"socket AF_INET with junk": "EAFNOSUPPORT",
			"socket AF_PACKET":         "EAFNOSUPPORT",
			"socketpair AF_INET":       "EAFNOSUPPORT",
			"socket AF_NETLINK raw":    "EAFNOSUPPORT",
			"socket AF_INET raw":       "EAFNOSUPPORT",
			"socket AF_INET MPTCP":     "EAFNOSUPPORT",
			"socket AF_INET6 TCP":      "EAFNOSUPPORT",
			"socket AF_INET UDP":       "EAFNOSUPPORT",
			"socket AF_INET6 UDP":      "EAFNOSUPPORT",
			"sendto MSG_FASTOPEN":      "EBADF",
			"listen":                   "EBADF",
		})},
		{"net", with(map[string]string{
			"socket AF_INET":           "ok",
			"socket AF_INET with junk": "ok", // the kernel reads AF_INET
			"socket AF_PACKET":         "EPERM",
			"socketpair AF_INET":       "EAFNOSUPPORT",
			"socket AF_NETLINK raw":    "ok", // name resolution reads routes
			"socket AF_INET raw":       "EPERM",
			"socket AF_INET MPTCP":     "EPROTONOSUPPORT",
			"socket AF_INET6 TCP":      "ok",
			"socket AF_INET UDP":       "ok",
			"socket AF_INET6 UDP":      "ok",
			"sendto MSG_FASTOPEN":      "EBADF",
			"listen":                   "EBADF",
		})},
		// Where several rules refuse a call, which errno wins is
		// libseccomp's choice; each is a refusal.
		{"tcponly", with(map[string]string{
			"socket AF_INET":           "ok",
			"socket AF_INET with junk": "ok",
			"socket AF_ALG":            "EPERM",
			"socket AF_TIPC":           "EPERM",
			"socket AF_PACKET":         "EPERM",
			"socketpair AF_INET":       "EAFNOSUPPORT",
			"socket AF_NETLINK raw":    "EPERM",
			"socket AF_INET raw":       "EPROTONOSUPPORT",
			"socket AF_INET ping":      "EPROTONOSUPPORT",
			"socket AF_INET MPTCP":     "EPROTONOSUPPORT",
			"socket AF_INET6 TCP":      "ok",
			"socket AF_INET UDP":       "EPERM",
			"socket AF_INET6 UDP":      "EPERM",
			"socket AF_INET SCTP":      "EPROTONOSUPPORT",
			"sendto MSG_FASTOPEN":      "EPERM",
			"listen":                   "EPERM",
		})},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			got, err := runChild(t, tc.mode)
			if err != nil {
				t.Fatalf("child: %v", err)
			}
			if tc.mode != "tcponly" {
				// Machine-dependent with the network on: ping sockets
				// need the user in ping_group_range, SCTP its module.
				delete(got, "socket AF_INET ping")
				delete(got, "socket AF_INET SCTP")
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("system call results (-got +want):\n%s", diff)
			}
		})
	}
}

func TestKernelKillsX32(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the x32 ABI exists only on amd64")
	}
	requireKernel(t)
	got, err := runChild(t, "x32")
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("child: %v, report %v; want it killed by SIGSYS", err, got)
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGSYS {
		t.Fatalf("child ended with %v, report %v; want it killed by SIGSYS", err, got)
	}
}
