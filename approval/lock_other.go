//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly || solaris)

// Keep the build line in sync with lock_unix.go.

package approval

import (
	"fmt"
	"io/fs"
	"os"
	"runtime"
)

// openFlags: without O_NOFOLLOW there is no safe way to refuse a symlink
// at the path, so every open below fails in lockFile or checkPrivate.
const openFlags = 0

// lockFile fails: the audit log and session store promise that concurrent
// writers never interleave or lose updates, and without flock(2) that
// promise cannot be kept, so they refuse rather than write unlocked.
func lockFile(f *os.File, exclusive bool) error {
	return fmt.Errorf("lock %s: file locking is not supported on %s", f.Name(), runtime.GOOS)
}

func unlockFile(f *os.File) error { return nil }

func isSymlinkErr(err error) bool { return false }

func checkPrivate(what, path string, fi fs.FileInfo) error {
	return fmt.Errorf("%s %s: cannot check its owner on %s", what, path, runtime.GOOS)
}
