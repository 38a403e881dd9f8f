package regfile

import (
	"errors"
	"os"
	"strconv"
	"syscall"
)

// oPath is O_PATH, which package syscall does not define on every
// architecture; it has this value on every one Go supports.
const oPath = 0x200000

func open(path string, nofollow bool) (*os.File, error) {
	pflags := oPath | syscall.O_CLOEXEC
	if nofollow {
		pflags |= syscall.O_NOFOLLOW
	}
	pfd, err := openNoEINTR(path, pflags)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(pfd)
	var st syscall.Stat_t
	if err := syscall.Fstat(pfd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, &NotRegularError{Path: path, Type: modeType(st.Mode)}
	}
	// A regular file of the kernel's interfaces can wait (/proc/kmsg,
	// tracing's trace_pipe), take what it gives (/proc/kmsg) or hold
	// guardrun's own secrets (/proc/self/environ): not a config file.
	var sfs syscall.Statfs_t
	if err := syscall.Fstatfs(pfd, &sfs); err != nil {
		return nil, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	if fs := kernelFS[uint32(sfs.Type)]; fs != "" {
		return nil, &NotRegularError{Path: path, Type: os.ModeIrregular, FS: fs}
	}
	// O_NONBLOCK: an open for reading of a file under another
	// process's write lease (F_SETLEASE) waits until the lease is given
	// up, up to lease-break-time; this one fails at once instead.
	const flags = syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NOCTTY | syscall.O_NONBLOCK
	fd, err := openNoEINTR("/proc/self/fd/"+strconv.Itoa(pfd), flags)
	if errors.Is(err, syscall.ENOENT) {
		// No /proc: open the path itself, without waiting, and
		// make sure it is still the file looked at.
		fd, err = openNoEINTR(path, flags|pflags&syscall.O_NOFOLLOW)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var got syscall.Stat_t
	if err := syscall.Fstat(fd, &got); err != nil || got.Dev != st.Dev || got.Ino != st.Ino {
		syscall.Close(fd)
		if err == nil {
			err = errors.New("replaced while it was opened")
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// kernelFS names the file systems of the kernel's own interfaces, by
// statfs(2) type.
var kernelFS = map[uint32]string{
	0x9fa0:     "proc",
	0x62656572: "sysfs",
	0x64626720: "debugfs",
	0x74726163: "tracefs",
	0x73636673: "securityfs",
	0x62656570: "configfs",
	0x27e0eb:   "cgroup",
	0x63677270: "cgroup2",
	0xcafe4a11: "bpf",
	0xde5e81e4: "efivarfs",
	0x6165676c: "pstore",
}

func openNoEINTR(path string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(path, flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func modeType(m uint32) os.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFIFO:
		return os.ModeNamedPipe
	case syscall.S_IFCHR:
		return os.ModeDevice | os.ModeCharDevice
	case syscall.S_IFBLK:
		return os.ModeDevice
	case syscall.S_IFSOCK:
		return os.ModeSocket
	case syscall.S_IFDIR:
		return os.ModeDir
	case syscall.S_IFLNK:
		return os.ModeSymlink
	}
	return os.ModeIrregular
}
