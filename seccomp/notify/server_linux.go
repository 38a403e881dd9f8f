//go:build linux

package notify

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// struct seccomp_data, seccomp_notif and seccomp_notif_resp
// (include/uapi/linux/seccomp.h).
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type notif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type notifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// MaxWorkers bounds the threads serving notifications at once; more
// wait for one to be free.
const MaxWorkers = 16

// Server answers the notifications of one listener descriptor with the
// handlers of a Registry, until Stop. Each handler runs on a worker: an
// OS thread of guardrun locked to its goroutine, with a working
// directory and umask of its own (CLONE_FS unshared), that has dropped
// every capability (effective, permitted, inheritable), as the sandboxed
// command has, so that a handler acting for the command never has more
// privilege than the command: root's CAP_CHOWN, CAP_FOWNER,
// CAP_DAC_OVERRIDE and the rest are gone for it, and the kernel's
// permission checks on what it does are the command's own (same user,
// same groups). A worker that could not drop them answers EPERM to
// everything.
//
// The worker that receives a notification also serves it (no hand-off
// between threads, which costs most on a loaded machine): one worker at a
// time waits on the listener; when it takes a notification and no other
// worker is free to wait, a new one is made (at most MaxWorkers), so a
// slow handler does not hold up the others. Workers end with the server.
type Server struct {
	fd   int
	reg  *Registry
	nrs  map[int32]string
	wake [2]int

	recv     sync.Mutex     // held by the worker waiting on the listener
	workers  sync.WaitGroup // running workers
	stopOnce sync.Once

	mu      sync.Mutex
	started int  // workers made
	free    int  // workers not serving a notification
	done    bool // stopped, or no task uses the filter any more
	err     error
}

// Serve starts answering the notifications of listener (the descriptor
// seccomp returned for SECCOMP_FILTER_FLAG_NEW_LISTENER), which it now
// owns. nrs maps the system call numbers the filter routes to their
// names (as seccomp.BuildRoutes returns them); a number without a name
// or a name without a handler in reg fails with ENOSYS.
func Serve(listener int, reg *Registry, nrs map[int32]string) (*Server, error) {
	if listener < 0 || reg == nil {
		return nil, errors.New("notify: Serve needs a listener and a registry")
	}
	s := &Server{fd: listener, reg: reg, nrs: nrs}
	// Linux 6.6: wake the caller on the answering thread's CPU and the
	// waiting worker on the caller's, which halves the round trip on a
	// busy machine. Older kernels say EINVAL; it is only an optimisation.
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	if err := unix.Pipe2(s.wake[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return nil, fmt.Errorf("notify: %w", err)
	}
	s.spawn()
	return s, nil
}

// Stop stops serving and closes the listener: from then on every routed
// system call of the command (and any still waiting) fails with ENOSYS,
// never passes. It waits for the handlers that are running. It returns
// the error that ended the server early, if one did.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		// Level-triggered: every worker that polls from now on sees it.
		_, _ = unix.Write(s.wake[1], []byte{0})
		s.workers.Wait()
		unix.Close(s.fd)
		unix.Close(s.wake[0])
		unix.Close(s.wake[1])
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Server) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// spawn starts a worker unless the server is done or has MaxWorkers.
func (s *Server) spawn() {
	s.mu.Lock()
	if s.done || s.started >= MaxWorkers {
		s.mu.Unlock()
		return
	}
	s.started++
	s.free++
	s.mu.Unlock()
	s.workers.Add(1)
	go s.worker()
}

func (s *Server) worker() {
	defer s.workers.Done()
	// Never unlocked: the thread, which has given up its capabilities,
	// ends with this goroutine.
	runtime.LockOSThread()
	capless := true
	if err := dropThreadCaps(); err != nil {
		s.fail(err)
		capless = false
	}
	// A working directory and umask of the thread's own: a handler that
	// creates a file for the caller sets the caller's umask here
	// (SetUmask), which must not become every thread's.
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		s.fail(fmt.Errorf("notify: unshare the worker's file system attributes: %w", err))
		capless = false
	}
	for {
		r, ok := s.receive()
		if !ok {
			return
		}
		s.mu.Lock()
		s.free--
		alone := s.free == 0
		s.mu.Unlock()
		if alone {
			s.spawn() // someone must wait on the listener meanwhile
		}
		if capless {
			s.serve(r)
		} else {
			r.respond(Fail(syscall.EPERM))
		}
		s.mu.Lock()
		s.free++
		s.mu.Unlock()
	}
}

// receive waits, as the one worker holding s.recv, for the next
// notification. It reports false when the server is done.
func (s *Server) receive() (*Request, bool) {
	s.recv.Lock()
	defer s.recv.Unlock()
	for {
		s.mu.Lock()
		done := s.done
		s.mu.Unlock()
		if done {
			return nil, false
		}
		fds := []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}, {Fd: int32(s.wake[0]), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			s.finish(fmt.Errorf("notify: poll: %w", err))
			return nil, false
		}
		if fds[1].Revents != 0 {
			s.finish(nil)
			return nil, false
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			if fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
				s.finish(nil) // no task uses the filter any more
				return nil, false
			}
			continue
		}
		var n notif
		if err := ioctl(s.fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ENOENT) {
				continue // interrupted, or the caller is gone
			}
			s.finish(fmt.Errorf("notify: receive: %w", err))
			return nil, false
		}
		return &Request{ID: n.ID, Pid: int(n.Pid), Nr: n.Data.Nr, Syscall: s.nrs[n.Data.Nr],
			Args: n.Data.Args, IP: n.Data.IP, Arch: n.Data.Arch, s: s}, true
	}
}

// finish marks the server done (every worker then ends), with the error
// that ended it, if any.
func (s *Server) finish(err error) {
	s.mu.Lock()
	s.done = true
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

func (s *Server) serve(r *Request) {
	h := s.reg.handler(r.Syscall)
	if r.Syscall == "" || h == nil {
		r.respond(Fail(syscall.ENOSYS))
		return
	}
	resp := Fail(syscall.EPERM)
	func() {
		defer func() {
			if p := recover(); p != nil {
				s.fail(fmt.Errorf("notify: handler for %s: %v", r.Syscall, p))
			}
		}()
		resp = h(r)
	}()
	r.respond(resp)
}

// dropThreadCaps empties the calling thread's effective, permitted and
// inheritable capability sets (capset acts on the calling thread only).
func dropThreadCaps() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("notify: drop the worker's capabilities: %w", err)
	}
	return nil
}

func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

// ErrGone is returned by the Request methods when the caller no longer
// waits for the answer (it was killed, or interrupted by a signal and
// will make the call again).
var ErrGone = errors.New("notify: the system call is no longer waiting")

// Valid reports whether the caller is still waiting for this
// notification (SECCOMP_IOCTL_NOTIF_ID_VALID): nil, or ErrGone.
func (r *Request) Valid() error {
	id := r.ID
	if err := ioctl(r.s.fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)); err != nil {
		return ErrGone
	}
	return nil
}

// struct seccomp_notif_addfd.
type notifAddFD struct {
	ID         uint64
	Flags      uint32
	SrcFD      uint32
	NewFD      uint32
	NewFDFlags uint32
}

// seccompUserNotifFlagContinue is SECCOMP_USER_NOTIF_FLAG_CONTINUE.
const seccompUserNotifFlagContinue = 1

func (r *Request) respond(resp Response) {
	if resp.fdSet {
		r.respondFD(resp)
		return
	}
	out := notifResp{ID: r.ID, Val: resp.Val}
	switch {
	case resp.cont:
		if r.Syscall != "execve" && r.Syscall != "execveat" {
			// Never for a call guardrun can make itself (see
			// Response): fail closed.
			out.Error = -int32(syscall.EPERM)
			break
		}
		out.Val, out.Flags = 0, seccompUserNotifFlagContinue
	case resp.Errno != 0:
		out.Val, out.Error = 0, -int32(resp.Errno)
	}
	// ENOENT: the caller is gone; nothing to answer.
	_ = ioctl(r.s.fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&out))
}

// respondFD installs resp's descriptor in the caller and answers with
// its number, in one step where the kernel can (SECCOMP_ADDFD_FLAG_SEND,
// Linux 5.14: the caller cannot be left holding a descriptor it was
// never told of); before that, installs it and then answers. guardrun's
// copy is closed either way.
func (r *Request) respondFD(resp Response) {
	defer unix.Close(resp.fd)
	add := notifAddFD{ID: r.ID, Flags: unix.SECCOMP_ADDFD_FLAG_SEND, SrcFD: uint32(resp.fd)}
	if resp.cloexec {
		add.NewFDFlags = unix.O_CLOEXEC
	}
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(r.s.fd), unix.SECCOMP_IOCTL_NOTIF_ADDFD, uintptr(unsafe.Pointer(&add)))
	switch e {
	case 0, unix.ENOENT:
		return // answered, or the caller is gone
	case unix.EINVAL:
		add.Flags = 0
		var n uintptr
		n, _, e = unix.Syscall(unix.SYS_IOCTL, uintptr(r.s.fd), unix.SECCOMP_IOCTL_NOTIF_ADDFD, uintptr(unsafe.Pointer(&add)))
		if e == 0 {
			r.respond(Value(int64(n)))
			return
		}
	}
	if e == unix.ENOENT {
		return
	}
	// The descriptor could not be installed (EMFILE: the caller's
	// table is full): the call fails as open would.
	r.respond(Fail(e))
}

// ContinueExec is the answer that lets an exec go on in the kernel
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE), the one call guardrun cannot make
// for the caller. The kernel reads the path and argv again from the
// caller's memory: answer it only when nothing can have changed them
// since they were read (ExecSafe). For any other call it is EPERM.
func (r *Request) ContinueExec() Response {
	if r.Syscall != "execve" && r.Syscall != "execveat" {
		return Fail(syscall.EPERM)
	}
	return Response{cont: true}
}

// PathMax is the kernel's PATH_MAX, the NUL included.
const PathMax = 4096

// MaxRead bounds ReadBytes (XATTR_SIZE_MAX, the largest argument a
// handler here reads).
const MaxRead = 1 << 16

// ReadBytes copies n bytes at addr from the caller's memory
// (process_vm_readv, or /proc/PID/mem where that is refused), then
// checks that the call is still waiting. A short read is EFAULT, as the
// kernel would answer.
func (r *Request) ReadBytes(addr uint64, n int) ([]byte, error) {
	if n < 0 || n > MaxRead {
		return nil, syscall.E2BIG
	}
	buf := make([]byte, n)
	if n == 0 {
		return buf, r.Valid()
	}
	if addr == 0 {
		return nil, syscall.EFAULT
	}
	got, err := r.read(addr, buf)
	if err != nil {
		return nil, err
	}
	if got != n {
		return nil, syscall.EFAULT
	}
	if err := r.Valid(); err != nil {
		return nil, err
	}
	return buf, nil
}

// read copies from the caller's memory into buf, stopping at the first
// unreadable byte; it returns how many bytes it copied.
func (r *Request) read(addr uint64, buf []byte) (int, error) {
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMReadv(r.Pid, local, remote, 0)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, unix.EFAULT):
		return 0, nil
	case errors.Is(err, unix.ESRCH):
		return 0, ErrGone
	case errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS):
		// Refused by a seccomp profile around guardrun: the same read
		// through /proc/PID/mem.
		return r.readMem(addr, buf)
	}
	return 0, err
}

func (r *Request) readMem(addr uint64, buf []byte) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", r.Pid))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, ErrGone
		}
		return 0, err
	}
	defer f.Close()
	if addr > 1<<63-1 {
		return 0, nil
	}
	n, err := f.ReadAt(buf, int64(addr))
	if n > 0 || errors.Is(err, syscall.EIO) || errors.Is(err, syscall.EFAULT) {
		return n, nil
	}
	return n, err
}

// ReadString reads a NUL-terminated string of at most max bytes (the NUL
// included) at addr from the caller's memory, a page at a time so that
// a string ending just before an unmapped page is read. No NUL within
// max bytes is ENAMETOOLONG; addr 0 or an unreadable byte before the NUL
// is EFAULT. It checks afterwards that the call is still waiting.
func (r *Request) ReadString(addr uint64, max int) (string, error) {
	if addr == 0 {
		return "", syscall.EFAULT
	}
	if max <= 0 || max > MaxRead {
		return "", syscall.E2BIG
	}
	const page = 4096
	out := make([]byte, 0, 256)
	for len(out) < max {
		chunk := page - int((addr+uint64(len(out)))%page)
		if rest := max - len(out); chunk > rest {
			chunk = rest
		}
		buf := make([]byte, chunk)
		n, err := r.read(addr+uint64(len(out)), buf)
		if err != nil {
			return "", err
		}
		for i := 0; i < n; i++ {
			if buf[i] == 0 {
				out = append(out, buf[:i]...)
				if err := r.Valid(); err != nil {
					return "", err
				}
				return string(out), nil
			}
		}
		if n < chunk {
			return "", syscall.EFAULT
		}
		out = append(out, buf[:n]...)
	}
	return "", syscall.ENAMETOOLONG
}

// ReadPath reads a path argument: ReadString bounded to PathMax.
func (r *Request) ReadPath(addr uint64) (string, error) {
	return r.ReadString(addr, PathMax)
}

// AtFDCWD is the dirfd that means the caller's working directory.
const AtFDCWD = unix.AT_FDCWD

// FDArg is argument i as the kernel reads a descriptor (an int: the low
// 32 bits).
func (r *Request) FDArg(i int) int32 { return int32(uint32(r.Args[i])) }

// Dir returns, as guardrun's own O_PATH descriptor (close-on-exec), the
// caller's working directory (dirfd AtFDCWD) or the object the caller's
// descriptor dirfd refers to, opened through /proc/PID/cwd or
// /proc/PID/fd/N (which needs no pidfd_getfd). It checks afterwards that
// the call is still waiting, so the descriptor is the caller's and not a
// recycled pid's. A descriptor the caller does not have is EBADF.
func (r *Request) Dir(dirfd int32) (int, error) {
	p := fmt.Sprintf("/proc/%d/cwd", r.Pid)
	if dirfd != AtFDCWD {
		if dirfd < 0 {
			return -1, syscall.EBADF
		}
		p = fmt.Sprintf("/proc/%d/fd/%d", r.Pid, dirfd)
	}
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if verr := r.Valid(); verr != nil {
			return -1, verr
		}
		if errors.Is(err, unix.ENOENT) {
			return -1, syscall.EBADF
		}
		return -1, err
	}
	if err := r.Valid(); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// PathFD is Dir for a descriptor argument that names the object itself
// (fchmod, fchown, fsetxattr): an O_PATH descriptor of the same object.
func (r *Request) PathFD(fd int32) (int, error) {
	if fd == AtFDCWD || fd < 0 {
		return -1, syscall.EBADF
	}
	return r.Dir(fd)
}

// GetFD duplicates the caller's descriptor fd into guardrun
// (pidfd_getfd: the same open file description, close-on-exec), for a
// handler that needs the description itself (a socket to connect).
// pidfd_getfd needs Linux 5.6 and is refused by Docker's default seccomp
// profile unless the container has CAP_SYS_PTRACE; the error then says
// so.
func (r *Request) GetFD(fd int32) (int, error) {
	if fd < 0 {
		return -1, syscall.EBADF
	}
	// The calling thread itself (PIDFD_THREAD, Linux 6.9): its
	// descriptor table, which a thread that unshared CLONE_FILES does
	// not share with its group.
	pidfd, err := unix.PidfdOpen(r.Pid, pidfdThread)
	if errors.Is(err, unix.EINVAL) {
		pidfd, err = unix.PidfdOpen(r.Pid, 0)
	}
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
		// A thread that does not lead its group, before PIDFD_THREAD
		// (EINVAL; ENOENT since Linux 6.9): open the group.
		var tgid int
		if tgid, err = r.tgid(); err == nil {
			pidfd, err = unix.PidfdOpen(tgid, 0)
		}
	}
	if err != nil {
		if verr := r.Valid(); verr != nil {
			return -1, verr
		}
		return -1, fmt.Errorf("notify: pidfd_open: %w", err)
	}
	defer unix.Close(pidfd)
	if err := r.Valid(); err != nil {
		return -1, err
	}
	nfd, err := unix.PidfdGetfd(pidfd, int(fd), 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
			return -1, fmt.Errorf("notify: pidfd_getfd is refused here (it needs Linux 5.6, and Docker's default seccomp profile allows it only with CAP_SYS_PTRACE): %w", err)
		}
		return -1, err
	}
	return nfd, nil
}

// pidfdThread is PIDFD_THREAD (O_EXCL): pidfd_open of a thread, not of
// its group.
const pidfdThread = unix.O_EXCL

func (r *Request) tgid() (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.Pid))
	if err != nil {
		return 0, err
	}
	var tgid int
	for _, line := range splitLines(b) {
		if _, err := fmt.Sscanf(line, "Tgid:\t%d", &tgid); err == nil {
			return tgid, nil
		}
	}
	return 0, errors.New("notify: no Tgid in status")
}

func splitLines(b []byte) []string {
	var out []string
	start := 0
	for i, c := range b {
		if c == '\n' {
			out = append(out, string(b[start:i]))
			start = i + 1
		}
	}
	return out
}

// Open opens what the caller names with (dirfd, path) as the caller's
// kernel would resolve it, as guardrun's own O_PATH descriptor
// (close-on-exec): an absolute path from the root (the command shares
// guardrun's root and mounts), a relative one from the caller's working
// directory or dirfd (Dir). With nofollow the last component is not
// followed (a symbolic link is opened itself). Paths that name the
// caller's own process files (/proc/self, /proc/thread-self, /dev/fd/N,
// /dev/stdin, /dev/stdout, /dev/stderr) are opened through the caller's
// /proc/PID: resolved here as they are, they would reach guardrun's
// own. No other magic link is followed (/proc/PID/fd/N of another
// process, guardrun's own included, in any spelling): see Locate. An
// empty path is ENOENT. What it looked up through /proc/PID is checked
// to be the caller's (the call still waiting) afterwards.
func (r *Request) Open(dirfd int32, path string, nofollow bool) (int, error) {
	if path == "" {
		return -1, syscall.ENOENT
	}
	l, err := r.Locate(View{}, Target{Dirfd: dirfd, Path: path, Follow: !nofollow}, false)
	if err != nil {
		return -1, err
	}
	defer l.Close()
	if l.Parent < 0 {
		return dupFD(l.Obj)
	}
	flags := unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW
	name := l.Name
	if l.Slash {
		// A trailing slash: the kernel follows a link there, and
		// wants a directory.
		flags = unix.O_PATH | unix.O_CLOEXEC | unix.O_DIRECTORY
		how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_NO_MAGICLINKS}
		return unix.Openat2(l.Parent, name, &how)
	}
	fd, err := unix.Openat(l.Parent, name, flags, 0)
	if err != nil {
		return -1, err
	}
	return fd, nil
}
