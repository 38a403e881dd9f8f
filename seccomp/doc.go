// Package seccomp compiles the system call filter that bwrap installs in
// every sandbox: a classic-BPF program, built with libseccomp from a
// sandbox.SeccompPolicy, that refuses the calls a sandboxed command could
// use to escape, to reach the kernel's less-guarded parts, or to type into
// the terminal guardrun reads from. Rules lists the same content as data
// for guardrun profile.
//
// BuildRoutes is Build with some system calls routed to user space
// (SECCOMP_RET_USER_NOTIF) for whoever loads it with a listener and
// serves them (package seccomp/notify: the landlock backend, and a
// verified command's helper under bwrap), a call only when one of its
// conditions on the arguments holds (an open with a write or create
// flag), so that the rest stays in the kernel, and
// lets a call the deny rules refuse be routed only on conditions that
// exclude what they refuse (mknodat of no device). BuildCached and
// BuildRoutesCached keep the compiled programs between processes in a
// directory their caller names (guardrun's state directory): the one
// cache both backends use.
//
// SeccompPolicy.Verify adds the rules of a verified command (run-time
// verification): no clone that shares memory, the working directory or
// the descriptor table without being a thread or a vfork child (EPERM),
// no memfd_create, memfd_secret, SysV shared memory, openat2 or Linux
// AIO (ENOSYS), and no MADV_FREE (EINVAL), so that nothing but the
// caller (no other process, no read the kernel completes later, no page
// reclaimed to zeros) can change what guardrun read of an exec before
// the kernel reads it again, and no open's flags hide in memory.
//
// It does not install the filter. Build returns the program and File a
// descriptor holding it; bwrap reads that with --seccomp and loads it
// after it has set up the namespaces, right before it runs the command, so
// that guardrun itself is never filtered. Only the tests load a filter, in
// a child process. It also does not decide policy: the refused calls are
// fixed, and the policy only says whether the IP families are allowed
// (AllowNetwork) and whether socket(AF_UNIX) is (AllowUnix, set when
// sandbox.unix_sockets lists a socket). With the network proxy the
// command's program ({AllowNetwork}, no unix sockets) is loaded by
// guardrun's proxy bridge inside the sandbox, on top of bwrap's, which
// also allows socket(AF_UNIX) so that the bridge can reach the proxy's
// socket once. Elsewhere than Linux with cgo, Build and Supported return an
// error.
//
// A refused call fails with an errno rather than killing the process, so
// programs report an error and carry on: EPERM for what is not permitted,
// EAFNOSUPPORT for sockets without a network (what a kernel without the
// family says), and ENOSYS for clone3 and the new mount API, so that libc
// and libmount fall back to clone and mount, whose flags a filter can see.
// A system call made through another architecture's entry point kills the
// process.
//
// # Limitations
//
//   - It is a deny-list. Everything not named is allowed, including system
//     calls added to kernels after this list was written; the other
//     layers (namespaces, no capabilities, no_new_privs, the mounts bwrap
//     chose) are what hold those.
//   - A filter sees registers, never memory: it cannot look at paths,
//     structs or strings behind a pointer. That is why clone3 and the new
//     mount API are refused whole (their flags are in memory), why
//     adjtimex and clock_adjtime are refused even for read-only queries,
//     and why no rule looks at file names. The ENOSYS answer assumes the
//     caller takes it as "not implemented here" and retries the old call,
//     as glibc (2.34 and later, for clone3) and util-linux's libmount (for
//     the mount API) do. A program that needs clone3 fails: Go's os/exec
//     with SysProcAttr.UseCgroupFD, for one.
//   - io_uring is refused wholesale: its submissions run inside the
//     kernel, where no filter sees them. Programs that use it when
//     available (recent libuv, some databases) fall back to ordinary
//     calls.
//   - unshare is refused whatever its flags, including harmless ones
//     (CLONE_FILES, CLONE_FS), so that namespace flags added to future
//     kernels are refused too. clone is refused only with a namespace
//     flag, since fork and threads need it.
//   - Arguments the kernel takes as int or unsigned int are compared on
//     their low 32 bits, as the kernel sees them. socket and socketpair
//     without network compare the domain on all 64 bits instead, so
//     socket(AF_UNIX) with junk above bit 31 is refused although the
//     kernel would read AF_UNIX: stricter, never weaker.
//   - socket(AF_UNIX) is refused unless unix sockets are listed: a filter
//     cannot read the address a socket connects to, so the only way to
//     keep host daemons (a docker.sock in a zone, the host's abstract
//     sockets with the network on) out of reach is to refuse the socket.
//     socketpair stays for stream and seqpacket pairs (a connected pair
//     reaches nothing else); a datagram pair is refused too, since sendto
//     with an address (or a second connect) sends from it to any datagram
//     socket the path reaches, and so is every other type (SOCK_RAW,
//     which af_unix makes a datagram socket). With no network either,
//     bind is refused: the only sockets are then those pairs, and
//     binding an end only takes a name (a host daemon's abstract name,
//     under the landlock backend, for as long as the command runs). Programs
//     that talk to a local daemon (syslog's /dev/log, nscd) get EPERM and
//     carry on; test suites that start their own unix-socket servers fail.
//     With sockets listed, the filter opens AF_UNIX for everything: bwrap
//     exposes only the listed sockets and masks the others Derive found,
//     and sandbox.Derive never lists them with the network on.
//   - With InetStreamOnly (the landlock backend's route to the proxy),
//     socket() only for AF_INET/AF_INET6 SOCK_STREAM with protocol 0 or
//     TCP; listen, and sends with MSG_FASTOPEN, refused.
//   - With network, AF_PACKET, AF_ALG, AF_VSOCK, AF_TIPC, raw and
//     SOCK_PACKET sockets of AF_INET/AF_INET6 and MPTCP
//     (IPPROTO_MPTCP, answered EPROTONOSUPPORT so programs fall back to
//     TCP) are refused. Every other family is allowed, AF_INET, AF_INET6
//     and AF_NETLINK (name resolution reads routes through it) among them,
//     and also rarer ones (AF_BLUETOOTH, AF_CAN, AF_RDS, ...) whose kernel
//     code the sandbox's lack of capabilities guards only where it asks
//     for them. NETLINK_SOCK_DIAG lists the host's sockets. Without
//     network, AF_NETLINK is refused too, so tools that list interfaces
//     (ip, getifaddrs) fail.
//   - Only the native architecture is in the filter, and only amd64, arm64
//     and riscv64 are accepted (the argument positions and ioctl numbers
//     are theirs; only amd64 is tested on a kernel). 32-bit programs
//     (int 0x80, compat syscalls) and the x32 ABI are killed, so a 32-bit
//     binary cannot run in the sandbox.
//   - System calls libseccomp does not know by name are an error, so an
//     old libseccomp makes Build fail rather than leave a call out; the
//     one exception is open_tree_attr (Linux 6.15), added by number.
//   - Only input injection (TIOCSTI, TIOCLINUX) and line disciplines
//     (TIOCSETD, which outlive the command) are refused. A command that
//     holds the terminal can still write to it, escape sequences included,
//     and change its modes; the supervisor, not this filter, has to cope
//     with that.
//   - ioctls that change a file, its file system or its keys are refused
//     by request (direction, type and number, any size): FS_IOC_SETFLAGS
//     and FS_IOC_FSSETXATTR (chattr), FS_IOC_SETVERSION, the fscrypt
//     policy and key calls, FS_IOC_ENABLE_VERITY, ext4's that rewrite
//     extents or resize, FIFREEZE, FITHAW, FITRIM, and btrfs's and f2fs's
//     whole ranges but FICLONE and FICLONERANGE (whose destination the
//     kernel wants opened for writing). The kernel checks these against
//     the file's owner, not the descriptor's mode, and Landlock's ioctl
//     right covers devices only. So chattr fails in writable zones too;
//     reads (FS_IOC_GETFLAGS, FS_IOC_FSGETXATTR, FS_IOC_FIEMAP) stay. A
//     file system's private ioctls outside these types (XFS's beyond the
//     shared 'X' ones, which need CAP_SYS_ADMIN or a writable
//     descriptor; a FUSE server's) are not listed. file_setattr and
//     file_getattr (Linux 6.17) answer ENOSYS, lsm_set_self_attr too, and
//     fcntl(F_SETLEASE) is refused (a lease holds up the host's openers).
//   - Without an IPC namespace (HostShared) the POSIX message queue calls
//     answer ENOSYS with SysV IPC: Landlock's path rules never see them.
//   - bind with the network on (bwrap) is refused for address lengths of
//     3 to 110 bytes but 12, 16, 24 and 28, the lengths of abstract unix
//     names in the host's network namespace; a name of exactly 9, 13, 21
//     or 25 bytes can still be taken by a socketpair end (which cannot
//     listen: a host daemon's later bind of that name fails while the
//     command runs), and a family that binds with another length fails.
//     With InetStreamOnly every bind is refused.
package seccomp
