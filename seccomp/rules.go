package seccomp

import (
	"fmt"
	"slices"

	"github.com/guardrun/guardrun/sandbox"
)

// DefaultAction is what the filter does with a system call no rule
// matches: the filter is a deny-list.
const DefaultAction = "ALLOW"

// BadArchAction is what the filter does with a system call made through
// another architecture's entry point (int 0x80 from a 64-bit process, the
// x32 ABI on amd64): the rules below name native numbers only, so any
// other numbering would slip past them.
const BadArchAction = "KILL_PROCESS"

// RuleDesc is one refused system call, for people: guardrun profile
// prints these.
type RuleDesc struct {
	// Name is the system call.
	Name string `json:"name"`
	// Action is the errno the call fails with: EPERM, EINVAL, ENOSYS,
	// EPROTONOSUPPORT or EAFNOSUPPORT.
	Action string `json:"action"`
	// Cond says when the rule applies; empty means always.
	Cond string `json:"cond,omitempty"`
}

// Rules lists what the filter built for p refuses, in the order Build adds
// the rules. A name the running architecture does not have (mknod on
// arm64) is listed all the same; Build skips it there.
func Rules(p sandbox.SeccompPolicy) []RuleDesc {
	rs := rules(p)
	out := make([]RuleDesc, len(rs))
	for i, r := range rs {
		out[i] = RuleDesc{Name: r.name, Action: errnoName[r.errno], Cond: r.cond}
	}
	return out
}

// Linux errno values. They are the same on every architecture Build
// accepts; syscall.E* would be the build host's (darwin's EAFNOSUPPORT is
// 47), and this file is compiled everywhere.
const (
	errnoEPERM           = 1
	errnoEINVAL          = 22
	errnoENOSYS          = 38
	errnoEPROTONOSUPPORT = 93
	errnoEAFNOSUPPORT    = 97
)

var errnoName = map[uint16]string{
	errnoEPERM:           "EPERM",
	errnoEINVAL:          "EINVAL",
	errnoENOSYS:          "ENOSYS",
	errnoEPROTONOSUPPORT: "EPROTONOSUPPORT",
	errnoEAFNOSUPPORT:    "EAFNOSUPPORT",
}

// Constants from the Linux UAPI headers, spelled out because this file
// must compile where golang.org/x/sys/unix lacks them.
const (
	cloneNewNS     = 0x00020000
	cloneNewCgroup = 0x02000000
	cloneNewUTS    = 0x04000000
	cloneNewIPC    = 0x08000000
	cloneNewUser   = 0x10000000
	cloneNewPID    = 0x20000000
	cloneNewNet    = 0x40000000

	tiocsti   = 0x5412
	tioclinux = 0x541c
	tiocsetd  = 0x5423

	// ioctl request encoding (asm-generic, the same on amd64, arm64 and
	// riscv64): number in bits 0-7, type in 8-15, argument size in
	// 16-29, direction in 30-31.
	iocNone  = 0
	iocWrite = 1
	iocRead  = 2
	// iocSizeless compares direction, type and number, whatever the
	// argument's size: the 32-bit forms (FS_IOC32_SETFLAGS takes an
	// int, FS_IOC_SETFLAGS a long) and a struct grown in a later kernel
	// are the same request.
	iocSizeless = 0xc000ffff

	fSetLease = 1024 // F_SETLEASE (F_LINUX_SPECIFIC_BASE + 0)

	sIFMT  = 0o170000
	sIFCHR = 0o020000
	sIFBLK = 0o060000

	afUnix   = 1
	afInet   = 2
	afInet6  = 10
	afPacket = 17
	afTIPC   = 30
	afALG    = 38
	afVsock  = 40

	sockTypeMask  = 0xf // SOCK_TYPE_MASK: the flags (SOCK_CLOEXEC...) are above it
	sockStream    = 1
	sockDgram     = 2
	sockRaw       = 3
	sockSeqpacket = 5
	sockPacket    = 10

	ipprotoTCP   = 6
	ipprotoMPTCP = 262
	msgFastOpen  = 0x20000000

	prioProcess      = 0 // PRIO_PROCESS (setpriority's which)
	ioprioWhoProcess = 1 // IOPRIO_WHO_PROCESS (ioprio_set's which)

	low32 = 0xffffffff
)

type matchOp int

const (
	// opMaskedEq: arg & mask == val. A mask without the high 32 bits
	// compares what the kernel sees when it takes the argument as an int
	// or unsigned int; junk in the upper half of the register cannot
	// dodge the rule.
	opMaskedEq matchOp = iota
	// opNotEqual: arg != val over all 64 bits. Refusing junk in the
	// upper half as well is stricter than the kernel and fails closed.
	opNotEqual
)

// match is one comparison on one argument.
type match struct {
	arg  uint
	op   matchOp
	mask uint64 // opMaskedEq only
	val  uint64
}

// rule refuses the system call name with errno when any one of its
// matches holds (a rule per match, to libseccomp, which ORs rules on the
// same call), or always when it has none. libseccomp cannot put two
// comparisons on the same argument in one rule, so every condition here
// is written as a union of single comparisons.
type rule struct {
	name  string
	errno uint16
	cond  string
	any   []match
	// with are comparisons on other arguments that must all hold as
	// well (AND), for each match in any.
	with []match
	// nr is the number to use where libseccomp is too old to know the
	// name. Only calls added since Linux 5.1 have one: those share a
	// number on every architecture Build accepts.
	nr int
}

func always(errno uint16, names ...string) []rule {
	rs := make([]rule, len(names))
	for i, n := range names {
		rs[i] = rule{name: n, errno: errno}
	}
	return rs
}

func hasBits(arg uint, bits uint64) match {
	return match{arg: arg, op: opMaskedEq, mask: bits, val: bits}
}

func lowEq(arg uint, v uint64) match {
	return match{arg: arg, op: opMaskedEq, mask: low32, val: v}
}

// notQueryOrLinux matches a persona whose low 32 bits are neither all
// zero (PER_LINUX) nor all one (the query 0xffffffff), that is, whose bits
// are not all equal. Going round the 32 bits as a ring, such a value has
// some bit i set with bit i+1 clear, and each of these 32 masked
// comparisons catches one i.
func notQueryOrLinux() []match {
	ms := make([]match, 32)
	for i := range 32 {
		bit, next := uint64(1)<<i, uint64(1)<<((i+1)%32)
		ms[i] = match{arg: 0, op: opMaskedEq, mask: bit | next, val: bit}
	}
	return ms
}

// rules is the filter's content. Keep doc.go's Limitations in sync when
// a group is added or widened.
func rules(p sandbox.SeccompPolicy) []rule {
	var rs []rule
	// Debugging and reading other processes.
	rs = append(rs, always(errnoEPERM,
		"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd")...)
	// Mounts and root changes (bwrap built the mount tree; nothing
	// inside needs to change it).
	rs = append(rs, always(errnoEPERM,
		"mount", "umount", "umount2", "pivot_root", "chroot")...)
	// Kernel code, kernel memory and kernel-wide state.
	rs = append(rs, always(errnoEPERM,
		"kexec_load", "kexec_file_load",
		"init_module", "finit_module", "delete_module", "create_module",
		"bpf", "perf_event_open", "userfaultfd",
		"keyctl", "add_key", "request_key",
		"syslog", "acct", "quotactl", "quotactl_fd", "lookup_dcookie",
		"swapon", "swapoff", "reboot", "vhangup",
		"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
		"iopl", "ioperm", "fanotify_init", "nfsservctl", "uselib",
		"open_by_handle_at", "name_to_handle_at")...)
	// io_uring performs system calls this filter never sees.
	rs = append(rs, always(errnoEPERM,
		"io_uring_setup", "io_uring_enter", "io_uring_register")...)
	// Namespaces: bwrap already made every one the sandbox gets.
	// unshare is refused whatever its flags, so that a namespace added
	// to a future kernel is refused too; clone must stay, for fork and
	// threads, and is refused only with a namespace flag.
	rs = append(rs, always(errnoEPERM, "setns", "unshare")...)
	rs = append(rs, rule{
		name: "clone", errno: errnoEPERM,
		cond: "flags has CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID or NEWNET",
		any: []match{
			hasBits(0, cloneNewNS), hasBits(0, cloneNewCgroup), hasBits(0, cloneNewUTS),
			hasBits(0, cloneNewIPC), hasBits(0, cloneNewUser), hasBits(0, cloneNewPID),
			hasBits(0, cloneNewNet),
		},
	})
	// clone3 and the new mount API pass their flags in memory, where a
	// filter cannot look. ENOSYS makes libc and libmount fall back to
	// clone and mount, whose flags are in registers (and mount is
	// refused).
	rs = append(rs, always(errnoENOSYS,
		"clone3", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount",
		"fspick", "mount_setattr")...)
	rs = append(rs, rule{name: "open_tree_attr", errno: errnoENOSYS, nr: 467})
	// personality can turn off ASLR (ADDR_NO_RANDOMIZE) or make the heap
	// executable (READ_IMPLIES_EXEC) for the next program; the query and
	// the default persona are harmless, and sanitizers use the query.
	rs = append(rs, rule{
		name: "personality", errno: errnoEPERM,
		cond: "persona (low 32 bits) is neither 0 (PER_LINUX) nor 0xffffffff (query)",
		any:  notQueryOrLinux(),
	})
	// Device nodes: the sandbox has no capabilities, so the kernel
	// refuses these too; refusing them here does not depend on that.
	devices := []match{
		{arg: 1, op: opMaskedEq, mask: sIFMT, val: sIFCHR},
		{arg: 1, op: opMaskedEq, mask: sIFMT, val: sIFBLK},
	}
	rs = append(rs, rule{name: "mknod", errno: errnoEPERM,
		cond: "mode is S_IFCHR or S_IFBLK", any: devices})
	devicesAt := []match{
		{arg: 2, op: opMaskedEq, mask: sIFMT, val: sIFCHR},
		{arg: 2, op: opMaskedEq, mask: sIFMT, val: sIFBLK},
	}
	rs = append(rs, rule{name: "mknodat", errno: errnoEPERM,
		cond: "mode is S_IFCHR or S_IFBLK", any: devicesAt})
	if p.HostShared {
		// No IPC namespace of its own (landlock): the host's SysV
		// objects are one key, or one id from /proc/sysvipc, away.
		rs = append(rs, always(errnoENOSYS,
			"shmget", "shmat", "shmctl", "shmdt",
			"msgget", "msgsnd", "msgrcv", "msgctl",
			"semget", "semop", "semtimedop", "semctl")...)
		// No pid namespace either: another process's limits include
		// guardrun's (Landlock does not scope prlimit). pid 0 is the
		// caller, which setrlimit and getrlimit use.
		rs = append(rs, rule{name: "prlimit64", errno: errnoEPERM,
			cond: "pid is not 0 (another process) and the command shares the host's pid namespace",
			any:  []match{{arg: 0, op: opNotEqual, val: 0}}})
		// POSIX message queues are the IPC namespace's too, and
		// Landlock's path rules never see them: mq_unlink removes the
		// host's queue of that name, and mq_open(O_CREAT) creates one
		// before its open is refused. ENOSYS, as a kernel without
		// CONFIG_POSIX_MQUEUE answers.
		rs = append(rs, always(errnoENOSYS,
			"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr")...)
		// Scheduling of other processes, which Landlock does not
		// scope either: the lowest nice value, SCHED_IDLE, one CPU or
		// the idle I/O class for guardrun, its keeper, or (with
		// PRIO_USER) every process of the user would starve them. The
		// caller itself (0) stays; a thread's own id is refused too.
		for _, n := range []string{"sched_setscheduler", "sched_setparam", "sched_setattr", "sched_setaffinity"} {
			rs = append(rs, rule{name: n, errno: errnoEPERM,
				cond: "pid is not 0 (another process) and the command shares the host's pid namespace",
				any:  []match{{arg: 0, op: opNotEqual, val: 0}}})
		}
		rs = append(rs, rule{name: "setpriority", errno: errnoEPERM,
			cond: "which is not PRIO_PROCESS or who is not 0 (another process, a group, a user) and the command shares the host's pid namespace",
			any:  []match{{arg: 0, op: opNotEqual, val: prioProcess}, {arg: 1, op: opNotEqual, val: 0}}})
		rs = append(rs, rule{name: "ioprio_set", errno: errnoEPERM,
			cond: "which is not IOPRIO_WHO_PROCESS or who is not 0 (another process, a group, a user) and the command shares the host's pid namespace",
			any:  []match{{arg: 0, op: opNotEqual, val: ioprioWhoProcess}, {arg: 1, op: opNotEqual, val: 0}}})
	}
	// Terminal injection: pushing input into a terminal guardrun (or the
	// person's shell) reads from. The kernel takes the request as an
	// unsigned int.
	rs = append(rs,
		rule{name: "ioctl", errno: errnoEPERM,
			cond: "request (low 32 bits) is TIOCSTI (0x5412)", any: []match{lowEq(1, tiocsti)}},
		rule{name: "ioctl", errno: errnoEPERM,
			cond: "request (low 32 bits) is TIOCLINUX (0x541c)", any: []match{lowEq(1, tioclinux)}},
		// A terminal's line discipline outlives the command: N_NULL
		// (built into the kernel) leaves the person's shell on that
		// terminal neither input nor output, and the other disciplines
		// (PPP, HDLC, serial CAN) run their own kernel code on it.
		// Only ldattach, slattach and pppd set one.
		rule{name: "ioctl", errno: errnoEPERM,
			cond: "request (low 32 bits) is TIOCSETD (0x5423)", any: []match{lowEq(1, tiocsetd)}},
	)
	rs = append(rs, fileIoctls()...)
	// Inode flags, project ids and extent hints by path or descriptor
	// (Linux 6.17: file_getattr, file_setattr), what FS_IOC_FSGETXATTR
	// and FS_IOC_FSSETXATTR do on an open file. Landlock has no hook
	// for them: file_setattr marks any file the command owns, in every
	// zone and out of them (no-dump, which backups skip; sync; no
	// atime), and file_getattr reads them by path where nothing was
	// opened. ENOSYS, as an older kernel answers, sends tools back to
	// the ioctls on an open file, which Landlock checked when it was
	// opened (and the setting one is refused above).
	rs = append(rs,
		rule{name: "file_getattr", errno: errnoENOSYS, nr: 468},
		rule{name: "file_setattr", errno: errnoENOSYS, nr: 469})
	// The caller's LSM attributes (Linux 6.8), what a write to
	// /proc/self/attr does, past the path rules that keep /proc
	// read-only: an AppArmor hat or profile change, an SELinux exec
	// context. Reading them stays (lsm_get_self_attr, /proc/self/attr).
	rs = append(rs, rule{name: "lsm_set_self_attr", errno: errnoENOSYS, nr: 460})
	// A lease makes every other process that opens the file (for
	// writing, with a read lease) wait until the holder lets go or
	// lease-break-time (45 s) passes: a read lease needs only a
	// read-only descriptor and ownership, so a command could hold up
	// the host's writers of guardrun's config, or, as root, of
	// /etc/passwd. Both backends show the host's inodes.
	rs = append(rs, rule{name: "fcntl", errno: errnoEPERM,
		cond: "cmd (low 32 bits) is F_SETLEASE", any: []match{lowEq(1, fSetLease)}})
	// Sockets. Every group below is refused with the network on as well:
	// none is needed to reach the network, and each reaches something
	// of the host's the namespace does not hide.
	notUnix := []match{{arg: 0, op: opNotEqual, val: afUnix}}
	if !p.AllowUnix {
		// A new unix socket could connect to any host daemon whose
		// socket is visible in a zone (a docker.sock), and, with the
		// network on, to the host's abstract sockets. socketpair makes
		// a connected pair that reaches nothing else, and stays.
		rs = append(rs, rule{name: "socket", errno: errnoEPERM,
			cond: "domain (low 32 bits) is AF_UNIX and no unix_sockets are listed", any: []match{lowEq(0, afUnix)}})
		// A datagram pair is not bound to its peer: sendto with an
		// address, or a second connect, sends to any datagram socket
		// the path reaches (and, with the network on, to the host's
		// abstract ones). af_unix makes SOCK_RAW a datagram socket
		// too, so only stream and seqpacket pairs stay.
		rs = append(rs, rule{name: "socketpair", errno: errnoEPERM,
			cond: "domain (low 32 bits) is AF_UNIX and type (low 4 bits) is neither SOCK_STREAM nor SOCK_SEQPACKET and no unix_sockets are listed",
			any:  maskedNotIn(1, sockTypeMask, sockStream, sockSeqpacket),
			with: []match{lowEq(0, afUnix)}})
		if !p.AllowNetwork {
			// Then the only sockets are stream and seqpacket pairs,
			// and binding one of their ends only takes a name: an
			// abstract one is the host's under the landlock backend
			// (a host daemon's, squatted while the command runs).
			rs = append(rs, rule{name: "bind", errno: errnoEPERM,
				cond: "always (no network and no unix_sockets: the only sockets are socketpairs)"})
		}
		if p.AllowNetwork && !p.HostShared && !p.InetStreamOnly {
			// With the network on, bwrap shares the host's network
			// namespace, where abstract unix names live: binding a
			// socketpair end takes a name a host daemon binds later
			// (its bind then fails while the command runs). The
			// filter cannot read the address's family, but its length
			// gives it away: the families a command binds with the
			// network take 12 (netlink), 16 (IPv4), 24 (CAN, old
			// IPv6) or 28 (IPv6) bytes, or more than sockaddr_un's
			// 110 (sockaddr_storage), and an abstract name takes 3 to
			// 110. So those lengths stay and the others are refused:
			// only names of exactly 9, 13, 21 or 25 bytes can still be
			// taken. The landlock backend (HostShared) has guardrun
			// read the address instead (landlock.AbstractBind).
			rs = append(rs, rule{name: "bind", errno: errnoEPERM,
				cond: "address length (low 32 bits) is 3 to 110 but not 12, 16, 24 or 28 (an abstract unix name in the host's network namespace)",
				any:  lowRangeExcept(2, 3, 110, bindLengthsLeft...)})
		}
	}
	if p.AllowNetwork {
		// Packet and raw sockets see and forge other traffic on the
		// host's interfaces (the kernel also wants CAP_NET_RAW, which
		// the sandbox lacks); AF_ALG is the kernel's crypto API, a
		// recurring source of kernel bugs; AF_VSOCK reaches the
		// hypervisor and its other guests; AF_TIPC is a cluster
		// protocol no tool needs.
		rs = append(rs,
			rule{name: "socket", errno: errnoEPERM,
				cond: "domain (low 32 bits) is AF_PACKET", any: []match{lowEq(0, afPacket)}},
			rule{name: "socket", errno: errnoEAFNOSUPPORT,
				cond: "domain (low 32 bits) is AF_ALG, AF_VSOCK or AF_TIPC",
				any:  []match{lowEq(0, afALG), lowEq(0, afVsock), lowEq(0, afTIPC)}},
			rule{name: "socket", errno: errnoEPERM,
				cond: "domain is AF_INET or AF_INET6 and type (low 4 bits) is SOCK_RAW",
				any:  []match{lowEq(0, afInet), lowEq(0, afInet6)},
				with: []match{{arg: 1, op: opMaskedEq, mask: sockTypeMask, val: sockRaw}}},
			rule{name: "socket", errno: errnoEPERM,
				cond: "domain is AF_INET or AF_INET6 and type (low 4 bits) is SOCK_PACKET",
				any:  []match{lowEq(0, afInet), lowEq(0, afInet6)},
				with: []match{{arg: 1, op: opMaskedEq, mask: sockTypeMask, val: sockPacket}}},
			// EPROTONOSUPPORT is what a kernel without MPTCP says;
			// programs that try it (Go's listeners) fall back to TCP.
			rule{name: "socket", errno: errnoEPROTONOSUPPORT,
				cond: "protocol (low 32 bits) is IPPROTO_MPTCP", any: []match{lowEq(2, ipprotoMPTCP)}},
		)
	} else {
		// EAFNOSUPPORT is what a kernel without the family says, so
		// programs take their "no network here" path.
		rs = append(rs, rule{name: "socket", errno: errnoEAFNOSUPPORT,
			cond: "domain is not AF_UNIX", any: notUnix})
	}
	if p.AllowNetwork && p.InetStreamOnly {
		// TCP only: Landlock limits TCP connect to the proxy's port,
		// and nothing else limits UDP (DNS to anywhere), ICMP echo,
		// SCTP or netlink, so they are refused here.
		rs = append(rs,
			rule{name: "socket", errno: errnoEAFNOSUPPORT,
				cond: "domain (low 32 bits) is neither AF_INET nor AF_INET6 (TCP only)",
				any:  lowNotIn(0, afInet, afInet6)},
			rule{name: "socket", errno: errnoEPERM,
				cond: "type (low 4 bits) is not SOCK_STREAM (TCP only)",
				any:  maskedNotIn(1, sockTypeMask, sockStream)},
			rule{name: "socket", errno: errnoEPROTONOSUPPORT,
				cond: "protocol (low 32 bits) is neither 0 nor IPPROTO_TCP (TCP only)",
				any:  lowNotIn(2, 0, ipprotoTCP)},
			// listen on an unbound socket binds it to a free port
			// (autobind), past Landlock's bind rule: the command would
			// take connections from outside.
			rule{name: "listen", errno: errnoEPERM, cond: "always (TCP only: no local servers)"},
			// Landlock refuses every TCP bind already; what is left
			// to bind is a socketpair end, to an abstract unix name of
			// the host's.
			rule{name: "bind", errno: errnoEPERM, cond: "always (TCP only: no local servers, no abstract unix names)"},
			// TCP Fast Open connects from sendto/sendmsg, past connect().
			rule{name: "sendto", errno: errnoEPERM,
				cond: "flags has MSG_FASTOPEN", any: []match{hasBits(3, msgFastOpen)}},
			rule{name: "sendmsg", errno: errnoEPERM,
				cond: "flags has MSG_FASTOPEN", any: []match{hasBits(2, msgFastOpen)}},
			rule{name: "sendmmsg", errno: errnoEPERM,
				cond: "flags has MSG_FASTOPEN", any: []match{hasBits(3, msgFastOpen)}},
		)
	}
	rs = append(rs, rule{name: "socketpair", errno: errnoEAFNOSUPPORT,
		cond: "domain is not AF_UNIX", any: notUnix})
	rs = append(rs, verifyRules(p)...)
	return rs
}

// ioc is the ioctl request with direction dir, type typ and number nr,
// of no size (compared with iocSizeless or iocTypeNr).
func ioc(dir, typ, nr uint64) uint64 { return dir<<30 | typ<<8 | nr }

// fileIoctl is one request that changes a file, its file system, or the
// file system's keys.
type fileIoctl struct {
	name    string
	dir, nr uint64
}

// fileIoctls refuse the ioctls that change a file's data or metadata, or
// its file system, through a descriptor the command holds: Landlock's
// ioctl right covers device files only, and these need no more than a
// read-only descriptor and ownership (the kernel checks the owner, not
// how the file was opened; as root, every system file is the command's).
// So chattr's FS_IOC_SETFLAGS would mark a read-only zone's file, or
// guardrun's own config, no-dump or synchronous; FS_IOC_ENABLE_VERITY
// makes a file read-only for good; FS_IOC_SET_ENCRYPTION_POLICY makes an
// empty directory unusable without a key; the key ioctls change the file
// system's keyring; btrfs creates subvolumes (a directory, past
// Landlock's make-directory right) and snapshots in any directory the
// command can open. Kept: what only reads (FS_IOC_GETFLAGS,
// FS_IOC_FSGETXATTR, FS_IOC_FIEMAP, the get-policy and verity-measure
// calls), and FICLONE and FICLONERANGE, which the kernel runs only on a
// destination opened for writing (cp --reflink). The requests are
// compared by direction, type and number, whatever the size (the 32-bit
// forms), and btrfs's and f2fs's whole ranges by type, but for the two
// clone requests. Keep doc.go's Limitations in sync.
func fileIoctls() []rule {
	const (
		typeF     = 'f'  // linux/fs.h, ext4, fscrypt, fsverity
		typeV     = 'v'  // FS_IOC_GETVERSION, FS_IOC_SETVERSION
		typeX     = 'X'  // linux/fs.h, XFS, ext4's shutdown
		typeBtrfs = 0x94 // btrfs, and FICLONE, FICLONERANGE, FIDEDUPERANGE, FS_IOC_*FSLABEL
		typeF2fs  = 0xf5 // f2fs
	)
	byNumber := []struct {
		typ  uint64
		reqs []fileIoctl
	}{
		{typeF, []fileIoctl{
			{"FS_IOC_SETFLAGS", iocWrite, 2},
			{"EXT4_IOC_SETVERSION", iocWrite, 4},
			{"EXT4_IOC_GROUP_EXTEND", iocWrite, 7},
			{"EXT4_IOC_GROUP_ADD", iocWrite, 8},
			{"EXT4_IOC_MIGRATE", iocNone, 9},
			{"EXT4_IOC_ALLOC_DA_BLKS", iocNone, 12},
			{"EXT4_IOC_MOVE_EXT", iocRead | iocWrite, 15},
			{"EXT4_IOC_RESIZE_FS", iocWrite, 16},
			{"EXT4_IOC_SWAP_BOOT", iocNone, 17},
			// _IOR although it sets: the header's historical spelling.
			{"FS_IOC_SET_ENCRYPTION_POLICY", iocRead, 19},
			// A get that writes a salt to the superblock when it has none.
			{"FS_IOC_GET_ENCRYPTION_PWSALT", iocWrite, 20},
			{"FS_IOC_ADD_ENCRYPTION_KEY", iocRead | iocWrite, 23},
			{"FS_IOC_REMOVE_ENCRYPTION_KEY", iocRead | iocWrite, 24},
			{"FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS", iocRead | iocWrite, 25},
			{"EXT4_IOC_CLEAR_ES_CACHE", iocNone, 40},
			{"EXT4_IOC_CHECKPOINT", iocWrite, 43},
			{"EXT4_IOC_SETFSUUID", iocWrite, 44},
			{"FS_IOC_ENABLE_VERITY", iocWrite, 133},
		}},
		{typeV, []fileIoctl{
			{"FS_IOC_SETVERSION", iocWrite, 2},
		}},
		{typeX, []fileIoctl{
			{"FS_IOC_FSSETXATTR", iocWrite, 32},
			{"FIFREEZE", iocRead | iocWrite, 119},
			{"FITHAW", iocRead | iocWrite, 120},
			{"FITRIM", iocRead | iocWrite, 121},
			{"EXT4_IOC_SHUTDOWN", iocRead, 125},
		}},
	}
	var rs []rule
	for _, g := range byNumber {
		for _, q := range g.reqs {
			rs = append(rs, rule{name: "ioctl", errno: errnoEPERM,
				cond: fmt.Sprintf("request is %s (%#x, any size)", q.name, ioc(q.dir, g.typ, q.nr)),
				any:  []match{{arg: 1, op: opMaskedEq, mask: iocSizeless, val: ioc(q.dir, g.typ, q.nr)}}})
		}
	}
	// btrfs: subvolumes and snapshots made or removed, received-subvolume
	// marks, defragmentation that recompresses, read-only flags, dedupe
	// into a destination opened read-only, device and quota changes
	// (those need CAP_SYS_ADMIN, which the command has not): nothing a
	// command needs but the two clone requests.
	rs = append(rs, rule{name: "ioctl", errno: errnoEPERM,
		cond: "request type is 0x94 (btrfs, FIDEDUPERANGE, FS_IOC_*FSLABEL) and its number is neither 9 (FICLONE) nor 13 (FICLONERANGE)",
		any:  typeNotIn(1, typeBtrfs, 9, 13)})
	// f2fs: atomic and volatile writes, pinning, compression, garbage
	// collection, checkpoints.
	rs = append(rs, rule{name: "ioctl", errno: errnoEPERM,
		cond: "request type is 0xf5 (f2fs)",
		any:  []match{{arg: 1, op: opMaskedEq, mask: 0xff00, val: typeF2fs << 8}}})
	return rs
}

// typeNotIn matches an ioctl request of type typ whose number (bits 0-7)
// is none of nrs, whatever its direction and size: maskedNotIn over the
// number, each comparison also holding the type.
func typeNotIn(arg uint, typ uint64, nrs ...uint64) []match {
	ms := maskedNotIn(arg, 0xff, nrs...)
	for i := range ms {
		ms[i].mask |= 0xff00
		ms[i].val |= typ << 8
	}
	return ms
}

// lowRangeExcept matches an argument whose low 32 bits lie in [lo, hi]
// and are none of except: the range cut into aligned blocks of a power
// of two, each one masked comparison.
func lowRangeExcept(arg uint, lo, hi uint64, except ...uint64) []match {
	var ms []match
	for v := lo; v <= hi; {
		if slices.Contains(except, v) {
			v++
			continue
		}
		// The largest aligned block from v that stays in range and
		// holds no exception.
		size := uint64(1)
		for {
			next := size * 2
			if v%next != 0 || v+next-1 > hi || slices.ContainsFunc(except, func(e uint64) bool { return e >= v && e < v+next }) {
				break
			}
			size = next
		}
		ms = append(ms, match{arg: arg, op: opMaskedEq, mask: low32 &^ (size - 1), val: v})
		v += size
	}
	return ms
}

// lowNotIn matches an argument whose low 32 bits are none of vals: a bit
// set that no value has, or else exactly one of the other combinations
// of the values' bits.
func lowNotIn(arg uint, vals ...uint64) []match {
	return maskedNotIn(arg, low32, vals...)
}

// maskedNotIn matches an argument whose bits under mask are none of vals.
func maskedNotIn(arg uint, mask uint64, vals ...uint64) []match {
	var union uint64
	for _, v := range vals {
		union |= v
	}
	var ms []match
	for b := uint64(1); b != 0 && b <= mask; b <<= 1 {
		if mask&b != 0 && union&b == 0 {
			ms = append(ms, match{arg: arg, op: opMaskedEq, mask: b, val: b})
		}
	}
	// Every subset of the union's bits that is not a value.
	for sub := union; ; sub = (sub - 1) & union {
		if !slices.Contains(vals, sub) {
			ms = append(ms, match{arg: arg, op: opMaskedEq, mask: mask, val: sub})
		}
		if sub == 0 {
			break
		}
	}
	return ms
}
