package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// NotRegularError is returned for a path that names something other than
// a regular file.
type NotRegularError struct {
	Path string
	Type fs.FileMode
	FS   string // for a file of the kernel's interfaces: its file system (proc, sysfs...)
}

func (e *NotRegularError) Error() string {
	if e.FS != "" {
		return fmt.Sprintf("%s is not a regular file (a file of the kernel's %s)", e.Path, e.FS)
	}
	return fmt.Sprintf("%s is not a regular file (%s)", e.Path, typeName(e.Type))
}

func typeName(t fs.FileMode) string {
	switch t & fs.ModeType {
	case fs.ModeNamedPipe:
		return "a named pipe"
	case fs.ModeDevice | fs.ModeCharDevice:
		return "a character device"
	case fs.ModeDevice:
		return "a block device"
	case fs.ModeSocket:
		return "a socket"
	case fs.ModeDir:
		return "a directory"
	case fs.ModeSymlink:
		return "a symbolic link"
	}
	return t.Type().String()
}

// TooLargeError is returned by ReadFile for a file larger than its limit.
type TooLargeError struct {
	Path  string
	Size  int64 // -1 when the file grew past the limit while it was read
	Limit int64
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s grew past %d bytes while it was read", e.Path, e.Limit)
	}
	return fmt.Sprintf("%s is %d bytes, more than %d", e.Path, e.Size, e.Limit)
}

// Open opens path for reading when it names a regular file (following
// symbolic links), and returns it with its FileInfo. Anything else is a
// *NotRegularError, and was never opened for reading.
func Open(path string) (*os.File, fs.FileInfo, error) {
	return openFile(path, false)
}

// OpenNoFollow is Open for a path whose last component must not be a
// symbolic link: one is a *NotRegularError too. A file a command may
// have put in place, and that guardrun reads before it knows whether to
// trust it (a project file), is read only as what the command could
// write itself: a link could send guardrun, unsandboxed, to a file the
// command cannot read (~/.aws/credentials), whose first bytes would come
// back quoted in the parse error the agent is shown.
func OpenNoFollow(path string) (*os.File, fs.FileInfo, error) {
	return openFile(path, true)
}

func openFile(path string, nofollow bool) (*os.File, fs.FileInfo, error) {
	f, err := open(path, nofollow)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Type: fi.Mode().Type()}
	}
	return f, fi, nil
}

// ReadFile reads path when it names a regular file of at most max bytes.
// A larger file is a *TooLargeError, refused before it is read when its
// size says so, and after max+1 bytes when it grows while being read.
func ReadFile(path string, max int64) ([]byte, error) {
	f, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, fi, max)
}

// ReadOpened is ReadFile of a file already open, whose FileInfo is fi:
// one of Open's, or any other (a pipe, read to max+1 bytes to tell).
func ReadOpened(f *os.File, fi fs.FileInfo, max int64) ([]byte, error) {
	return read(f, fi, max)
}

func read(f *os.File, fi fs.FileInfo, max int64) ([]byte, error) {
	if fi.Mode().IsRegular() && fi.Size() > max {
		return nil, &TooLargeError{f.Name(), fi.Size(), max}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{f.Name(), -1, max}
	}
	return data, nil
}

// IsNotRegular reports whether err says a path was not a regular file.
func IsNotRegular(err error) bool {
	var nr *NotRegularError
	return errors.As(err, &nr)
}
