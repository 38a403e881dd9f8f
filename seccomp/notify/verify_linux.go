//go:build linux

package notify

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
)

// VerifyRoutes are the calls a verified command's filter routes to
// guardrun, with the conditions that send them: every exec, every open
// that may write or create, and every call that creates, removes,
// renames, links or truncates a name. (The metadata calls are routed by
// the backend that makes them: the landlock backend always does.)
func VerifyRoutes() map[string][]seccomp.Cond {
	notDevice := func(arg uint) []seccomp.Cond {
		var out []seccomp.Cond
		for _, v := range []uint64{0, unix.S_IFREG, unix.S_IFIFO, unix.S_IFSOCK} {
			out = append(out, seccomp.Cond{Arg: arg, Mask: unix.S_IFMT, Val: v})
		}
		return out
	}
	const writes = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC | oTmpfileBit
	out := map[string][]seccomp.Cond{
		"open":   seccomp.AnyBit(1, writes),
		"openat": seccomp.AnyBit(2, writes),
		"mknod":  notDevice(1), "mknodat": notDevice(2),
	}
	for _, n := range FileCalls {
		if _, ok := out[n]; !ok {
			out[n] = nil
		}
	}
	for _, n := range ExecCalls {
		out[n] = nil
	}
	return out
}

// oTmpfileBit is __O_TMPFILE: O_TMPFILE without O_DIRECTORY, which every
// open of a directory has.
const oTmpfileBit = unix.O_TMPFILE &^ unix.O_DIRECTORY

// VerifierConfig is what a Verifier knows of the sandbox it serves.
type VerifierConfig struct {
	View View
	// Writable reports whether a process in the sandbox may write path
	// (a path as the caller sees it, with no link in it): programs run
	// without asking only from trees that are not, and the memory an
	// exec is read from may be mapped only from files that are not.
	Writable func(path string) bool
	// Always reports whether a write to path is allowed whatever the
	// prediction: the command's own temporary directory. /dev/null,
	// /dev/zero, /dev/full, /dev/tty, the terminals in /dev/pts and
	// objects that are not on a path (pipes, sockets) always are.
	Always func(path string) bool
}

// Verifier serves the execs and judges the writes of one verified
// command.
type Verifier struct {
	v   *Verify
	cfg VerifierConfig

	mu     sync.Mutex
	labels map[int]string  // pid: the part the program it runs belongs to
	asked  map[string]bool // a held call's key: the answer (asked once per request)
}

// NewVerifier is the Verifier of v for a sandbox described by cfg.
func NewVerifier(v *Verify, cfg VerifierConfig) *Verifier {
	return &Verifier{v: v, cfg: cfg, labels: map[int]string{}, asked: map[string]bool{}}
}

// HandleExec serves execve and execveat: the program and argv are read
// once; an exec the prediction allows (of a program in a tree the
// sandbox cannot write) goes on in the kernel only if nothing but the
// caller can change what was read (ExecSafe); one it does not allow is
// held (Verify.Hold) and goes on, under the same condition, if the
// answer allows it. Otherwise it fails with EPERM, and the call is
// recorded as refused.
func (vr *Verifier) HandleExec(r *Request) Response {
	st, err := r.Status()
	if err != nil {
		return failErr(err)
	}
	c, err := ReadExec(r)
	if err != nil {
		return failErr(err)
	}
	prog, err := r.ResolveExec(vr.cfg.View, c, vr.cfg.Writable)
	if err != nil {
		return failErr(err)
	}
	hc := sandbox.HeldCall{Kind: sandbox.HeldExec, Program: prog.Path, Argv: c.Argv, Pid: r.Pid}
	if err := r.ExecSafe(vr.cfg.View, c, st, vr.cfg.Writable); err != nil {
		if errors.Is(err, ErrGone) {
			return Fail(syscall.EPERM)
		}
		hc.By = vr.label(r.Pid, st)
		var ue *UnsafeExecError
		if errors.As(err, &ue) {
			hc.Reason = "an exec goes on only for a single-threaded caller that shares no memory: " + ue.Why
		} else {
			hc.Reason = "guardrun could not tell whether the caller shares its memory: " + err.Error()
		}
		vr.v.record(hc)
		return Fail(syscall.EPERM)
	}
	if e, ok := vr.v.Prediction.MatchExec(prog.Path, prog.Real, c.Argv); ok && prog.Fixed {
		part := e.Part
		if part == "" {
			part = vr.v.quote(c.Argv)
		}
		vr.setLabel(r.Pid, part)
		return r.ContinueExec()
	}
	hc.By = vr.label(r.Pid, st)
	// One question per program and argv: a shell's search of PATH
	// execs the same program by two names (/usr/bin/x, /bin/x).
	hc.Program = prog.Real
	if !prog.Fixed && hc.Reason == "" {
		if _, ok := vr.v.Prediction.MatchExec(prog.Path, prog.Real, c.Argv); ok {
			hc.Reason = "the program lies where the sandbox can write it"
		}
	}
	if !vr.hold(r, &hc) {
		return Fail(syscall.EPERM)
	}
	vr.setLabel(r.Pid, vr.v.quote(c.Argv))
	return r.ContinueExec()
}

// CheckFile judges a located file call for a FileServer: nil lets it be
// made. A write to the prediction's paths, to what is always allowed or
// to an object that is not on a path is let through, and one the
// sandbox does not let the command write at all (VerifierConfig.Writable)
// is made to fail as it would; a write in procfs never is (EACCES, as a
// read-only tree answers); any other is held and EPERM unless the answer
// allows it. Opens that only read, and unnamed
// files (O_TMPFILE, whose name comes with a link that is judged), are
// not writes.
func (vr *Verifier) CheckFile(r *Request, c *FileCall, dst, src *Located) error {
	if !c.Writes() || c.Op == OpOpen && c.Flags&unix.O_TMPFILE == unix.O_TMPFILE {
		return nil
	}
	if c.Op != OpOpen && (dst.Dot() || src != nil && src.Dot()) {
		return nil // the call fails by itself
	}
	for _, l := range []*Located{dst, src} {
		if l == nil {
			continue
		}
		fd := l.Parent
		if fd < 0 {
			fd = l.Obj
		}
		if OnProcfs(fd) {
			return syscall.EACCES
		}
	}
	if c.Op == OpOpen && controllingTTY(dst) {
		// /dev/tty is the opener's controlling terminal, and the
		// command, in a session of its own, has none (ENXIO, as the
		// kernel answers it). Made by guardrun, the open would be of
		// guardrun's own: the person's terminal.
		return syscall.ENXIO
	}
	if c.Op == OpOpen && r.writesAlready(dst, c.Flags) {
		// Before its path: the object may be on none inside (the copy
		// of /dev/null a bwrap command's standard output is, made
		// outside its root).
		return nil
	}
	dp, err := r.Path(vr.cfg.View, dst)
	if err != nil {
		return err
	}
	ok := vr.allowed(dp)
	var sp string
	if src != nil && !unnamed(src) {
		if sp, err = r.Path(vr.cfg.View, src); err != nil {
			return err
		}
		ok = ok && vr.allowed(sp)
	}
	if ok {
		return nil
	}
	refused := func(p string) bool { return p != "" && !vr.cfg.Writable(p) }
	if vr.cfg.Writable != nil && (refused(dp) || src != nil && refused(sp)) {
		// The sandbox refuses it anyway: made, it fails as it would
		// unverified (EACCES, EROFS), with nothing to ask about. bash
		// opens the terminal its standard input names, and goes on
		// when it cannot.
		return nil
	}
	hc := sandbox.HeldCall{Path: dp, Source: sp, Pid: r.Pid}
	switch c.Op {
	case OpOpen, OpTruncate:
		hc.Kind = sandbox.HeldWrite
		if exists, _ := dst.Exists(); !exists {
			hc.Kind = sandbox.HeldCreate
		}
	case OpMkdir, OpMknod, OpSymlink:
		hc.Kind = sandbox.HeldCreate
	case OpUnlink, OpRmdir:
		hc.Kind = sandbox.HeldRemove
	case OpRename:
		hc.Kind = sandbox.HeldRename
	case OpLink:
		hc.Kind = sandbox.HeldLink
	}
	if st, err := r.Status(); err == nil {
		hc.By = vr.label(r.Pid, st)
	}
	if !vr.hold(r, &hc) {
		return syscall.EPERM
	}
	return nil
}

// writesAlready reports whether l is the object of one of the caller's
// own descriptors that is open for writing (its standard output reopened
// through /dev/stdout, a file it was handed), and reading too if the
// open's flags ask for that: opening it again so gives the caller nothing
// it has not got. A descriptor open for writing only is not reopened for
// reading (a file the caller appends to may be one it cannot read). The
// descriptor itself is looked at (pidfd_getfd: its open file and its
// flags at once), not its number, which another thread can point
// elsewhere meanwhile.
func (r *Request) writesAlready(l *Located, flags int) bool {
	if !l.viaFD || l.Parent >= 0 {
		return false
	}
	fd, err := r.GetFD(l.callerFD)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil || fl&unix.O_PATH != 0 {
		return false
	}
	acc := fl & unix.O_ACCMODE
	held := acc == unix.O_RDWR || acc == unix.O_WRONLY && flags&unix.O_ACCMODE == unix.O_WRONLY
	return held && sameFile(fd, l.Obj)
}

// unnamed reports whether l is a descriptor's object that has no name
// left (an O_TMPFILE file, a removed one): a link gives it its only
// name, so only that name is judged.
func unnamed(l *Located) bool {
	var st unix.Stat_t
	return l.Parent < 0 && unix.Fstat(l.Obj, &st) == nil && st.Nlink == 0 && st.Mode&unix.S_IFMT == unix.S_IFREG
}

// CheckMetadata judges a metadata call (chmod, chown, utimes, an
// extended attribute) on path, the real path of its object: as a write,
// but never always allowed on a device or terminal (allowedMetadata).
func (vr *Verifier) CheckMetadata(r *Request, path string) error {
	if vr.allowedMetadata(path) {
		return nil
	}
	hc := sandbox.HeldCall{Kind: sandbox.HeldMetadata, Path: path, Pid: r.Pid}
	if st, err := r.Status(); err == nil {
		hc.By = vr.label(r.Pid, st)
	}
	if !vr.hold(r, &hc) {
		return syscall.EPERM
	}
	return nil
}

// controllingTTY reports whether l is the character device /dev/tty
// (5, 0), whatever its name.
func controllingTTY(l *Located) bool {
	var st unix.Stat_t
	var err error
	if l.Parent >= 0 {
		err = unix.Fstatat(l.Parent, l.Name, &st, unix.AT_SYMLINK_NOFOLLOW)
	} else {
		err = unix.Fstat(l.Obj, &st)
	}
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && unix.Major(st.Rdev) == 5 && unix.Minor(st.Rdev) == 0
}

// alwaysWritable are the paths a write to is always allowed.
var alwaysWritable = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"}

func (vr *Verifier) allowed(p string) bool {
	if p == "" {
		return true // a pipe, a socket: not a path
	}
	for _, a := range alwaysWritable {
		if p == a {
			return true
		}
	}
	if strings.HasPrefix(p, "/dev/pts/") && !strings.Contains(p[len("/dev/pts/"):], "/") {
		return true
	}
	if vr.cfg.Always != nil && vr.cfg.Always(p) {
		return true
	}
	_, ok := vr.v.Prediction.MatchWrite(p)
	return ok
}

// allowedMetadata is allowed for the metadata calls: not the devices and
// terminals a write to is always allowed, which are the host's own
// (bwrap's /dev/null is the host's: as root, chmod there would reach it),
// whose mode, owner and times are not the command's to change.
func (vr *Verifier) allowedMetadata(p string) bool {
	if p == "" {
		return true // a pipe, a socket: not a path
	}
	if vr.cfg.Always != nil && vr.cfg.Always(p) {
		return true
	}
	_, ok := vr.v.Prediction.MatchWrite(p)
	return ok
}

// hold asks Verify.Hold about hc while the caller waits, and records the
// answer; once a call of the request was refused, the others are refused
// unasked. The question's context ends when the caller stops waiting
// (killed): no one is then asked for nothing.
func (vr *Verifier) hold(r *Request, hc *sandbox.HeldCall) bool {
	key := strings.Join(append([]string{hc.Kind, hc.Program, hc.Path, hc.Source}, hc.Argv...), "\x00")
	vr.mu.Lock()
	answer, ok := vr.asked[key]
	vr.mu.Unlock()
	if ok {
		return answer
	}
	defer func() {
		vr.mu.Lock()
		vr.asked[key] = hc.Allowed
		vr.mu.Unlock()
	}()
	if vr.v.Hold == nil {
		if hc.Reason == "" {
			hc.Reason = "no one can be asked"
		}
		vr.v.record(*hc)
		return false
	}
	if _, refused := vr.v.Refused(); refused {
		// The request ends refused already: a question more would be
		// for nothing (and a stream of them can wear a person down to
		// a yes).
		hc.Reason = "the request was refused at an earlier call"
		vr.v.record(*hc)
		return false
	}
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if r.Valid() != nil {
					cancel()
					return
				}
			}
		}
	}()
	// Asked on a goroutine of its own, off this worker's thread, which
	// has given up guardrun's capabilities: the question is guardrun's
	// (a prompt on the person's terminal looks at who holds it, which
	// as root takes root's rights).
	var allowed bool
	var err error
	asked := make(chan struct{})
	go func() {
		defer close(asked)
		allowed, err = vr.v.Hold(ctx, *hc)
	}()
	<-asked
	cancel()
	<-watched
	if err != nil {
		allowed = false
		if hc.Reason == "" {
			hc.Reason = err.Error()
		}
	}
	if allowed && r.Valid() != nil {
		allowed = false
		hc.Reason = "the caller stopped waiting"
	}
	hc.Allowed = allowed
	vr.v.record(*hc)
	return allowed
}

func (vr *Verifier) setLabel(pid int, part string) {
	vr.mu.Lock()
	vr.labels[pid] = part
	vr.mu.Unlock()
}

// label is the part the program pid runs belongs to: the last exec
// guardrun let it, or a parent of it, make; else its command line.
func (vr *Verifier) label(pid int, st Status) string {
	p, s := pid, st
	for depth := 0; depth < 32 && p > 1; depth++ {
		vr.mu.Lock()
		l, ok := vr.labels[p]
		vr.mu.Unlock()
		if ok {
			return l
		}
		next, err := readStatus(s.PPid)
		if err != nil {
			break
		}
		p, s = s.PPid, next
	}
	b, err := readSmall("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return fmt.Sprintf("process %d", pid)
	}
	argv := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	return vr.v.quote(argv)
}
