//go:build unix

package fsop

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// MissingDirs lists the directories above p that do not exist,
// outermost first: what MkdirParents must create before p can be
// written. A component that exists but is not a directory (a file, a
// symbolic link) is an error.
func MissingDirs(p string) ([]string, error) {
	if err := checkPath(p); err != nil {
		return nil, err
	}
	var missing []string
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		var st unix.Stat_t
		err := unix.Lstat(d, &st)
		if err == nil {
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
			case unix.S_IFLNK:
				return nil, &SymlinkError{Path: d}
			default:
				return nil, fmt.Errorf("%s is a %s, not a directory", d, kindOf(uint32(st.Mode)).Describe())
			}
			break
		}
		if !errors.Is(err, unix.ENOENT) {
			return nil, &fs.PathError{Op: "lstat", Path: d, Err: err}
		}
		missing = append(missing, d)
		if d == "/" {
			break
		}
	}
	for i, j := 0, len(missing)-1; i < j; i, j = i+1, j-1 {
		missing[i], missing[j] = missing[j], missing[i]
	}
	return missing, nil
}

// MkdirParents creates dirs, outermost first, each inside the one
// before (as MissingDirs lists them), mode 0777 less the umask. Each is
// made with mkdirat in its parent opened without following a symbolic
// link, so a link swapped in after the check is never followed; one that
// appeared meanwhile as a directory is fine.
func MkdirParents(dirs []string) error {
	for _, d := range dirs {
		parent, err := openDir(filepath.Dir(d))
		if err != nil {
			return err
		}
		name := filepath.Base(d)
		err = unix.Mkdirat(parent, name, 0o777)
		if errors.Is(err, unix.EEXIST) {
			var st unix.Stat_t
			if serr := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
				err = nil
			}
		}
		unix.Close(parent)
		if err != nil {
			return &fs.PathError{Op: "mkdir", Path: d, Err: err}
		}
	}
	return nil
}
