package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Options tune Replace.
type Options struct {
	// Perm is the file's mode; 0 means 0600.
	Perm fs.FileMode
	// Durable syncs the file before the rename and its directory after,
	// so the new content survives a power cut (what a person granted or
	// changed). Without it, readers still see the old content or the new
	// in full, but after a crash the file can hold the old content, or
	// the new one cut short or empty, depending on the file system.
	Durable bool
}

// Replace puts data at path: written to a temporary file beside it
// (".NAME.tmp-*", opened with O_EXCL), given its mode and renamed over
// path. On an error the temporary file is removed and path is as it was.
func Replace(path string, data []byte, o Options) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	perm := o.Perm
	if perm == 0 {
		perm = 0o600
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(perm)
	}
	if werr == nil && o.Durable {
		werr = f.Sync()
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if o.Durable {
		if d, err := os.Open(dir); err == nil {
			// Some file systems cannot sync a directory; the rename is
			// done either way, only its durability is weaker.
			d.Sync()
			d.Close()
		}
	}
	return nil
}
