package landlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp/notify"
)

// MetadataCalls are the system calls that change file metadata, which
// Landlock has no rights for. The landlock backend routes them to
// guardrun (notify.MetadataServer), which makes each call itself, on
// the object the command named, if MetadataWritable says the command
// may write that object, and answers EACCES (as Landlock answers a
// write it refuses) otherwise.
var MetadataCalls = notify.MetadataCalls

// ErrnoOutside is what a metadata call on an object the command may not
// write fails with: EACCES, as Landlock refuses writes (bwrap's
// read-only mounts say EROFS).
const ErrnoOutside = syscall.EACCES

// metadata serves the metadata calls of one command.
type metadata struct {
	p  *sandbox.Profile
	rs *Ruleset
	// verify, when set (a verified command), judges the real path of
	// an object whose metadata the command may change as a write of
	// the prediction (notify.Verifier.CheckMetadata).
	verify func(r *notify.Request, path string) error
}

// registerMetadata adds the metadata handlers to reg.
func registerMetadata(reg *notify.Registry, p *sandbox.Profile, rs *Ruleset, verify func(*notify.Request, string) error) error {
	m := &metadata{p: p, rs: judgeRuleset(rs), verify: verify}
	srv := &notify.MetadataServer{
		Open: func(r *notify.Request, dirfd int32, path string, nofollow bool) (int, error) {
			return r.Open(dirfd, path, nofollow)
		},
		Judge: m.judgeFD,
	}
	return srv.Register(reg)
}

// judgeFD is the MetadataServer's Judge: the object's real path must be
// MetadataWritable, and for a verified command allowed as a write of
// the prediction.
func (m *metadata) judgeFD(r *notify.Request, fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	path, ok := realPath(fd, &st)
	if !ok || !m.rs.MetadataWritable(m.p, path) {
		return ErrnoOutside
	}
	if m.verify != nil {
		return m.verify(r, path)
	}
	return nil
}

// judgeRuleset is rs as the handlers judge by: the real path of the
// command's temporary directory, as the kernel names objects in it.
func judgeRuleset(rs *Ruleset) *Ruleset {
	tmp := *rs
	if tmp.TmpDir != "" {
		if real, err := filepath.EvalSymlinks(tmp.TmpDir); err == nil {
			tmp.TmpDir = real
		}
	}
	return &tmp
}

// procFD is guardrun's name for its own descriptor fd.
func procFD(fd int) string { return fmt.Sprintf("/proc/self/fd/%d", fd) }

// fail turns an error into the call's answer: the kernel's errno, or
// EPERM for anything unexpected (fail closed).
func fail(err error) notify.Response {
	var e syscall.Errno
	if errors.As(err, &e) {
		return notify.Fail(e)
	}
	return notify.Fail(syscall.EPERM)
}

// object is the file a call names, opened by guardrun (O_PATH), judged.
type object struct {
	fd   int
	link bool // a symbolic link itself (not followed)
	dir  bool
}

func (o *object) close() { unix.Close(o.fd) }

// proc is the object's name through guardrun's descriptor table: a
// path-taking call on it reaches the object itself, whatever happens to
// the names the command used.
func (o *object) proc() string { return procFD(o.fd) }

// judgeBy takes ownership of fd and returns it as an object if allowed
// says yes of its real path, as the kernel names the object guardrun
// holds (the command may write it, or may read it). Anything else (a
// pipe, a socket, a path too long to name) is refused.
func (m *metadata) judgeBy(fd int, allowed func(*sandbox.Profile, string) bool) (*object, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	path, ok := realPath(fd, &st)
	if !ok || !allowed(m.p, path) {
		unix.Close(fd)
		return nil, ErrnoOutside
	}
	kind := st.Mode & unix.S_IFMT
	return &object{fd: fd, link: kind == unix.S_IFLNK, dir: kind == unix.S_IFDIR}, nil
}

// realPath is the path by which the kernel names the object guardrun
// holds at fd (st is its fstat), if that path names the same object in
// guardrun's own mount namespace: ok is false otherwise. The kernel
// names an object by the mounts it was reached through: reached through
// another mount namespace (/proc/PID/root or /proc/PID/cwd of a process
// in a container, or in a service's private /tmp), its path is the one
// it has there, which can be a zone's while the object is a directory
// outside every zone mounted at that path there. So the path is opened
// again here, following no link, and must lead to the same inode.
// Anything that is not a path (pipe:[...], socket:[...], anon_inode:...)
// is refused. An unlinked object (the kernel appends " (deleted)",
// unless a file really has that name) is named by its last path if the
// directory that held it is, here, on the object's own mount.
func realPath(fd int, st *unix.Stat_t) (string, bool) {
	path, err := os.Readlink(procFD(fd))
	if err != nil || !strings.HasPrefix(path, "/") {
		return "", false
	}
	if sameObject(path, st) {
		return path, true
	}
	base, deleted := strings.CutSuffix(path, " (deleted)")
	if !deleted {
		return "", false
	}
	dir, err := openHere(filepath.Dir(base))
	if err != nil {
		return "", false
	}
	defer unix.Close(dir)
	mnt, err1 := mountID(fd)
	dmnt, err2 := mountID(dir)
	if err1 != nil || err2 != nil || mnt != dmnt {
		return "", false
	}
	return base, true
}

// openHere opens path (absolute) as guardrun's O_PATH descriptor,
// following no symbolic or magic link on the way (a link at the end is
// opened itself).
func openHere(path string) (int, error) {
	return unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// sameObject reports whether path, opened here without following links,
// is the object st describes.
func sameObject(path string, st *unix.Stat_t) bool {
	fd, err := openHere(path)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var now unix.Stat_t
	return unix.Fstat(fd, &now) == nil && now.Dev == st.Dev && now.Ino == st.Ino
}

// mountID is the id of the mount the object at fd is on.
func mountID(fd int) (uint64, error) {
	var sx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &sx); err != nil {
		return 0, err
	}
	if sx.Mask&unix.STATX_MNT_ID == 0 {
		return 0, unix.ENOSYS
	}
	return sx.Mnt_id, nil
}
