//go:build linux

package notify

import (
	"encoding/binary"
	"errors"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MetadataCalls are the system calls that change file metadata, which
// MetadataServer serves: the object the caller named is opened once
// (O_PATH, not following a final link where the call does not), judged,
// and the call made on guardrun's descriptor of it. The names an
// architecture does not have (chmod, utime ... on arm64) are left out
// of its filter.
var MetadataCalls = []string{
	"chmod", "fchmod", "fchmodat", "fchmodat2",
	"chown", "fchown", "lchown", "fchownat",
	"utime", "utimes", "futimesat", "utimensat",
	"setxattr", "lsetxattr", "fsetxattr", "setxattrat",
	"removexattr", "lremovexattr", "fremovexattr", "removexattrat",
}

// MetadataServer serves MetadataCalls for a backend: Open finds what a
// path argument names, Judge says whether the call may change the
// object's metadata, and the call is made on guardrun's descriptor of
// the object, on the worker (which has no capabilities, as the command
// has none).
type MetadataServer struct {
	// Open opens (dirfd, path), a path the caller gave (not empty), as
	// the caller's kernel would, as guardrun's O_PATH descriptor; with
	// nofollow a link at its end is opened itself.
	Open func(r *Request, dirfd int32, path string, nofollow bool) (int, error)
	// Judge returns nil if the call may change the metadata of the
	// object at fd (guardrun's O_PATH descriptor, still the server's),
	// else the errno it fails with.
	Judge func(r *Request, fd int) error
}

// Register routes MetadataCalls to m in reg.
func (m *MetadataServer) Register(reg *Registry) error {
	handlers := map[string]Handler{
		"chmod": m.chmod, "fchmod": m.chmod, "fchmodat": m.chmod, "fchmodat2": m.chmod,
		"chown": m.chown, "fchown": m.chown, "lchown": m.chown, "fchownat": m.chown,
		"utime": m.utime, "utimes": m.utime, "futimesat": m.utime, "utimensat": m.utime,
		"setxattr": m.setxattr, "lsetxattr": m.setxattr, "fsetxattr": m.setxattr, "setxattrat": m.setxattr,
		"removexattr": m.removexattr, "lremovexattr": m.removexattr, "fremovexattr": m.removexattr, "removexattrat": m.removexattr,
	}
	for _, name := range MetadataCalls {
		if err := reg.Handle(name, handlers[name]); err != nil {
			return err
		}
	}
	return nil
}

func metaDone(err error) Response {
	if err != nil {
		return failErr(err)
	}
	return Value(0)
}

// object is the file a call names, opened by guardrun (O_PATH), judged.
type object struct {
	fd   int
	link bool // a symbolic link itself (not followed)
	dir  bool
}

func (o *object) close() { unix.Close(o.fd) }

// proc is the object's name through guardrun's descriptor table: a
// path-taking call on it reaches the object itself, whatever happens to
// the names the command used.
func (o *object) proc() string { return procFD(o.fd) }

// open finds what the call names. A path argument (address addr,
// relative to dirfd) is read once and opened as the caller's kernel
// would, following the last link unless nofollow; an empty path with
// emptyPath (AT_EMPTY_PATH) or a null path with nullIsDir (utimensat,
// futimesat) names dirfd itself. Then the object is judged.
func (m *MetadataServer) open(r *Request, dirfd int32, addr uint64, nofollow, emptyPath, nullIsDir bool) (*object, error) {
	var fd int
	var err error
	switch {
	case addr == 0 && nullIsDir && dirfd != AtFDCWD:
		fd, err = r.PathFD(dirfd)
	default:
		var path string
		if path, err = r.ReadPath(addr); err != nil {
			return nil, err
		}
		switch {
		case path != "":
			fd, err = m.Open(r, dirfd, path, nofollow)
		case emptyPath:
			fd, err = r.Dir(dirfd)
		default:
			return nil, syscall.ENOENT
		}
	}
	if err != nil {
		return nil, err
	}
	return m.judge(r, fd)
}

// openFD is open for a descriptor argument (fchmod, fchown, fsetxattr).
func (m *MetadataServer) openFD(r *Request, fd int32) (*object, error) {
	ofd, err := r.PathFD(fd)
	if err != nil {
		return nil, err
	}
	return m.judge(r, ofd)
}

// judge takes ownership of fd and returns it as an object if Judge
// allows the call.
func (m *MetadataServer) judge(r *Request, fd int) (*object, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := m.Judge(r, fd); err != nil {
		unix.Close(fd)
		return nil, err
	}
	kind := st.Mode & unix.S_IFMT
	return &object{fd: fd, link: kind == unix.S_IFLNK, dir: kind == unix.S_IFDIR}, nil
}

// atFlags checks a flags argument against the flags the call takes.
func atFlags(v uint64, allowed int) (int, error) {
	f := int(uint32(v))
	if f&^allowed != 0 {
		return 0, syscall.EINVAL
	}
	return f, nil
}

func (m *MetadataServer) chmod(r *Request) Response {
	var o *object
	var err error
	var mode uint64
	switch r.Syscall {
	case "chmod":
		o, err = m.open(r, AtFDCWD, r.Args[0], false, false, false)
		mode = r.Args[1]
	case "fchmod":
		o, err = m.openFD(r, r.FDArg(0))
		mode = r.Args[1]
	case "fchmodat":
		// The system call has no flags (glibc emulates them).
		o, err = m.open(r, r.FDArg(0), r.Args[1], false, false, false)
		mode = r.Args[2]
	case "fchmodat2":
		var f int
		if f, err = atFlags(r.Args[3], unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH); err != nil {
			return failErr(err)
		}
		o, err = m.open(r, r.FDArg(0), r.Args[1], f&unix.AT_SYMLINK_NOFOLLOW != 0, f&unix.AT_EMPTY_PATH != 0, false)
		mode = r.Args[2]
	default:
		return Fail(syscall.ENOSYS)
	}
	if err != nil {
		return failErr(err)
	}
	defer o.close()
	if o.link {
		return Fail(syscall.EOPNOTSUPP) // links have no mode of their own
	}
	return metaDone(chmodFD(o, uint32(mode)&0o7777))
}

// chmodFD changes the mode of the object guardrun holds: fchmodat2 with
// AT_EMPTY_PATH on the descriptor (Linux 6.6), else chmod of its
// /proc/self/fd name, which reaches the same object.
func chmodFD(o *object, mode uint32) error {
	empty := []byte{0}
	_, _, e := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(o.fd), uintptr(unsafe.Pointer(&empty[0])), uintptr(mode), unix.AT_EMPTY_PATH, 0, 0)
	switch e {
	case 0:
		return nil
	case unix.ENOSYS, unix.EINVAL:
		return unix.Fchmodat(unix.AT_FDCWD, o.proc(), mode, 0)
	}
	return e
}

func (m *MetadataServer) chown(r *Request) Response {
	var o *object
	var err error
	var uid, gid uint64
	switch r.Syscall {
	case "chown", "lchown":
		o, err = m.open(r, AtFDCWD, r.Args[0], r.Syscall == "lchown", false, false)
		uid, gid = r.Args[1], r.Args[2]
	case "fchown":
		o, err = m.openFD(r, r.FDArg(0))
		uid, gid = r.Args[1], r.Args[2]
	case "fchownat":
		var f int
		if f, err = atFlags(r.Args[4], unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH); err != nil {
			return failErr(err)
		}
		o, err = m.open(r, r.FDArg(0), r.Args[1], f&unix.AT_SYMLINK_NOFOLLOW != 0, f&unix.AT_EMPTY_PATH != 0, false)
		uid, gid = r.Args[2], r.Args[3]
	default:
		return Fail(syscall.ENOSYS)
	}
	if err != nil {
		return failErr(err)
	}
	defer o.close()
	// uid_t and gid_t: the low 32 bits, -1 for "unchanged".
	return metaDone(unix.Fchownat(o.fd, "", int(int32(uint32(uid))), int(int32(uint32(gid))), unix.AT_EMPTY_PATH))
}

// times reads the caller's times argument at addr in the call's format
// as the two timespecs utimensat takes; nil for "now".
func times(r *Request, addr uint64) ([]unix.Timespec, error) {
	if addr == 0 {
		return nil, nil
	}
	switch r.Syscall {
	case "utime": // struct utimbuf: two time_t
		b, err := r.ReadBytes(addr, 16)
		if err != nil {
			return nil, err
		}
		return []unix.Timespec{
			{Sec: int64(binary.NativeEndian.Uint64(b[0:]))},
			{Sec: int64(binary.NativeEndian.Uint64(b[8:]))},
		}, nil
	case "utimes", "futimesat": // struct timeval[2]
		b, err := r.ReadBytes(addr, 32)
		if err != nil {
			return nil, err
		}
		ts := make([]unix.Timespec, 2)
		for i := range ts {
			sec := int64(binary.NativeEndian.Uint64(b[16*i:]))
			usec := int64(binary.NativeEndian.Uint64(b[16*i+8:]))
			if usec < 0 || usec >= 1_000_000 {
				return nil, syscall.EINVAL
			}
			ts[i] = unix.Timespec{Sec: sec, Nsec: usec * 1000}
		}
		return ts, nil
	}
	// struct timespec[2]
	b, err := r.ReadBytes(addr, 32)
	if err != nil {
		return nil, err
	}
	ts := make([]unix.Timespec, 2)
	for i := range ts {
		ts[i] = unix.Timespec{Sec: int64(binary.NativeEndian.Uint64(b[16*i:])), Nsec: int64(binary.NativeEndian.Uint64(b[16*i+8:]))}
	}
	return ts, nil
}

func (m *MetadataServer) utime(r *Request) Response {
	var o *object
	var err error
	var tsAddr uint64
	switch r.Syscall {
	case "utime", "utimes":
		o, err = m.open(r, AtFDCWD, r.Args[0], false, false, false)
		tsAddr = r.Args[1]
	case "futimesat":
		o, err = m.open(r, r.FDArg(0), r.Args[1], false, false, true)
		tsAddr = r.Args[2]
	case "utimensat":
		var f int
		if f, err = atFlags(r.Args[3], unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH); err != nil {
			return failErr(err)
		}
		if r.Args[1] == 0 && f&unix.AT_SYMLINK_NOFOLLOW != 0 {
			return Fail(syscall.EINVAL) // as the kernel answers
		}
		if r.Args[1] == 0 && r.FDArg(0) == AtFDCWD {
			return Fail(syscall.EFAULT)
		}
		o, err = m.open(r, r.FDArg(0), r.Args[1], f&unix.AT_SYMLINK_NOFOLLOW != 0, f&unix.AT_EMPTY_PATH != 0, true)
		tsAddr = r.Args[2]
	default:
		return Fail(syscall.ENOSYS)
	}
	if err != nil {
		return failErr(err)
	}
	defer o.close()
	ts, err := times(r, tsAddr)
	if err != nil {
		return failErr(err)
	}
	var tp unsafe.Pointer
	if ts != nil {
		tp = unsafe.Pointer(&ts[0])
	}
	empty := []byte{0}
	// On the descriptor guardrun holds (O_PATH, AT_EMPTY_PATH): the
	// object itself, a link included.
	_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(o.fd), uintptr(unsafe.Pointer(&empty[0])), uintptr(tp), unix.AT_EMPTY_PATH, 0, 0)
	if e != 0 {
		return Fail(e)
	}
	return Value(0)
}

// xattrName reads an attribute name as the kernel does: empty or longer
// than XATTR_NAME_MAX is ERANGE.
func xattrName(r *Request, addr uint64) (string, error) {
	const nameMax = 255
	name, err := r.ReadString(addr, nameMax+1)
	if errors.Is(err, syscall.ENAMETOOLONG) {
		return "", syscall.ERANGE
	}
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", syscall.ERANGE
	}
	return name, nil
}

func (m *MetadataServer) setxattr(r *Request) Response {
	var o *object
	var err error
	var nameAddr, valAddr, size, flags uint64
	switch r.Syscall {
	case "setxattr", "lsetxattr":
		o, err = m.open(r, AtFDCWD, r.Args[0], r.Syscall == "lsetxattr", false, false)
		nameAddr, valAddr, size, flags = r.Args[1], r.Args[2], r.Args[3], r.Args[4]
	case "fsetxattr":
		o, err = m.openFD(r, r.FDArg(0))
		nameAddr, valAddr, size, flags = r.Args[1], r.Args[2], r.Args[3], r.Args[4]
	case "setxattrat":
		// setxattrat(dfd, path, at_flags, name, struct xattr_args *, size)
		var f int
		if f, err = atFlags(r.Args[2], unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH); err != nil {
			return failErr(err)
		}
		const argsSize = 16 // struct xattr_args: u64 value, u32 size, u32 flags
		switch {
		case r.Args[5] < argsSize:
			return Fail(syscall.EINVAL)
		case r.Args[5] > 4096:
			return Fail(syscall.E2BIG) // as the kernel: more than a page
		}
		b, rerr := r.ReadBytes(r.Args[4], int(r.Args[5]))
		if rerr != nil {
			return failErr(rerr)
		}
		for _, c := range b[argsSize:] {
			if c != 0 {
				return Fail(syscall.E2BIG) // a newer struct's fields
			}
		}
		valAddr = binary.NativeEndian.Uint64(b[0:])
		size = uint64(binary.NativeEndian.Uint32(b[8:]))
		flags = uint64(binary.NativeEndian.Uint32(b[12:]))
		nameAddr = r.Args[3]
		o, err = m.open(r, r.FDArg(0), r.Args[1], f&unix.AT_SYMLINK_NOFOLLOW != 0, f&unix.AT_EMPTY_PATH != 0, false)
	default:
		return Fail(syscall.ENOSYS)
	}
	if err != nil {
		return failErr(err)
	}
	defer o.close()
	if uint32(flags)&^(unix.XATTR_CREATE|unix.XATTR_REPLACE) != 0 {
		return Fail(syscall.EINVAL)
	}
	name, err := xattrName(r, nameAddr)
	if err != nil {
		return failErr(err)
	}
	if size > MaxRead {
		return Fail(syscall.E2BIG)
	}
	value, err := r.ReadBytes(valAddr, int(size))
	if err != nil {
		return failErr(err)
	}
	if o.link {
		// Extended attributes of a link itself: the user namespace
		// refuses them, the others need capabilities the command has
		// not; and guardrun has no safe way to name the link.
		return Fail(syscall.EPERM)
	}
	return metaDone(unix.Setxattr(o.proc(), name, value, int(flags)))
}

func (m *MetadataServer) removexattr(r *Request) Response {
	var o *object
	var err error
	var nameAddr uint64
	switch r.Syscall {
	case "removexattr", "lremovexattr":
		o, err = m.open(r, AtFDCWD, r.Args[0], r.Syscall == "lremovexattr", false, false)
		nameAddr = r.Args[1]
	case "fremovexattr":
		o, err = m.openFD(r, r.FDArg(0))
		nameAddr = r.Args[1]
	case "removexattrat":
		var f int
		if f, err = atFlags(r.Args[2], unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH); err != nil {
			return failErr(err)
		}
		o, err = m.open(r, r.FDArg(0), r.Args[1], f&unix.AT_SYMLINK_NOFOLLOW != 0, f&unix.AT_EMPTY_PATH != 0, false)
		nameAddr = r.Args[3]
	default:
		return Fail(syscall.ENOSYS)
	}
	if err != nil {
		return failErr(err)
	}
	defer o.close()
	name, err := xattrName(r, nameAddr)
	if err != nil {
		return failErr(err)
	}
	if o.link {
		return Fail(syscall.EPERM)
	}
	return metaDone(unix.Removexattr(o.proc(), name))
}
