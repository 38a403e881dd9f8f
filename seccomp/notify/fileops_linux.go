//go:build linux

package notify

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Op is the kind of change to the file system a call asks for.
type Op int

// The file operations DecodeFile reads.
const (
	OpOpen     Op = iota + 1 // open, openat, creat (routed for writing or creating)
	OpTruncate               // truncate
	OpMkdir                  // mkdir, mkdirat
	OpMknod                  // mknod, mknodat (no devices: the filter refuses them)
	OpUnlink                 // unlink, unlinkat
	OpRmdir                  // rmdir, unlinkat with AT_REMOVEDIR
	OpRename                 // rename, renameat, renameat2
	OpLink                   // link, linkat
	OpSymlink                // symlink, symlinkat
)

// FileCalls are the system calls DecodeFile reads.
var FileCalls = []string{
	"open", "openat", "creat", "truncate",
	"mkdir", "mkdirat", "mknod", "mknodat",
	"unlink", "unlinkat", "rmdir",
	"rename", "renameat", "renameat2",
	"link", "linkat", "symlink", "symlinkat",
}

// Target is one path argument of a file call: what the caller named
// and whether the kernel follows a symbolic link at its end.
type Target struct {
	Dirfd  int32
	Path   string
	Follow bool
}

// FileCall is a file system call of the caller, its paths read once
// from its memory.
type FileCall struct {
	Op Op
	// Path is what the call opens, creates, truncates or removes; for a
	// rename or a link, the destination.
	Path Target
	// Source is a rename's or link's source.
	Source Target
	// Flags are the open flags, renameat2's or linkat's flags.
	Flags int
	// Mode is the mode a new file or directory is created with (before
	// the umask), with the file type for mknod.
	Mode uint32
	// Dev is mknod's device number.
	Dev uint64
	// Length is truncate's length.
	Length int64
	// Content is a symbolic link's target.
	Content string
}

// Creates reports whether the open may create a file (O_CREAT or
// O_TMPFILE).
func (c *FileCall) Creates() bool {
	return c.Op == OpOpen && c.Flags&(unix.O_CREAT|unix.O_TMPFILE) != 0
}

// Writes reports whether the open writes or creates (O_PATH opens do
// neither, whatever their other flags).
func (c *FileCall) Writes() bool {
	if c.Op != OpOpen {
		return true
	}
	if c.Flags&unix.O_PATH != 0 {
		return false
	}
	return c.Flags&(unix.O_WRONLY|unix.O_RDWR|unix.O_CREAT|unix.O_TRUNC|unix.O_TMPFILE) != 0
}

// DecodeFile reads the call r as a FileCall: its paths from the caller's
// memory, once, and its flags as the kernel checks them (EINVAL where
// the kernel would say so).
func DecodeFile(r *Request) (*FileCall, error) {
	a := r.Args
	path := func(i int) (string, error) { return r.ReadPath(a[i]) }
	c := &FileCall{}
	var err error
	at := func(dirfd int, p int) {
		c.Path.Dirfd = AtFDCWD
		if dirfd >= 0 {
			c.Path.Dirfd = r.FDArg(dirfd)
		}
		if err == nil {
			c.Path.Path, err = path(p)
		}
	}
	switch r.Syscall {
	case "open":
		c.Op, c.Flags, c.Mode = OpOpen, int(int32(uint32(a[1]))), uint32(a[2])
		at(-1, 0)
	case "openat":
		c.Op, c.Flags, c.Mode = OpOpen, int(int32(uint32(a[2]))), uint32(a[3])
		at(0, 1)
	case "creat":
		c.Op, c.Flags, c.Mode = OpOpen, unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, uint32(a[1])
		at(-1, 0)
	case "truncate":
		c.Op, c.Length = OpTruncate, int64(a[1])
		at(-1, 0)
		c.Path.Follow = true
		if c.Length < 0 {
			return nil, syscall.EINVAL
		}
	case "mkdir":
		c.Op, c.Mode = OpMkdir, uint32(a[1])
		at(-1, 0)
	case "mkdirat":
		c.Op, c.Mode = OpMkdir, uint32(a[2])
		at(0, 1)
	case "mknod":
		c.Op, c.Mode, c.Dev = OpMknod, uint32(a[1]), a[2]
		at(-1, 0)
	case "mknodat":
		c.Op, c.Mode, c.Dev = OpMknod, uint32(a[2]), a[3]
		at(0, 1)
	case "unlink":
		c.Op = OpUnlink
		at(-1, 0)
	case "rmdir":
		c.Op = OpRmdir
		at(-1, 0)
	case "unlinkat":
		f := int(uint32(a[2]))
		if f&^unix.AT_REMOVEDIR != 0 {
			return nil, syscall.EINVAL
		}
		c.Op = OpUnlink
		if f&unix.AT_REMOVEDIR != 0 {
			c.Op = OpRmdir
		}
		at(0, 1)
	case "rename", "link":
		c.Op = OpRename
		if r.Syscall == "link" {
			c.Op = OpLink
		}
		at(-1, 1)
		c.Source.Dirfd = AtFDCWD
		if err == nil {
			c.Source.Path, err = path(0)
		}
	case "renameat", "renameat2", "linkat":
		switch r.Syscall {
		case "renameat2":
			c.Flags = int(uint32(a[4]))
			if c.Flags&^(unix.RENAME_NOREPLACE|unix.RENAME_EXCHANGE|unix.RENAME_WHITEOUT) != 0 {
				return nil, syscall.EINVAL
			}
		case "linkat":
			c.Flags = int(uint32(a[4]))
			if c.Flags&^(unix.AT_SYMLINK_FOLLOW|unix.AT_EMPTY_PATH) != 0 {
				return nil, syscall.EINVAL
			}
		}
		c.Op = OpRename
		if r.Syscall == "linkat" {
			c.Op = OpLink
			c.Source.Follow = c.Flags&unix.AT_SYMLINK_FOLLOW != 0
		}
		at(2, 3)
		c.Source.Dirfd = r.FDArg(0)
		if err == nil {
			c.Source.Path, err = path(1)
		}
	case "symlink":
		c.Op = OpSymlink
		at(-1, 1)
		if err == nil {
			c.Content, err = path(0)
		}
	case "symlinkat":
		c.Op = OpSymlink
		at(1, 2)
		if err == nil {
			c.Content, err = path(0)
		}
	default:
		return nil, syscall.ENOSYS
	}
	if err != nil {
		return nil, err
	}
	if c.Op == OpOpen {
		// The kernel follows a final link unless told not to, or the
		// call creates exclusively (then a link there is EEXIST).
		excl := c.Flags&unix.O_CREAT != 0 && c.Flags&unix.O_EXCL != 0
		c.Path.Follow = c.Flags&unix.O_NOFOLLOW == 0 && !excl
		if c.Flags&unix.O_TMPFILE == unix.O_TMPFILE && c.Flags&(unix.O_WRONLY|unix.O_RDWR) == 0 {
			return nil, syscall.EINVAL // as the kernel says
		}
	}
	if c.Path.Path == "" || (c.Op == OpRename || c.Op == OpLink) && c.Source.Path == "" {
		// An empty path is ENOENT; linkat's AT_EMPTY_PATH needs
		// CAP_DAC_READ_SEARCH, which the command has not, and is
		// ENOENT without it.
		return nil, syscall.ENOENT
	}
	return c, nil
}

// View is how a caller's paths are resolved: from guardrun's own root
// (the caller shares guardrun's mount namespace and root: the landlock
// backend), or inside the caller's root (another mount namespace: the
// bwrap backend's sandbox), where absolute links and ".." stay within
// it, as the kernel keeps them for the caller.
type View struct {
	// InRoot resolves through /proc/PID/root (RESOLVE_IN_ROOT).
	InRoot bool
}

// Located is a path resolved as the kernel would for the caller, held as
// guardrun's own descriptors: the directory that holds the last
// component and that component's name (the call then acts with the *at
// form on the directory and a plain name, so nothing resolved can move
// under it), or, for a path that ends at an object itself (a descriptor
// reopened through /proc/self/fd/N, the directory of O_TMPFILE), that
// object.
type Located struct {
	// Parent is an O_PATH descriptor of the directory; -1 with Obj.
	Parent int
	// Name is the last component, never empty, without slashes ("." and
	// ".." included, as the caller wrote them).
	Name string
	// Slash: the path ended in a slash (the name must be a directory).
	Slash bool
	// Obj is an O_PATH descriptor of the object itself; -1 with Parent.
	Obj int

	// viaFD: Obj is what the caller's descriptor callerFD leads to (the
	// path was /proc/self/fd/N, /dev/fd/N or /dev/std*).
	viaFD    bool
	callerFD int32
}

// Close releases the descriptors.
func (l *Located) Close() {
	if l == nil {
		return
	}
	if l.Parent >= 0 {
		unix.Close(l.Parent)
	}
	if l.Obj >= 0 {
		unix.Close(l.Obj)
	}
	l.Parent, l.Obj = -1, -1
}

// Dot reports whether the name is "." or "..", which no call creates or
// removes.
func (l *Located) Dot() bool { return l.Parent >= 0 && (l.Name == "." || l.Name == "..") }

// at is the name the *at call is given: the trailing slash kept, so the
// kernel applies its own rules for it (a directory required; no link at
// the name followed by the calls that do not follow one).
func (l *Located) at() string {
	if l.Slash {
		return l.Name + "/"
	}
	return l.Name
}

// maxLinks is the kernel's limit on symbolic links followed in one
// resolution (MAXSYMLINKS).
const maxLinks = 40

// procRootIno is the inode number of a procfs's root (PROC_ROOT_INO).
const procRootIno = 1

// resolver resolves the paths of one notification.
type resolver struct {
	r    *Request
	view View
	root int // O_PATH: the caller's root (InRoot), or guardrun's /
	tgid int
	// startFD is the caller's descriptor the last start opened, when
	// it opened the object of one (ownStart); -1 otherwise.
	startFD int32
}

func (r *Request) resolver(v View) (*resolver, error) {
	res := &resolver{r: r, view: v, root: -1, startFD: -1}
	p := "/"
	if v.InRoot {
		p = "/proc/" + strconv.Itoa(r.Pid) + "/root"
	}
	fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if verr := r.Valid(); verr != nil {
			return nil, verr
		}
		return nil, err
	}
	if v.InRoot {
		if err := r.Valid(); err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	res.root = fd
	return res, nil
}

func (res *resolver) close() {
	if res.root >= 0 {
		unix.Close(res.root)
		res.root = -1
	}
}

func dupFD(fd int) (int, error) {
	return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
}

// start is where resolving path begins: the root for an absolute path
// (or the caller's own process file it names: ownStart), the caller's
// working directory or dirfd otherwise; and what is left of path.
func (res *resolver) start(dirfd int32, path string, follow bool) (int, string, error) {
	res.startFD = -1
	if strings.HasPrefix(path, "/") {
		if fd, rest, ok, err := res.ownStart(path, follow); ok || err != nil {
			return fd, rest, err
		}
		fd, err := dupFD(res.root)
		return fd, strings.TrimLeft(path, "/"), err
	}
	fd, err := res.r.Dir(dirfd)
	return fd, path, err
}

// ownStart handles a path that names the caller's own process files
// (/proc/self, /proc/thread-self, /dev/fd/N, /dev/stdin, /dev/stdout,
// /dev/stderr): resolved here as they are, they would name guardrun's
// own (or nothing, in another pid namespace). They are opened through
// the caller's /proc/PID instead: a descriptor (fd/N), the working
// directory (cwd) or root (root) as the object it leads to, as the
// kernel follows those links for the caller (unless the path ends at
// one and the call does not follow: then the directory that holds the
// link, and its name); anything else there as the directory /proc/PID
// with the rest of the path to resolve (and procfs refuses what is
// written there; see Located's users).
func (res *resolver) ownStart(path string, follow bool) (int, string, bool, error) {
	var rest string
	matched := false
	for _, m := range []struct{ from, to string }{
		{"/proc/self", ""},
		{"/proc/thread-self", ""},
		{"/dev/fd", "fd"},
		{"/dev/stdin", "fd/0"},
		{"/dev/stdout", "fd/1"},
		{"/dev/stderr", "fd/2"},
	} {
		if path == m.from || strings.HasPrefix(path, m.from+"/") {
			rest = strings.TrimLeft(m.to+strings.TrimPrefix(path, m.from), "/")
			matched = true
			break
		}
	}
	if !matched {
		return -1, "", false, nil
	}
	if res.tgid == 0 {
		st, err := res.r.Status()
		if err != nil {
			return -1, "", true, err
		}
		res.tgid = st.Tgid
	}
	base := "/proc/" + strconv.Itoa(res.tgid)
	comps := strings.SplitN(strings.TrimRight(rest, "/"), "/", 3)
	slash := strings.HasSuffix(rest, "/")
	obj := ""
	switch {
	case len(comps) >= 2 && comps[0] == "fd":
		if _, err := strconv.Atoi(comps[1]); err == nil {
			obj = base + "/fd/" + comps[1]
			rest = strings.Join(comps[2:], "/")
		}
	case len(comps) >= 1 && (comps[0] == "cwd" || comps[0] == "root"):
		obj = base + "/" + comps[0]
		rest = strings.Join(comps[1:], "/")
	}
	if obj != "" && rest == "" && !follow && !slash {
		// The link itself is what the call names.
		dir, name := obj[:strings.LastIndexByte(obj, '/')], obj[strings.LastIndexByte(obj, '/')+1:]
		obj, rest = dir, name
	} else if rest == "" && slash {
		rest = "."
	}
	flags := unix.O_PATH | unix.O_CLOEXEC
	if obj == "" {
		obj = base
	}
	callerFD := int32(-1)
	if dir, n, ok := strings.Cut(obj, "/fd/"); ok && dir == base && rest == "" {
		if v, err := strconv.Atoi(n); err == nil && v >= 0 && v <= math.MaxInt32 {
			callerFD = int32(v)
		}
	}
	if !strings.Contains(obj, "/fd/") && !strings.HasSuffix(obj, "/cwd") && !strings.HasSuffix(obj, "/root") {
		flags |= unix.O_DIRECTORY
	}
	fd, err := unix.Open(obj, flags, 0)
	if verr := res.r.Valid(); verr != nil {
		if err == nil {
			unix.Close(fd)
		}
		return -1, "", true, verr
	}
	if err != nil {
		if errors.Is(err, unix.ENOENT) && strings.Contains(obj, "/fd/") {
			err = unix.EBADF
		}
		return -1, "", true, err
	}
	res.startFD = callerFD
	return fd, rest, true, nil
}

// dir opens the directory rel names from start (O_PATH), as the kernel
// would for the caller: every link on the way followed, except magic
// links (/proc/PID/fd/N and its kind, which lead wherever the process
// that holds them reaches: guardrun's own, here) and, InRoot, anything
// that would leave the caller's root.
func (res *resolver) dir(start int, rel string) (int, error) {
	if rel == "" {
		rel = "."
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	dirfd := start
	if res.view.InRoot {
		how.Resolve |= unix.RESOLVE_IN_ROOT
		if !res.isRoot(start) {
			base, err := res.sandboxPath(start)
			if err != nil {
				return -1, err
			}
			rel = base + "/" + rel
		}
		dirfd = res.root
	}
	fd, err := unix.Openat2(dirfd, rel, &how)
	if errors.Is(err, unix.EXDEV) {
		// A magic link, or a way out of the root: what the caller's
		// kernel would have followed, guardrun does not.
		err = unix.EACCES
	}
	return fd, err
}

func (res *resolver) isRoot(fd int) bool {
	var a, b unix.Stat_t
	return unix.Fstat(fd, &a) == nil && unix.Fstat(res.root, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino
}

// sandboxPath is the path of the directory at fd inside the caller's
// root: the kernel's name for it (which it gives relative to the
// namespace the object was reached through) checked to lead, from the
// root and following no link, to the same directory.
func (res *resolver) sandboxPath(fd int) (string, error) {
	p, err := os.Readlink(procFD(fd))
	if err != nil || !strings.HasPrefix(p, "/") || strings.HasSuffix(p, " (deleted)") {
		return "", unix.EACCES
	}
	ofd, err := unix.Openat2(res.root, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return "", unix.EACCES
	}
	defer unix.Close(ofd)
	if !sameFile(fd, ofd) {
		return "", unix.EACCES
	}
	return p, nil
}

func sameFile(a, b int) bool {
	var x, y unix.Stat_t
	return unix.Fstat(a, &x) == nil && unix.Fstat(b, &y) == nil && x.Dev == y.Dev && x.Ino == y.Ino
}

func procFD(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// threadFD is the calling thread's own name for its descriptor fd: a
// path-taking call on it reaches the object itself (Landlock and the
// permission checks judge that object), and only this thread group's
// table is looked at.
func threadFD(fd int) string { return "/proc/thread-self/fd/" + strconv.Itoa(fd) }

// splitPath splits rel (relative, no leading slash) into the directory
// part and the last component, and says whether it ended in slashes.
func splitPath(rel string) (dir, name string, slash bool) {
	trimmed := strings.TrimRight(rel, "/")
	slash = len(trimmed) != len(rel)
	if i := strings.LastIndexByte(trimmed, '/'); i >= 0 {
		return trimmed[:i], trimmed[i+1:], slash
	}
	return "", trimmed, slash
}

// Locate resolves t for the caller as its kernel would (View), following
// a link at its end when t.Follow says the call does (and a trailing
// slash does), and returns where the call acts. obj asks for the object
// the path names rather than its directory and name (O_TMPFILE's
// directory).
func (r *Request) Locate(v View, t Target, obj bool) (*Located, error) {
	res, err := r.resolver(v)
	if err != nil {
		return nil, err
	}
	defer res.close()
	return res.locate(t, obj)
}

func (res *resolver) locate(t Target, obj bool) (*Located, error) {
	start, rest, err := res.start(t.Dirfd, t.Path, t.Follow || obj)
	if err != nil {
		return nil, err
	}
	for links := 0; ; {
		if strings.Trim(rest, "/") == "" {
			// The path ends at the start itself: "/", a descriptor of
			// the caller's (/proc/self/fd/N), its cwd.
			return &Located{Parent: -1, Obj: start, viaFD: res.startFD >= 0, callerFD: res.startFD}, nil
		}
		if obj {
			how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC}
			if !t.Follow {
				how.Flags |= unix.O_NOFOLLOW
			}
			dir, name, _ := splitPath(rest)
			parent, err := res.dir(start, dir)
			unix.Close(start)
			if err != nil {
				return nil, err
			}
			if !t.Follow {
				fd, err := unix.Openat2(parent, name, &how)
				unix.Close(parent)
				if err != nil {
					return nil, err
				}
				return &Located{Parent: -1, Obj: fd}, nil
			}
			// Followed: the directory the whole path leads to.
			fd, err := res.dir(parent, name)
			unix.Close(parent)
			if err != nil {
				return nil, err
			}
			return &Located{Parent: -1, Obj: fd}, nil
		}
		dir, name, slash := splitPath(rest)
		parent, err := res.dir(start, dir)
		unix.Close(start)
		if err != nil {
			return nil, err
		}
		l := &Located{Parent: parent, Name: name, Slash: slash, Obj: -1}
		if !t.Follow || l.Dot() {
			return l, nil
		}
		var st unix.Stat_t
		if err := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
			return l, nil
		}
		// A link at the end, followed as the kernel follows it.
		if links++; links > maxLinks {
			l.Close()
			return nil, syscall.ELOOP
		}
		if OnProcfs(parent) {
			// procfs: /proc/self and /proc/thread-self are the
			// caller's; every other link there is a magic link of
			// some process (its descriptors, cwd, root), which leads
			// where that process's descriptor leads, not where its
			// text says: not followed.
			var pst unix.Stat_t
			if (name == "self" || name == "thread-self") && unix.Fstat(parent, &pst) == nil && pst.Ino == procRootIno {
				unix.Close(parent)
				own := "/proc/" + name
				if slash {
					own += "/"
				}
				if start, rest, err = res.start(AtFDCWD, own, true); err != nil {
					return nil, err
				}
				continue
			}
			l.Close()
			return nil, syscall.EACCES
		}
		target, err := readlinkat(parent, name)
		if err != nil {
			l.Close()
			return nil, err
		}
		if target == "" {
			l.Close()
			return nil, syscall.ENOENT
		}
		if slash {
			target += "/"
		}
		if strings.HasPrefix(target, "/") {
			unix.Close(parent)
			if start, rest, err = res.start(AtFDCWD, target, true); err != nil {
				return nil, err
			}
			continue
		}
		start, rest = parent, target
		res.startFD = -1
	}
}

func readlinkat(dirfd int, name string) (string, error) {
	buf := make([]byte, PathMax)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return "", err
	}
	if n >= len(buf) {
		return "", syscall.ENAMETOOLONG
	}
	return string(buf[:n]), nil
}

// Path is the path of what l locates as the caller sees it (inside its
// root, InRoot), with no link in it, or "" for an object that has none
// (a pipe, a socket). A directory guardrun cannot name for certain (one
// reached through another namespace, removed, or renamed since) is
// EACCES.
func (r *Request) Path(v View, l *Located) (string, error) {
	res, err := r.resolver(v)
	if err != nil {
		return "", err
	}
	defer res.close()
	fd := l.Parent
	if fd < 0 {
		fd = l.Obj
	}
	var p string
	if v.InRoot {
		p, err = res.sandboxPathAny(fd)
	} else {
		p, err = hostPath(fd)
	}
	if err != nil || p == "" || l.Parent < 0 {
		return p, err
	}
	if p == "/" {
		return "/" + l.Name, nil
	}
	return p + "/" + l.Name, nil
}

// sandboxPathAny is sandboxPath for any object: "" for one that is not
// on a path (pipe:[...]).
func (res *resolver) sandboxPathAny(fd int) (string, error) {
	link, err := os.Readlink(procFD(fd))
	if err != nil {
		return "", unix.EACCES
	}
	if !strings.HasPrefix(link, "/") {
		return "", nil
	}
	return res.sandboxPath(fd)
}

// hostPath is the real path of the object at fd in guardrun's own mount
// namespace (the same object when opened again from the root, following
// no link), "" for one that is not on a path.
func hostPath(fd int) (string, error) {
	link, err := os.Readlink(procFD(fd))
	if err != nil {
		return "", unix.EACCES
	}
	if !strings.HasPrefix(link, "/") {
		return "", nil
	}
	if strings.HasSuffix(link, " (deleted)") {
		return "", unix.EACCES
	}
	ofd, err := unix.Openat2(unix.AT_FDCWD, link, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return "", unix.EACCES
	}
	defer unix.Close(ofd)
	if !sameFile(fd, ofd) {
		return "", unix.EACCES
	}
	return link, nil
}

// OnProcfs reports whether the object at fd lives in a procfs: writes
// there are never made for the caller (/proc/PID/mem would write a
// process's memory).
func OnProcfs(fd int) bool {
	var s unix.Statfs_t
	if err := unix.Fstatfs(fd, &s); err != nil {
		return true // unknown: as if it were
	}
	return s.Type == unix.PROC_SUPER_MAGIC
}

// Exists reports whether l's name exists (without following a link at
// it), and whether it is a directory.
func (l *Located) Exists() (exists, dir bool) {
	if l.Parent < 0 {
		return true, false
	}
	var st unix.Stat_t
	if unix.Fstatat(l.Parent, l.Name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false, false
	}
	return true, st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// Performer is where and how a file call is made for the caller.
type Performer struct {
	// Run runs f on the thread that makes the call and waits for it
	// (a thread restricted as the command is, or more: see the
	// landlock backend), or returns without running it when it cannot
	// (the call then fails with EPERM); nil runs f on the calling
	// worker.
	Run func(f func())
	// NewFile, when set, is asked for an unnamed regular file on the
	// file system of the directory parent (O_TMPFILE, owned by the
	// caller's user) to put at a name the call creates instead of a new
	// one (and to give an O_TMPFILE open); the file must be one the
	// caller may read and write once it has a name. The call closes it.
	// -1 for none left: a file that does not exist is then not created
	// (EACCES), since the thread that acts may not open what it would
	// create.
	NewFile func(parent int) int
	// NewDir, when set, is asked for an empty directory on the file
	// system of parent to rename to the name a mkdir makes instead of
	// making one: dir is guardrun's descriptor of the directory it is in,
	// name its name there; ok false for none.
	NewDir func(parent int) (dir int, name string, ok bool)
}

// ErrRetry is what Perform says when a name the call was to act on
// without following changed into a link between Locate and the call:
// locate again.
var ErrRetry = errors.New("notify: the name changed while the call was made; locate it again")

// Perform makes c on the caller's behalf at dst (and src, for a rename
// or a link), with the caller's umask, on pf's thread, and returns what
// the call returns: for an open, the new descriptor (installed in the
// caller with the answer). It acts only through the directories Locate
// resolved, with plain names, never following a link at the name where
// the kernel would not (and where it would, Locate has followed it: a
// link found there now is ErrRetry).
func Perform(pf Performer, c *FileCall, dst, src *Located, umask uint32) (resp Response, err error) {
	run := pf.Run
	if run == nil {
		run = func(f func()) { f() }
	}
	// A Run that could not run f (no thread left to make the call)
	// leaves this: the call fails.
	resp = Fail(syscall.EPERM)
	run(func() {
		resp, err = perform(pf, c, dst, src, umask)
	})
	return resp, err
}

func perform(pf Performer, c *FileCall, dst, src *Located, umask uint32) (Response, error) {
	if c.Op != OpOpen && (dst.Dot() || src != nil && src.Dot()) {
		// (An open of "." or ".." is the kernel's to answer: it opens
		// the directory, or refuses to write one.)
		return Fail(dotErrno(c.Op, dst.Name)), nil
	}
	if dst.Parent < 0 && c.Op != OpOpen && c.Op != OpTruncate {
		// A process file itself (/proc/self/fd/N, "/"): nothing to
		// create or remove there.
		return Fail(dotErrno(c.Op, "")), nil
	}
	switch c.Op {
	case OpMkdir, OpMknod, OpOpen:
		// The thread's own (its CLONE_FS is unshared): the caller's,
		// so that the kernel applies it as for the caller (a default
		// ACL included).
		unix.Umask(int(umask & 0o777))
	}
	switch c.Op {
	case OpOpen:
		return performOpen(pf, c, dst, umask)
	case OpTruncate:
		return performTruncate(c, dst)
	case OpMkdir:
		if pf.NewDir != nil {
			if exists, _ := dst.Exists(); !exists {
				if dir, name, ok := pf.NewDir(dst.Parent); ok {
					// The mode it would have been made with, then
					// in place, never over anything.
					if unix.Fchmodat(dir, name, c.Mode&0o7777&^umask, 0) == nil {
						err := unix.Renameat2(dir, name, dst.Parent, dst.Name, unix.RENAME_NOREPLACE)
						if err == nil || errors.Is(err, unix.EEXIST) {
							return done(err)
						}
					}
				}
			}
		}
		return done(unix.Mkdirat(dst.Parent, dst.at(), c.Mode&0o7777))
	case OpMknod:
		return done(unix.Mknodat(dst.Parent, dst.at(), c.Mode, int(c.Dev)))
	case OpUnlink:
		return done(unix.Unlinkat(dst.Parent, dst.at(), 0))
	case OpRmdir:
		return done(unix.Unlinkat(dst.Parent, dst.at(), unix.AT_REMOVEDIR))
	case OpRename:
		return done(unix.Renameat2(src.Parent, src.at(), dst.Parent, dst.at(), uint(c.Flags)))
	case OpLink:
		if src.Parent < 0 {
			// A descriptor's object (an O_TMPFILE given a name): linked
			// through this thread's own name for it.
			return done(unix.Linkat(unix.AT_FDCWD, threadFD(src.Obj), dst.Parent, dst.at(), unix.AT_SYMLINK_FOLLOW))
		}
		// Locate followed a link at the source where the call does;
		// the source itself is linked now.
		return done(unix.Linkat(src.Parent, src.at(), dst.Parent, dst.at(), 0))
	case OpSymlink:
		return done(unix.Symlinkat(c.Content, dst.Parent, dst.at()))
	}
	return Fail(syscall.ENOSYS), nil
}

func done(err error) (Response, error) {
	if err != nil {
		var e syscall.Errno
		if errors.As(err, &e) {
			return Fail(e), nil
		}
		return Fail(syscall.EPERM), nil
	}
	return Value(0), nil
}

// dotErrno is what the kernel answers for "." or ".." as the name a
// call creates or removes (or, with name "", for a process file itself).
func dotErrno(op Op, name string) syscall.Errno {
	switch op {
	case OpMkdir, OpMknod, OpSymlink, OpLink:
		return syscall.EEXIST
	case OpRmdir:
		if name == "." {
			return syscall.EINVAL
		}
		return syscall.ENOTEMPTY
	case OpRename:
		return syscall.EBUSY
	case OpUnlink, OpOpen, OpTruncate:
		return syscall.EISDIR
	}
	return syscall.EPERM
}

// guardrunOpen are flags every open made for the caller gets on
// guardrun's side: guardrun's copy never crosses an exec, and a terminal
// opened never becomes guardrun's controlling one. The caller's copy
// gets the caller's O_CLOEXEC.
const guardrunOpen = unix.O_CLOEXEC | unix.O_NOCTTY

func performOpen(pf Performer, c *FileCall, dst *Located, umask uint32) (Response, error) {
	flags := c.Flags | guardrunOpen
	if dst.Parent < 0 {
		// The object itself: reopened through this thread's name
		// for it, as the kernel reopens /proc/self/fd/N.
		if c.Flags&unix.O_TMPFILE == unix.O_TMPFILE {
			if pf.NewFile != nil && c.Flags&unix.O_EXCL == 0 {
				// One of NewFile's, which is unnamed and may be
				// linked as this one may.
				tmp := pf.NewFile(dst.Obj)
				if tmp < 0 {
					return Fail(syscall.EACCES), nil
				}
				{
					defer unix.Close(tmp)
					if err := unix.Fchmod(tmp, c.Mode&0o7777&^umask); err != nil {
						return done(err)
					}
					fd, err := unix.Open(threadFD(tmp), flags&^(unix.O_TMPFILE|unix.O_CREAT|unix.O_EXCL|unix.O_TRUNC), 0)
					if err != nil {
						return done(err)
					}
					return FD(fd, c.Flags&unix.O_CLOEXEC != 0), nil
				}
			}
			fd, err := unix.Openat(dst.Obj, ".", flags, c.Mode&0o7777)
			if err != nil {
				return done(err)
			}
			return FD(fd, c.Flags&unix.O_CLOEXEC != 0), nil
		}
		if c.Flags&unix.O_CREAT != 0 && c.Flags&unix.O_EXCL != 0 {
			return Fail(syscall.EEXIST), nil
		}
		if c.Flags&unix.O_NOFOLLOW != 0 {
			return Fail(syscall.ELOOP), nil // a magic link, not followed
		}
		fd, err := unix.Open(threadFD(dst.Obj), flags&^(unix.O_CREAT|unix.O_EXCL), 0)
		if err != nil {
			return done(err)
		}
		return FD(fd, c.Flags&unix.O_CLOEXEC != 0), nil
	}
	flags |= unix.O_NOFOLLOW
	if c.Flags&unix.O_CREAT != 0 && pf.NewFile != nil && !dst.Slash {
		if resp, ok := openNew(pf, c, dst, flags, umask); ok {
			return resp, nil
		}
	}
	fd, err := unix.Openat(dst.Parent, dst.at(), flags, c.Mode&0o7777)
	if errors.Is(err, unix.ELOOP) && c.Path.Follow {
		return Response{}, ErrRetry
	}
	if err != nil {
		return done(err)
	}
	return FD(fd, c.Flags&unix.O_CLOEXEC != 0), nil
}

// openNew creates the file an O_CREAT open asks for from one NewFile
// gives, when the name does not exist: the file gets the time now, is
// linked at the name, opened there as the call asks and then given the
// mode the call asks for (less the umask), as a new file gets it: after
// the open, which a new file's mode does not limit. ok is false when the
// name exists (or appeared meanwhile): the open is then made as it is;
// with no file left, a new one is refused.
func openNew(pf Performer, c *FileCall, dst *Located, flags int, umask uint32) (Response, bool) {
	if exists, _ := dst.Exists(); exists {
		return Response{}, false
	}
	tmp := pf.NewFile(dst.Parent)
	if tmp < 0 {
		return Fail(syscall.EACCES), true
	}
	defer unix.Close(tmp)
	_ = unix.UtimesNanoAt(unix.AT_FDCWD, threadFD(tmp), nil, 0)
	if err := unix.Linkat(unix.AT_FDCWD, threadFD(tmp), dst.Parent, dst.Name, unix.AT_SYMLINK_FOLLOW); err != nil {
		return Response{}, false
	}
	fd, err := unix.Openat(dst.Parent, dst.Name, flags&^(unix.O_CREAT|unix.O_EXCL), 0)
	if err != nil {
		// Linked but not opened (a rename in between): the name
		// stays, as a created file would; the call fails as the open.
		_ = unix.Fchmod(tmp, c.Mode&0o7777&^umask)
		r, _ := done(err)
		return r, true
	}
	if err := unix.Fchmod(tmp, c.Mode&0o7777&^umask); err != nil {
		unix.Close(fd)
		r, _ := done(err)
		return r, true
	}
	return FD(fd, c.Flags&unix.O_CLOEXEC != 0), true
}

func performTruncate(c *FileCall, dst *Located) (Response, error) {
	fd := dst.Obj
	if dst.Parent >= 0 {
		var err error
		fd, err = unix.Openat(dst.Parent, dst.at(), unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return done(err)
		}
		defer unix.Close(fd)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return done(err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		return Fail(syscall.EISDIR), nil
	case unix.S_IFLNK:
		return Response{}, ErrRetry
	default:
		return Fail(syscall.EINVAL), nil
	}
	return done(unix.Truncate(threadFD(fd), c.Length))
}

// String names the call for errors and the audit.
func (c *FileCall) String() string {
	return fmt.Sprintf("%d %q", c.Op, c.Path.Path)
}

// FileServer serves the file calls of FileCalls: it reads each once
// (DecodeFile), resolves its paths as the caller's kernel would
// (Locate), asks Decide how (or whether) to make it, and makes it on the
// caller's behalf (Perform). It never lets the kernel carry on with the
// caller's arguments.
type FileServer struct {
	View View
	// Decide says how the located call is made, or the error it fails
	// with (EACCES where the sandbox refuses it, EPERM where a person
	// did). It may block while a person is asked. dst and src stay
	// owned by the FileServer.
	Decide func(r *Request, c *FileCall, dst, src *Located) (Performer, error)
	// After, when set, is told what each call Decide allowed answered.
	After func(c *FileCall, dst, src *Located, resp Response)
}

// Handle serves r.
func (fs *FileServer) Handle(r *Request) Response {
	c, err := DecodeFile(r)
	if err != nil {
		return failErr(err)
	}
	for try := 0; try < 4; try++ {
		resp, err := fs.once(r, c)
		if errors.Is(err, ErrRetry) {
			continue
		}
		if err != nil {
			return failErr(err)
		}
		return resp
	}
	return Fail(syscall.ELOOP)
}

func (fs *FileServer) once(r *Request, c *FileCall) (Response, error) {
	dst, err := r.Locate(fs.View, c.Path, c.Op == OpOpen && c.Flags&unix.O_TMPFILE == unix.O_TMPFILE)
	if err != nil {
		return Response{}, err
	}
	defer dst.Close()
	var src *Located
	if c.Op == OpRename || c.Op == OpLink {
		if src, err = r.Locate(fs.View, c.Source, false); err != nil {
			return Response{}, err
		}
		defer src.Close()
	}
	pf, err := fs.Decide(r, c, dst, src)
	if err != nil {
		return Response{}, err
	}
	var umask uint32
	switch {
	case c.Op == OpMkdir || c.Op == OpMknod || c.Creates():
		st, err := r.Status()
		if err != nil {
			return Response{}, err
		}
		umask = st.Umask
	default:
		if err := r.Valid(); err != nil {
			return Response{}, err
		}
	}
	resp, err := Perform(pf, c, dst, src, umask)
	if err == nil && fs.After != nil {
		fs.After(c, dst, src, resp)
	}
	return resp, err
}

// failErr turns an error into the call's answer: the kernel's errno, or
// EPERM for anything unexpected (fail closed).
func failErr(err error) Response {
	var e syscall.Errno
	if errors.As(err, &e) {
		return Fail(e)
	}
	return Fail(syscall.EPERM)
}
