package fsop

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"
)

// Kind is what a directory entry is.
type Kind string

const (
	File    Kind = "file"
	Dir     Kind = "dir"
	Symlink Kind = "symlink"
	FIFO    Kind = "fifo"
	Socket  Kind = "socket"
	Device  Kind = "device"
	Other   Kind = "other"
)

// Describe is the kind as a person reads it in a prompt.
func (k Kind) Describe() string {
	switch k {
	case File:
		return "regular file"
	case Dir:
		return "directory"
	case Symlink:
		return "symbolic link"
	case FIFO:
		return "named pipe"
	case Socket:
		return "socket"
	case Device:
		return "device"
	}
	return "special file"
}

// Info describes a file as lstat sees it.
type Info struct {
	Kind Kind
	Size int64
	// Perm is the permission bits, with setuid, setgid and sticky.
	Perm fs.FileMode
	UID  int
	GID  int
	// identity: the same file, unchanged, has the same dev, ino and ctime.
	dev   uint64
	ino   uint64
	ctime time.Time
}

// Entry is one name in a directory listing.
type Entry struct {
	Name string `json:"name"`
	Kind Kind   `json:"type"`
	Size int64  `json:"size"`
	// Target is where a symbolic link points.
	Target string `json:"target,omitempty"`
}

// Snapshot is a file as it was when it was shown to a person: whether it
// existed, what it was, and its content when it was small enough to
// load.
type Snapshot struct {
	Exists bool
	Info   Info
	// Data is the content of a regular file, nil when the file is
	// larger than the limit it was loaded with (TooLarge) or not a
	// regular file.
	Data     []byte
	TooLarge bool
}

// SymlinkError reports a symbolic link on a path that policy resolved
// without one: something replaced a directory or the file with a link
// after the check. The operation is refused; nothing was touched.
type SymlinkError struct {
	Path string
}

func (e *SymlinkError) Error() string {
	return fmt.Sprintf("%s: a symbolic link appeared on the path after it was checked; refusing to follow it", e.Path)
}

// ChangedError reports a file that no longer is what was shown for
// approval. Nothing was written.
type ChangedError struct {
	Path string
	// Why says what changed.
	Why string
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s changed after it was shown for approval (%s); nothing was written, run the operation again", e.Path, e.Why)
}

// ErrNotEmpty is returned by Remove for a directory that is not empty.
var ErrNotEmpty = errors.New("directory not empty (fs rm removes files and empty directories only)")

// errNotAbs guards the contract: callers pass resolved, absolute, clean
// paths.
func checkPath(p string) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return fmt.Errorf("fsop: %q is not an absolute clean path", p)
	}
	return nil
}

// sameFile reports whether a and b are the same unchanged file.
func sameFile(a, b Info) (bool, string) {
	switch {
	case a.Kind != b.Kind:
		return false, fmt.Sprintf("was a %s, now a %s", a.Kind.Describe(), b.Kind.Describe())
	case a.dev != b.dev || a.ino != b.ino:
		return false, "it was replaced"
	case a.Size != b.Size:
		return false, fmt.Sprintf("size %d, now %d", a.Size, b.Size)
	case !a.ctime.Equal(b.ctime):
		return false, "it was modified"
	}
	return true, ""
}
