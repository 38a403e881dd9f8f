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

func open(path string) (*os.File, error) {
	pfd, err := openNoEINTR(path, oPath|syscall.O_CLOEXEC)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(pfd)
	var st syscall.Stat_t
	if err := syscall.Fstat(pfd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, &NotRegularError{path, modeType(st.Mode)}
	}
	const flags = syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NOCTTY
	fd, err := openNoEINTR("/proc/self/fd/"+strconv.Itoa(pfd), flags)
	if errors.Is(err, syscall.ENOENT) {
		// No /proc: open the path itself, without waiting, and
		// make sure it is still the file looked at.
		fd, err = openNoEINTR(path, flags|syscall.O_NONBLOCK)
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
