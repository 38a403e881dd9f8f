package bwrap

import (
	"os"
	"syscall"

	"github.com/guardrun/guardrun/sandbox"
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

// isPlaceholder reports whether fi is a directory's mode as Command makes
// a placeholder (sandbox.PlaceholderMode), owned by this user. Its
// emptiness is for the caller.
func isPlaceholder(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && placeholderStat(st)
}

// placeholderStat is isPlaceholder for a stat(2) result.
func placeholderStat(st *syscall.Stat_t) bool {
	return sandbox.PlaceholderMode(uint32(st.Mode), st.Uid)
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
