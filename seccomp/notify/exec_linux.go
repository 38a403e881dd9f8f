//go:build linux

package notify

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ExecCalls are the system calls ReadExec reads.
var ExecCalls = []string{"execve", "execveat"}

// Bounds of what ReadExec reads: more arguments or bytes than this (the
// kernel's own bound is a quarter of the stack limit, 2 MiB by default)
// refuse the exec.
const (
	MaxArgs     = 1 << 17
	MaxArgBytes = 8 << 20
)

// memRange is a range of the caller's memory, [start, end).
type memRange struct{ start, end uint64 }

// ExecCall is an execve or execveat of the caller: the path and argv
// read once from its memory, and where they were.
type ExecCall struct {
	Dirfd int32
	Path  string
	// Flags are execveat's (AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW).
	Flags int
	Argv  []string

	ranges []memRange
}

// ReadExec reads the exec r asks for.
func ReadExec(r *Request) (*ExecCall, error) {
	c := &ExecCall{Dirfd: AtFDCWD}
	var pathAddr, argvAddr uint64
	switch r.Syscall {
	case "execve":
		pathAddr, argvAddr = r.Args[0], r.Args[1]
	case "execveat":
		c.Dirfd, pathAddr, argvAddr = r.FDArg(0), r.Args[1], r.Args[2]
		c.Flags = int(uint32(r.Args[4]))
		if c.Flags&^(unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW) != 0 {
			return nil, syscall.EINVAL
		}
	default:
		return nil, syscall.ENOSYS
	}
	var err error
	if c.Path, err = r.ReadPath(pathAddr); err != nil {
		return nil, err
	}
	c.ranges = append(c.ranges, memRange{pathAddr, pathAddr + uint64(len(c.Path)) + 1})
	if c.Path == "" && c.Flags&unix.AT_EMPTY_PATH == 0 {
		return nil, syscall.ENOENT
	}
	if argvAddr == 0 {
		// Linux takes a null argv as an empty one.
		return c, r.Valid()
	}
	// The pointers, a page at a time, to the null one.
	var ptrs []uint64
	for addr := argvAddr; ; {
		chunk := 4096 - int(addr%4096)
		buf := make([]byte, chunk)
		n, err := r.read(addr, buf)
		if err != nil {
			return nil, err
		}
		n -= n % 8
		if n == 0 {
			return nil, syscall.EFAULT
		}
		end := false
		for i := 0; i < n; i += 8 {
			p := binary.NativeEndian.Uint64(buf[i:])
			if p == 0 {
				end = true
				break
			}
			if len(ptrs) >= MaxArgs {
				return nil, syscall.E2BIG
			}
			ptrs = append(ptrs, p)
		}
		if end {
			break
		}
		addr += uint64(n)
	}
	c.ranges = append(c.ranges, memRange{argvAddr, argvAddr + 8*uint64(len(ptrs)+1)})
	// The strings: programs lay them out one after the other (xargs's
	// buffer, the stack), so they are read in windows and cut there.
	w := &window{r: r}
	total := 0
	for _, p := range ptrs {
		s, err := w.str(p)
		if err != nil {
			return nil, err
		}
		if total += len(s) + 1; total > MaxArgBytes {
			return nil, syscall.E2BIG
		}
		c.Argv = append(c.Argv, s)
		c.ranges = append(c.ranges, memRange{p, p + uint64(len(s)) + 1})
	}
	return c, r.Valid()
}

// window reads NUL-terminated strings of the caller's memory through a
// window of it, read again only when a string starts or runs past it.
type window struct {
	r     *Request
	start uint64
	buf   []byte
}

const windowSize = 64 << 10

func (w *window) str(addr uint64) (string, error) {
	for grow := 0; ; grow++ {
		if addr >= w.start && addr < w.start+uint64(len(w.buf)) {
			rest := w.buf[addr-w.start:]
			if i := bytes.IndexByte(rest, 0); i >= 0 {
				return string(rest[:i]), nil
			}
			if len(w.buf) < windowSize && grow > 0 {
				// The window stopped at unreadable memory.
				return "", syscall.EFAULT
			}
		}
		if grow > 2 {
			// Longer than a window: the kernel's limit on one
			// argument is 128 KiB (MAX_ARG_STRLEN).
			s, err := w.r.ReadString(addr, MaxRead)
			if errors.Is(err, syscall.ENAMETOOLONG) {
				err = syscall.E2BIG
			}
			return s, err
		}
		buf := make([]byte, windowSize)
		n, err := w.r.read(addr, buf)
		if err != nil {
			return "", err
		}
		if n == 0 {
			return "", syscall.EFAULT
		}
		w.start, w.buf = addr, buf[:n]
	}
}

// UnsafeExecError says why an exec cannot be let go on in the kernel:
// something other than the caller could change what guardrun read
// before the kernel reads it again.
type UnsafeExecError struct{ Why string }

func (e *UnsafeExecError) Error() string { return e.Why }

// kcmpVM is KCMP_VM.
const kcmpVM = 1

// ExecSafe reports whether letting c go on in the kernel
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE) is sound: nothing but the caller,
// which waits in the call, can change its path and argv before the
// kernel reads them again. So the caller is the only thread of its
// process, every process that shares its memory is a vfork parent
// (suspended until the exec) that has one thread too, and every byte
// read lies in a private mapping that is anonymous or of a file no one
// in the sandbox can write (writable says who can: the profile's
// writable trees). The filter of a verified command refuses the other
// ways to share memory, the working directory or the descriptors (a
// clone that shares them without being a thread or a vfork child, or
// memory with a child given the caller's parent; clone3, memfd_create,
// SysV shared memory, Linux AIO and MADV_FREE), and process_vm_writev,
// ptrace, io_uring and userfaultfd; writes to /proc/PID/mem are never
// made. It returns an *UnsafeExecError, or another error when it could
// not tell (then the exec is not safe either).
func (r *Request) ExecSafe(v View, c *ExecCall, st Status, writable func(path string) bool) error {
	if st.Threads != 1 {
		return &UnsafeExecError{fmt.Sprintf("the caller has %d threads, which could change what it asked to run after guardrun read it", st.Threads)}
	}
	// vfork parents: each shares the caller's memory and is suspended
	// until the exec; one with another thread is not.
	pid := st.PPid
	for depth := 0; pid > 1 && depth < 64; depth++ {
		// kcmp: 0 for the same memory, 1, 2 or 3 for other memory.
		ret, _, e := unix.Syscall6(unix.SYS_KCMP, uintptr(pid), uintptr(r.Pid), kcmpVM, 0, 0, 0)
		if e == unix.ESRCH {
			break
		}
		if e != 0 {
			return fmt.Errorf("notify: compare the memory of %d and %d: %w", pid, r.Pid, e)
		}
		if ret != 0 {
			break
		}
		pst, err := readStatus(pid)
		if err != nil {
			return err
		}
		if pst.Threads != 1 {
			return &UnsafeExecError{fmt.Sprintf("the caller shares its memory with process %d (posix_spawn or vfork), which has %d threads", pid, pst.Threads)}
		}
		pid = pst.PPid
	}
	maps, err := readMaps(r.Pid)
	if err != nil {
		return err
	}
	res, err := r.resolver(v)
	if err != nil {
		return err
	}
	defer res.close()
	for _, rg := range c.ranges {
		if err := maps.private(rg, writable, res.inode); err != nil {
			return err
		}
	}
	return r.Valid()
}

// inode is the inode number of the file at p, an absolute path with no
// link in it as the caller sees it.
func (res *resolver) inode(p string) (uint64, error) {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	if res.view.InRoot {
		how.Resolve |= unix.RESOLVE_IN_ROOT
	}
	fd, err := unix.Openat2(res.root, p, &how)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// mapping is one line of /proc/PID/maps.
type mapping struct {
	start, end uint64
	private    bool
	ino        uint64
	path       string
}

type maps []mapping

func readMaps(pid int) (maps, error) {
	b, err := readSmall("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return nil, err
	}
	var out maps
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		// start-end perms offset dev inode [path]
		f := bytes.Fields(line)
		if len(f) < 5 {
			continue
		}
		se := bytes.SplitN(f[0], []byte("-"), 2)
		if len(se) != 2 || len(f[1]) != 4 {
			return nil, fmt.Errorf("notify: /proc/%d/maps: %q", pid, line)
		}
		start, err1 := strconv.ParseUint(string(se[0]), 16, 64)
		end, err2 := strconv.ParseUint(string(se[1]), 16, 64)
		ino, err3 := strconv.ParseUint(string(f[4]), 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("notify: /proc/%d/maps: %q", pid, line)
		}
		m := mapping{start: start, end: end, private: f[1][3] == 'p', ino: ino}
		if len(f) > 5 {
			// The path is the rest of the line after the inode, spaces
			// and all.
			i := bytes.Index(line, f[5])
			m.path = string(line[i:])
		}
		out = append(out, m)
	}
	return out, nil
}

// private checks that every byte of rg lies in a mapping that only the
// caller can change (see ExecSafe).
func (ms maps) private(rg memRange, writable func(string) bool, inode func(string) (uint64, error)) error {
	at := rg.start
	for _, m := range ms {
		if at >= rg.end {
			break
		}
		if m.end <= at || m.start > at {
			continue
		}
		if err := m.onlyCaller(writable, inode); err != nil {
			return err
		}
		at = m.end
	}
	if at < rg.end {
		return &UnsafeExecError{"what the caller asked to run is not all in its memory"}
	}
	return nil
}

func (m mapping) onlyCaller(writable func(string) bool, inode func(string) (uint64, error)) error {
	if !m.private {
		return &UnsafeExecError{fmt.Sprintf("what the caller asked to run lies in shared memory (%s), which another process can change", orAnon(m.path))}
	}
	if m.ino == 0 {
		switch {
		case m.path == "", m.path == "[stack]", m.path == "[heap]", strings.HasPrefix(m.path, "[anon:"), strings.HasPrefix(m.path, "[stack:"):
			return nil
		}
		return &UnsafeExecError{fmt.Sprintf("what the caller asked to run lies in %s", m.path)}
	}
	// A file's private mapping shows what is written to the file until
	// a page is copied: only a file no one in the sandbox can write.
	p := m.path
	if !path.IsAbs(p) || strings.HasSuffix(p, " (deleted)") || path.Clean(p) != p || writable(p) {
		return &UnsafeExecError{fmt.Sprintf("what the caller asked to run lies in a mapping of %s, which the sandbox can write", orAnon(p))}
	}
	if ino, err := inode(p); err != nil || ino != m.ino {
		return &UnsafeExecError{fmt.Sprintf("what the caller asked to run lies in a mapping of a file that is no longer %s", p)}
	}
	return nil
}

func orAnon(p string) string {
	if p == "" {
		return "anonymous shared memory"
	}
	return p
}

// Program is the file an exec runs, resolved as the kernel resolves it
// for the caller.
type Program struct {
	// Path is the path as the caller gave it, made absolute (cleaned,
	// links not resolved): what a base name is matched against.
	Path string
	// Real is the file's path with no link in it.
	Real string
	// Fixed says that nothing in the sandbox can change what the path
	// leads to: every directory a name was looked up in, and the file,
	// lies in a tree no one in the sandbox can write (writable).
	Fixed bool
}

// ResolveExec resolves the program c runs as the caller's kernel would,
// one component at a time, following links (but a final one under
// AT_SYMLINK_NOFOLLOW), and judges with writable each directory a name
// is looked up in. The kernel's errors are returned as they are
// (ENOENT, ENOTDIR, EACCES, ELOOP), so that a shell's search of PATH
// goes on. A path through procfs is EACCES.
func (r *Request) ResolveExec(v View, c *ExecCall, writable func(path string) bool) (*Program, error) {
	res, err := r.resolver(v)
	if err != nil {
		return nil, err
	}
	defer res.close()
	prog := &Program{Fixed: true}
	pathOf := func(fd int) (string, error) {
		if v.InRoot {
			return res.sandboxPath(fd)
		}
		return hostPath(fd)
	}
	// The start: the root, the working directory or the dirfd.
	var cur int
	rest := c.Path
	switch {
	case strings.HasPrefix(c.Path, "/"):
		cur, err = dupFD(res.root)
	case c.Path == "":
		// AT_EMPTY_PATH: the descriptor itself (fexecve).
		fd, err := r.PathFD(c.Dirfd)
		if err != nil {
			return nil, err
		}
		defer unix.Close(fd)
		if OnProcfs(fd) {
			return nil, syscall.EACCES
		}
		p, err := pathOf(fd)
		if err != nil || p == "" {
			return nil, syscall.EACCES
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return nil, syscall.EACCES
		}
		prog.Path, prog.Real, prog.Fixed = p, p, !writable(p)
		return prog, nil
	default:
		cur, err = r.Dir(c.Dirfd)
	}
	if err != nil {
		return nil, err
	}
	defer func() { unix.Close(cur) }()
	curPath, err := pathOf(cur)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(c.Path, "/") {
		prog.Path = path.Clean(c.Path)
	} else {
		prog.Path = path.Join(curPath, c.Path)
	}
	links := 0
	for {
		rest = strings.TrimLeft(rest, "/")
		if rest == "" {
			return nil, syscall.EACCES // a directory
		}
		name := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			name, rest = rest[:i], rest[i:]
		} else {
			rest = ""
		}
		last := strings.Trim(rest, "/") == ""
		if name == "." {
			if last {
				return nil, syscall.EACCES
			}
			continue
		}
		if OnProcfs(cur) {
			return nil, syscall.EACCES
		}
		if writable(curPath) {
			prog.Fixed = false
		}
		if name == ".." {
			nfd, err := unix.Openat(cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return nil, err
			}
			unix.Close(cur)
			cur = nfd
			if curPath, err = pathOf(cur); err != nil {
				return nil, err
			}
			if last {
				return nil, syscall.EACCES
			}
			continue
		}
		nfd, err := unix.Openat(cur, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(nfd, &st); err != nil {
			unix.Close(nfd)
			return nil, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			unix.Close(nfd)
			if last && c.Flags&unix.AT_SYMLINK_NOFOLLOW != 0 {
				return nil, syscall.ELOOP
			}
			if links++; links > maxLinks {
				return nil, syscall.ELOOP
			}
			target, err := readlinkat(cur, name)
			if err != nil {
				return nil, err
			}
			if strings.HasPrefix(target, "/") {
				nfd, err := dupFD(res.root)
				if err != nil {
					return nil, err
				}
				unix.Close(cur)
				cur, curPath = nfd, "/"
			}
			rest = target + rest
		case unix.S_IFDIR:
			unix.Close(cur)
			cur = nfd
			if curPath, err = pathOf(cur); err != nil {
				return nil, err
			}
			if last {
				return nil, syscall.EACCES
			}
		default:
			real := path.Join(curPath, name)
			unix.Close(nfd)
			if !last {
				return nil, syscall.ENOTDIR
			}
			if st.Mode&unix.S_IFMT != unix.S_IFREG {
				return nil, syscall.EACCES
			}
			prog.Real = real
			if writable(real) {
				prog.Fixed = false
			}
			return prog, nil
		}
	}
}
