package sandbox

import (
	"io/fs"
	"os"
)

// PlaceholderPerm is the mode of a placeholder: the empty directory the
// bwrap backend makes as the mount point of a mask for a missing denied
// or protected name. Read-only and sticky, which nobody gives an empty
// directory of their own; it comes and goes with the commands that mask
// the name, and the last run to hold one removes it, whoever made it. The
// landlock backend, running beside them in the same tree, takes one as
// the missing name it stands for.
const PlaceholderPerm = 0o555 | fs.ModeSticky

// PlaceholderMode reports whether a file of mode (type and permission
// bits, as stat(2) gives them) owned by uid looks as a placeholder does,
// whatever the umask took from PlaceholderPerm: a directory of this
// user's, sticky, writable by nobody. Whether it is empty is for the
// caller.
func PlaceholderMode(mode, uid uint32) bool {
	return mode&statTypeMask == statDir && mode&statSticky != 0 && mode&0o222 == 0 && int(uid) == os.Geteuid()
}

// stat(2)'s file type mask, its directory type and the sticky bit: the
// same numbers on every system guardrun runs on.
const (
	statTypeMask = 0o170000
	statDir      = 0o040000
	statSticky   = 0o1000
)
