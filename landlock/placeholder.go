package landlock

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"github.com/guardrun/guardrun/sandbox"
)

// isPlaceholder reports whether path (fi its Lstat) is a bwrap command's
// mount point for the mask of a missing denied or protected name: an
// empty directory as sandbox.PlaceholderMode describes it, which comes
// and goes with the commands that mask the name. One removed since fi
// was taken (by the last command holding it) counts too.
func isPlaceholder(path string, fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !sandbox.PlaceholderMode(uint32(st.Mode), st.Uid) {
		return false
	}
	if emptyDir(path) {
		return true
	}
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// emptyDir reports whether path is a directory with nothing in it. It
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
