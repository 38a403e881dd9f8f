package bwrap

import "os"

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
