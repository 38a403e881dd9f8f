package main

// Attempts on inotify_add_watch, which the landlock backend has guardrun
// serve (it opens what the command names, judges the real path and adds
// the watch to the command's instance): watches on what the command may
// not read, reached through guardrun's own view of the names, and ways
// to make guardrun's server misbehave. Under bwrap the kernel answers.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() { attempts["watch"] = attemptWatch }

// spyMask is what a watch on someone else's directory wants to learn.
const spyMask = unix.IN_OPEN | unix.IN_ACCESS | unix.IN_MODIFY | unix.IN_CREATE | unix.IN_DELETE | unix.IN_CLOSE_WRITE

// expand replaces PPID in p with the probe's parent's pid (under
// landlock, the keeper).
func expand(p string) string {
	return strings.ReplaceAll(p, "PPID", strconv.Itoa(os.Getppid()))
}

// watchAll adds a watch on every path; the first that works is an
// escape.
func watchAll(ifd int, mask uint32, paths []string) error {
	var last error = syscall.EACCES
	for _, p := range paths {
		p = expand(p)
		wd, err := unix.InotifyAddWatch(ifd, p, mask)
		if err == nil {
			return allowed("watching %s (wd %d, mask %#x)", p, wd, mask)
		}
		fmt.Fprintf(os.Stderr, "watch %q: %v\n", p, err)
		last = err
	}
	return last
}

// stillServed checks that guardrun still serves watches after the
// attempt: one on ZONE works and its event reaches the command's own
// instance. A server that stopped or answers wrongly is the attempt
// having worked.
func stillServed(zone string) error {
	ifd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return setup("inotify_init1: %v", err)
	}
	defer unix.Close(ifd)
	if _, err := unix.InotifyAddWatch(ifd, zone, unix.IN_CREATE); err != nil {
		return allowed("guardrun no longer serves a watch on the zone %s: %v", zone, err)
	}
	name := fmt.Sprintf("served-%d", os.Getpid())
	if err := os.WriteFile(filepath.Join(zone, name), nil, 0o644); err != nil {
		return setup("%v", err)
	}
	defer os.Remove(filepath.Join(zone, name))
	buf := make([]byte, 4096)
	for i := 0; i < 100; i++ {
		n, err := unix.Read(ifd, buf)
		if n > unix.SizeofInotifyEvent {
			if strings.Contains(string(buf[:n]), name) {
				return nil
			}
			return allowed("the watch on %s reported another event: %q", zone, buf[:n])
		}
		if err != nil && err != unix.EAGAIN {
			return setup("read: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return allowed("the watch on %s never reported the file made in it", zone)
}

// watch WAY ARGS...:
//
//	paths P...          every P (PPID: the probe's parent) must be refused
//	rel DIR P...        the same, relative to DIR after chdir(DIR)
//	thread-cwd OUT ZONE a thread with its own working directory (CLONE_FS)
//	                    in OUT watches "." and OUT's entries by relative name
//	masks OUT ZONE      OUT with every odd mask (IN_MASK_CREATE, IN_MASK_ADD,
//	                    IN_ONLYDIR, IN_EXCL_UNLINK, IN_DONT_FOLLOW, 0, ~0)
//	badfd ZONE          ZONE watched through descriptors that are not inotify
//	                    instances; guardrun must answer and keep serving
//	badaddr OUT ZONE    unmapped and unterminated path memory, then OUT
//	flip OUT ZONE       a name in ZONE flipped between a directory and a link
//	                    to OUT while watches are added on it
//	long OUT ZONE       OUT spelled in PATH_MAX-1 and PATH_MAX bytes
//	storm OUT ZONE      64 processes adding watches at once, half on OUT
//	abi OUT             inotify through int 0x80 and the x32 ABI, fanotify,
//	                    userfaultfd (which could hang guardrun's reads)
func attemptWatch(a []string) error {
	way := arg(a, 0)
	ifd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return setup("inotify_init1: %v", err)
	}
	defer unix.Close(ifd)
	switch way {
	case "paths":
		return watchAll(ifd, spyMask, a[1:])
	case "rel":
		if err := os.Chdir(arg(a, 1)); err != nil {
			return setup("chdir %s: %v", arg(a, 1), err)
		}
		return watchAll(ifd, spyMask, a[2:])
	case "thread-cwd":
		return watchThreadCwd(ifd, arg(a, 1), arg(a, 2))
	case "masks":
		out, zone := arg(a, 1), arg(a, 2)
		var last error = syscall.EACCES
		for _, m := range []uint32{
			spyMask | unix.IN_MASK_CREATE, spyMask | unix.IN_MASK_ADD, spyMask | unix.IN_ONLYDIR,
			spyMask | unix.IN_EXCL_UNLINK, spyMask | unix.IN_DONT_FOLLOW, spyMask | unix.IN_MASK_CREATE | unix.IN_MASK_ADD,
			spyMask | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK | unix.IN_ONESHOT,
			0, unix.IN_ALL_EVENTS, ^uint32(0), 1 << 12,
		} {
			if err := watchAll(ifd, m, []string{out, out + "/", out + "/."}); !isRefusal(err) {
				return err
			} else {
				last = err
			}
		}
		// The same instance, first on the zone, then on OUT with
		// IN_MASK_ADD: the answer for the zone's watch must not carry over.
		if _, err := unix.InotifyAddWatch(ifd, zone, unix.IN_CREATE); err != nil {
			return setup("watch %s: %v", zone, err)
		}
		if err := watchAll(ifd, unix.IN_MASK_ADD|unix.IN_OPEN, []string{out}); !isRefusal(err) {
			return err
		}
		if err := stillServed(zone); err != nil {
			return err
		}
		return last
	case "badfd":
		return watchBadFD(arg(a, 1))
	case "badaddr":
		out, zone := arg(a, 1), arg(a, 2)
		page := os.Getpagesize()
		mem, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return setup("mmap: %v", err)
		}
		for i := range mem[:page] {
			mem[i] = '/'
		}
		if _, _, e := unix.Syscall(unix.SYS_MUNMAP, uintptr(unsafe.Pointer(&mem[page])), uintptr(page), 0); e != 0 {
			return setup("munmap: %v", e)
		}
		for _, addr := range []uintptr{0, 1, uintptr(unsafe.Pointer(&mem[0])), uintptr(unsafe.Pointer(&mem[page-1])), uintptr(unsafe.Pointer(&mem[page])), 1 << 47, ^uintptr(0)} {
			wd, _, e := unix.Syscall(unix.SYS_INOTIFY_ADD_WATCH, uintptr(ifd), addr, spyMask)
			if e == 0 {
				return allowed("a watch on a path at %#x: wd %d", addr, wd)
			}
			fmt.Fprintf(os.Stderr, "path at %#x: %v\n", addr, e)
		}
		if err := watchAll(ifd, spyMask, []string{out}); !isRefusal(err) {
			return err
		}
		if err := stillServed(zone); err != nil {
			return err
		}
		return syscall.EFAULT
	case "flip":
		return watchFlip(ifd, arg(a, 1), arg(a, 2))
	case "long":
		out := arg(a, 1)
		var paths []string
		for _, n := range []int{unix.PathMax - 1, unix.PathMax} {
			p := out
			for len(p)+2 <= n {
				p = "/." + p
			}
			for len(p) < n {
				p = "/" + p
			}
			paths = append(paths, p)
		}
		if err := watchAll(ifd, spyMask, paths); !isRefusal(err) {
			return err
		}
		if err := stillServed(arg(a, 2)); err != nil {
			return err
		}
		return syscall.EACCES
	case "dontfollow":
		// IN_DONT_FOLLOW on a link in ZONE: the watch must be on the
		// link itself. Checked on a link to a zone directory (its watch
		// id must differ from the directory's), then on a link to OUT.
		out, zone := arg(a, 1), arg(a, 2)
		dir, in, l := filepath.Join(zone, "df-dir"), filepath.Join(zone, "df-in"), filepath.Join(zone, "df-out")
		if err := os.Mkdir(dir, 0o755); err != nil {
			return setup("%v", err)
		}
		defer os.Remove(dir)
		for p, to := range map[string]string{in: dir, l: out} {
			if err := os.Symlink(to, p); err != nil {
				return setup("%v", err)
			}
			defer os.Remove(p)
		}
		dwd, err := unix.InotifyAddWatch(ifd, dir, spyMask)
		if err != nil {
			return setup("watch %s: %v", dir, err)
		}
		lwd, err := unix.InotifyAddWatch(ifd, in, spyMask|unix.IN_DONT_FOLLOW)
		if err != nil {
			return setup("watch the link %s: %v", in, err)
		}
		if lwd == dwd {
			return allowed("IN_DONT_FOLLOW on %s watched the directory it links to (wd %d)", in, lwd)
		}
		if wd, err := unix.InotifyAddWatch(ifd, l, spyMask|unix.IN_DONT_FOLLOW|unix.IN_ONLYDIR); err == nil {
			return allowed("IN_DONT_FOLLOW|IN_ONLYDIR on a link to %s gave wd %d", out, wd)
		} else {
			return err
		}
	case "storm":
		return watchStorm(arg(a, 1), arg(a, 2))
	case "storm-child":
		return watchStormChild(ifd, arg(a, 1), arg(a, 2))
	case "abi":
		return watchABI(arg(a, 1))
	case "abi-child":
		return watchABIChild(arg(a, 1), arg(a, 2))
	}
	return setup("unknown way %q", way)
}

func isRefusal(err error) bool {
	_, ok := err.(allowedError)
	return err != nil && !ok && !strings.HasPrefix(err.Error(), errSetup.Error())
}

// watchThreadCwd: a thread with a file system context of its own
// (unshare CLONE_FS) moves to OUT and watches ".", OUT's entries by
// relative name and /proc/thread-self/cwd; guardrun must resolve them
// from that thread's directory (outside: refused) and not from the
// process's (the zone), nor the other way round.
func watchThreadCwd(ifd int, out, zone string) error {
	if err := os.Chdir(zone); err != nil {
		return setup("chdir %s: %v", zone, err)
	}
	res := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread's cwd is its own
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			fmt.Fprintf(os.Stderr, "unshare(CLONE_FS): %v\n", err)
			res <- err
			return
		}
		if err := unix.Chdir(out); err != nil {
			fmt.Fprintf(os.Stderr, "chdir %s in the thread: %v\n", out, err)
			res <- err
			return
		}
		res <- watchAll(ifd, spyMask, []string{".", "keep", "./", "/proc/thread-self/cwd", "/proc/thread-self/cwd/keep"})
	}()
	if err := <-res; !isRefusal(err) {
		return err
	}
	// The process's own directory, the zone, still works from the main
	// thread (the thread's context did not leak to it).
	if _, err := unix.InotifyAddWatch(ifd, ".", unix.IN_CREATE); err != nil {
		return allowed("a watch on the zone, the main thread's directory, failed: %v", err)
	}
	return syscall.EACCES
}

// watchBadFD: watches on ZONE through descriptors that are not inotify
// instances (eventfd, epoll, a pipe, a socket, a memfd, an O_PATH of the
// zone, /dev/null, a number it closed, a number far past its table,
// AT_FDCWD, -1). The kernel says EBADF or EINVAL; any watch id is guardrun
// having added a watch to something else.
func watchBadFD(zone string) error {
	var fds []int
	if fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC); err == nil {
		fds = append(fds, fd)
	}
	if fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC); err == nil {
		fds = append(fds, fd)
	}
	var p [2]int
	if unix.Pipe2(p[:], unix.O_CLOEXEC) == nil {
		fds = append(fds, p[0], p[1])
	}
	if fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err == nil {
		fds = append(fds, fd)
	}
	if fd, err := unix.MemfdCreate("watch", unix.MFD_CLOEXEC); err == nil {
		fds = append(fds, fd)
	}
	if fd, err := unix.Open(zone, unix.O_PATH|unix.O_CLOEXEC, 0); err == nil {
		fds = append(fds, fd)
	}
	if fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		fds = append(fds, fd)
	}
	closed, _ := unix.Eventfd(0, unix.EFD_CLOEXEC)
	unix.Close(closed)
	fds = append(fds, closed, 1<<20-1, 1<<30, unix.AT_FDCWD, -1, 0, 1, 2)
	for _, fd := range fds {
		wd, _, e := unix.Syscall(unix.SYS_INOTIFY_ADD_WATCH, uintptr(fd), uintptr(unsafe.Pointer(cstr(zone))), spyMask)
		if e == 0 {
			return allowed("inotify_add_watch on descriptor %d (not an inotify instance) gave wd %d", fd, wd)
		}
		fmt.Fprintf(os.Stderr, "descriptor %d: %v\n", fd, e)
	}
	// A 64-bit argument whose low half is an inotify instance: the
	// kernel reads an int.
	ifd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return setup("%v", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_INOTIFY_ADD_WATCH, uintptr(ifd)|1<<32, uintptr(unsafe.Pointer(cstr(zone))), unix.IN_CREATE); e != 0 {
		return allowed("a descriptor with high bits set was not read as the kernel reads it: %v", e)
	}
	if err := stillServed(zone); err != nil {
		return err
	}
	return syscall.EBADF
}

func cstr(s string) *byte {
	b, _ := unix.BytePtrFromString(s)
	return b
}

// watchFlip: a name in ZONE flips between a directory of the zone and a
// link to OUT while the command adds watches on it (following links):
// every watch id must be the zone directory's.
func watchFlip(ifd int, out, zone string) error {
	own := filepath.Join(zone, "watch-flip-own")
	name := filepath.Join(zone, "watch-flip")
	tmp := filepath.Join(zone, "watch-flip-tmp")
	if err := os.Mkdir(own, 0o755); err != nil {
		return setup("%v", err)
	}
	defer os.Remove(own)
	defer os.Remove(name)
	defer os.Remove(tmp)
	ownWD, err := unix.InotifyAddWatch(ifd, own, spyMask)
	if err != nil {
		return setup("watch %s: %v", own, err)
	}
	defer flipLink(name, tmp, out, own)()
	ok := 0
	for i := 0; i < 3000; i++ {
		for _, p := range []string{name, name + "/", name + "/."} {
			wd, err := unix.InotifyAddWatch(ifd, p, spyMask)
			if err != nil {
				continue
			}
			if wd != ownWD {
				return allowed("a watch on the flipped name %s gave wd %d, not the zone directory's %d: %s", p, wd, ownWD, out)
			}
			ok++
		}
	}
	fmt.Fprintf(os.Stderr, "%d watches on the zone directory through the flipped name\n", ok)
	return syscall.EACCES
}

// watchStorm: 64 processes each add 100 watches at once, alternately on
// OUT (refused) and ZONE; guardrun must answer all of them, right, and
// keep serving.
func watchStorm(out, zone string) error {
	self, err := os.Executable()
	if err != nil {
		return setup("%v", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := exec.Command(self, "watch", "storm-child", out, zone)
			b, err := c.CombinedOutput()
			if err != nil || !strings.Contains(string(b), "refused") {
				mu.Lock()
				bad = append(bad, fmt.Sprintf("%v: %s", err, strings.TrimSpace(string(b))))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, b := range bad {
		if strings.Contains(b, "ALLOWED") {
			return allowed("in a storm of watches: %s", b)
		}
	}
	if len(bad) > 0 {
		return allowed("%d of 64 watchers did not end refused: %s", len(bad), bad[0])
	}
	if err := stillServed(zone); err != nil {
		return err
	}
	return syscall.EACCES
}

func watchStormChild(ifd int, out, zone string) error {
	for i := 0; i < 50; i++ {
		if err := watchAll(ifd, spyMask, []string{out}); !isRefusal(err) {
			return err
		}
		if _, err := unix.InotifyAddWatch(ifd, zone, unix.IN_CREATE); err != nil {
			return allowed("a watch on the zone failed in the storm: %v", err)
		}
	}
	return syscall.EACCES
}

// watchABI: inotify_add_watch through another ABI's entry point (int
// 0x80, the x32 bit) and the calls that would watch or stall without
// guardrun seeing them: fanotify_init, userfaultfd. Each ABI call runs
// in a child, which the filter kills (SIGSYS) or refuses.
func watchABI(out string) error {
	if fd, _, e := unix.Syscall(unix.SYS_FANOTIFY_INIT, 0, uintptr(unix.O_RDONLY), 0); e == 0 {
		return allowed("fanotify_init gave fd %d", fd)
	} else {
		fmt.Fprintf(os.Stderr, "fanotify_init: %v\n", e)
	}
	if fd, _, e := unix.Syscall(unix.SYS_USERFAULTFD, uintptr(unix.O_CLOEXEC), 0, 0); e == 0 {
		return allowed("userfaultfd gave fd %d (a path in its memory would hang guardrun's read)", fd)
	} else {
		fmt.Fprintf(os.Stderr, "userfaultfd: %v\n", e)
	}
	self, err := os.Executable()
	if err != nil {
		return setup("%v", err)
	}
	var last error = syscall.ENOSYS
	for _, abi := range otherABIs {
		c := exec.Command(self, "watch", "abi-child", abi, out)
		b, err := c.CombinedOutput()
		fmt.Fprintf(os.Stderr, "%s: %v: %s\n", abi, err, strings.TrimSpace(string(b)))
		if strings.Contains(string(b), "ALLOWED") {
			return allowed("%s: %s", abi, strings.TrimSpace(string(b)))
		}
		if ee, ok := err.(*exec.ExitError); ok {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				last = syscall.ENOSYS // killed: the filter's bad-arch action
				continue
			}
		}
		if abi == "int80" && strings.Contains(string(b), "signal SIGSEGV") && strings.Contains(string(b), "main.int80(") {
			// No i386 entry point in this kernel (ia32_emulation off):
			// int 0x80 faults before any system call.
			last = syscall.ENOSYS
			continue
		}
		if !strings.Contains(string(b), "refused") {
			return allowed("%s: neither killed nor refused: %v: %s", abi, err, b)
		}
	}
	return last
}

func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }

func init() { attempts["flip-dirs"] = attemptFlipDirs }

// flip-dirs DIR SECONDS: for SECONDS, move DIR (which holds a denied
// name) aside to DIR-moved, put an empty decoy directory at DIR, then
// put DIR back, over and over: a sandbox started meanwhile that found the
// denied name at DIR but masks the path when the decoy is there leaves
// the real one, at DIR-moved, unmasked. It is the other half of a race
// (another run reads DIR-moved/NAME); by itself it ends refused, with
// the error that stopped it moving DIR.
func attemptFlipDirs(a []string) error {
	dir := arg(a, 0)
	moved := dir + "-moved"
	secs, _ := strconv.Atoi(arg(a, 1))
	end := time.Now().Add(time.Duration(secs) * time.Second)
	flips := 0
	for time.Now().Before(end) {
		if err := os.Rename(dir, moved); err != nil {
			fmt.Fprintf(os.Stderr, "%d flips\n", flips)
			return err // refused: the directory is pinned
		}
		if err := os.Mkdir(dir, 0o755); err == nil {
			time.Sleep(200 * time.Microsecond)
			// A mount point the other run made in the decoy.
			if ents, _ := os.ReadDir(dir); len(ents) > 0 {
				for _, e := range ents {
					os.Remove(filepath.Join(dir, e.Name()))
				}
			}
			if err := os.Remove(dir); err != nil {
				// Still in use as a mount point: leave it, put it aside.
				os.Rename(dir, fmt.Sprintf("%s-decoy-%d", dir, flips))
			}
		}
		if err := os.Rename(moved, dir); err != nil {
			return setup("rename back %s: %v", moved, err)
		}
		time.Sleep(200 * time.Microsecond)
		flips++
	}
	fmt.Fprintf(os.Stderr, "%d flips\n", flips)
	return syscall.EAGAIN
}
