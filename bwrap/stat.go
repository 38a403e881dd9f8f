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
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.IsDir() || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm()&0o222 != 0 || int(st.Uid) != os.Geteuid() {
		return false
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true // removed since by the last command holding it
	}
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && err != nil
}
