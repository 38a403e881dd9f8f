package main

// Attempts on files through calls Landlock has no hook for: inode flags
// set through a read-only descriptor (chattr's ioctls) or by path
// (file_setattr), and the host's POSIX message queues by name.

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() {
	for name, f := range map[string]func([]string) error{
		"setflags":     attemptSetflags,
		"fssetxattr":   attemptFssetxattr,
		"file-setattr": attemptFileSetattr,
		"file-getattr": attemptFileGetattr,
		"mq-unlink":    attemptMQUnlink,
		"mq-create":    attemptMQCreate,
		"lease":        attemptLease,
	} {
		attempts[name] = f
	}
}

const (
	fsNodumpFl     = 0x00000040 // FS_NODUMP_FL
	fsXflagNodump  = 0x00000080 // FS_XFLAG_NODUMP
	fsIocFsgetxatt = 0x801c581f // FS_IOC_FSGETXATTR
	fsIocFssetxatt = 0x401c5820 // FS_IOC_FSSETXATTR
	sysFileGetattr = 468
	sysFileSetattr = 469
)

// openRO opens path read-only, as chattr does (a refusal here is the
// sandbox's answer).
func openRO(path string) (int, error) {
	return unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
}

// setflags PATH: chattr +d (no-dump, which needs no capability) through a
// read-only descriptor: FS_IOC_GETFLAGS, then FS_IOC_SETFLAGS.
func attemptSetflags(a []string) error {
	fd, err := openRO(arg(a, 0))
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil {
		return setup("FS_IOC_GETFLAGS: %v", err)
	}
	flags |= fsNodumpFl
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.FS_IOC_SETFLAGS, uintptr(unsafe.Pointer(&flags))); e != 0 {
		return e
	}
	return allowed("set no-dump on %s through a read-only descriptor", arg(a, 0))
}

// fsxattr is struct fsxattr.
type fsxattr struct {
	xflags, extsize, nextents, projid, cowextsize uint32
	pad                                           [8]byte
}

// fssetxattr PATH: the same through FS_IOC_FSSETXATTR.
func attemptFssetxattr(a []string) error {
	fd, err := openRO(arg(a, 0))
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var x fsxattr
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fsIocFsgetxatt, uintptr(unsafe.Pointer(&x))); e != 0 {
		return setup("FS_IOC_FSGETXATTR: %v", e)
	}
	x.xflags |= fsXflagNodump
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fsIocFssetxatt, uintptr(unsafe.Pointer(&x))); e != 0 {
		return e
	}
	return allowed("set no-dump on %s through FS_IOC_FSSETXATTR on a read-only descriptor", arg(a, 0))
}

// fileAttr is struct file_attr (Linux 6.17).
type fileAttr struct {
	xflags                                uint64
	extsize, nextents, projid, cowextsize uint32
}

func fileGetattr(path string, fa *fileAttr) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return setup("path %q", path)
	}
	atFDCWD := -100
	if _, _, e := unix.Syscall6(sysFileGetattr, uintptr(atFDCWD), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(fa)), unsafe.Sizeof(*fa), 0, 0); e != 0 {
		return e
	}
	return nil
}

// file-setattr PATH: set no-dump by path (file_getattr, file_setattr),
// with nothing opened.
func attemptFileSetattr(a []string) error {
	var fa fileAttr
	if err := fileGetattr(arg(a, 0), &fa); err != nil {
		return err
	}
	fa.xflags |= fsXflagNodump
	p, _ := unix.BytePtrFromString(arg(a, 0))
	atFDCWD := -100
	if _, _, e := unix.Syscall6(sysFileSetattr, uintptr(atFDCWD), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&fa)), unsafe.Sizeof(fa), 0, 0); e != 0 {
		return e
	}
	return allowed("set no-dump on %s by path (file_setattr)", arg(a, 0))
}

// file-getattr PATH: read the inode flags of PATH by path.
func attemptFileGetattr(a []string) error {
	var fa fileAttr
	if err := fileGetattr(arg(a, 0), &fa); err != nil {
		return err
	}
	return allowed("read the flags of %s by path (file_getattr): %#x", arg(a, 0), fa.xflags)
}

// mq-unlink NAME: remove the host's POSIX message queue NAME.
func attemptMQUnlink(a []string) error {
	name, err := unix.BytePtrFromString(arg(a, 0))
	if err != nil {
		return setup("name %q", arg(a, 0))
	}
	if _, _, e := unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(name)), 0, 0); e != 0 {
		return e
	}
	return allowed("removed the host's message queue /%s", arg(a, 0))
}

// mq-create NAME: create a POSIX message queue NAME (a name a host
// program would create later). Under the landlock backend the open that
// follows the creation is refused, after the queue was made; the host
// check looks for it.
func attemptMQCreate(a []string) error {
	name, err := unix.BytePtrFromString(arg(a, 0))
	if err != nil {
		return setup("name %q", arg(a, 0))
	}
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(name)), unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600, 0, 0, 0)
	if e != 0 {
		return e
	}
	unix.Close(int(fd))
	return allowed("created the message queue /%s", arg(a, 0))
}

// lease PATH: take a read lease on PATH through a read-only descriptor:
// while the command holds it, every host process that opens the file for
// writing waits (lease-break-time, 45 s by default).
func attemptLease(a []string) error {
	fd, err := openRO(arg(a, 0))
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		return err
	}
	return allowed("holds a read lease on %s", arg(a, 0))
}
