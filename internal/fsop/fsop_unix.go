//go:build unix

package fsop

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// dir is an open directory reached without following a symbolic link.
type dir struct {
	fd   int
	path string
}

func (d *dir) close() { unix.Close(d.fd) }

// join names an entry of d in error messages.
func (d *dir) join(name string) string { return filepath.Join(d.path, name) }

// openParent opens the directory holding p and returns it with p's last
// component.
func openParent(p string) (*dir, string, error) {
	if err := checkPath(p); err != nil {
		return nil, "", err
	}
	if p == "/" {
		return nil, "", errors.New("fsop: / has no parent directory")
	}
	parent, name := filepath.Dir(p), filepath.Base(p)
	fd, err := openDir(parent)
	if err != nil {
		return nil, "", err
	}
	return &dir{fd: fd, path: parent}, name, nil
}

// walkDir opens dir one component at a time, each with O_NOFOLLOW, so a
// symbolic link anywhere fails the walk. It is the fallback where
// openat2 is missing, and what openDir is everywhere but Linux.
func walkDir(p string) (int, error) {
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: "/", Err: err}
	}
	comps := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if p == "/" {
		comps = nil
	}
	cur := "/"
	for i, c := range comps {
		if c == "" || c == "." || c == ".." {
			unix.Close(fd)
			return -1, fmt.Errorf("fsop: %q is not a clean path", p)
		}
		flags := walkFlags
		if i == len(comps)-1 {
			// The last directory is used for fsync and reading, which
			// an O_PATH descriptor cannot do.
			flags = unix.O_RDONLY
		}
		nfd, err := unix.Openat(fd, c, flags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		next := filepath.Join(cur, c)
		if err != nil {
			var st unix.Stat_t
			isLink := unix.Fstatat(fd, c, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
			unix.Close(fd)
			if isLink {
				return -1, &SymlinkError{Path: next}
			}
			return -1, &fs.PathError{Op: "open", Path: next, Err: err}
		}
		unix.Close(fd)
		fd, cur = nfd, next
	}
	return fd, nil
}

func kindOf(mode uint32) Kind {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return File
	case unix.S_IFDIR:
		return Dir
	case unix.S_IFLNK:
		return Symlink
	case unix.S_IFIFO:
		return FIFO
	case unix.S_IFSOCK:
		return Socket
	case unix.S_IFCHR, unix.S_IFBLK:
		return Device
	}
	return Other
}

func infoOf(st *unix.Stat_t) Info {
	mode := uint32(st.Mode)
	perm := fs.FileMode(mode & 0o777)
	if mode&unix.S_ISUID != 0 {
		perm |= fs.ModeSetuid
	}
	if mode&unix.S_ISGID != 0 {
		perm |= fs.ModeSetgid
	}
	if mode&unix.S_ISVTX != 0 {
		perm |= fs.ModeSticky
	}
	return Info{
		Kind: kindOf(mode), Size: st.Size, Perm: perm,
		UID: int(st.Uid), GID: int(st.Gid),
		dev: uint64(st.Dev), ino: uint64(st.Ino),
		ctime: time.Unix(st.Ctim.Unix()),
	}
}

// statAt is lstat of name in d; the error wraps fs.ErrNotExist when
// there is no such entry.
func statAt(d *dir, name string) (Info, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Info{}, &fs.PathError{Op: "lstat", Path: d.join(name), Err: err}
	}
	return infoOf(&st), nil
}

func fstat(fd int) (Info, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Info{}, err
	}
	return infoOf(&st), nil
}

// Lstat describes the file at p without following a symbolic link
// anywhere on the path.
func Lstat(p string) (Info, error) {
	if p == "/" {
		fd, err := openDir("/")
		if err != nil {
			return Info{}, err
		}
		defer unix.Close(fd)
		return fstat(fd)
	}
	d, name, err := openParent(p)
	if err != nil {
		return Info{}, err
	}
	defer d.close()
	return statAt(d, name)
}

// openRegularAt opens name in d for reading if it is a regular file.
// O_NONBLOCK keeps a named pipe that replaced the file from blocking the
// open; the descriptor is checked before it is used.
func openRegularAt(d *dir, name string) (*os.File, Info, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ELOOP {
			if fi, serr := statAt(d, name); serr == nil && fi.Kind == Symlink {
				return nil, Info{}, &SymlinkError{Path: d.join(name)}
			}
		}
		return nil, Info{}, &fs.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	fi, err := fstat(fd)
	if err != nil {
		unix.Close(fd)
		return nil, Info{}, &fs.PathError{Op: "stat", Path: d.join(name), Err: err}
	}
	if fi.Kind != File {
		unix.Close(fd)
		return nil, fi, notRegular(d.join(name), fi.Kind)
	}
	return os.NewFile(uintptr(fd), d.join(name)), fi, nil
}

func notRegular(p string, k Kind) error {
	if k == Dir {
		return fmt.Errorf("%s is a directory", p)
	}
	return fmt.Errorf("%s is not a regular file (%s)", p, k.Describe())
}

// Open opens the regular file at p for reading.
func Open(p string) (*os.File, Info, error) {
	d, name, err := openParent(p)
	if err != nil {
		return nil, Info{}, err
	}
	defer d.close()
	return openRegularAt(d, name)
}

// Load takes a snapshot of p: whether it exists, what it is, and the
// content of a regular file of at most limit bytes. A missing file is
// not an error (Exists is false); a missing parent directory is.
func Load(p string, limit int64) (*Snapshot, error) {
	d, name, err := openParent(p)
	if err != nil {
		return nil, err
	}
	defer d.close()
	return loadAt(d, name, limit)
}

func loadAt(d *dir, name string, limit int64) (*Snapshot, error) {
	fi, err := statAt(d, name)
	if errors.Is(err, fs.ErrNotExist) {
		return &Snapshot{}, nil
	}
	if err != nil {
		return nil, err
	}
	if fi.Kind != File {
		return &Snapshot{Exists: true, Info: fi}, nil
	}
	f, fi, err := openRegularAt(d, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return &Snapshot{Exists: true, Info: fi, TooLarge: true}, nil
	}
	return &Snapshot{Exists: true, Info: fi, Data: data}, nil
}

// check fails with a *ChangedError when name in d no longer matches s.
func (s *Snapshot) check(d *dir, name string) error {
	p := d.join(name)
	fi, err := statAt(d, name)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	switch {
	case s.Exists && !exists:
		return &ChangedError{Path: p, Why: "it was removed"}
	case !s.Exists && exists:
		return &ChangedError{Path: p, Why: "it was created"}
	case !exists:
		return nil
	}
	if ok, why := sameFile(s.Info, fi); !ok {
		return &ChangedError{Path: p, Why: why}
	}
	if s.Data == nil || fi.Kind != File {
		return nil
	}
	// Identity and ctime catch nearly every change; the content is the
	// proof, and a file small enough to diff is cheap to reread.
	now, err := loadAt(d, name, int64(len(s.Data)))
	if err != nil {
		return err
	}
	if now.TooLarge || !bytes.Equal(now.Data, s.Data) {
		return &ChangedError{Path: p, Why: "its content changed"}
	}
	return nil
}

// WriteOptions tune WriteFile.
type WriteOptions struct {
	// Expect, when set, is the file as a person saw it; the write fails
	// with a *ChangedError if the file is no longer so.
	Expect *Snapshot
	// Perm is the mode of a new file before the umask; 0 means 0644.
	Perm fs.FileMode
}

// writeHook, when set by a test, is called with the temporary file just
// before the rename.
var writeHook func(tmp string)

// WriteFile replaces or creates the regular file at p with data,
// atomically: readers see the old content or the new in full, and on
// any error the old file is left untouched and no temporary file stays
// behind. An existing file keeps its permissions and, where the process
// may set it, its owner. It reports whether the file was created.
func WriteFile(p string, data []byte, o WriteOptions) (created bool, err error) {
	d, name, err := openParent(p)
	if err != nil {
		return false, err
	}
	defer d.close()

	old, err := statAt(d, name)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, err
	case exists && old.Kind == Symlink:
		return false, &SymlinkError{Path: p}
	case exists && old.Kind != File:
		return false, notRegular(p, old.Kind)
	}
	perm := o.Perm
	if perm == 0 {
		perm = 0o644
	}
	if exists {
		perm = old.Perm
	}

	tmp, fd, err := createTemp(d, name, perm)
	if err != nil {
		return false, err
	}
	committed := false
	defer func() {
		if fd >= 0 {
			unix.Close(fd)
		}
		if !committed {
			unix.Unlinkat(d.fd, tmp, 0)
		}
	}()
	f := os.NewFile(uintptr(fd), d.join(tmp))
	fd = -1 // f owns it now
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return false, describeWriteError(p, err)
	}
	if exists {
		// The owner first: chown clears setuid and setgid, which the
		// chmod below then restores. Only root may give a file away, so
		// for anyone else this is a no-op or fails harmlessly.
		if old.UID != os.Geteuid() || old.GID != os.Getegid() {
			f.Chown(old.UID, old.GID)
		}
		if err := unix.Fchmod(int(f.Fd()), uint32(toUnixMode(old.Perm))); err != nil {
			return false, fmt.Errorf("%s: keep mode: %w", p, err)
		}
	}
	if err := f.Sync(); err != nil {
		return false, describeWriteError(p, err)
	}
	if err := f.Close(); err != nil {
		return false, describeWriteError(p, err)
	}
	if o.Expect != nil {
		if err := o.Expect.check(d, name); err != nil {
			return false, err
		}
	}
	if writeHook != nil {
		writeHook(d.join(tmp))
	}
	// renameat replaces whatever entry has the name now without
	// following it: if a link was swapped in since the check above, the
	// link is replaced, not the file it points to.
	if err := unix.Renameat(d.fd, tmp, d.fd, name); err != nil {
		return false, &fs.PathError{Op: "rename", Path: p, Err: err}
	}
	committed = true
	if err := unix.Fsync(d.fd); err != nil {
		return !exists, fmt.Errorf("%s: written, but syncing its directory failed: %w", p, err)
	}
	return !exists, nil
}

func toUnixMode(p fs.FileMode) uint32 {
	m := uint32(p.Perm())
	if p&fs.ModeSetuid != 0 {
		m |= unix.S_ISUID
	}
	if p&fs.ModeSetgid != 0 {
		m |= unix.S_ISGID
	}
	if p&fs.ModeSticky != 0 {
		m |= unix.S_ISVTX
	}
	return m
}

// createTemp makes a new file beside name in d. The name starts with a
// dot so that directory listings and globs pass over it.
func createTemp(d *dir, name string, perm fs.FileMode) (string, int, error) {
	for range 10 {
		var r [6]byte
		rand.Read(r[:])
		tmp := "." + name + ".guardrun-" + hex.EncodeToString(r[:])
		if len(tmp) > 255 {
			tmp = ".guardrun-" + hex.EncodeToString(r[:])
		}
		fd, err := unix.Openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return "", -1, describeWriteError(d.join(name), &fs.PathError{Op: "create", Path: d.join(tmp), Err: err})
		}
		return tmp, fd, nil
	}
	return "", -1, fmt.Errorf("%s: could not create a temporary file", d.join(name))
}

// describeWriteError turns the errnos of a failed write into sentences.
func describeWriteError(p string, err error) error {
	switch {
	case errors.Is(err, unix.ENOSPC):
		return fmt.Errorf("%s: no space left on the device; the file was not changed", p)
	case errors.Is(err, unix.EDQUOT):
		return fmt.Errorf("%s: disk quota exceeded; the file was not changed", p)
	case errors.Is(err, unix.EFBIG):
		return fmt.Errorf("%s: file too large for this process's limit (ulimit -f) or the file system; the file was not changed", p)
	case errors.Is(err, unix.EROFS):
		return fmt.Errorf("%s: the file system is read-only", p)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fmt.Errorf("%s: permission denied in %s: %w", p, filepath.Dir(p), err)
	}
	return fmt.Errorf("%s: %w; the file was not changed", p, err)
}

// Remove removes the regular file or empty directory at p and says what
// it was. expect, when set, is the file as a person saw it: a file that
// was replaced since is not removed (*ChangedError).
func Remove(p string, expect *Info) (Info, error) {
	d, name, err := openParent(p)
	if err != nil {
		return Info{}, err
	}
	defer d.close()
	fi, err := statAt(d, name)
	if err != nil {
		return Info{}, err
	}
	if expect != nil {
		if ok, why := sameFile(*expect, fi); !ok {
			return Info{}, &ChangedError{Path: p, Why: why}
		}
	}
	var flags int
	switch fi.Kind {
	case File:
	case Dir:
		flags = unix.AT_REMOVEDIR
	case Symlink:
		return Info{}, &SymlinkError{Path: p}
	default:
		return Info{}, fmt.Errorf("%s is a %s; fs rm removes files and empty directories only", p, fi.Kind.Describe())
	}
	// If the entry was swapped between the stat and here, unlinkat
	// still removes only the entry itself: a link, never its target; a
	// directory in place of a file fails with EISDIR.
	if err := unix.Unlinkat(d.fd, name, flags); err != nil {
		if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
			return Info{}, fmt.Errorf("%s: %w", p, ErrNotEmpty)
		}
		return Info{}, &fs.PathError{Op: "remove", Path: p, Err: err}
	}
	if err := unix.Fsync(d.fd); err != nil {
		return fi, fmt.Errorf("%s: removed, but syncing its directory failed: %w", p, err)
	}
	return fi, nil
}

// List lists the directory at p, sorted by name; for anything else it
// returns the one entry for p itself, as ls does. Symbolic links inside
// the directory are described, never followed.
func List(p string) ([]Entry, Info, error) {
	var fd int
	var fi Info
	if p == "/" {
		var err error
		if fd, err = openDir("/"); err != nil {
			return nil, Info{}, err
		}
		if fi, err = fstat(fd); err != nil {
			unix.Close(fd)
			return nil, Info{}, err
		}
	} else {
		d, name, err := openParent(p)
		if err != nil {
			return nil, Info{}, err
		}
		defer d.close()
		fi, err = statAt(d, name)
		if err != nil {
			return nil, Info{}, err
		}
		switch fi.Kind {
		case Dir:
		case Symlink:
			return nil, Info{}, &SymlinkError{Path: p}
		default:
			return []Entry{{Name: name, Kind: fi.Kind, Size: fi.Size}}, fi, nil
		}
		fd, err = unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			if err == unix.ELOOP || err == unix.ENOTDIR {
				if now, serr := statAt(d, name); serr == nil && now.Kind == Symlink {
					return nil, Info{}, &SymlinkError{Path: p}
				}
			}
			return nil, Info{}, &fs.PathError{Op: "open", Path: p, Err: err}
		}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, Info{}, &fs.PathError{Op: "readdir", Path: p, Err: err}
	}
	slices.Sort(names)
	d := &dir{fd: int(f.Fd()), path: p}
	entries := make([]Entry, 0, len(names))
	for _, n := range names {
		efi, err := statAt(d, n)
		if err != nil {
			// Removed while listing: it is simply not there.
			continue
		}
		e := Entry{Name: n, Kind: efi.Kind, Size: efi.Size}
		if efi.Kind == Symlink {
			e.Target = readlinkAt(d.fd, n)
		}
		entries = append(entries, e)
	}
	return entries, fi, nil
}

func readlinkAt(fd int, name string) string {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(fd, name, buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}
