//go:build linux

package notify

import (
	"bytes"
	"encoding/binary"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// HandleBind serves bind(2) for a verified command (seccomp.BindRoute):
// the address is read once, and the bind is made on guardrun's duplicate
// of the caller's socket (pidfd_getfd: the same socket), never let go on
// in the kernel, which would read the address again. An AF_UNIX address
// on a path creates the socket's file there: located as the kernel
// would (no link at the end followed), judged and placed by Decide as a
// mknod of a socket (FileCall), and bound on Decide's thread through the
// directory located and the plain name. Any other address goes to other
// (nil: bound as it is).
func (fs *FileServer) HandleBind(r *Request, other func(r *Request, addr []byte) Response) Response {
	n := int(int32(uint32(r.Args[2]))) // int addrlen
	if n < 0 || n > unix.SizeofSockaddrAny {
		return Fail(syscall.EINVAL) // as the kernel: more than sockaddr_storage
	}
	var raw []byte
	if n > 0 {
		var err error
		if raw, err = r.ReadBytes(r.Args[1], n); err != nil {
			return failErr(err)
		}
	}
	if n <= 2 || binary.NativeEndian.Uint16(raw) != unix.AF_UNIX || raw[2] == 0 {
		if other != nil {
			return other(r, raw)
		}
		return BindAs(r, raw)
	}
	name := raw[2:]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	c := &FileCall{Op: OpMknod, Mode: unix.S_IFSOCK | 0o777, Path: Target{Dirfd: AtFDCWD, Path: string(name)}}
	dst, err := r.Locate(fs.View, c.Path, false)
	if err != nil {
		return failErr(err)
	}
	defer dst.Close()
	if dst.Parent < 0 || dst.Dot() {
		return Fail(syscall.EADDRINUSE) // a name that is there
	}
	if dst.Slash {
		return Fail(syscall.ENOENT)
	}
	pf, err := fs.Decide(r, c, dst, nil)
	if err != nil {
		return failErr(err)
	}
	st, err := r.Status()
	if err != nil {
		return failErr(err)
	}
	sock, err := r.GetFD(r.FDArg(0))
	if err != nil {
		return failErr(err)
	}
	defer unix.Close(sock)
	run := pf.Run
	if run == nil {
		run = func(f func()) { f() }
	}
	resp := Fail(syscall.EPERM)
	run(func() {
		// The thread's own working directory and umask (its CLONE_FS
		// is unshared): the name is bound in the directory located,
		// with the mode the caller's bind would give it.
		unix.Umask(int(st.Umask & 0o777))
		if err := unix.Fchdir(dst.Parent); err != nil {
			resp, _ = done(err)
			return
		}
		// Spelled out: unix.SockaddrUnix reads a name starting with
		// '@' as an abstract one.
		addr := binary.NativeEndian.AppendUint16(nil, unix.AF_UNIX)
		addr = append(append(addr, dst.Name...), 0)
		resp = bindFD(sock, addr)
		_ = unix.Chdir("/")
	})
	return resp
}

// BindAs binds the caller's socket (bind's first argument) to addr, the
// address as read from the caller, on guardrun's duplicate of it.
func BindAs(r *Request, addr []byte) Response {
	fd, err := r.GetFD(r.FDArg(0))
	if err != nil {
		return failErr(err)
	}
	defer unix.Close(fd)
	return bindFD(fd, addr)
}

func bindFD(fd int, addr []byte) Response {
	var p unsafe.Pointer
	if len(addr) > 0 {
		p = unsafe.Pointer(&addr[0])
	}
	if _, _, e := unix.Syscall(unix.SYS_BIND, uintptr(fd), uintptr(p), uintptr(len(addr))); e != 0 {
		return Fail(e)
	}
	return Value(0)
}
