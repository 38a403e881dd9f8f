//go:build unix && !linux

package fsop

import "golang.org/x/sys/unix"

const walkFlags = unix.O_RDONLY

// forceWalk exists for the tests shared with Linux; the walk is the
// only way here.
var forceWalk bool

// openDir opens the directory at the absolute clean path p with no
// symbolic link in any component.
func openDir(p string) (int, error) {
	if err := checkPath(p); err != nil {
		return -1, err
	}
	return walkDir(p)
}
