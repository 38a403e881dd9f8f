//go:build cgo && linux

package seccomp

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
)

// Return values of a seccomp program (linux/seccomp.h).
const (
	retKillProcess = 0x80000000
	retErrno       = 0x00050000
	retAllow       = 0x7fff0000
)

// AUDIT_ARCH_* values (linux/audit.h).
const (
	auditArchI386    = 0x40000003
	auditArchX86_64  = 0xc000003e
	auditArchAArch64 = 0xc00000b7
	auditArchRISCV64 = 0xc00000f3
)

const x32SyscallBit = 0x40000000

var (
	allow           = uint32(retAllow)
	kill            = uint32(retKillProcess)
	eperm           = uint32(retErrno | unix.EPERM)
	enosys          = uint32(retErrno | unix.ENOSYS)
	eafnosupport    = uint32(retErrno | unix.EAFNOSUPPORT)
	eprotonosupport = uint32(retErrno | unix.EPROTONOSUPPORT)
	// refused: either errno will do, where two refusing rules match.
	refused = uint32(0xfffffff0)
)

// native is the audit architecture libseccomp builds for, and another one
// that is not it.
func native(t *testing.T) (arch, foreign uint32) {
	t.Helper()
	a, err := libseccomp.GetNativeArch()
	if err != nil {
		t.Fatal(err)
	}
	switch a {
	case libseccomp.ArchAMD64:
		return auditArchX86_64, auditArchAArch64
	case libseccomp.ArchARM64:
		return auditArchAArch64, auditArchX86_64
	case libseccomp.ArchRISCV64:
		return auditArchRISCV64, auditArchX86_64
	}
	t.Skipf("no filter for architecture %s", a)
	return 0, 0
}

// seccompData is struct seccomp_data as the kernel fills it in.
type seccompData struct {
	nr   uint32
	arch uint32
	ip   uint64
	args [6]uint64
}

// packet lays d out for x/net/bpf's VM. The kernel's loads are
// native-endian (little-endian on every architecture Build accepts); the
// VM's are big-endian, as for network packets. So every 32-bit word goes
// where the kernel keeps it, with its bytes in the VM's order; a 64-bit
// argument's low word comes first, as libseccomp expects on little-endian.
func (d seccompData) packet() []byte {
	b := make([]byte, 64)
	word := func(off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }
	word(0, d.nr)
	word(4, d.arch)
	word(8, uint32(d.ip))
	word(12, uint32(d.ip>>32))
	for i, a := range d.args {
		word(16+8*i, uint32(a))
		word(20+8*i, uint32(a>>32))
	}
	return b
}

// vm loads the exported program into x/net/bpf's interpreter.
func vm(t *testing.T, p sandbox.SeccompPolicy) *bpf.VM {
	t.Helper()
	f, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	prog, err := f.BPF()
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]bpf.RawInstruction, len(prog)/8)
	for i := range raw {
		b := prog[8*i:]
		raw[i] = bpf.RawInstruction{
			Op: binary.NativeEndian.Uint16(b),
			Jt: b[2],
			Jf: b[3],
			K:  binary.NativeEndian.Uint32(b[4:]),
		}
	}
	insns, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatalf("the program has instructions x/net/bpf cannot decode: %v", insns)
	}
	for i, in := range insns {
		// Only what the kernel's seccomp checker allows, and only
		// 32-bit loads inside struct seccomp_data: anything else
		// would make the packet layout above meaningless.
		switch in := in.(type) {
		case bpf.LoadAbsolute:
			if in.Size != 4 || in.Off%4 != 0 || in.Off >= 64 {
				t.Fatalf("instruction %d: %v is not a word load from seccomp_data", i, in)
			}
		case bpf.JumpIf, bpf.Jump, bpf.RetConstant, bpf.ALUOpConstant:
		default:
			t.Fatalf("instruction %d: unexpected %T %v", i, in, in)
		}
	}
	v, err := bpf.NewVM(insns)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func run(t *testing.T, v *bpf.VM, d seccompData) uint32 {
	t.Helper()
	ret, err := v.Run(d.packet())
	if err != nil {
		t.Fatal(err)
	}
	return uint32(ret)
}

func nr(t *testing.T, name string) (uint32, bool) {
	t.Helper()
	if name == "open_tree_attr" {
		if n, err := libseccomp.GetSyscallFromName(name); err != nil || n < 0 {
			return 467, true
		}
	}
	n, err := libseccomp.GetSyscallFromName(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if n < 0 {
		return 0, false // not on this architecture
	}
	return uint32(n), true
}

func actionName(ret uint32) string {
	switch {
	case ret == retAllow:
		return "ALLOW"
	case ret == retKillProcess:
		return "KILL_PROCESS"
	case ret&0xffff0000 == retErrno:
		return "ERRNO(" + unix.ErrnoName(unix.Errno(ret&0xffff)) + ")"
	}
	return fmt.Sprintf("%#x", ret)
}

type row struct {
	name  string
	sys   string   // resolved for the native architecture
	nr    uint32   // used when sys is empty
	arch  uint32   // 0: native
	args  []uint64 // the rest are zero
	noNet uint32   // want with AllowNetwork false
	net   uint32   // want with AllowNetwork true
}

func same(name, sys string, want uint32, args ...uint64) row {
	return row{name: name, sys: sys, args: args, noNet: want, net: want}
}

func TestProgram(t *testing.T) {
	arch, foreign := native(t)
	getpid, _ := nr(t, "getpid")
	rows := []row{
		same("read allowed", "read", allow, 0, 0, 10),
		same("write allowed", "write", allow, 1, 0, 10),
		same("openat allowed", "openat", allow, 0xffffff9c, 0, unix.O_RDONLY),
		same("execve allowed", "execve", allow),
		same("getpid allowed", "getpid", allow),
		same("fork-style clone allowed", "clone", allow, 0x1200011),
		same("thread-style clone allowed", "clone", allow, 0x3d0f00),
		same("vfork-style clone allowed", "clone", allow, unix.CLONE_VM|unix.CLONE_VFORK|uint64(unix.SIGCHLD)),
		{name: "system call number the filter does not know allowed (deny-list)", nr: 1000, noNet: allow, net: allow},
		same("ioctl TCGETS allowed", "ioctl", allow, 0, unix.TCGETS),
		same("ioctl TIOCGWINSZ allowed", "ioctl", allow, 0, unix.TIOCGWINSZ),
		same("ioctl TIOCSTI refused", "ioctl", eperm, 0, unix.TIOCSTI),
		same("ioctl TIOCSTI with junk in the high 32 bits refused", "ioctl", eperm, 0, 0xdeadbeef00005412),
		same("ioctl TIOCLINUX refused", "ioctl", eperm, 0, unix.TIOCLINUX),
		same("ioctl TIOCLINUX with junk in the high 32 bits refused", "ioctl", eperm, 0, 0xffffffff0000541c),
		same("ioctl TIOCSTI in the high 32 bits only allowed", "ioctl", allow, 0, 0x0000541200000000),
		same("ioctl TIOCSETD refused", "ioctl", eperm, 0, unix.TIOCSETD),
		same("ioctl TIOCSETD with junk in the high 32 bits refused", "ioctl", eperm, 0, 0xdeadbeef00005423),
		same("ioctl TIOCGETD allowed", "ioctl", allow, 0, unix.TIOCGETD),

		same("clone CLONE_NEWUSER refused", "clone", eperm, unix.CLONE_NEWUSER),
		same("clone fork flags plus CLONE_NEWUSER refused", "clone", eperm, 0x1200011|unix.CLONE_NEWUSER),
		same("clone CLONE_NEWUSER with junk in the high 32 bits refused", "clone", eperm, 0xffffffff00000000|unix.CLONE_NEWUSER),
		same("clone CLONE_NEWNS refused", "clone", eperm, unix.CLONE_NEWNS),
		same("clone CLONE_NEWCGROUP refused", "clone", eperm, unix.CLONE_NEWCGROUP),
		same("clone CLONE_NEWUTS refused", "clone", eperm, unix.CLONE_NEWUTS),
		same("clone CLONE_NEWIPC refused", "clone", eperm, unix.CLONE_NEWIPC),
		same("clone CLONE_NEWPID refused", "clone", eperm, unix.CLONE_NEWPID),
		same("clone CLONE_NEWNET refused", "clone", eperm, unix.CLONE_NEWNET),
		same("clone all namespace flags refused", "clone", eperm, 0x7e020000),
		same("unshare CLONE_NEWUSER refused", "unshare", eperm, unix.CLONE_NEWUSER),
		same("unshare CLONE_NEWTIME refused", "unshare", eperm, unix.CLONE_NEWTIME),
		same("unshare CLONE_FILES refused (any flags)", "unshare", eperm, unix.CLONE_FILES),
		same("unshare 0 refused (any flags)", "unshare", eperm, 0),
		same("setns refused", "setns", eperm, 3, unix.CLONE_NEWUSER),

		same("clone3 ENOSYS", "clone3", enosys),
		same("open_tree ENOSYS", "open_tree", enosys),
		same("open_tree_attr ENOSYS", "open_tree_attr", enosys),
		same("move_mount ENOSYS", "move_mount", enosys),
		same("fsopen ENOSYS", "fsopen", enosys),
		same("fsconfig ENOSYS", "fsconfig", enosys),
		same("fsmount ENOSYS", "fsmount", enosys),
		same("fspick ENOSYS", "fspick", enosys),
		same("mount_setattr ENOSYS", "mount_setattr", enosys),

		same("personality query allowed", "personality", allow, 0xffffffff),
		same("personality PER_LINUX allowed", "personality", allow, 0),
		same("personality query with junk in the high 32 bits allowed", "personality", allow, 0xffffffffffffffff),
		same("personality PER_LINUX32 refused", "personality", eperm, 0x0008),
		same("personality ADDR_NO_RANDOMIZE refused", "personality", eperm, 0x0040000),
		same("personality READ_IMPLIES_EXEC refused", "personality", eperm, 0x0400000),
		same("personality 0xfffffffe refused", "personality", eperm, 0xfffffffe),
		same("personality top bit refused", "personality", eperm, 0x80000000),
		same("personality PER_LINUX32 under junk in the high 32 bits refused", "personality", eperm, 0xffffffff00000008),

		same("mknod S_IFCHR refused", "mknod", eperm, 0, unix.S_IFCHR|0o666, 0x103),
		same("mknod S_IFBLK refused", "mknod", eperm, 0, unix.S_IFBLK|0o600, 0x800),
		same("mknod S_IFIFO allowed", "mknod", allow, 0, unix.S_IFIFO|0o600),
		same("mknod S_IFREG allowed", "mknod", allow, 0, unix.S_IFREG|0o600),
		same("mknod S_IFSOCK allowed", "mknod", allow, 0, unix.S_IFSOCK|0o600),
		same("mknodat S_IFCHR refused", "mknodat", eperm, 0xffffff9c, 0, unix.S_IFCHR|0o666, 0x103),
		same("mknodat S_IFBLK refused", "mknodat", eperm, 0xffffff9c, 0, unix.S_IFBLK|0o600, 0x800),
		same("mknodat S_IFCHR with junk in the high bits refused", "mknodat", eperm, 0xffffff9c, 0, 0xffffffffffff0000|unix.S_IFCHR),
		same("mknodat S_IFIFO allowed", "mknodat", allow, 0xffffff9c, 0, unix.S_IFIFO|0o600),

		same("socket AF_UNIX refused (no unix_sockets)", "socket", eperm, unix.AF_UNIX, unix.SOCK_STREAM),
		same("socket AF_UNIX datagram refused (no unix_sockets)", "socket", eperm, unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC),
		same("socketpair AF_UNIX allowed", "socketpair", allow, unix.AF_UNIX, unix.SOCK_STREAM),
		same("socketpair AF_UNIX seqpacket allowed", "socketpair", allow, unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC),
		same("socketpair AF_UNIX datagram refused (no unix_sockets)", "socketpair", eperm, unix.AF_UNIX, unix.SOCK_DGRAM),
		same("socketpair AF_UNIX SOCK_RAW refused (af_unix makes it a datagram pair)", "socketpair", eperm, unix.AF_UNIX, unix.SOCK_RAW|unix.SOCK_NONBLOCK),
		{name: "bind refused without network (the only sockets are socketpairs; an abstract name is the host's)", sys: "bind",
			args: []uint64{3, 0x7f0000001000, 16}, noNet: eperm, net: allow},
		{name: "bind of an IPv6 address allowed with network", sys: "bind",
			args: []uint64{3, 0x7f0000001000, 28}, noNet: eperm, net: allow},
		{name: "bind of a netlink address allowed with network", sys: "bind",
			args: []uint64{3, 0x7f0000001000, 12}, noNet: eperm, net: allow},
		{name: "bind with sockaddr_storage's length allowed with network", sys: "bind",
			args: []uint64{3, 0x7f0000001000, 128}, noNet: eperm, net: allow},
		{name: "bind autobind (2 bytes) allowed with network", sys: "bind",
			args: []uint64{3, 0x7f0000001000, 2}, noNet: eperm, net: allow},
		{name: "bind of a 20-byte abstract unix name refused with network (the host's namespace)", sys: "bind",
			args: []uint64{3, 0x7f0000001000, 20}, noNet: eperm, net: eperm},
		{name: "bind of a 110-byte unix address with junk in the high bits refused with network", sys: "bind",
			args: []uint64{3, 0x7f0000001000, 0xffffffff0000006e}, noNet: eperm, net: eperm},
		{name: "socket AF_INET refused without network", sys: "socket",
			args: []uint64{unix.AF_INET, unix.SOCK_STREAM}, noNet: eafnosupport, net: allow},
		{name: "socket AF_INET6 refused without network", sys: "socket",
			args: []uint64{unix.AF_INET6, unix.SOCK_DGRAM}, noNet: eafnosupport, net: allow},
		{name: "socket AF_NETLINK refused without network", sys: "socket",
			args: []uint64{unix.AF_NETLINK, unix.SOCK_DGRAM}, noNet: eafnosupport, net: allow},
		{name: "socket AF_INET with junk in the high 32 bits refused without network", sys: "socket",
			args: []uint64{0x100000002, unix.SOCK_STREAM}, noNet: eafnosupport, net: allow},
		{name: "socket AF_UNIX with junk in the high 32 bits refused with network", sys: "socket",
			args: []uint64{0x100000001, unix.SOCK_STREAM}, noNet: refused, net: eperm},
		{name: "socket AF_ALG refused", sys: "socket",
			args: []uint64{unix.AF_ALG, unix.SOCK_SEQPACKET}, noNet: eafnosupport, net: eafnosupport},
		{name: "socket AF_VSOCK refused", sys: "socket",
			args: []uint64{unix.AF_VSOCK, unix.SOCK_STREAM}, noNet: eafnosupport, net: eafnosupport},
		{name: "socket AF_TIPC with junk refused", sys: "socket",
			args: []uint64{0xff00000000 | unix.AF_TIPC, unix.SOCK_RDM}, noNet: eafnosupport, net: eafnosupport},
		{name: "socket AF_INET SOCK_RAW refused", sys: "socket",
			args: []uint64{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP}, noNet: eafnosupport, net: eperm},
		{name: "socket AF_INET6 SOCK_RAW|SOCK_CLOEXEC refused", sys: "socket",
			args: []uint64{unix.AF_INET6, unix.SOCK_RAW | unix.SOCK_CLOEXEC, 58}, noNet: eafnosupport, net: eperm},
		{name: "socket AF_NETLINK SOCK_RAW allowed with network", sys: "socket",
			args: []uint64{unix.AF_NETLINK, unix.SOCK_RAW | unix.SOCK_CLOEXEC}, noNet: eafnosupport, net: allow},
		{name: "socket AF_INET SOCK_PACKET refused", sys: "socket",
			args: []uint64{unix.AF_INET, unix.SOCK_PACKET}, noNet: eafnosupport, net: eperm},
		{name: "socket AF_INET MPTCP refused", sys: "socket",
			args: []uint64{unix.AF_INET, unix.SOCK_STREAM, 262}, noNet: eafnosupport, net: eprotonosupport},
		{name: "socket AF_INET6 MPTCP refused", sys: "socket",
			args: []uint64{unix.AF_INET6, unix.SOCK_STREAM | unix.SOCK_NONBLOCK, 262}, noNet: eafnosupport, net: eprotonosupport},
		{name: "socket AF_INET TCP allowed with network", sys: "socket",
			args: []uint64{unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP}, noNet: eafnosupport, net: allow},
		{name: "socket AF_PACKET always refused", sys: "socket",
			args: []uint64{unix.AF_PACKET, unix.SOCK_RAW}, noNet: eafnosupport, net: eperm},
		{name: "socket AF_PACKET with junk in the high 32 bits always refused", sys: "socket",
			args: []uint64{0xdeadbeef00000011, unix.SOCK_RAW}, noNet: eafnosupport, net: eperm},
		{name: "socketpair AF_INET refused", sys: "socketpair",
			args: []uint64{unix.AF_INET, unix.SOCK_STREAM}, noNet: eafnosupport, net: eafnosupport},
		{name: "socketpair AF_TIPC refused", sys: "socketpair",
			args: []uint64{unix.AF_TIPC, unix.SOCK_STREAM}, noNet: eafnosupport, net: eafnosupport},

		{name: "wrong architecture i386 killed", nr: getpid, arch: auditArchI386, noNet: kill, net: kill},
		{name: "wrong architecture 64-bit killed", nr: getpid, arch: foreign, noNet: kill, net: kill},
	}
	if arch == auditArchX86_64 {
		rows = append(rows,
			row{name: "x32 getpid killed", nr: x32SyscallBit | getpid, noNet: kill, net: kill},
			row{name: "x32 read killed", nr: x32SyscallBit, noNet: kill, net: kill},
			row{name: "x32 ptrace killed", nr: x32SyscallBit | 521, noNet: kill, net: kill},
		)
	}
	for _, name := range []string{
		"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
		"mount", "umount", "umount2", "pivot_root", "chroot",
		"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "create_module",
		"bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
		"syslog", "acct", "quotactl", "quotactl_fd", "lookup_dcookie",
		"swapon", "swapoff", "reboot", "vhangup",
		"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
		"iopl", "ioperm", "fanotify_init", "nfsservctl", "uselib",
		"open_by_handle_at", "name_to_handle_at",
		"io_uring_setup", "io_uring_enter", "io_uring_register",
	} {
		rows = append(rows, same(name+" refused", name, eperm))
	}

	vms := map[bool]*bpf.VM{false: vm(t, sandbox.SeccompPolicy{}), true: vm(t, sandbox.SeccompPolicy{AllowNetwork: true})}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			d := seccompData{nr: r.nr, arch: r.arch, ip: 0x7f0012345678}
			if r.sys != "" {
				n, ok := nr(t, r.sys)
				if !ok {
					t.Skipf("%s does not exist on this architecture", r.sys)
				}
				d.nr = n
			}
			if d.arch == 0 {
				d.arch = arch
			}
			copy(d.args[:], r.args)
			for _, net := range []bool{false, true} {
				want := r.noNet
				if net {
					want = r.net
				}
				if got := run(t, vms[net], d); got != want && !(want == refused && got != allow) {
					t.Errorf("AllowNetwork=%v: got %s, want %s", net, actionName(got), actionName(want))
				}
			}
		})
	}
}

// TestArguments runs random argument values through the argument rules
// and checks each against the rule as the kernel sees the argument.
func TestArguments(t *testing.T) {
	arch, _ := native(t)
	v := vm(t, sandbox.SeccompPolicy{})
	vnet := vm(t, sandbox.SeccompPolicy{AllowNetwork: true})
	rnd := rand.New(rand.NewPCG(1, 2))
	// Random 64-bit values rarely hit the cases that matter, so half
	// the time take a small or interesting value, with or without junk
	// above bit 31.
	value := func(interesting ...uint64) uint64 {
		x := rnd.Uint64()
		if rnd.IntN(2) == 0 {
			x = interesting[rnd.IntN(len(interesting))]
			if rnd.IntN(2) == 0 {
				x |= rnd.Uint64() << 32
			}
		}
		return x
	}
	const nsFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
		unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET
	cases := []struct {
		sys     string
		arg     int
		sample  func() uint64
		refused func(x uint64, net bool) uint32 // want, for argument x
	}{
		{"personality", 0,
			func() uint64 { return value(0, 0xffffffff, 8, 0x40000, 1, 0x80000000, 0xfffffffe) },
			func(x uint64, _ bool) uint32 {
				if p := uint32(x); p == 0 || p == 0xffffffff {
					return allow
				}
				return eperm
			}},
		{"clone", 0,
			func() uint64 { return value(0x1200011, 0x3d0f00, unix.CLONE_NEWUSER, 0x1200011|unix.CLONE_NEWPID) },
			func(x uint64, _ bool) uint32 {
				if x&nsFlags != 0 {
					return eperm
				}
				return allow
			}},
		{"ioctl", 1,
			func() uint64 { return value(unix.TIOCSTI, unix.TIOCLINUX, unix.TIOCSETD, unix.TCGETS, 0x5413) },
			func(x uint64, _ bool) uint32 { return wantIoctl(x) }},
		{"mknodat", 2,
			func() uint64 { return value(unix.S_IFCHR|0o600, unix.S_IFBLK, unix.S_IFIFO, unix.S_IFREG|0o644) },
			func(x uint64, _ bool) uint32 {
				if m := uint16(x) & unix.S_IFMT; m == unix.S_IFCHR || m == unix.S_IFBLK {
					return eperm
				}
				return allow
			}},
		{"socket", 0,
			func() uint64 {
				return value(unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_PACKET, unix.AF_NETLINK, unix.AF_ALG, unix.AF_VSOCK, unix.AF_TIPC)
			},
			func(x uint64, net bool) uint32 {
				switch {
				case uint32(x) == unix.AF_UNIX && x != unix.AF_UNIX && !net:
					return refused // both the AF_UNIX and the not-AF_UNIX rule match
				case uint32(x) == unix.AF_UNIX:
					return eperm // no unix_sockets in this policy
				case net && uint32(x) == unix.AF_PACKET:
					return eperm
				case net && (uint32(x) == unix.AF_ALG || uint32(x) == unix.AF_VSOCK || uint32(x) == unix.AF_TIPC):
					return eafnosupport
				case net:
					return allow
				}
				return eafnosupport // all 64 bits: see rules.go
			}},
	}
	for _, c := range cases {
		n, ok := nr(t, c.sys)
		if !ok {
			t.Fatalf("%s does not exist", c.sys)
		}
		for range 3000 {
			x := c.sample()
			d := seccompData{nr: n, arch: arch}
			d.args[c.arg] = x
			for net, v := range map[bool]*bpf.VM{false: v, true: vnet} {
				if got, want := run(t, v, d), c.refused(x, net); got != want && !(want == refused && got != allow) {
					t.Errorf("%s(arg%d=%#x) AllowNetwork=%v: got %s, want %s", c.sys, c.arg, x, net, actionName(got), actionName(want))
				}
			}
		}
	}
}

// TestNumbers checks libseccomp's names against x/sys/unix's numbers, which
// come from the kernel headers independently.
func TestNumbers(t *testing.T) {
	for name, want := range map[string]uintptr{
		"ptrace": unix.SYS_PTRACE, "unshare": unix.SYS_UNSHARE, "clone": unix.SYS_CLONE,
		"ioctl": unix.SYS_IOCTL, "socket": unix.SYS_SOCKET, "personality": unix.SYS_PERSONALITY,
		"mknodat": unix.SYS_MKNODAT, "clone3": unix.SYS_CLONE3, "bpf": unix.SYS_BPF,
		"io_uring_setup": unix.SYS_IO_URING_SETUP, "mount_setattr": unix.SYS_MOUNT_SETATTR,
	} {
		got, ok := nr(t, name)
		if !ok || uintptr(got) != want {
			t.Errorf("%s: libseccomp says %d, the kernel headers %d", name, got, want)
		}
	}
}

func TestFile(t *testing.T) {
	f, err := Build(sandbox.SeccompPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	prog, err := f.BPF()
	if err != nil {
		t.Fatal(err)
	}
	file, err := f.File()
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	got := make([]byte, len(prog)+1)
	n, _ := file.Read(got)
	if n != len(prog) || string(got[:n]) != string(prog) {
		t.Fatalf("File holds %d bytes, not the %d-byte program", n, len(prog))
	}
	if _, err := file.WriteAt([]byte{0}, 0); err == nil {
		t.Error("the program can still be changed through the descriptor: not sealed")
	}
	flags, err := unix.FcntlInt(file.Fd(), unix.F_GETFD, 0)
	if err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("descriptor flags %#x, %v: want close-on-exec", flags, err)
	}
	// A second File is independent: its read position starts at 0.
	again, err := f.File()
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if n, _ := again.Read(got); n != len(prog) {
		t.Errorf("second File: read %d bytes, want %d", n, len(prog))
	}

	f.Release()
	f.Release()
	if _, err := f.BPF(); err == nil {
		t.Error("BPF after Release: no error")
	}
	if _, err := f.File(); err == nil {
		t.Error("File after Release: no error")
	}
	// Files handed out before Release stay readable.
	if _, err := file.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	if n, _ := file.Read(got); n != len(prog) {
		t.Errorf("File after Release: read %d bytes, want %d", n, len(prog))
	}
}

// TestProgramUnixSockets: with unix_sockets listed (AllowUnix), a unix
// socket can be made; every other family stays as without.
func TestProgramUnixSockets(t *testing.T) {
	arch, _ := native(t)
	v := vm(t, sandbox.SeccompPolicy{AllowUnix: true})
	for _, c := range []struct {
		name string
		sys  string
		args []uint64
		want uint32
	}{
		{"socket AF_UNIX allowed", "socket", []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, allow},
		{"socket AF_UNIX with junk refused (stricter than the kernel)", "socket", []uint64{0x100000001, unix.SOCK_STREAM}, eafnosupport},
		{"socket AF_INET refused", "socket", []uint64{unix.AF_INET, unix.SOCK_STREAM}, eafnosupport},
		{"socketpair AF_UNIX allowed", "socketpair", []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, allow},
	} {
		n, ok := nr(t, c.sys)
		if !ok {
			t.Fatalf("%s does not exist", c.sys)
		}
		d := seccompData{nr: n, arch: arch}
		copy(d.args[:], c.args)
		if got := run(t, v, d); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, actionName(got), actionName(c.want))
		}
	}
}

// TestProxyFilters: with the proxy the command's own filter
// ({AllowNetwork}, AllowUnix off) refuses a unix socket of the command's
// own (the proxy's socket would be one connect away) but keeps socketpair
// and inet sockets; the filter bwrap applies to the bridge, which must
// reach the proxy's socket once, adds socket(AF_UNIX) and nothing else.
func TestProxyFilters(t *testing.T) {
	arch, _ := native(t)
	command := vm(t, sandbox.SeccompPolicy{AllowNetwork: true})
	bridge := vm(t, sandbox.SeccompPolicy{AllowNetwork: true, AllowUnix: true})
	sock, _ := nr(t, "socket")
	pair, _ := nr(t, "socketpair")
	for _, c := range []struct {
		name          string
		nr            uint32
		dom           uint64
		want, bridged uint32
	}{
		{"socket AF_UNIX", sock, unix.AF_UNIX, eperm, allow},
		{"socket AF_UNIX with junk in the high bits", sock, unix.AF_UNIX | 0xdead<<32, eperm, allow},
		{"socket AF_INET", sock, unix.AF_INET, allow, allow},
		{"socket AF_INET6", sock, unix.AF_INET6, allow, allow},
		{"socket AF_PACKET", sock, unix.AF_PACKET, eperm, eperm},
		{"socketpair AF_UNIX", pair, unix.AF_UNIX, allow, allow},
	} {
		d := seccompData{nr: c.nr, arch: arch, ip: 0x7f0012345678}
		d.args[0] = c.dom
		d.args[1] = unix.SOCK_STREAM
		if got := run(t, command, d); got != c.want {
			t.Errorf("command: %s: got %s, want %s", c.name, actionName(got), actionName(c.want))
		}
		if got := run(t, bridge, d); got != c.bridged {
			t.Errorf("bridge: %s: got %s, want %s", c.name, actionName(got), actionName(c.bridged))
		}
	}
}
