package landlock

import (
	"encoding/binary"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp/notify"
)

// bindServed says whether bind(2) is served by guardrun for a command of
// policy pol: with the network on and no unix sockets listed, where the
// filter lets bind through. Landlock scopes connecting to abstract unix
// sockets, not binding them, and the command shares the host's network
// namespace, where those names live.
func bindServed(pol sandbox.SeccompPolicy) bool {
	return pol.AllowNetwork && !pol.AllowUnix && !pol.InetStreamOnly
}

// AbstractBind is the handler of bind(2) with the network on: it reads
// the command's address once, into guardrun's memory, and refuses
// (EPERM) an abstract unix name, which would take a name of the host's
// (a daemon binding it later fails while the command runs), and a unix
// path (EACCES, as Landlock answers outside the zones: the only unix
// sockets here are socketpair ends, which have no use for one, and
// guardrun's bind would be judged by guardrun's own rights). Anything
// else, an IP or netlink address or a unix autobind (a name the kernel
// picks), is bound on a duplicate of the command's socket (pidfd_getfd:
// the same socket) from guardrun's thread, which has no capabilities:
// the command gets what its own bind would have got.
func AbstractBind(r *notify.Request) notify.Response {
	n := int(int32(uint32(r.Args[2]))) // int addrlen
	if n < 0 || n > unix.SizeofSockaddrAny {
		return notify.Fail(syscall.EINVAL) // as the kernel: more than sockaddr_storage
	}
	var raw []byte
	if n > 0 {
		var err error
		if raw, err = r.ReadBytes(r.Args[1], n); err != nil {
			return notify.Fail(errnoOf(err, syscall.EFAULT))
		}
	}
	if n > 2 && binary.NativeEndian.Uint16(raw) == unix.AF_UNIX {
		if raw[2] == 0 {
			return notify.Fail(syscall.EPERM)
		}
		return notify.Fail(syscall.EACCES)
	}
	fd, err := r.GetFD(r.FDArg(0))
	if err != nil {
		return notify.Fail(errnoOf(err, syscall.EPERM))
	}
	defer unix.Close(fd)
	var p unsafe.Pointer
	if n > 0 {
		p = unsafe.Pointer(&raw[0])
	}
	if _, _, e := unix.Syscall(unix.SYS_BIND, uintptr(fd), uintptr(p), uintptr(n)); e != 0 {
		return notify.Fail(e)
	}
	return notify.Value(0)
}
