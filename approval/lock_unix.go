//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly || solaris

// The list is the systems where golang.org/x/sys/unix has Flock (darwin
// covers ios, solaris covers illumos); keep in sync with lock_other.go.

package approval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFlags are added to every open of the audit log, the session store and
// its lock file. O_NOFOLLOW refuses a symlink planted at the path (the
// open fails with ELOOP); O_NONBLOCK keeps a FIFO planted there from
// hanging the open, and the regular-file check then refuses it. Neither
// changes how a regular file is read or written.
const openFlags = unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC

// lockFile takes an flock(2) lock on f, waiting for it. flock locks belong
// to the open file description, so two goroutines that each opened the
// file exclude each other just as two processes do.
func lockFile(f *os.File, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		// A signal (the Go runtime preempts with SIGURG) interrupts the
		// wait; the lock is not held, so wait again.
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		return nil
	}
}

func unlockFile(f *os.File) error {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_UN); err != nil {
		return fmt.Errorf("unlock %s: %w", f.Name(), err)
	}
	return nil
}

// isSymlinkErr reports whether an open with O_NOFOLLOW failed because the
// last path element is a symlink.
func isSymlinkErr(err error) bool {
	return errors.Is(err, unix.ELOOP)
}

// checkPrivate refuses a file or directory that someone other than the
// current user could have written: one owned by another user, or one
// writable by group or other. what names it in the error ("audit log").
func checkPrivate(what, path string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s %s: cannot read its owner", what, path)
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return fmt.Errorf("%s %s is owned by uid %d, not by you (uid %d): refusing to use it", what, path, st.Uid, uid)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s %s is writable by group or others (mode %04o): refusing to use it; run chmod go-w %s", what, path, perm, path)
	}
	return nil
}
