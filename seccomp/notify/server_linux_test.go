//go:build linux && cgo

package notify

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
)

// The tests route getxattr to user space in a child process (this test
// binary again, in helper mode) and serve it here. getxattr takes a
// path and a name behind pointers, which is what the helpers read; the
// Go runtime never calls it by itself.

func TestMain(m *testing.M) {
	if mode := os.Getenv("GUARDRUN_NOTIFY_HELPER"); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

// getxattr makes the raw call with the given pointers and prints the
// result as "ret=N errno=E".
func getxattr(path, name unsafe.Pointer) string {
	var buf [8]byte
	r, _, e := syscall.Syscall6(unix.SYS_GETXATTR, uintptr(path), uintptr(name), uintptr(unsafe.Pointer(&buf[0])), 8, 0, 0)
	return fmt.Sprintf("ret=%d errno=%d", int64(r), int(e))
}

func cstr(s string) unsafe.Pointer {
	b := append([]byte(s), 0)
	return unsafe.Pointer(&b[0])
}

// helper runs in the filtered child. Each line read from stdin is one
// case; it answers one line each.
func helper(mode string) int {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var out string
		switch c := in.Text(); c {
		case "plain":
			out = getxattr(cstr("/some/where"), cstr("user.x"))
		case "null":
			out = getxattr(nil, cstr("user.x"))
		case "long":
			out = getxattr(cstr(strings.Repeat("a", PathMax)), cstr("user.x"))
		case "max":
			out = getxattr(cstr(strings.Repeat("b", PathMax-1)), cstr("user.x"))
		case "page-end", "page-unterminated":
			// A string that ends at the last byte of a page followed by
			// an unmapped page; unterminated, the read runs into it.
			mem, err := unix.Mmap(-1, 0, 2*4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
			if err != nil {
				out = "mmap: " + err.Error()
				break
			}
			if _, _, e := syscall.Syscall(unix.SYS_MUNMAP, uintptr(unsafe.Pointer(&mem[4096])), 4096, 0); e != 0 {
				out = "munmap: " + e.Error()
				break
			}
			s := "/end/of/page"
			if c == "page-end" {
				s += "\x00"
			}
			copy(mem[4096-len(s):], s)
			out = getxattr(unsafe.Pointer(&mem[4096-len(s)]), cstr("user.x"))
		case "getfd-thread":
			// A descriptor named from a thread that does not lead the
			// process: the handler answers its inode.
			res := make(chan string)
			for i := 0; i < 8; i++ {
				go func() {
					runtime.LockOSThread() // never unlocked
					if unix.Gettid() == unix.Getpid() {
						select {} // keep the leader busy; try again
					}
					var p [2]int
					if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
						res <- "pipe: " + err.Error()
						return
					}
					var st unix.Stat_t
					unix.Fstat(p[0], &st)
					res <- fmt.Sprintf("%s ino=%d", getxattr(cstr("fd:"+strconv.Itoa(p[0])), cstr("user.x")), st.Ino&0x7fffffff)
				}()
				select {
				case out = <-res:
				case <-time.After(2 * time.Second):
					continue
				}
				break
			}
		case "fds":
			// Descriptors this process holds beyond stdio.
			ents, _ := os.ReadDir("/proc/self/fd")
			var l []string
			for _, e := range ents {
				t, _ := os.Readlink("/proc/self/fd/" + e.Name())
				l = append(l, t)
			}
			out = strings.Join(l, ",")
		default:
			out = "unknown case " + c
		}
		fmt.Println(out)
	}
	return 0
}

type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
	srv *Server
}

// ask sends one case to the child and returns its answer.
func (c *child) ask(t *testing.T, what string) string {
	t.Helper()
	if _, err := fmt.Fprintln(c.in, what); err != nil {
		t.Fatal(err)
	}
	if !c.out.Scan() {
		t.Fatalf("%s: the child said nothing: %v", what, c.out.Err())
	}
	return c.out.Text()
}

// startFiltered starts the helper with reg's calls routed to a Server,
// the way the landlock backend does: a locked thread loads the filter
// with a listener and starts the child, which inherits the filter.
func startFiltered(t *testing.T, reg *Registry) *child {
	t.Helper()
	f, nrs, err := seccomp.BuildRoutes(sandbox.SeccompPolicy{AllowNetwork: true, AllowUnix: true}, reg.Routes())
	if err != nil {
		t.Skipf("seccomp: %v", err)
	}
	prog, err := f.BPF()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GUARDRUN_NOTIFY_HELPER=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the filtered thread ends here
		// As the landlock backend does: no capabilities for the child
		// (so that the handlers, which have none, may read its memory).
		if err := dropAllCaps(); err != nil {
			errc <- err
			return
		}
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			errc <- err
			return
		}
		fp := unix.SockFprog{Len: uint16(len(prog) / 8), Filter: (*unix.SockFilter)(unsafe.Pointer(&prog[0]))}
		fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fp)))
		if e != 0 {
			errc <- fmt.Errorf("load: %w", e)
			return
		}
		srv, err := Serve(int(fd), reg, nrs)
		if err != nil {
			errc <- err
			return
		}
		c.srv = srv
		errc <- cmd.Start()
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
		c.srv.Stop()
	})
	return c
}

type seen struct {
	mu    sync.Mutex
	paths []string
	caps  []string
}

func recorder(s *seen) Handler {
	return func(r *Request) Response {
		p, err := r.ReadPath(r.Args[0])
		if err != nil {
			var e syscall.Errno
			if errors.As(err, &e) {
				return Fail(e)
			}
			return Fail(syscall.EPERM)
		}
		name, err := r.ReadString(r.Args[1], 256)
		if err != nil || name != "user.x" {
			return Fail(syscall.EINVAL)
		}
		st, _ := os.ReadFile("/proc/thread-self/status")
		s.mu.Lock()
		s.paths = append(s.paths, p)
		for _, l := range strings.Split(string(st), "\n") {
			if strings.HasPrefix(l, "CapEff:") || strings.HasPrefix(l, "CapPrm:") {
				s.caps = append(s.caps, l)
			}
		}
		s.mu.Unlock()
		return Value(int64(len(p)))
	}
}

// TestServe: a routed call is answered by its handler, which reads the
// caller's path and name; bad pointers, unterminated and too long
// strings fail as the kernel would fail them; handlers run without
// capabilities; the listener does not reach the child; after Stop the
// call fails with ENOSYS.
func TestServe(t *testing.T) {
	reg := NewRegistry()
	var s seen
	if err := reg.Handle("getxattr", recorder(&s)); err != nil {
		t.Fatal(err)
	}
	if err := reg.Handle("getxattr", recorder(&s)); err == nil {
		t.Error("a second handler for getxattr was accepted")
	}
	c := startFiltered(t, reg)
	for _, tc := range []struct{ what, want string }{
		{"plain", "ret=11 errno=0"},
		{"null", "ret=-1 errno=14"},                            // EFAULT
		{"long", "ret=-1 errno=36"},                            // ENAMETOOLONG
		{"max", "ret=" + strconv.Itoa(PathMax-1) + " errno=0"}, // the longest path the kernel takes
		{"page-end", "ret=12 errno=0"},                         // ends just before an unmapped page
		{"page-unterminated", "ret=-1 errno=14"},               // runs into it
	} {
		if got := c.ask(t, tc.what); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.what, got, tc.want)
		}
	}
	s.mu.Lock()
	if len(s.paths) == 0 || s.paths[0] != "/some/where" {
		t.Errorf("paths read: %q", s.paths)
	}
	for _, l := range s.caps {
		if !strings.HasSuffix(l, "0000000000000000") {
			t.Errorf("a handler ran with capabilities: %s", l)
		}
	}
	s.mu.Unlock()
	if fds := c.ask(t, "fds"); strings.Contains(fds, "seccomp") {
		t.Errorf("the child holds the listener: %s", fds)
	}
	if err := c.srv.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if got := c.ask(t, "plain"); got != "ret=-1 errno=38" { // ENOSYS
		t.Errorf("after Stop: %s, want ENOSYS", got)
	}
}

// TestGetFDThread: GetFD finds the descriptor of a caller that is a
// thread other than its process's leader (pidfd_open of such a thread
// fails with ENOENT since Linux 6.9, EINVAL before).
func TestGetFDThread(t *testing.T) {
	reg := NewRegistry()
	reg.Handle("getxattr", func(r *Request) Response {
		p, err := r.ReadPath(r.Args[0])
		if err != nil {
			return Fail(syscall.EFAULT)
		}
		n, err := strconv.Atoi(strings.TrimPrefix(p, "fd:"))
		if err != nil {
			return Fail(syscall.EINVAL)
		}
		fd, err := r.GetFD(int32(n))
		if err != nil {
			t.Logf("GetFD(%d) of %d: %v", n, r.Pid, err)
			return Fail(syscall.EBADF)
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return Fail(syscall.EIO)
		}
		return Value(int64(st.Ino & 0x7fffffff))
	})
	c := startFiltered(t, reg)
	got := c.ask(t, "getfd-thread")
	var ret, ino int64
	if _, err := fmt.Sscanf(got, "ret=%d errno=0 ino=%d", &ret, &ino); err != nil || ret != ino {
		t.Errorf("GetFD from a thread: %s, want ret equal to ino", got)
	}
}

// TestValidAfterExit: once the caller is gone, the helpers say so.
func TestValidAfterExit(t *testing.T) {
	reg := NewRegistry()
	gate := make(chan *Request)
	release := make(chan struct{})
	done := make(chan error)
	reg.Handle("getxattr", func(r *Request) Response {
		gate <- r
		<-release
		return Fail(syscall.EPERM)
	})
	c := startFiltered(t, reg)
	fmt.Fprintln(c.in, "plain")
	var r *Request
	select {
	case r = <-gate:
	case <-time.After(10 * time.Second):
		t.Fatal("no notification")
	}
	if err := r.Valid(); err != nil {
		t.Fatalf("valid while waiting: %v", err)
	}
	if _, err := r.ReadPath(r.Args[0]); err != nil {
		t.Fatalf("read while waiting: %v", err)
	}
	go func() {
		c.cmd.Process.Kill()
		done <- c.cmd.Wait()
	}()
	<-done
	if err := r.Valid(); !errors.Is(err, ErrGone) {
		t.Errorf("valid after the caller was killed: %v", err)
	}
	if _, err := r.ReadPath(r.Args[0]); err == nil {
		t.Error("read after the caller was killed succeeded")
	}
	if fd, err := r.Dir(AtFDCWD); err == nil {
		unix.Close(fd)
		t.Error("Dir after the caller was killed succeeded")
	}
	close(release)
}

func dropAllCaps() error {
	for c := 0; c <= unix.CAP_LAST_CAP+24; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break
		}
		if err != nil && !errors.Is(err, unix.EPERM) {
			return err
		}
	}
	return dropThreadCaps()
}
