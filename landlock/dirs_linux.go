package landlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
	"github.com/guardrun/guardrun/seccomp/notify"
)

// Served directories (Ruleset.Served): Landlock cannot let a command
// create, remove or rename entries in a directory while one of its
// entries stays denied (a rule on a directory covers everything beneath
// it), so those calls are routed to guardrun, which makes them for the
// command on a thread restricted by the command's own ruleset and, on
// the served directories alone, the rights to change their entries
// (wideRights). It makes a call there only through the directory it
// resolved, with a plain name that is none of the directory's Keep
// names nor a denied or protected name (case folded), never following
// a link at that name; every other call routed here is made on a thread
// restricted by the command's ruleset alone, so the kernel judges it as
// it would have judged the command.
//
// A file made this way has no Landlock rule of its own, so the command
// could not open it again (the directory grants only listing). So
// guardrun makes unnamed files (O_TMPFILE) in each served directory
// before the command starts, each with a rule that lets the command
// read, write and execute it, and puts one of them at the name a new
// file is created at (PoolSize per file system; past them a new file
// can be written through the descriptor its open returns but not opened
// again: Ruleset.Served's Limitations). A directory made this way is
// served too, so that what is made in it gets the same.

// wideRights are the rights the served thread has on a served directory
// beyond the command's: changing its entries. Not reading or writing
// them: the files it creates there are the pool's, which have rights of
// their own, so that nothing the served thread does can read or write
// the denied file, whatever name it is reached by.
const wideRights = FSMakeReg | FSMakeDir | FSMakeSym | FSMakeFifo | FSMakeSock |
	FSRemoveFile | FSRemoveDir | FSRefer | FSReadDir

// oTmpfileBit is __O_TMPFILE: O_TMPFILE without O_DIRECTORY, which every
// open of a directory has.
const oTmpfileBit = unix.O_TMPFILE &^ unix.O_DIRECTORY

// DirCalls are the calls routed to guardrun for a profile with served
// directories, with the conditions that send them: an open only when it
// may create.
func dirRoutes() map[string][]seccomp.Cond {
	notDevice := func(arg uint) []seccomp.Cond {
		var out []seccomp.Cond
		for _, v := range []uint64{0, unix.S_IFREG, unix.S_IFIFO, unix.S_IFSOCK} {
			out = append(out, seccomp.Cond{Arg: arg, Mask: unix.S_IFMT, Val: v})
		}
		return out
	}
	return map[string][]seccomp.Cond{
		"open":   seccomp.AnyBit(1, unix.O_CREAT|oTmpfileBit),
		"openat": seccomp.AnyBit(2, unix.O_CREAT|oTmpfileBit),
		"creat":  nil, "mkdir": nil, "mkdirat": nil,
		"mknod": notDevice(1), "mknodat": notDevice(2),
		"unlink": nil, "unlinkat": nil, "rmdir": nil,
		"rename": nil, "renameat": nil, "renameat2": nil,
		"link": nil, "linkat": nil, "symlink": nil, "symlinkat": nil,
	}
}

type fileID struct{ dev, ino uint64 }

func idOf(fd int) (fileID, bool) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return fileID{}, false
	}
	return fileID{st.Dev, st.Ino}, true
}

// dirs serves the entries of a command's served directories.
type dirs struct {
	p  *sandbox.Profile
	rs *Ruleset
	// names are refused wherever guardrun makes a call with the wide
	// rights: the profile's denied names and protected names (one
	// component).
	names []string

	served map[fileID]*servedDir
	// own are the objects in served directories that have a rule of
	// their own (an entry granted one by one, a pool file): they keep
	// their rights wherever they are moved.
	own map[fileID]bool
	// kept are the objects of the served directories' Keep names (the
	// denied file, guardrun's config): no call made with the wide rights
	// may reach them by another name (a link made to them through a
	// descriptor of the command's, /proc/self/fd/N).
	kept   map[fileID]bool
	mu     sync.Mutex
	made   map[fileID]bool // directories made here in a served one
	pools  map[uint64]*pool
	poolFD []int // every pool file, for the rules

	// The directory pool: empty directories in a directory of the
	// state directory (dirPool, per command, removed after).
	stateDir  string
	dirPool   string
	dirPoolFD int
	dirMnt    uint64
	dirNames  []string
	dirFDs    []int

	plain, wide *actorPool
	// report says what the command met that guardrun could not do as
	// bwrap does (pool used up), once each.
	report []string
	once   map[string]bool
}

type servedDir struct {
	path string
	keep []string
	fd   int
}

// pool is the unnamed files of one file system.
type pool struct {
	mu  sync.Mutex
	fds []int
	dir string
}

func newDirs(p *sandbox.Profile, rs *Ruleset, stateDir string) *dirs {
	d := &dirs{p: p, rs: judgeRuleset(rs), stateDir: stateDir, dirPoolFD: -1, served: map[fileID]*servedDir{}, own: map[fileID]bool{}, kept: map[fileID]bool{}, made: map[fileID]bool{}, pools: map[uint64]*pool{}, once: map[string]bool{}}
	d.names = append(d.names, p.DenyNames...)
	for _, n := range p.ProtectNames {
		if !strings.Contains(n, "/") {
			d.names = append(d.names, n)
		}
	}
	return d
}

// prepare opens the served directories and makes the pool, before the
// command's ruleset is built (the pool's files get rules in it).
func (d *dirs) prepare() error {
	for _, s := range d.rs.Served {
		fd, err := unix.Open(s.Dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				continue // gone, or swapped for a link, since Build: nothing to serve
			}
			return fmt.Errorf("landlock: open %s: %w", s.Dir, err)
		}
		id, ok := idOf(fd)
		if !ok {
			unix.Close(fd)
			continue
		}
		d.served[id] = &servedDir{path: s.Dir, keep: s.Keep, fd: fd}
		mnt, err := mountID(fd)
		if err != nil || d.pools[mnt] != nil {
			continue
		}
		pl := &pool{dir: s.Dir}
		for range PoolSize {
			// O_TMPFILE through the path: an O_PATH descriptor takes
			// no open of its own.
			tfd, err := unix.Open(procFD(fd), unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
			if err != nil {
				break // the file system has none (EOPNOTSUPP): no pool
			}
			pl.fds = append(pl.fds, tfd)
			d.poolFD = append(d.poolFD, tfd)
		}
		d.pools[mnt] = pl
	}
	d.prepareDirPool()
	for _, fd := range append(slices.Clone(d.poolFD), d.dirFDs...) {
		if id, ok := idOf(fd); ok {
			d.own[id] = true
		}
	}
	dirsServed := map[string]bool{}
	for _, s := range d.served {
		dirsServed[s.path] = true
		for _, k := range s.keep {
			var st unix.Stat_t
			if unix.Fstatat(s.fd, k, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				d.kept[fileID{st.Dev, st.Ino}] = true
			}
		}
	}
	for _, r := range d.rs.Rules {
		if !dirsServed[filepath.Dir(r.Path)] {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(r.Path, &st) == nil {
			d.own[fileID{st.Dev, st.Ino}] = true
		}
	}
	return nil
}

// dirPoolBase is the directory of the state directory that holds the
// directory pools, one per running command (p-PID-*).
const dirPoolBase = "landlock-pool"

// prepareDirPool makes the directory pool where it can be: in the state
// directory (which no command can reach), on the file system and mount
// of a served directory (a directory moves only within one). Pools that
// a guardrun killed before its cleanup left (its pid gone) are removed.
func (d *dirs) prepareDirPool() {
	if d.stateDir == "" || !filepath.IsAbs(d.stateDir) {
		return
	}
	if r, _ := d.p.Access(d.stateDir); r {
		return // within the command's reach: not there
	}
	base := filepath.Join(d.stateDir, dirPoolBase)
	if err := os.MkdirAll(base, 0o700); err != nil {
		return
	}
	sweepDirPools(base)
	dir, err := os.MkdirTemp(base, fmt.Sprintf("p-%d-", os.Getpid()))
	if err != nil {
		return
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		removeTree(dir)
		return
	}
	mnt, err := mountID(fd)
	if err != nil || d.pools[mnt] == nil && !d.servedOn(mnt) {
		unix.Close(fd)
		removeTree(dir)
		return
	}
	d.dirPool, d.dirPoolFD, d.dirMnt = dir, fd, mnt
	for i := range DirPoolSize {
		name := strconv.Itoa(i)
		if err := unix.Mkdirat(fd, name, 0o700); err != nil {
			break
		}
		dfd, err := unix.Openat(fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		d.dirNames = append(d.dirNames, name)
		d.dirFDs = append(d.dirFDs, dfd)
	}
}

// removeDirPool removes the directory pool (what is left of it), once
// no process of the command is left to use it.
func (d *dirs) removeDirPool() {
	d.mu.Lock()
	dir := d.dirPool
	d.dirPool, d.dirNames = "", nil
	d.mu.Unlock()
	if dir != "" {
		removeTree(dir)
	}
}

// servedOn reports whether a served directory is on mount mnt.
func (d *dirs) servedOn(mnt uint64) bool {
	for _, s := range d.served {
		if m, err := mountID(s.fd); err == nil && m == mnt {
			return true
		}
	}
	return false
}

// sweepDirPools removes the pools in base whose guardrun is gone.
func sweepDirPools(base string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "p-")
		if !ok {
			continue
		}
		pid, _, _ := strings.Cut(rest, "-")
		n, err := strconv.Atoi(pid)
		if err != nil || n <= 0 || n == os.Getpid() {
			continue
		}
		if err := unix.Kill(n, 0); errors.Is(err, unix.ESRCH) {
			removeTree(filepath.Join(base, e.Name()))
		}
	}
}

// newDir gives an empty directory of the pool on parent's mount: the
// pool's descriptor and its name there.
func (d *dirs) newDir(parent int) (int, string, bool) {
	if d.dirPoolFD < 0 {
		return -1, "", false
	}
	if mnt, err := mountID(parent); err != nil || mnt != d.dirMnt {
		return -1, "", false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.dirNames) == 0 {
		return -1, "", false
	}
	name := d.dirNames[len(d.dirNames)-1]
	d.dirNames = d.dirNames[:len(d.dirNames)-1]
	return d.dirPoolFD, name, true
}

// close releases what prepare opened and stops the threads.
func (d *dirs) close() {
	for _, s := range d.served {
		unix.Close(s.fd)
	}
	for _, fd := range d.dirFDs {
		unix.Close(fd)
	}
	d.dirFDs = nil
	if d.dirPoolFD >= 0 {
		unix.Close(d.dirPoolFD)
		d.dirPoolFD = -1
	}
	d.removeDirPool()
	for _, pl := range d.pools {
		pl.mu.Lock()
		for _, fd := range pl.fds {
			unix.Close(fd)
		}
		pl.fds = nil
		pl.mu.Unlock()
	}
	d.plain.stop()
	d.wide.stop()
}

// fileRules are the rules of the pool's files, to add to the command's
// ruleset: each may be read, written, truncated and executed once it has
// a name, as a file in a writable zone.
func (d *dirs) fileRules() []fdRule {
	rw := d.rs.HandledFS &^ (FSMakeChar | FSMakeBlock)
	out := make([]fdRule, 0, len(d.poolFD)+len(d.dirFDs))
	for _, fd := range d.poolFD {
		out = append(out, fdRule{fd: fd, access: rw & fileRights, what: "a new file"})
	}
	for _, fd := range d.dirFDs {
		out = append(out, fdRule{fd: fd, access: rw, what: "a new directory"})
	}
	return out
}

// startThreads prepares the threads calls are made on: plain ones
// restricted by the command's ruleset (a copy of rsfd's rules: rs and
// extra), and, with something served, wide ones restricted by it with
// the served directories' wide rights added. Each is a pool that starts
// threads as calls need them, so that a call that blocks (an open of a
// FIFO, which waits for the other end) holds up no other.
func (d *dirs) startThreads(rs *Ruleset, rsfd int, extra []fdRule) error {
	plain, err := buildRuleset(rs, extra, nil)
	if err != nil {
		return err
	}
	d.plain = newActorPool(plain)
	var wide []fdRule
	for _, s := range d.served {
		wide = append(wide, fdRule{fd: s.fd, access: wideRights, what: s.path})
	}
	if d.dirPoolFD >= 0 {
		// Directories leave the pool with the same rights as they
		// arrive in a served one (Landlock's rule for a move).
		wide = append(wide, fdRule{fd: d.dirPoolFD, access: wideRights, what: d.dirPool})
	}
	if len(wide) == 0 {
		return nil // nothing served: no wide threads
	}
	w, err := buildRuleset(rs, extra, wide)
	if err != nil {
		return err
	}
	d.wide = newActorPool(w)
	return nil
}

// lookup is the served directory fd is, or that a directory made here
// (made) lies in; nil for any other.
func (d *dirs) lookup(fd int) *servedDir {
	id, ok := idOf(fd)
	if !ok {
		return nil
	}
	if s := d.served[id]; s != nil {
		return s
	}
	d.mu.Lock()
	made := d.made[id]
	d.mu.Unlock()
	if !made {
		return nil
	}
	// Made here, and still where the command may write: inode numbers
	// are reused, and a directory moved out of the served trees is
	// no longer theirs to serve.
	path, err := hostPathOf(fd)
	if err != nil || !d.rs.MetadataWritable(d.p, path) {
		return nil
	}
	for _, s := range d.served {
		if sandbox.Within(path, s.path) {
			return &servedDir{path: path, fd: -1}
		}
	}
	return nil
}

// within reports whether path lies in a served directory's tree.
func (d *dirs) within(path string) bool {
	for _, s := range d.served {
		if sandbox.Within(path, s.path) {
			return true
		}
	}
	return false
}

// refused reports whether name may not be made, removed or renamed in
// s with the wide rights.
func (d *dirs) refused(s *servedDir, name string) bool {
	eq := func(n string) bool { return strings.EqualFold(n, name) }
	return slices.ContainsFunc(s.keep, eq) || slices.ContainsFunc(d.names, eq)
}

// decide says on which thread the call is made: the wide one when it
// changes the entries of a served directory (then no name involved may
// be refused, and no other directory it involves may lie in a served
// tree without being served: the wide rights would reach it), the plain
// one for everything else.
func (d *dirs) decide(r *notify.Request, c *notify.FileCall, dst, src *notify.Located) (notify.Performer, error) {
	plain := notify.Performer{Run: d.plain.run}
	if !c.Writes() || c.Op == notify.OpTruncate || c.Op == notify.OpOpen && !c.Creates() {
		// Nothing for the directory: the object's own rights decide.
		return plain, nil
	}
	any, all := false, true
	var others []int
	for _, l := range []*notify.Located{dst, src} {
		if l == nil {
			continue
		}
		fd := l.Parent
		if fd < 0 {
			if c.Op != notify.OpOpen || c.Flags&oTmpfileBit == 0 {
				continue // a process file itself: nothing to make
			}
			fd = l.Obj // O_TMPFILE's directory
		}
		s := d.lookup(fd)
		if s == nil {
			all = false
			others = append(others, fd)
			continue
		}
		any = true
		if l.Parent >= 0 && d.refused(s, l.Name) {
			return notify.Performer{}, ErrnoOutside
		}
	}
	if !any {
		return plain, nil
	}
	// What the call would reach by another name must not be a kept
	// object (a link to the denied file made through a descriptor).
	for _, l := range []*notify.Located{dst, src} {
		if l != nil && d.reachesKept(l) {
			return notify.Performer{}, ErrnoOutside
		}
	}
	if (c.Op == notify.OpRename || c.Op == notify.OpLink) && src.Parent < 0 {
		// A descriptor's object given a name in a served directory
		// (an O_TMPFILE, linkat through /proc/self/fd/N): only one that
		// keeps its rights there.
		if id, ok := idOf(src.Obj); ok && !d.own[id] {
			return notify.Performer{}, syscall.EXDEV
		}
	}
	if (c.Op == notify.OpRename || c.Op == notify.OpLink) && src.Parent >= 0 && !sameFile(src.Parent, dst.Parent) {
		// Moved or linked into a served directory from another: an
		// object without a rule of its own would have no rights
		// there (the directory grants only listing), so, as Landlock
		// answers such a move, EXDEV, and mv, cp and go build copy it
		// (the copy is a new file, which gets a rule).
		if s := d.lookup(dst.Parent); s != nil && !d.keeps(src.Parent, src.Name) {
			return notify.Performer{}, syscall.EXDEV
		}
		if c.Flags&unix.RENAME_EXCHANGE != 0 && d.lookup(src.Parent) != nil && !d.keeps(dst.Parent, dst.Name) {
			return notify.Performer{}, syscall.EXDEV
		}
	}
	if !all {
		for _, fd := range others {
			path, err := hostPathOf(fd)
			if err != nil || d.within(path) {
				// A rename or link between a served directory and one
				// beneath it that is not: as Landlock answers a move it
				// cannot allow, so that mv copies.
				return notify.Performer{}, syscall.EXDEV
			}
		}
	}
	return notify.Performer{Run: d.wide.run, NewFile: d.newFile, NewDir: d.newDir}, nil
}

// reachesKept reports whether l locates a kept object: the object
// itself, or what its name holds now.
func (d *dirs) reachesKept(l *notify.Located) bool {
	if len(d.kept) == 0 {
		return false
	}
	if l.Parent < 0 {
		id, ok := idOf(l.Obj)
		return ok && d.kept[id]
	}
	var st unix.Stat_t
	if unix.Fstatat(l.Parent, l.Name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	return d.kept[fileID{st.Dev, st.Ino}]
}

// keeps reports whether the object at name in dir keeps its rights when
// moved into a served directory: it has a rule of its own, it is a
// directory made here (served wherever it is in a served tree), or a
// symbolic link (following it, the kernel judges its target).
func (d *dirs) keeps(dir int, name string) bool {
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return true // nothing there: the call fails by itself
	}
	id := fileID{st.Dev, st.Ino}
	d.mu.Lock()
	made := d.made[id]
	d.mu.Unlock()
	return d.own[id] || made || st.Mode&unix.S_IFMT == unix.S_IFLNK
}

func sameFile(a, b int) bool {
	x, ok1 := idOf(a)
	y, ok2 := idOf(b)
	return ok1 && ok2 && x == y
}

// done is called after a call was made with the wide rights: a
// directory made in a served one is served too; one removed is no
// longer.
func (d *dirs) done(c *notify.FileCall, dst, _ *notify.Located, resp notify.Response) {
	if resp.Errno != 0 || dst == nil || dst.Parent < 0 {
		return
	}
	switch c.Op {
	case notify.OpMkdir:
		if d.lookup(dst.Parent) == nil {
			return // made where the command may make directories itself
		}
		var st unix.Stat_t
		if unix.Fstatat(dst.Parent, dst.Name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			if d.own[fileID{st.Dev, st.Ino}] {
				return // one of the pool's: it has a rule of its own
			}
			d.mu.Lock()
			d.made[fileID{st.Dev, st.Ino}] = true
			d.mu.Unlock()
		}
	}
}

// newFile gives an unnamed file of the pool on parent's file system, or
// -1 (none left: said once after the command).
func (d *dirs) newFile(parent int) int {
	mnt, err := mountID(parent)
	if err != nil {
		return -1
	}
	pl := d.pools[mnt]
	if pl == nil {
		return -1
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if len(pl.fds) == 0 {
		d.note(fmt.Sprintf("guardrun: note: the command created more than %d new files directly in directories that hold denied or protected names (on the file system of %s, and in directories it made there); under landlock the ones after those were refused", PoolSize, pl.dir))
		return -1
	}
	fd := pl.fds[len(pl.fds)-1]
	pl.fds = pl.fds[:len(pl.fds)-1]
	return fd
}

func (d *dirs) note(s string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.once[s] {
		d.once[s] = true
		d.report = append(d.report, s)
	}
}

// hostPathOf is the real path of the directory at fd (the same object
// when opened again from the root without following a link).
func hostPathOf(fd int) (string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", err
	}
	p, ok := realPath(fd, &st)
	if !ok {
		return "", ErrnoOutside
	}
	return p, nil
}

// fdRule is a rule on the object at fd (a file that has no name yet, a
// directory held open).
type fdRule struct {
	fd     int
	access uint64
	what   string // for errors
}

// actorPool is the threads of guardrun that make calls for the command
// with one ruleset: each restricted by it, with no capabilities,
// no_new_privs and a umask of its own, locked to its goroutine for good
// (the thread ends with it). Threads are started as calls need them, at
// most maxActors at once; an idle one is reused.
type actorPool struct {
	rsfd int // the ruleset, closed with the pool

	mu      sync.Mutex
	cond    *sync.Cond
	idle    []*actor
	started int
	closed  bool
}

// maxActors bounds the threads of one pool (MaxWorkers of the
// notification server: no more calls are made at once).
const maxActors = notify.MaxWorkers

func newActorPool(rsfd int) *actorPool {
	p := &actorPool{rsfd: rsfd}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// run runs f on one of the pool's threads and waits for it.
func (p *actorPool) run(f func()) {
	a, err := p.get()
	if err != nil {
		return // f not run: the call fails (notify.Perform answers EPERM then)
	}
	a.run(f)
	p.put(a)
}

func (p *actorPool) get() (*actor, error) {
	p.mu.Lock()
	for {
		if p.closed {
			p.mu.Unlock()
			return nil, errors.New("landlock: the command has ended")
		}
		if n := len(p.idle); n > 0 {
			a := p.idle[n-1]
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			return a, nil
		}
		if p.started < maxActors {
			p.started++
			p.mu.Unlock()
			a, err := startActor(p.rsfd)
			if err != nil {
				p.mu.Lock()
				p.started--
				p.cond.Signal()
				p.mu.Unlock()
				return nil, err
			}
			return a, nil
		}
		p.cond.Wait()
	}
}

func (p *actorPool) put(a *actor) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		a.stop()
		return
	}
	p.idle = append(p.idle, a)
	p.cond.Signal()
}

// stop ends the idle threads and those still busy as they finish, and
// closes the ruleset.
func (p *actorPool) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.cond.Broadcast()
	p.mu.Unlock()
	for _, a := range idle {
		a.stop()
	}
	unix.Close(p.rsfd)
}

// actor is one thread of an actorPool.
type actor struct {
	jobs chan func()
	wg   sync.WaitGroup
}

// startActor starts a thread restricted by the ruleset rsfd.
func startActor(rsfd int) (*actor, error) {
	a := &actor{jobs: make(chan func())}
	errc := make(chan error, 1)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		runtime.LockOSThread() // never unlocked: the restricted thread ends with this goroutine
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			errc <- fmt.Errorf("landlock: the calls' thread: unshare: %w", err)
			return
		}
		if err := dropCaps(); err != nil {
			errc <- err
			return
		}
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			errc <- fmt.Errorf("landlock: the calls' thread: no_new_privs: %w", err)
			return
		}
		if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rsfd), 0, 0); e != 0 {
			errc <- fmt.Errorf("landlock: the calls' thread: restrict: %w", e)
			return
		}
		errc <- nil
		for f := range a.jobs {
			f()
		}
	}()
	if err := <-errc; err != nil {
		a.wg.Wait()
		return nil, err
	}
	return a, nil
}

// run runs f on the actor's thread and waits for it.
func (a *actor) run(f func()) {
	done := make(chan struct{})
	a.jobs <- func() {
		defer close(done)
		f()
	}
	<-done
}

// stop ends the thread once it has made the call it was given.
func (a *actor) stop() {
	close(a.jobs)
	a.wg.Wait()
}
