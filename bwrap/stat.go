package bwrap

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// HostStat is Options.Stat on the real file system. A path that cannot be
// examined (missing, or under a directory the user cannot search) counts
// as missing: the sandboxed process, with the same user id and fewer
// privileges, cannot reach it either.
func HostStat(path string) (isDir, exists bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return false, false
	}
	return fi.IsDir(), true
}

// IsPlaceholder reports whether path (fi its Lstat) is a mask's mount
// point as Command makes it for a missing denied or protected name: an
// empty directory of this user's, read-only and sticky, which nobody
// gives an empty directory of their own. It comes and goes with the
// commands that mask the name; the landlock backend, running beside them
// in the same tree, takes it as the missing name it stands for.
func IsPlaceholder(path string, fi os.FileInfo) bool {
	if !isPlaceholder(fi) {
		return false
	}
	if emptyDir(path) {
		return true
	}
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist) // removed since by the last command holding it
}

// placeholderMode marks the directories Command makes as mount points:
// read-only and sticky, which nobody gives an empty directory of their
// own. The last run to hold one removes it, whoever made it.
const placeholderMode = 0o555 | os.ModeSticky

// isPlaceholder reports whether fi is a directory's mode as Command makes
// a placeholder (placeholderMode, whatever the umask took from its
// permission bits), owned by this user. Its emptiness is for the caller.
func isPlaceholder(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && placeholderStat(st)
}

// placeholderStat is isPlaceholder for a stat(2) result.
func placeholderStat(st *syscall.Stat_t) bool {
	return PlaceholderMode(uint32(st.Mode), st.Uid)
}

// PlaceholderMode reports whether a file of mode (type and permission
// bits, as stat(2) gives them) owned by uid looks as Command makes a
// placeholder: a directory of this user's, sticky, writable by nobody.
// Whether it is empty is for the caller.
func PlaceholderMode(mode, uid uint32) bool {
	return mode&syscall.S_IFMT == syscall.S_IFDIR && mode&syscall.S_ISVTX != 0 && mode&0o222 == 0 && int(uid) == os.Geteuid()
}

// emptyDir reports whether path is a directory with nothing in it (a
// placeholder of a missing read-only path, perhaps another run's). It
// opens nothing but a directory, without waiting: the path lies where a
// running command writes, and a FIFO put there since it was looked at
// would make a plain open wait for a writer.
func emptyDir(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && err != nil
}
