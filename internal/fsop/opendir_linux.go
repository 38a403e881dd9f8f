package fsop

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// walkFlags open the directories on the way down: O_PATH needs only
// search permission, as path lookup does.
const walkFlags = unix.O_PATH

// forceWalk makes openDir skip openat2, so tests cover the fallback.
var forceWalk bool

// openDir opens the directory at the absolute clean path p with no
// symbolic link in any component. openat2 lets the kernel enforce that
// in one lookup (RESOLVE_NO_MAGICLINKS also shuts out /proc/PID/fd
// tricks); kernels before 5.6, and seccomp filters that refuse the
// syscall, get the component-by-component walk instead.
func openDir(p string) (int, error) {
	if err := checkPath(p); err != nil {
		return -1, err
	}
	if !forceWalk {
		how := &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		}
		for range 5 {
			fd, err := unix.Openat2(unix.AT_FDCWD, p, how)
			switch {
			case err == nil:
				return fd, nil
			case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
				return walkDir(p)
			case errors.Is(err, unix.ELOOP):
				// Let the walk name the component that is a link.
				fd, werr := walkDir(p)
				if werr == nil {
					return fd, nil
				}
				return -1, werr
			default:
				return -1, &fs.PathError{Op: "open", Path: p, Err: err}
			}
		}
	}
	return walkDir(p)
}
