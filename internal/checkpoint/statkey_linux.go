package checkpoint

import (
	"io/fs"
	"syscall"
)

// statKey is the stat data git's index keeps of a file: its ctime and
// inode number, cut to 32 bits as git cuts them.
func statKey(fi fs.FileInfo) permKey {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return permKey{}
	}
	return permKey{uint32(st.Ctim.Sec), uint32(st.Ctim.Nsec), uint32(st.Ino)}
}
