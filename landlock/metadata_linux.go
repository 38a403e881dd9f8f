package landlock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp/notify"
)

// MetadataCalls are the system calls that change file metadata, which
// Landlock has no rights for. The landlock backend routes them to
// guardrun (package seccomp/notify), which makes each call itself, on
// the object the command named, if MetadataWritable says the command
// may write that object, and answers EACCES (as Landlock answers a
// write it refuses) otherwise. The names an architecture does not have
// (chmod, utime ... on arm64) are left out of its filter.
var MetadataCalls = []string{
	"chmod", "fchmod", "fchmodat", "fchmodat2",
	"chown", "fchown", "lchown", "fchownat",
	"utime", "utimes", "futimesat", "utimensat",
	"setxattr", "lsetxattr", "fsetxattr", "setxattrat",
	"removexattr", "lremovexattr", "fremovexattr", "removexattrat",
}

// ErrnoOutside is what a metadata call on an object the command may not
// write fails with: EACCES, as Landlock refuses writes (bwrap's
// read-only mounts say EROFS).
const ErrnoOutside = syscall.EACCES

// metadata serves the metadata calls of one command.
type metadata struct {
	p  *sandbox.Profile
	rs *Ruleset
	// verify, when set (a verified command), judges the real path of
	// an object whose metadata the command may change as a write of
	// the prediction (notify.Verifier.CheckMetadata).
	verify func(r *notify.Request, path string) error
}

// registerMetadata adds the metadata handlers to reg.
func registerMetadata(reg *notify.Registry, p *sandbox.Profile, rs *Ruleset, verify func(*notify.Request, string) error) error {
	m := &metadata{p: p, rs: judgeRuleset(rs), verify: verify}
	handlers := map[string]notify.Handler{
		"chmod":         m.chmod,
		"fchmod":        m.chmod,
		"fchmodat":      m.chmod,
		"fchmodat2":     m.chmod,
		"chown":         m.chown,
		"fchown":        m.chown,
		"lchown":        m.chown,
		"fchownat":      m.chown,
		"utime":         m.utime,
		"utimes":        m.utime,
		"futimesat":     m.utime,
		"utimensat":     m.utime,
		"setxattr":      m.setxattr,
		"lsetxattr":     m.setxattr,
		"fsetxattr":     m.setxattr,
		"setxattrat":    m.setxattr,
		"removexattr":   m.removexattr,
		"lremovexattr":  m.removexattr,
		"fremovexattr":  m.removexattr,
		"removexattrat": m.removexattr,
	}
	for _, name := range MetadataCalls {
		if err := reg.Handle(name, handlers[name]); err != nil {
			return err
		}
	}
	return nil
}

// judgeRuleset is rs as the handlers judge by: the real path of the
// command's temporary directory, as the kernel names objects in it.
func judgeRuleset(rs *Ruleset) *Ruleset {
	tmp := *rs
	if tmp.TmpDir != "" {
		if real, err := filepath.EvalSymlinks(tmp.TmpDir); err == nil {
			tmp.TmpDir = real
		}
	}
	return &tmp
}

// procFD is guardrun's name for its own descriptor fd.
func procFD(fd int) string { return fmt.Sprintf("/proc/self/fd/%d", fd) }

// fail turns an error into the call's answer: the kernel's errno, or
// EPERM for anything unexpected (fail closed).
func fail(err error) notify.Response {
	var e syscall.Errno
	if errors.As(err, &e) {
		return notify.Fail(e)
	}
	return notify.Fail(syscall.EPERM)
}

func done(err error) notify.Response {
	if err != nil {
		return fail(err)
	}
	return notify.Value(0)
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
func (m *metadata) open(r *notify.Request, dirfd int32, addr uint64, nofollow, emptyPath, nullIsDir bool) (*object, error) {
	var fd int
	var err error
	switch {
	case addr == 0 && nullIsDir && dirfd != notify.AtFDCWD:
		fd, err = r.PathFD(dirfd)
	default:
		var path string
		if path, err = r.ReadPath(addr); err != nil {
			return nil, err
		}
		switch {
		case path != "":
			fd, err = r.Open(dirfd, path, nofollow)
		case emptyPath:
			fd, err = r.Dir(dirfd)
		default:
			return nil, syscall.ENOENT
		}
	}
	if err != nil {
		return nil, err
	}
	return m.judgeFor(r, fd)
}

// openFD is open for a descriptor argument (fchmod, fchown, fsetxattr).
func (m *metadata) openFD(r *notify.Request, fd int32) (*object, error) {
	ofd, err := r.PathFD(fd)
	if err != nil {
		return nil, err
	}
	return m.judgeFor(r, ofd)
}

// judgeFor is judge, and for a verified command the prediction's
// judgement of the object's real path as a write.
func (m *metadata) judgeFor(r *notify.Request, fd int) (*object, error) {
	o, err := m.judge(fd)
	if err != nil || m.verify == nil {
		return o, err
	}
	var st unix.Stat_t
	path := ""
	if unix.Fstat(o.fd, &st) == nil {
		path, _ = realPath(o.fd, &st)
	}
	if err := m.verify(r, path); err != nil {
		o.close()
		return nil, err
	}
	return o, nil
}

// judge takes ownership of fd and returns it as an object if the
// command may change its metadata: its real path, as the kernel names
// the object guardrun holds (not the names the command used, which can
// change), must be MetadataWritable. Anything else (a pipe, a socket,
// a path too long to name) is refused.
func (m *metadata) judge(fd int) (*object, error) {
	return m.judgeBy(fd, m.rs.MetadataWritable)
}

// judgeBy is judge with the question asked of the real path (the
// command may write it, or may read it).
func (m *metadata) judgeBy(fd int, allowed func(*sandbox.Profile, string) bool) (*object, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	path, ok := realPath(fd, &st)
	if !ok || !allowed(m.p, path) {
		unix.Close(fd)
		return nil, ErrnoOutside
	}
	kind := st.Mode & unix.S_IFMT
	return &object{fd: fd, link: kind == unix.S_IFLNK, dir: kind == unix.S_IFDIR}, nil
}

// realPath is the path by which the kernel names the object guardrun
// holds at fd (st is its fstat), if that path names the same object in
// guardrun's own mount namespace: ok is false otherwise. The kernel
// names an object by the mounts it was reached through: reached through
// another mount namespace (/proc/PID/root or /proc/PID/cwd of a process
// in a container, or in a service's private /tmp), its path is the one
// it has there, which can be a zone's while the object is a directory
// outside every zone mounted at that path there. So the path is opened
// again here, following no link, and must lead to the same inode.
// Anything that is not a path (pipe:[...], socket:[...], anon_inode:...)
// is refused. An unlinked object (the kernel appends " (deleted)",
// unless a file really has that name) is named by its last path if the
// directory that held it is, here, on the object's own mount.
func realPath(fd int, st *unix.Stat_t) (string, bool) {
	path, err := os.Readlink(procFD(fd))
	if err != nil || !strings.HasPrefix(path, "/") {
		return "", false
	}
	if sameObject(path, st) {
		return path, true
	}
	base, deleted := strings.CutSuffix(path, " (deleted)")
	if !deleted {
		return "", false
	}
	dir, err := openHere(filepath.Dir(base))
	if err != nil {
		return "", false
	}
	defer unix.Close(dir)
	mnt, err1 := mountID(fd)
	dmnt, err2 := mountID(dir)
	if err1 != nil || err2 != nil || mnt != dmnt {
		return "", false
	}
	return base, true
}

// openHere opens path (absolute) as guardrun's O_PATH descriptor,
// following no symbolic or magic link on the way (a link at the end is
// opened itself).
func openHere(path string) (int, error) {
	return unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// sameObject reports whether path, opened here without following links,
// is the object st describes.
func sameObject(path string, st *unix.Stat_t) bool {
	fd, err := openHere(path)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var now unix.Stat_t
	return unix.Fstat(fd, &now) == nil && now.Dev == st.Dev && now.Ino == st.Ino
}

// mountID is the id of the mount the object at fd is on.
func mountID(fd int) (uint64, error) {
	var sx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &sx); err != nil {
		return 0, err
	}
	if sx.Mask&unix.STATX_MNT_ID == 0 {
		return 0, unix.ENOSYS
	}
	return sx.Mnt_id, nil
}

// atFlags checks a flags argument against the flags the call takes.
func atFlags(v uint64, allowed int) (int, error) {
	f := int(uint32(v))
	if f&^allowed != 0 {
		return 0, syscall.EINVAL
	}
	return f, nil
}

func (m *metadata) chmod(r *notify.Request) notify.Response {
	var o *object
	var err error
	var mode uint64
	switch r.Syscall {
	case "chmod":
		o, err = m.open(r, notify.AtFDCWD, r.Args[0], false, false, false)
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
			return fail(err)
		}
		o, err = m.open(r, r.FDArg(0), r.Args[1], f&unix.AT_SYMLINK_NOFOLLOW != 0, f&unix.AT_EMPTY_PATH != 0, false)
		mode = r.Args[2]
	default:
		return notify.Fail(syscall.ENOSYS)
	}
	if err != nil {
		return fail(err)
	}
	defer o.close()
	if o.link {
		return notify.Fail(syscall.EOPNOTSUPP) // links have no mode of their own
	}
	return done(chmodFD(o, uint32(mode)&0o7777))
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

func (m *metadata) chown(r *notify.Request) notify.Response {
	var o *object
	var err error
	var uid, gid uint64
	switch r.Syscall {
	case "chown", "lchown":
		o, err = m.open(r, notify.AtFDCWD, r.Args[0], r.Syscall == "lchown", false, false)
		uid, gid = r.Args[1], r.Args[2]
	case "fchown":
		o, err = m.openFD(r, r.FDArg(0))
		uid, gid = r.Args[1], r.Args[2]
	case "fchownat":
		var f int
		if f, err = atFlags(r.Args[4], unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH); err != nil {
			return fail(err)
		}
		o, err = m.open(r, r.FDArg(0), r.Args[1], f&unix.AT_SYMLINK_NOFOLLOW != 0, f&unix.AT_EMPTY_PATH != 0, false)
		uid, gid = r.Args[2], r.Args[3]
	default:
		return notify.Fail(syscall.ENOSYS)
	}
	if err != nil {
		return fail(err)
	}
	defer o.close()
	// uid_t and gid_t: the low 32 bits, -1 for "unchanged".
	return done(unix.Fchownat(o.fd, "", int(int32(uint32(uid))), int(int32(uint32(gid))), unix.AT_EMPTY_PATH))
}

const (
	//lint:ignore U1000 removed after the refactor (deadcode-remaining)
	utimeNow = (1 << 30) - 1
	//lint:ignore U1000 removed after the refactor (deadcode-remaining)
	utimeOmit = (1 << 30) - 2
)

// times reads the caller's times argument at addr in the call's format
// as the two timespecs utimensat takes; nil for "now".
func times(r *notify.Request, addr uint64) ([]unix.Timespec, error) {
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

func (m *metadata) utime(r *notify.Request) notify.Response {
	var o *object
	var err error
	var tsAddr uint64
	switch r.Syscall {
	case "utime", "utimes":
		o, err = m.open(r, notify.AtFDCWD, r.Args[0], false, false, false)
		tsAddr = r.Args[1]
	case "futimesat":
		o, err = m.open(r, r.FDArg(0), r.Args[1], false, false, true)
		tsAddr = r.Args[2]
	case "utimensat":
		var f int
		if f, err = atFlags(r.Args[3], unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH); err != nil {
			return fail(err)
		}
		if r.Args[1] == 0 && f&unix.AT_SYMLINK_NOFOLLOW != 0 {
			return notify.Fail(syscall.EINVAL) // as the kernel answers
		}
		if r.Args[1] == 0 && r.FDArg(0) == notify.AtFDCWD {
			return notify.Fail(syscall.EFAULT)
		}
		o, err = m.open(r, r.FDArg(0), r.Args[1], f&unix.AT_SYMLINK_NOFOLLOW != 0, f&unix.AT_EMPTY_PATH != 0, true)
		tsAddr = r.Args[2]
	default:
		return notify.Fail(syscall.ENOSYS)
	}
	if err != nil {
		return fail(err)
	}
	defer o.close()
	ts, err := times(r, tsAddr)
	if err != nil {
		return fail(err)
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
		return notify.Fail(e)
	}
	return notify.Value(0)
}

// xattrName reads an attribute name as the kernel does: empty or longer
// than XATTR_NAME_MAX is ERANGE.
func xattrName(r *notify.Request, addr uint64) (string, error) {
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

func (m *metadata) setxattr(r *notify.Request) notify.Response {
	var o *object
	var err error
	var nameAddr, valAddr, size, flags uint64
	switch r.Syscall {
	case "setxattr", "lsetxattr":
		o, err = m.open(r, notify.AtFDCWD, r.Args[0], r.Syscall == "lsetxattr", false, false)
		nameAddr, valAddr, size, flags = r.Args[1], r.Args[2], r.Args[3], r.Args[4]
	case "fsetxattr":
		o, err = m.openFD(r, r.FDArg(0))
		nameAddr, valAddr, size, flags = r.Args[1], r.Args[2], r.Args[3], r.Args[4]
	case "setxattrat":
		// setxattrat(dfd, path, at_flags, name, struct xattr_args *, size)
		var f int
		if f, err = atFlags(r.Args[2], unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH); err != nil {
			return fail(err)
		}
		const argsSize = 16 // struct xattr_args: u64 value, u32 size, u32 flags
		switch {
		case r.Args[5] < argsSize:
			return notify.Fail(syscall.EINVAL)
		case r.Args[5] > 4096:
			return notify.Fail(syscall.E2BIG) // as the kernel: more than a page
		}
		b, rerr := r.ReadBytes(r.Args[4], int(r.Args[5]))
		if rerr != nil {
			return fail(rerr)
		}
		for _, c := range b[argsSize:] {
			if c != 0 {
				return notify.Fail(syscall.E2BIG) // a newer struct's fields
			}
		}
		valAddr = binary.NativeEndian.Uint64(b[0:])
		size = uint64(binary.NativeEndian.Uint32(b[8:]))
		flags = uint64(binary.NativeEndian.Uint32(b[12:]))
		nameAddr = r.Args[3]
		o, err = m.open(r, r.FDArg(0), r.Args[1], f&unix.AT_SYMLINK_NOFOLLOW != 0, f&unix.AT_EMPTY_PATH != 0, false)
	default:
		return notify.Fail(syscall.ENOSYS)
	}
	if err != nil {
		return fail(err)
	}
	defer o.close()
	if uint32(flags)&^(unix.XATTR_CREATE|unix.XATTR_REPLACE) != 0 {
		return notify.Fail(syscall.EINVAL)
	}
	name, err := xattrName(r, nameAddr)
	if err != nil {
		return fail(err)
	}
	if size > notify.MaxRead {
		return notify.Fail(syscall.E2BIG)
	}
	value, err := r.ReadBytes(valAddr, int(size))
	if err != nil {
		return fail(err)
	}
	if o.link {
		// Extended attributes of a link itself: the user namespace
		// refuses them, the others need capabilities the command has
		// not; and guardrun has no safe way to name the link.
		return notify.Fail(syscall.EPERM)
	}
	return done(unix.Setxattr(o.proc(), name, value, int(flags)))
}

func (m *metadata) removexattr(r *notify.Request) notify.Response {
	var o *object
	var err error
	var nameAddr uint64
	switch r.Syscall {
	case "removexattr", "lremovexattr":
		o, err = m.open(r, notify.AtFDCWD, r.Args[0], r.Syscall == "lremovexattr", false, false)
		nameAddr = r.Args[1]
	case "fremovexattr":
		o, err = m.openFD(r, r.FDArg(0))
		nameAddr = r.Args[1]
	case "removexattrat":
		var f int
		if f, err = atFlags(r.Args[2], unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH); err != nil {
			return fail(err)
		}
		o, err = m.open(r, r.FDArg(0), r.Args[1], f&unix.AT_SYMLINK_NOFOLLOW != 0, f&unix.AT_EMPTY_PATH != 0, false)
		nameAddr = r.Args[3]
	default:
		return notify.Fail(syscall.ENOSYS)
	}
	if err != nil {
		return fail(err)
	}
	defer o.close()
	name, err := xattrName(r, nameAddr)
	if err != nil {
		return fail(err)
	}
	if o.link {
		return notify.Fail(syscall.EPERM)
	}
	return done(unix.Removexattr(o.proc(), name))
}
