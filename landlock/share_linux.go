package landlock

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
)

// Commands of separate guardrun processes (make -j SHELL=guardrun, two
// agents) that watch the same protected path share its snapshot as the
// commands of one process do (takeHeld): a path is read afresh only when
// no command of any guardrun of this user (with the same state
// directory) runs with it watched; otherwise the running commands'
// snapshot is used. Read while one runs, it could hold that command's
// change, which the later command's restore would put back after the
// running one's restore removed it.
//
// In shareSubdir of the state directory (0700, hidden from every
// command, which must neither read nor write it: checked), each watched
// path has a file, named by the SHA-256 of the path, that is both its
// lock and its stored snapshot:
//
//   - every running command that watches the path holds a shared flock
//     on it from its snapshot until its restore is done (the kernel
//     drops it when its guardrun dies, even by SIGKILL);
//   - snapshots are taken under shareMutex, one exclusive flock for all
//     paths, held only while a command's snapshots are taken. Under it,
//     a command tries the path's lock exclusively without waiting: got,
//     no command runs with the path watched, so it reads the path,
//     writes the snapshot into the file (encodeSnap) and turns its lock
//     shared. Not got, some command holds it: it takes the lock shared
//     (waiting out a releaser's brief exclusive hold, below) and reads
//     the stored snapshot instead.
//
// The exclusive lock is only ever taken under shareMutex (and by a
// last holder on release, below), so nobody can take it in the instant
// Linux's flock leaves a lock free while turning it from exclusive to
// shared, and the snapshot is written only by the exclusive holder
// while no one holds it shared: a reader never sees a write in
// progress. A guardrun killed while writing leaves a snapshot whose
// checksum fails; killed while holding, its lock is free and the next
// command reads the path afresh, never its stale snapshot as truth. A
// reader that took the lock shared after every holder left (in the
// moment between its two tries) reads the last snapshot (what those
// holders restored to); one it cannot decode makes it start over, and
// while holders remain an undecodable snapshot refuses the command.
// The last holder to leave a snapshot over shareKeep bytes truncates it
// (exclusive, without the mutex: readers wait for it and then find it
// empty), so large snapshots are not kept on disk.
//
// A path watched inside a directory another running command watches
// whole (different protect lists, or a tree whose shape a running
// command changed: .git a gitfile for one, a directory for the other)
// has no snapshot to share, and read afresh could hold that command's
// change: such a command is refused (nestedHeld). For it, every
// command also holds a shared lock on the mark of each directory above
// a path it watches (markName); under shareMutex a command finds each
// of its paths' directories' locks free and its paths' marks free.
//
// One file per path, rewritten in place (no temporary file, rename or
// fsync): the locks serialise every reader and writer, and the state
// is worthless after a reboot (no lock survives one).
const (
	shareSubdir = "landlock-watch"
	shareMutex  = "mutex.lock"
	// shareWait is how long a command waits for another guardrun's hold
	// of the mutex (while it takes its snapshots) or of a path's lock
	// (while it truncates a snapshot) before it is refused: only a
	// stopped guardrun holds either that long.
	shareWait = 10 * time.Second
	// shareKeep is the size of stored snapshot the last holder leaves
	// on disk.
	shareKeep = 64 << 10
)

// shareMax bounds a stored snapshot: the bytes of one watched tree, its
// entries with their names and links, and the path.
const shareMax = MaxWatchBytes + MaxWatchEntries*(2*4096+64) + 2*4096 + 64

// makeShareDir makes the share directory if it is missing, before the
// command's ruleset is built, so that the ruleset finds it existing:
// made after, in a writable tree where the state directory was missing
// (and only denied by name), it could be inside what the rules grant.
func makeShareDir(base string) {
	if base != "" && filepath.IsAbs(base) {
		_ = os.MkdirAll(filepath.Join(base, shareSubdir), 0o700)
	}
}

// shareDir is the directory of the locks and stored snapshots for a
// command under p and rs, made if missing: shareSubdir of the state
// directory base (Config.StateDir), 0700 and this user's, reached by its real
// path, and out of the command's reach (neither the profile nor a rule
// of rs beyond listing gives it access: a command that could write a
// stored snapshot would choose what other commands restore, and one
// that could read them would read other trees' protected files).
func shareDir(base string, p *sandbox.Profile, rs *Ruleset) (string, error) {
	if base == "" || !filepath.IsAbs(base) {
		return "", errors.New("landlock: protected names are restored after the command, and their snapshots are shared between guardrun processes through the state directory, but there is none (set HOME or XDG_STATE_HOME); use the bwrap backend")
	}
	dir := filepath.Join(base, shareSubdir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("landlock: the directory of the protected names' shared snapshots: %w", err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("landlock: the directory of the protected names' shared snapshots: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(real, &st); err != nil {
		return "", fmt.Errorf("landlock: the directory of the protected names' shared snapshots: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() || st.Mode&0o077 != 0 {
		return "", fmt.Errorf("landlock: %s, where the protected names' snapshots are shared between guardrun processes, must be a directory of this user's that no one else may use (mode 0700)", real)
	}
	reach := false
	if r, w := p.Access(real); r || w {
		reach = true
	}
	for _, r := range rs.Rules {
		if sandbox.Within(r.Path, real) || sandbox.Within(real, r.Path) && r.Access&^FSReadDir != 0 {
			reach = true
		}
	}
	if reach {
		return "", fmt.Errorf("landlock: %s, where the protected names' snapshots are shared between guardrun processes, is within the command's reach (a zone holds the state directory %s and does not hide it)", real, base)
	}
	return real, nil
}

// shareName is the file of the watched path in the share directory.
func shareName(path string) string {
	h := sha256.Sum256([]byte(path))
	return "w-" + hex.EncodeToString(h[:20])
}

// openShare opens (or makes, 0600) the regular file name in dir, this
// user's, following no link.
func openShare(dir int, name string) (*os.File, error) {
	return openOwn(dir, name, unix.O_RDWR|unix.O_CREAT, 0o600)
}

// openOwn opens name in dir (unix.AT_FDCWD: a path) with flags, following
// no link and without waiting on a FIFO, and checks that it is a regular
// file of this user's.
func openOwn(dir int, name string, flags int, perm uint32) (*os.File, error) {
	fd, err := unix.Openat(dir, name, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, perm)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() {
		f.Close()
		return nil, errors.New("not a file of this user's")
	}
	return f, nil
}

// flockNB takes or changes f's lock without waiting.
func flockNB(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err != unix.EINTR {
			return err
		}
	}
}

// waitLock takes f's lock (how), waiting at most shareWait.
func waitLock(f *os.File, how int) error {
	deadline := time.Now().Add(shareWait)
	pause := 50 * time.Microsecond
	for {
		err := flockNB(f, how)
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("held by another guardrun for more than %v (a stopped guardrun?)", shareWait)
		}
		time.Sleep(pause)
		pause = min(2*pause, 5*time.Millisecond)
	}
}

// takeShared snapshots each of ws as takeHeld does for the paths no
// command of this process holds, shared with the other guardrun
// processes through dir (see above). It returns the snapshots and the
// files whose shared lock the command holds until its restore is done
// (releaseShared).
func takeShared(dir string, ws []Watch) ([]snap, []*shareHold, error) {
	if dir == "" {
		return nil, nil, errors.New("landlock: no directory for the protected names' shared snapshots")
	}
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("landlock: the protected names' shared snapshots: %w", err)
	}
	defer unix.Close(dfd)
	mu, err := openShare(dfd, shareMutex)
	if err != nil {
		return nil, nil, fmt.Errorf("landlock: %s: %w", filepath.Join(dir, shareMutex), err)
	}
	defer mu.Close() // and with it the lock
	if err := waitLock(mu, unix.LOCK_EX); err != nil {
		return nil, nil, fmt.Errorf("landlock: %s: %w", filepath.Join(dir, shareMutex), err)
	}
	// A path watched inside one another running command watches (or
	// holding one): see nestedHeld.
	checked := map[string]bool{}
	for _, w := range ws {
		if err := nestedHeld(dfd, w.Path, checked); err != nil {
			return nil, nil, err
		}
	}
	var snaps []snap
	var held []*shareHold
	total := int64(MaxWatchTotal)
	fail := func(err error) ([]snap, []*shareHold, error) {
		for _, h := range held {
			h.lock.Close()
			releaseMarks(h.marks)
		}
		return nil, nil, err
	}
	for _, w := range ws {
		name := shareName(w.Path)
		f, err := openShare(dfd, name)
		if err != nil {
			return fail(fmt.Errorf("landlock: protected %s: its lock %s: %w", w.Path, filepath.Join(dir, name), err))
		}
		s, err := joinOne(f, w, &total)
		if err != nil {
			f.Close()
			if !strings.HasPrefix(err.Error(), "landlock: ") {
				err = fmt.Errorf("landlock: protected %s: its lock %s: %w", w.Path, filepath.Join(dir, name), err)
			}
			return fail(err)
		}
		h := &shareHold{lock: f}
		held = append(held, h)
		snaps = append(snaps, s)
		for _, q := range ancestors(w.Path) {
			key := filepath.Join(dir, markName(q))
			if err := holdMark(dfd, key); err != nil {
				return fail(fmt.Errorf("landlock: protected %s: the mark of %s, %s: %w", w.Path, q, key, err))
			}
			h.marks = append(h.marks, key)
		}
	}
	return snaps, held, nil
}

// shareHold is what a process holds for a watched path while commands
// of it watch the path: the path's lock file (shared), and the marks of
// the directories above it (see nestedHeld), by their file's path.
type shareHold struct {
	lock  *os.File
	marks []string
}

// ancestors are the directories above path, but the root.
func ancestors(path string) []string {
	var out []string
	for d := filepath.Dir(path); d != "/" && d != "." && d != path; d = filepath.Dir(d) {
		out = append(out, d)
		path = d
	}
	return out
}

// markName is the file in the share directory whose shared lock every
// process holds while commands of it watch a path inside dir.
func markName(dir string) string {
	h := sha256.Sum256([]byte(dir))
	return "d-" + hex.EncodeToString(h[:20])
}

// marks are the marks this process holds, by their file's path, with
// how many of its held paths lie inside each one's directory.
var (
	marksMu sync.Mutex
	marks   = map[string]*mark{}
)

type mark struct {
	f *os.File
	n int
}

// holdMark takes (or counts once more) this process's shared lock on
// the mark file key, in the share directory dfd. Only nestedHeld tries
// a mark exclusively, under shareMutex, which the caller holds: the
// shared lock is had at once.
func holdMark(dfd int, key string) error {
	marksMu.Lock()
	defer marksMu.Unlock()
	if m := marks[key]; m != nil {
		m.n++
		return nil
	}
	f, err := openShare(dfd, filepath.Base(key))
	if err != nil {
		return err
	}
	if err := waitLock(f, unix.LOCK_SH); err != nil {
		f.Close()
		return err
	}
	marks[key] = &mark{f: f, n: 1}
	return nil
}

// releaseMarks lets go of one count of each of the marks keys.
func releaseMarks(keys []string) {
	marksMu.Lock()
	defer marksMu.Unlock()
	for _, k := range keys {
		if m := marks[k]; m != nil {
			if m.n--; m.n == 0 {
				m.f.Close()
				delete(marks, k)
			}
		}
	}
}

// nestedHeld refuses a path watched inside a directory another running
// command watches whole, or a directory inside which another running
// command watches a path (of any guardrun of the user, this one
// included): their snapshots are of different paths, so neither can be
// given the other's, and read now the path could hold the running
// command's change to it, which this command's restore would put back
// after the running one's restore removed it. (A command that moved
// .git away and left a gitfile there, sending git to a config of its
// own, made the next command's profile watch .git itself: read afresh,
// its gitfile was that command's snapshot, and restored at its end.)
// Each path's lock is held shared by the commands watching it, each
// directory's mark (markName) by those watching a path inside it; the
// caller holds shareMutex. checked are the directories found free so far.
func nestedHeld(dfd int, path string, checked map[string]bool) error {
	refuse := func(what string) error {
		return fmt.Errorf("landlock: protected %s: another guardrun command that is running %s; their snapshots cannot be shared, and read now it could hold that command's change: run this command after that one ends, or use the bwrap backend", path, what)
	}
	for _, q := range ancestors(path) {
		if checked[q] {
			continue
		}
		held, err := heldBy(dfd, shareName(q), true)
		if err != nil {
			return fmt.Errorf("landlock: protected %s: the lock of %s: %w", path, q, err)
		}
		if held {
			return refuse("watches " + q + ", which holds it")
		}
		checked[q] = true
	}
	held, err := heldBy(dfd, markName(path), false)
	if err != nil {
		return fmt.Errorf("landlock: protected %s: its mark: %w", path, err)
	}
	if held {
		return refuse("watches a path inside it")
	}
	return nil
}

// heldBy reports whether some process holds a lock on name in dfd (a
// missing file: no one). A path's lock is also held exclusively, for
// an instant, by its last holder truncating the snapshot (brief: it is
// waited out and tried again).
func heldBy(dfd int, name string, brief bool) (bool, error) {
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	for try := 0; ; try++ {
		err := flockNB(f, unix.LOCK_EX)
		if err == nil {
			return false, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return false, err
		}
		if !brief || try > 0 {
			return true, nil
		}
		if err := waitLock(f, unix.LOCK_SH); err != nil {
			return true, nil
		}
		if err := unix.Flock(fd, unix.LOCK_UN); err != nil {
			return false, err
		}
	}
}

// joinOne returns w's snapshot with f, w's lock file, held shared:
// read afresh and stored when no one held f, else the stored one. The
// caller holds shareMutex. total is what is left of MaxWatchTotal, which
// the snapshot spends.
func joinOne(f *os.File, w Watch, total *int64) (snap, error) {
	var bad error
	for try := 0; try < 3; try++ {
		err := flockNB(f, unix.LOCK_EX)
		if err == nil {
			one, err := takeWithin([]Watch{w}, total)
			if err != nil {
				return snap{}, err
			}
			s := one[0]
			if err := store(f, encodeSnap(s)); err != nil {
				return snap{}, err
			}
			// Nobody can take the lock in the instant the change
			// leaves it free: every other exclusive try is made under
			// shareMutex, or by a holder of it shared, and there is
			// none.
			if err := flockNB(f, unix.LOCK_SH); err != nil {
				return snap{}, err
			}
			return s, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return snap{}, err
		}
		// Held: by running commands (shared), or, for an instant, by
		// the last of them truncating the file.
		if err := waitLock(f, unix.LOCK_SH); err != nil {
			return snap{}, err
		}
		s, err := readShared(f, w)
		if err == nil {
			if *total -= s.node.bytes(); *total < 0 {
				return snap{}, fmt.Errorf("landlock: the protected paths hold more than %d bytes together; use the bwrap backend", MaxWatchTotal)
			}
			return s, nil
		}
		// Those holders are gone and the last truncated it, or one
		// died writing it: start over. While some command holds it,
		// that cannot be: try again, then refuse.
		bad = err
		if err := unix.Flock(int(f.Fd()), unix.LOCK_UN); err != nil {
			return snap{}, err
		}
	}
	return snap{}, fmt.Errorf("its stored snapshot cannot be read while another guardrun command holds it: %v", bad)
}

// store writes the encoded snapshot b into f, unless f holds it
// already (the path unchanged since it was last stored: a read is
// cheaper than a write, which also updates the file's times).
func store(f *os.File, b []byte) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	if st.Size >= int64(len(b)) {
		old := make([]byte, len(b))
		if k, _ := f.ReadAt(old, 0); k == len(b) && string(old) == string(b) {
			return nil
		}
	}
	_, err := f.WriteAt(b, 0)
	return err
}

// readShared reads and decodes the snapshot stored in f for w.
func readShared(f *os.File, w Watch) (snap, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return snap{}, err
	}
	if st.Size < int64(shareHeader) {
		return snap{}, errors.New("no snapshot stored")
	}
	n := min(st.Size, int64(shareMax+shareHeader))
	b := make([]byte, n)
	k, err := f.ReadAt(b, 0)
	if err != nil && k < len(b) {
		return snap{}, err
	}
	s, err := decodeSnap(b[:k])
	if err != nil {
		return snap{}, err
	}
	if s.w.Path != w.Path {
		return snap{}, fmt.Errorf("the stored snapshot is of %q", s.w.Path)
	}
	s.w = w
	return s, nil
}

// releaseShared lets go of this process's hold h on a path: its marks
// and its lock; the last holder truncates a snapshot over shareKeep
// bytes.
func releaseShared(h *shareHold) {
	releaseMarks(h.marks)
	f := h.lock
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) == nil && st.Size > shareKeep && flockNB(f, unix.LOCK_EX) == nil {
		_ = f.Truncate(0)
	}
	f.Close()
}

// The stored snapshot: shareMagic, version, payload length and CRC-32
// (IEEE) of the payload (little-endian uint32s), then the payload: the
// watched path, a flags byte (1: a directory on the way was not one; 2:
// the path existed) and, if it existed, its node: kind, mode, uid, gid,
// content, link target, number of entries, and each entry's name and
// node (sorted by name). Strings and byte strings are a uint32 length
// and the bytes. Anything after the payload is ignored (a shorter
// snapshot written over a longer one).
const (
	shareMagic   = "GRWSNAP\n"
	shareVersion = 1
	shareHeader  = len(shareMagic) + 1 + 4 + 4
)

func encodeSnap(s snap) []byte {
	b := make([]byte, shareHeader, shareHeader+256)
	copy(b, shareMagic)
	b[len(shareMagic)] = shareVersion
	b = appendBytes(b, []byte(s.w.Path))
	var flags byte
	if s.notDir {
		flags |= 1
	}
	if s.node != nil {
		flags |= 2
	}
	b = append(b, flags)
	if s.node != nil {
		b = appendNode(b, s.node)
	}
	payload := b[shareHeader:]
	binary.LittleEndian.PutUint32(b[len(shareMagic)+1:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[len(shareMagic)+5:], crc32.ChecksumIEEE(payload))
	return b
}

func appendBytes(b, s []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func appendNode(b []byte, n *node) []byte {
	for _, v := range []uint32{n.kind, n.mode, n.uid, n.gid} {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	b = appendBytes(b, n.data)
	b = appendBytes(b, []byte(n.link))
	names := make([]string, 0, len(n.kids))
	for k := range n.kids {
		names = append(names, k)
	}
	slices.Sort(names)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(names)))
	for _, k := range names {
		b = appendBytes(b, []byte(k))
		b = appendNode(b, n.kids[k])
	}
	return b
}

// decodeSnap decodes a stored snapshot, which it treats as untrusted:
// every length is bounded (the snapshot bounds, PATH_MAX, NAME_MAX), the
// kinds, modes and names are those a snapshot can hold, and any error is
// returned, never a panic.
func decodeSnap(b []byte) (snap, error) {
	if len(b) < shareHeader || string(b[:len(shareMagic)]) != shareMagic {
		return snap{}, errors.New("not a stored snapshot")
	}
	if v := b[len(shareMagic)]; v != shareVersion {
		return snap{}, fmt.Errorf("stored snapshot version %d, not %d", v, shareVersion)
	}
	n := binary.LittleEndian.Uint32(b[len(shareMagic)+1:])
	sum := binary.LittleEndian.Uint32(b[len(shareMagic)+5:])
	if uint64(n) > uint64(len(b)-shareHeader) || n > shareMax {
		return snap{}, errors.New("stored snapshot cut short")
	}
	payload := b[shareHeader : shareHeader+int(n)]
	if crc32.ChecksumIEEE(payload) != sum {
		return snap{}, errors.New("stored snapshot does not match its checksum")
	}
	d := &decoder{b: payload, entries: MaxWatchEntries, bytes: MaxWatchBytes}
	var s snap
	path := d.bytesOf(4096)
	flags := d.byte()
	if d.err == nil && (len(path) == 0 || path[0] != '/' || slices.Contains(path, 0) || flags&^3 != 0) {
		d.fail("bad path or flags")
	}
	s.w.Path = string(path)
	s.notDir = flags&1 != 0
	if flags&2 != 0 {
		s.node = d.node(0)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("bytes after the snapshot")
	}
	if d.err != nil {
		return snap{}, fmt.Errorf("stored snapshot: %w", d.err)
	}
	return s, nil
}

type decoder struct {
	b       []byte
	err     error
	entries int
	bytes   int
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = errors.New(what)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail("cut short")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uint32() uint32 {
	if d.err != nil || len(d.b) < 4 {
		d.fail("cut short")
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

// bytesOf reads a length and that many bytes, at most max.
func (d *decoder) bytesOf(max int) []byte {
	n := d.uint32()
	if d.err != nil {
		return nil
	}
	if uint64(n) > uint64(max) || uint64(n) > uint64(len(d.b)) {
		d.fail("length out of bounds")
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) node(depth int) *node {
	if depth > MaxWatchEntries {
		d.fail("too deep")
		return nil
	}
	n := &node{kind: d.uint32(), mode: d.uint32(), uid: d.uint32(), gid: d.uint32()}
	data := d.bytesOf(d.bytes)
	d.bytes -= len(data)
	link := d.bytesOf(4096)
	count := d.uint32()
	if d.err != nil {
		return nil
	}
	if n.mode&^0o7777 != 0 {
		d.fail("bad mode")
		return nil
	}
	switch n.kind {
	case unix.S_IFREG:
		if len(link) != 0 && string(link) != "\x00hard-linked" || count != 0 {
			d.fail("bad file")
			return nil
		}
	case unix.S_IFLNK:
		if len(data) != 0 || len(link) == 0 || slices.Contains(link, 0) || count != 0 {
			d.fail("bad link")
			return nil
		}
	case unix.S_IFDIR:
		if len(data) != 0 || len(link) != 0 {
			d.fail("bad directory")
			return nil
		}
		// d.entries counts down across the whole tree: compared signed,
		// a budget spent by earlier directories refuses any count.
		if int64(count) > int64(d.entries) {
			d.fail("too many entries")
			return nil
		}
		n.kids = make(map[string]*node, min(count, 64))
	default:
		d.fail("bad kind")
		return nil
	}
	if len(data) != 0 {
		n.data = data
	}
	n.link = string(link)
	for i := uint32(0); i < count && d.err == nil; i++ {
		if d.entries--; d.entries < 0 {
			d.fail("too many entries")
			return nil
		}
		name := d.bytesOf(255)
		if d.err != nil {
			return nil
		}
		k := string(name)
		if k == "" || k == "." || k == ".." || strings.ContainsAny(k, "/\x00") {
			d.fail("bad name")
			return nil
		}
		if _, dup := n.kids[k]; dup {
			d.fail("name twice")
			return nil
		}
		n.kids[k] = d.node(depth + 1)
	}
	if d.err != nil {
		return nil
	}
	return n
}
