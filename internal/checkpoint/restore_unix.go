//go:build linux || darwin

package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// restore turns a zone's files into the target of changes (as
// ZonePlan.Changes lists them). Every path is reached from the zone's
// root one directory at a time without following a symbolic link, so
// nothing outside the zone is touched whatever links a command left
// there; files are written to a temporary name and renamed into place
// with their permissions. It goes on past a path it cannot restore and
// names each in its error.
func restore(root, target string, changes []Change, obj *objects) error {
	rfd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", root, err)
	}
	defer unix.Close(rfd)
	t := &zoneTree{root: rfd, rootPath: root}
	var failed []string
	fail := func(p string, err error) { failed = append(failed, fmt.Sprintf("%s (%v)", p, err)) }

	// Deletions first, deepest first, then the directories they leave
	// empty that the target has no files in.
	var gone []string
	for _, c := range changes {
		if c.From.Exists() && (!c.To.Exists() || c.From.Symlink() != c.To.Symlink()) {
			gone = append(gone, c.Path)
		}
	}
	slices.SortFunc(gone, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	dirs := map[string]bool{}
	for _, p := range gone {
		if err := t.remove(p); err != nil {
			fail(p, err)
		}
		for _, d := range parents(p) {
			dirs[d] = true
		}
	}
	var empty []string
	for d := range dirs {
		if ok, err := obj.hasDir(target, d); err == nil && !ok {
			empty = append(empty, d)
		}
	}
	slices.SortFunc(empty, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range empty {
		t.rmdir(d) // only if empty: what guardrun does not record stays
	}

	// Then every file of the target that differs, parents first.
	for _, c := range changes {
		if !c.To.Exists() {
			continue
		}
		if err := t.write(c.Path, c.To, obj); err != nil {
			fail(c.Path, err)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s: %d %s not restored: %s", root, len(failed), plural(len(failed), "file was", "files were"), strings.Join(failed, "; "))
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// zoneTree reaches paths below an open zone root.
type zoneTree struct {
	root     int
	rootPath string
}

// errInTheWay is a path component guardrun did not record (an ignored
// file, a link) standing where the target has a directory.
var errInTheWay = errors.New("something guardrun does not record is in the way")

// dir opens the directory at a slash-separated path below the root,
// creating missing ones when create is set.
func (t *zoneTree) dir(p string, create bool) (int, error) {
	fd, err := unix.Dup(t.root)
	if err != nil {
		return -1, err
	}
	if p == "" || p == "." {
		return fd, nil
	}
	for _, name := range strings.Split(p, "/") {
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, name, 0o777); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		unix.Close(fd)
		if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			return -1, fmt.Errorf("%s: %w", name, errInTheWay)
		}
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

func (t *zoneTree) remove(p string) error {
	dir, name := path.Split(p)
	fd, err := t.dir(strings.TrimSuffix(dir, "/"), false)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		return nil
	} else if err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return errors.New("a directory now: left as it is")
	}
	err = unix.Unlinkat(fd, name, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

func (t *zoneTree) rmdir(p string) {
	dir, name := path.Split(p)
	fd, err := t.dir(strings.TrimSuffix(dir, "/"), false)
	if err != nil {
		return
	}
	unix.Unlinkat(fd, name, unix.AT_REMOVEDIR)
	unix.Close(fd)
}

// write puts the entry's content at p: a file with its permissions, or
// a symbolic link.
func (t *zoneTree) write(p string, e Entry, obj *objects) error {
	dir, name := path.Split(p)
	fd, err := t.dir(strings.TrimSuffix(dir, "/"), true)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := ".guardrun-undo-" + hex.EncodeToString(rnd[:])
	r, typ, err := obj.open(e.OID)
	if err != nil {
		return err
	}
	defer r.Close()
	if typ != "blob" {
		return &objectError{e.OID, fmt.Errorf("%w: a %s, not a blob", errCorrupt, typ)}
	}
	if e.Symlink() {
		if r.left > 64<<10 {
			return &objectError{e.OID, errors.New("a symbolic link's target longer than 64 KiB")}
		}
		target, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if err := unix.Symlinkat(string(target), fd, tmp); err != nil {
			return err
		}
	} else {
		f, err := unix.Openat(fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return err
		}
		file := os.NewFile(uintptr(f), tmp)
		_, cerr := io.Copy(file, r)
		if cerr == nil {
			cerr = file.Chmod(e.Perm)
		}
		if err := errors.Join(cerr, file.Close()); err != nil {
			unix.Unlinkat(fd, tmp, 0)
			return err
		}
	}
	if err := unix.Renameat(fd, tmp, fd, name); err != nil {
		unix.Unlinkat(fd, tmp, 0)
		if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("a directory with files guardrun does not record is in the way")
		}
		return err
	}
	return nil
}
