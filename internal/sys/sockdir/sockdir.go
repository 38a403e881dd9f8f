// Package sockdir makes the private directories that hold guardrun's
// unix sockets: the supervisor's, the long-lived server's
// (`guardrun serve`) and the network proxy's.
//
// A directory is made under $XDG_RUNTIME_DIR when that is an absolute
// path to a directory this user can write and no other user can rename
// in, reached through no symbolic link (Linux), else under the
// temporary directory when that is one (else /tmp), and under
// /tmp when a socket in the first would not fit a sockaddr_un (a deep
// $XDG_RUNTIME_DIR or $TMPDIR would otherwise make binding fail). It is
// 0700 and its name is random.
package sockdir

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

// MaxPath is the longest unix socket path every platform takes
// (sun_path is 104 bytes on macOS, 108 on Linux, NUL included).
const MaxPath = 100

// Base is where Make puts directories by default: $XDG_RUNTIME_DIR (as
// getenv gives it) when it is an absolute path to a directory this user
// can write, reached through no link (see isDir), else the temporary
// directory ($TMPDIR) when it is one, else /tmp. A $TMPDIR
// that names nothing usable (an agent's TMPDIR=/nonexistent, a
// relative path) does not stop guardrun from making its sockets.
func Base(getenv func(string) string) string {
	if d := getenv("XDG_RUNTIME_DIR"); isDir(d) {
		return d
	}
	return TempDir()
}

// TempDir is the temporary directory guardrun makes its own files in:
// os.TempDir() ($TMPDIR) when that is an absolute path to a directory
// this user can write, reached through no link (see isDir), else /tmp.
func TempDir() string {
	if d := os.TempDir(); isDir(d) {
		return d
	}
	return "/tmp"
}

// isDir reports whether d is an absolute path to a directory this user
// can make files in, and that only this user (or root) can rename in
// (this user's or root's; writable by no one else, or sticky), reached
// through no symbolic link (on Linux). A
// $TMPDIR inside the workspace (`export TMPDIR := $(CURDIR)/t`) is one a
// sandboxed command can replace with a link between two commands: the
// next guardrun would make its sockets and the next command's own
// $TMPDIR, which that command writes, wherever the link points (a
// directory some program loads everything under, ~/.vim/pack). On macOS
// the default $TMPDIR lies under /var, itself a link.
func isDir(d string) bool {
	if !filepath.IsAbs(d) {
		return false
	}
	fi, err := os.Stat(d)
	if err != nil || !fi.IsDir() || syscall.Access(d, 0o3) != nil { // W_OK|X_OK
		return false
	}
	// Another user who owns it, or may rename what is in it (writable
	// by group or others, without the sticky bit), could move guardrun's
	// socket directory aside and put one of theirs in its place: the
	// clients of `guardrun serve` would send them their commands and
	// environments.
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() && st.Uid != 0 || fi.Mode()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0 {
		return false
	}
	if runtime.GOOS == "linux" {
		real, err := filepath.EvalSymlinks(d)
		return err == nil && real == filepath.Clean(d)
	}
	return true
}

// Make makes a fresh 0700 directory named prefix and a random suffix
// under base, or under /tmp when a socket named longest in the one under
// base would be longer than MaxPath.
func Make(base, prefix, longest string) (string, error) {
	dir, err := os.MkdirTemp(base, prefix)
	if err == nil && len(filepath.Join(dir, longest)) > MaxPath {
		os.Remove(dir)
		dir, err = os.MkdirTemp("/tmp", prefix)
	}
	if err != nil {
		return "", err
	}
	// MkdirTemp makes it 0700 already; say so where a reader looks.
	if err := os.Chmod(dir, 0o700); err != nil {
		os.Remove(dir)
		return "", err
	}
	return dir, nil
}
