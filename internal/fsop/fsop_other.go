//go:build !unix

package fsop

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

var errUnsupported = fmt.Errorf("guardrun fs is not supported on %s: %w", runtime.GOOS, errors.ErrUnsupported)

// WriteOptions tune WriteFile.
type WriteOptions struct {
	Expect *Snapshot
	Perm   os.FileMode
}

func Lstat(p string) (Info, error)                                  { return Info{}, errUnsupported }
func Open(p string) (*os.File, Info, error)                         { return nil, Info{}, errUnsupported }
func Load(p string, limit int64) (*Snapshot, error)                 { return nil, errUnsupported }
func WriteFile(p string, data []byte, o WriteOptions) (bool, error) { return false, errUnsupported }
func Remove(p string, expect *Info) (Info, error)                   { return Info{}, errUnsupported }
func List(p string) ([]Entry, Info, error)                          { return nil, Info{}, errUnsupported }

func MissingDirs(p string) ([]string, error) { return nil, errUnsupported }
func MkdirParents(dirs []string) error       { return errUnsupported }
