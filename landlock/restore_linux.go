package landlock

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
)

// node is one file of a snapshot: what it is, its mode and owner, and
// its content (regular file) or target (symbolic link).
type node struct {
	kind     uint32 // unix.S_IFREG, S_IFDIR, S_IFLNK
	mode     uint32 // permission bits
	uid, gid uint32
	data     []byte
	link     string
	kids     map[string]*node
}

// snap is a watched path as it was before the command.
type snap struct {
	w    Watch
	node *node // nil: it did not exist
	// notDir: a directory on the way was already not a directory (a
	// gitfile named .git): it is left alone after the command.
	notDir bool
}

// openDirs opens, from w.Root, each directory on the way to w.Path
// without following a link, and returns the last (the parent of the
// watched name) and the name. A component that is missing is reported as
// ENOENT; one that is not a directory (a link, a file) as ENOTDIR with
// its path in bad.
func openDirs(w Watch) (fd int, name, bad string, err error) {
	rel, err := filepath.Rel(w.Root, w.Path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return -1, "", "", fmt.Errorf("%s is not inside %s", w.Path, w.Root)
	}
	fd, err = unix.Open(w.Root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", "", err
	}
	parts := strings.Split(rel, "/")
	at := w.Root
	for _, c := range parts[:len(parts)-1] {
		at = filepath.Join(at, c)
		nfd, err := unix.Openat(fd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ELOOP) {
				err = unix.ENOTDIR
			}
			// Report the component and the directory holding it.
			return fd, c, at, err
		}
		unix.Close(fd)
		fd = nfd
	}
	return fd, parts[len(parts)-1], "", nil
}

// readNode reads name in dir without following links, within the
// snapshot bounds (entries and bytes count down).
func readNode(dir int, name string, entries *int, bytesLeft *int64) (*node, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, err
	}
	n := &node{kind: st.Mode & unix.S_IFMT, mode: st.Mode & 0o7777, uid: st.Uid, gid: st.Gid}
	switch n.kind {
	case unix.S_IFREG:
		if st.Nlink > 1 {
			n.link = "\x00hard-linked" // never equal to a snapshot's
		}
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		f := os.NewFile(uintptr(fd), name)
		defer f.Close()
		// What was opened is what was looked at: swapped in since, a
		// named pipe kept open for writing by another process would
		// make the read wait for as long as it likes (a snapshot is
		// taken under the mutex every guardrun of the user needs).
		var ost unix.Stat_t
		if err := unix.Fstat(fd, &ost); err != nil {
			return nil, err
		}
		if ost.Mode&unix.S_IFMT != unix.S_IFREG || ost.Dev != st.Dev || ost.Ino != st.Ino {
			return nil, errors.New("replaced while it was read")
		}
		data, err := io.ReadAll(io.LimitReader(f, *bytesLeft+1))
		if err != nil {
			return nil, err
		}
		if *bytesLeft -= int64(len(data)); *bytesLeft < 0 {
			return nil, errTooManyBytes
		}
		n.data = data
	case unix.S_IFLNK:
		buf := make([]byte, 4096)
		k, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return nil, err
		}
		n.link = string(buf[:k])
		// A target counts as a file's bytes do: a directory of
		// MaxWatchEntries links of 4 KiB each holds a MiB that no
		// size shows.
		if *bytesLeft -= int64(k); *bytesLeft < 0 {
			return nil, errTooManyBytes
		}
	case unix.S_IFDIR:
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		f := os.NewFile(uintptr(fd), name)
		defer f.Close()
		// Listed in batches, so that a directory grown to millions of
		// entries is refused at the bound, not listed whole first.
		var names []string
		for {
			batch, err := f.Readdirnames(256)
			names = append(names, batch...)
			if errors.Is(err, io.EOF) || err == nil && len(batch) == 0 {
				break
			}
			if err != nil {
				return nil, err
			}
			if len(names) > *entries {
				return nil, errTooManyEntries
			}
		}
		n.kids = map[string]*node{}
		for _, k := range names {
			if *entries--; *entries < 0 {
				return nil, errTooManyEntries
			}
			// So does a name.
			if *bytesLeft -= int64(len(k)); *bytesLeft < 0 {
				return nil, errTooManyBytes
			}
			c, err := readNode(fd, k, entries, bytesLeft)
			if errors.Is(err, unix.ENOENT) {
				// Removed since the listing (another process's
				// temporary file): not part of the tree now. (A
				// deeper one's error is not ENOENT: see below.)
				continue
			}
			if errors.Is(err, errTooManyBytes) || errors.Is(err, errTooManyEntries) {
				return nil, err // the tree's bound, not the name's
			}
			if err != nil {
				// %v: an error below the name is not the name's own;
				// as ENOENT or ENOTDIR it would make the callers take
				// the name as missing.
				return nil, fmt.Errorf("%s: %v", k, err)
			}
			n.kids[k] = c
		}
	default:
		return nil, fmt.Errorf("not a file, directory or link")
	}
	return n, nil
}

// placeholder reports whether n is a bwrap command's mount point for a
// missing name (isPlaceholder): an empty directory of this user's,
// read-only and sticky.
func (n *node) placeholder() bool {
	return len(n.kids) == 0 && sandbox.PlaceholderMode(n.kind|n.mode, n.uid)
}

// heldPlaceholder reports whether name in dir is locked by a running
// bwrap command, which holds a shared flock on each placeholder it masks
// for the sandbox's lifetime (bwrap's holdMasks). Exclusive and
// non-blocking, released at once: refused only while some run holds it.
//
// A bwrap run makes its placeholder an instant before it locks it: one
// seen unheld is looked at once more a moment later.
func heldPlaceholder(dir int, name string) bool {
	if lockedPlaceholder(dir, name) {
		return true
	}
	time.Sleep(20 * time.Millisecond)
	return lockedPlaceholder(dir, name)
}

func lockedPlaceholder(dir int, name string) bool {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return errors.Is(err, unix.ENOENT) // removed since by its last holder
	}
	defer unix.Close(fd)
	for {
		err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			break
		}
	}
	return errors.Is(err, unix.EWOULDBLOCK)
}

func (n *node) equal(o *node) bool {
	if n == nil || o == nil {
		return n == o
	}
	if n.kind != o.kind || n.mode != o.mode || n.link != o.link || !bytes.Equal(n.data, o.data) || len(n.kids) != len(o.kids) {
		return false
	}
	for k, c := range n.kids {
		if !c.equal(o.kids[k]) {
			return false
		}
	}
	return true
}

// errTooManyBytes: readNode's byte budget is spent. errTooManyEntries:
// its entries are.
var (
	errTooManyBytes   = errors.New("too many bytes")
	errTooManyEntries = fmt.Errorf("more than %d entries", MaxWatchEntries)
)

// take snapshots every watched path. A path that cannot be read whole
// within the bounds is an error naming it: the command does not run.
func take(ws []Watch) ([]snap, error) {
	total := int64(MaxWatchTotal)
	return takeWithin(ws, &total)
}

// takeWithin is take with what is left of the bytes all the command's
// snapshots may hold together (MaxWatchTotal), spent as they are read:
// a command whose protected paths grew past it since its ruleset was
// built is refused at the bound, not after each path was read whole.
func takeWithin(ws []Watch, total *int64) ([]snap, error) {
	var out []snap
	for _, w := range ws {
		// A path inside another watched directory is covered by it.
		if slices.ContainsFunc(ws, func(o Watch) bool { return o.Path != w.Path && strings.HasPrefix(w.Path, o.Path+"/") }) {
			continue
		}
		var s snap
		var err error
		// Another process changing the tree while it is read (an entry
		// replaced by one of another kind) fails a read; a few more
		// tries before the command is refused for it.
		for try := 0; try < 3; try++ {
			s, err = takeOne(w, total)
			if err == nil || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
				break
			}
			if errors.Is(err, errTooManyBytes) || errors.Is(err, errTooManyEntries) {
				break // read again, it would be as large: not a change seen mid-read
			}
		}
		switch {
		case err == nil:
			if s.node.placeholder() {
				s.node = nil // what it stands for: see lstatHost
			}
		case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
			s.node = nil
		default:
			return nil, fmt.Errorf("landlock: protected %s cannot be kept (it is restored after the command, and cannot be read whole: %v); use the bwrap backend", w.Path, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// held are the snapshots the commands this process runs are restored
// to, by watched path, how many running commands hold each, and the
// shared lock on the path's file in the share directory that this
// process holds for them (share_linux.go): see takeHeld.
var (
	heldMu sync.Mutex
	held   = map[string]*heldSnap{}
)

// shareOff takes snapshots as before they were shared between
// processes (take alone): only BenchmarkStartWatched sets it, to measure
// what sharing costs.
var shareOff bool

type heldSnap struct {
	s    snap
	n    int
	lock *shareHold
}

// takeHeld is take for a command that may run while others run in the
// same tree, of this process (guardrun serve, make -j through it) or of
// other guardrun processes (make -j SHELL=guardrun): a path that a
// running command watches is not read again but given that command's
// snapshot. Read now, it could hold the running command's change to
// it, which this command's restore would put back after the running
// one's restore removed it. A command of this process is looked for
// first; the other processes' through the share directory dir
// (takeShared; "" for none: a command that watches a path no command of
// this process holds is refused). release, called once the command's
// restore is done, lets the path be read again when no command holds
// it.
func takeHeld(dir string, ws []Watch) (snaps []snap, release func(), err error) {
	heldMu.Lock()
	defer heldMu.Unlock()
	var fresh []Watch
	for _, w := range ws {
		// As take: a path inside another watched directory is covered
		// by it.
		if slices.ContainsFunc(ws, func(o Watch) bool { return o.Path != w.Path && strings.HasPrefix(w.Path, o.Path+"/") }) {
			continue
		}
		if h, ok := held[w.Path]; ok {
			s := h.s
			s.w = w
			snaps = append(snaps, s)
			continue
		}
		if !slices.ContainsFunc(fresh, func(o Watch) bool { return o.Path == w.Path }) {
			fresh = append(fresh, w)
		}
	}
	if len(fresh) > 0 {
		var shared []snap
		var locks []*shareHold
		if shareOff {
			shared, err = take(fresh)
			locks = make([]*shareHold, len(shared))
		} else {
			shared, locks, err = takeShared(dir, fresh)
		}
		if err != nil {
			return nil, nil, err
		}
		// The paths were sized against MaxWatchTotal when the ruleset
		// was built; a missing path or a link then (not sized), or a
		// tree grown since, can hold more now: refused, as a path
		// beyond its own bounds is.
		var total int64
		for _, s := range shared {
			total += s.node.bytes()
		}
		if total > MaxWatchTotal {
			for _, l := range locks {
				if l != nil {
					releaseShared(l)
				}
			}
			return nil, nil, fmt.Errorf("landlock: the protected paths hold %d bytes together now, more than %d; use the bwrap backend", total, MaxWatchTotal)
		}
		for i, s := range shared {
			held[s.w.Path] = &heldSnap{s: s, lock: locks[i]}
		}
		snaps = append(snaps, shared...)
	}
	for _, s := range snaps {
		held[s.w.Path].n++
	}
	var once sync.Once
	return snaps, func() {
		once.Do(func() {
			heldMu.Lock()
			defer heldMu.Unlock()
			for _, s := range snaps {
				if h := held[s.w.Path]; h != nil {
					if h.n--; h.n == 0 {
						delete(held, s.w.Path)
						if h.lock != nil {
							releaseShared(h.lock)
						}
					}
				}
			}
		})
	}, nil
}

// bytes is what the tree at n holds: its files' bytes, its links'
// targets and its names, as readNode counts them.
func (n *node) bytes() int64 {
	if n == nil {
		return 0
	}
	size := int64(len(n.data))
	if n.kind == unix.S_IFLNK {
		size += int64(len(n.link))
	}
	for k, c := range n.kids {
		size += int64(len(k)) + c.bytes()
	}
	return size
}

// bytesError is errTooManyBytes said for the path it stopped.
type bytesError string

func (e bytesError) Error() string      { return string(e) }
func (bytesError) Is(target error) bool { return target == errTooManyBytes }

// takeOne reads the watched path w, within MaxWatchBytes and what is
// left of total, which it then spends.
func takeOne(w Watch, total *int64) (snap, error) {
	s := snap{w: w}
	fd, name, bad, err := openDirs(w)
	s.notDir = bad != "" && errors.Is(err, unix.ENOTDIR)
	if err == nil {
		entries, left := MaxWatchEntries, min(int64(MaxWatchBytes), *total)
		s.node, err = readNode(fd, name, &entries, &left)
		switch {
		case errors.Is(err, errTooManyBytes) && *total < MaxWatchBytes:
			err = bytesError(fmt.Sprintf("the protected paths hold more than %d bytes together", MaxWatchTotal))
		case errors.Is(err, errTooManyBytes):
			err = bytesError(fmt.Sprintf("more than %d bytes", MaxWatchBytes))
		case err == nil:
			*total -= s.node.bytes()
		}
	}
	if fd >= 0 {
		unix.Close(fd)
	}
	return s, err
}

// quarantineName is where something that must not stay at name is moved.
func quarantineName(name string, now time.Time, i int) string {
	q := name + ".guardrun-quarantine-" + now.UTC().Format("20060102T150405Z")
	if i > 0 {
		q += fmt.Sprintf("-%d", i)
	}
	return q
}

// moveAside renames name in dir to a fresh quarantine name, never
// replacing anything, and returns that name.
func moveAside(dir int, name string, now time.Time) (string, error) {
	return moveTo(dir, name, name, now)
}

// moveTo renames from in dir to a fresh quarantine name for name. The
// first 100 names are predictable, so the command may have taken them
// all beforehand: then a random suffix, which it cannot foresee.
func moveTo(dir int, from, name string, now time.Time) (string, error) {
	for i := 0; i < 200; i++ {
		q := quarantineName(name, now, i)
		if i >= 100 {
			var b [8]byte
			if _, err := rand.Read(b[:]); err != nil {
				return "", err
			}
			q = quarantineName(name, now, 0) + "-" + hex.EncodeToString(b[:])
		}
		err := unix.Renameat2(dir, from, dir, q, unix.RENAME_NOREPLACE)
		if err == nil {
			return q, nil
		}
		if !errors.Is(err, unix.EEXIST) {
			return "", err
		}
	}
	return "", errors.New("no free quarantine name")
}

// build makes n at name in dir (which must not exist).
func build(dir int, name string, n *node) error {
	switch n.kind {
	case unix.S_IFLNK:
		return unix.Symlinkat(n.link, dir, name)
	case unix.S_IFREG:
		fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return err
		}
		f := os.NewFile(uintptr(fd), name)
		_, werr := f.Write(n.data)
		_ = unix.Fchown(fd, int(n.uid), int(n.gid))
		cerr := unix.Fchmod(fd, n.mode)
		if err := f.Close(); werr == nil && cerr == nil {
			werr = err
		} else if werr == nil {
			werr = cerr
		}
		return werr
	case unix.S_IFDIR:
		if err := unix.Mkdirat(dir, name, 0o700); err != nil {
			return err
		}
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		for k, c := range n.kids {
			if err := build(fd, k, c); err != nil {
				return err
			}
		}
		_ = unix.Fchown(fd, int(n.uid), int(n.gid))
		return unix.Fchmod(fd, n.mode)
	}
	return errors.New("cannot rebuild this kind of file")
}

// restore compares every snapshot with what is there now and puts back
// what changed: a changed, replaced, removed or hard-linked path gets its
// snapshot back (the changed version is moved aside, never deleted); a
// path that did not exist and does now is moved aside. Nothing is
// followed through a symbolic link. It returns one line per path for
// people.
func restore(snaps []snap, now time.Time) []string {
	var out []string
	for _, s := range snaps {
		if line := restoreOne(s, now); line != "" {
			out = append(out, line)
		}
	}
	return out
}

func restoreOne(s snap, now time.Time) string {
	defer unlock(s.w)()
	fd, name, bad, err := openDirs(s.w)
	if fd >= 0 {
		defer unix.Close(fd)
	}
	if err != nil {
		switch {
		case errors.Is(err, unix.ENOTDIR) && bad != "" && s.notDir:
			return "" // as it was before the command
		case errors.Is(err, unix.ENOTDIR) && bad != "":
			// A directory on the way was replaced by a link or a file:
			// nothing at the protected path can be trusted through it.
			q, merr := moveAside(fd, name, now)
			if merr != nil {
				return fmt.Sprintf("guardrun: protected %s: %s is no longer a directory and could not be moved aside: %v", s.w.Path, bad, merr)
			}
			return fmt.Sprintf("guardrun: protected %s: %s was replaced by the command; moved aside to %s", s.w.Path, bad, filepath.Join(filepath.Dir(bad), q))
		case errors.Is(err, unix.ENOENT):
			return "" // the directory holding it is gone (moved away whole): nothing is at the name
		}
		return fmt.Sprintf("guardrun: protected %s: could not check it after the command: %v", s.w.Path, err)
	}
	entries, left := MaxWatchEntries*4, int64(MaxWatchBytes)*4
	cur, cerr := readNode(fd, name, &entries, &left)
	exists := cerr == nil || !errors.Is(cerr, unix.ENOENT)
	if s.node == nil {
		if !exists || cerr == nil && cur.placeholder() && heldPlaceholder(fd, name) {
			// A running bwrap command's placeholder (an empty
			// read-only directory it holds a lock on) is the missing
			// name, not something made. One nobody holds is the
			// command's own (git dies on a directory at
			// .git/commondir): moved aside as anything else.
			return ""
		}
		q, err := moveAside(fd, name, now)
		if err != nil {
			return fmt.Sprintf("guardrun: protected %s was created by the command and could not be moved aside: %v", s.w.Path, err)
		}
		return fmt.Sprintf("guardrun: protected %s was created by the command; moved aside to %s", s.w.Path, filepath.Join(filepath.Dir(s.w.Path), q))
	}
	if cerr == nil && s.node.equal(cur) {
		return ""
	}
	what := "changed"
	switch {
	case !exists:
		what = "removed"
	case cerr == nil && cur.kind != s.node.kind:
		what = "replaced"
	case cerr == nil && cur.kind == unix.S_IFREG && cur.link != "":
		what = "hard-linked"
	}
	tmp := ""
	for i := 0; ; i++ {
		tmp, err = restoreName(i)
		if err == nil {
			err = build(fd, tmp, s.node)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EEXIST) {
			removeAt(fd, tmp)
			return notRestored(fd, name, s.w.Path, what, exists, err, now)
		}
		if i >= 200 {
			// Every name taken by someone else: none is ours to remove.
			return notRestored(fd, name, s.w.Path, what, exists, err, now)
		}
	}
	if !exists {
		if err := unix.Renameat2(fd, tmp, fd, name, unix.RENAME_NOREPLACE); err != nil {
			removeAt(fd, tmp)
			return fmt.Sprintf("guardrun: protected %s was %s by the command and could NOT be restored: %v", s.w.Path, what, err)
		}
		return fmt.Sprintf("guardrun: protected %s was %s by the command; restored", s.w.Path, what)
	}
	// Swap the copy in atomically, then move the command's version aside.
	if err := unix.Renameat2(fd, tmp, fd, name, unix.RENAME_EXCHANGE); err != nil {
		removeAt(fd, tmp)
		return notRestored(fd, name, s.w.Path, what, exists, err, now)
	}
	q, err := moveTo(fd, tmp, name, now)
	if err != nil {
		return fmt.Sprintf("guardrun: protected %s was %s by the command; restored (its version is left at %s: %v)", s.w.Path, what, tmp, err)
	}
	return fmt.Sprintf("guardrun: protected %s was %s by the command; restored (its version moved aside to %s)", s.w.Path, what, filepath.Join(filepath.Dir(s.w.Path), q))
}

// restoreName is the i-th name restoreOne tries for its copy beside
// the protected name. The first ten are predictable, so the command may
// have taken them all beforehand (it can learn guardrun's pid): then a
// random suffix, which it cannot foresee.
func restoreName(i int) (string, error) {
	if i < 10 {
		return fmt.Sprintf(".guardrun-restore-%d-%d", os.Getpid(), i), nil
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return fmt.Sprintf(".guardrun-restore-%d-%s", os.Getpid(), hex.EncodeToString(b[:])), nil
}

// notRestored is what restoreOne does when it cannot put its copy back
// (a full disk, the command's own doing): the command's version must not
// stay where git or a shell would obey it, so it is moved aside, and
// nothing is left at the protected path.
func notRestored(dir int, name, path, what string, exists bool, err error, now time.Time) string {
	if !exists {
		return fmt.Sprintf("guardrun: protected %s was %s by the command and could NOT be restored: %v", path, what, err)
	}
	q, merr := moveAside(dir, name, now)
	if merr != nil {
		return fmt.Sprintf("guardrun: protected %s was %s by the command and could NOT be restored (%v) nor moved aside: %v", path, what, err, merr)
	}
	return fmt.Sprintf("guardrun: protected %s was %s by the command and could NOT be restored (%v); its version moved aside to %s, nothing is left at the path",
		path, what, err, filepath.Join(filepath.Dir(path), q))
}

// removeAt removes name in dir, a tree guardrun made itself.
func removeAt(dir int, name string) {
	if unix.Unlinkat(dir, name, 0) == nil {
		return
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), name)
	names, _ := f.Readdirnames(-1)
	for _, k := range names {
		removeAt(fd, k)
	}
	f.Close()
	_ = unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
}

// unlock gives the user back search, read and write permission on each
// directory from w.Root to the parent of w.Path whose mode the command
// took them from (chmod 0555 .git, chmod 0 .git): the restore runs as
// the user, and without them could neither reach the protected name nor
// put its copy next to it. The returned func puts the command's modes
// back. Root needs none of this. Nothing is followed through a link.
func unlock(w Watch) func() {
	rel, err := filepath.Rel(w.Root, w.Path)
	if os.Geteuid() == 0 || err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return func() {}
	}
	type changed struct {
		fd   int
		mode uint32
	}
	var undo []changed
	parts := strings.Split(rel, "/")
	fd, err := unix.Open(w.Root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	for i := 0; err == nil; i++ {
		kept := false
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR &&
			int(st.Uid) == os.Geteuid() && st.Mode&0o700 != 0o700 {
			// An O_PATH descriptor takes no fchmod; its /proc name does.
			if unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), st.Mode&0o7777|0o700) == nil {
				undo = append(undo, changed{fd, st.Mode & 0o7777})
				kept = true
			}
		}
		if i == len(parts)-1 {
			if !kept {
				unix.Close(fd)
			}
			break
		}
		var next int
		next, err = unix.Openat(fd, parts[i], unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if !kept {
			unix.Close(fd)
		}
		fd = next
	}
	return func() {
		for i := len(undo) - 1; i >= 0; i-- {
			_ = unix.Chmod("/proc/self/fd/"+strconv.Itoa(undo[i].fd), undo[i].mode)
			unix.Close(undo[i].fd)
		}
	}
}
