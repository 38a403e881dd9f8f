//go:build linux && cgo

package notify

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"syscall"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
)

// fileRoutes are the file calls routed as a verified command's are:
// opens only for writing or creating.
func fileRoutes(reg *Registry, h Handler) error {
	for _, name := range FileCalls {
		var when []seccomp.Cond
		switch name {
		case "open":
			when = seccomp.AnyBit(1, unix.O_WRONLY|unix.O_RDWR|unix.O_CREAT|unix.O_TRUNC|oTmpfileBit)
		case "openat":
			when = seccomp.AnyBit(2, unix.O_WRONLY|unix.O_RDWR|unix.O_CREAT|unix.O_TRUNC|oTmpfileBit)
		case "mknod", "mknodat":
			arg := uint(1)
			if name == "mknodat" {
				arg = 2
			}
			for _, v := range []uint64{0, unix.S_IFREG, unix.S_IFIFO, unix.S_IFSOCK} {
				when = append(when, seccomp.Cond{Arg: arg, Mask: unix.S_IFMT, Val: v})
			}
		}
		if err := reg.HandleWhen(name, when, h); err != nil {
			return err
		}
	}
	return nil
}

// runFiltered runs argv in dir with reg's routes served, as the landlock
// backend starts a command: a locked thread without capabilities loads
// the filter with a listener and starts the child.
func runFiltered(t *testing.T, reg *Registry, dir string, argv ...string) (string, int) {
	t.Helper()
	f, nrs, err := seccomp.BuildRoutes(sandbox.SeccompPolicy{AllowNetwork: true, AllowUnix: true, Verify: true}, reg.Routes())
	if err != nil {
		t.Skipf("seccomp: %v", err)
	}
	prog, err := f.BPF()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	type result struct {
		srv *Server
		err error
	}
	res := make(chan result, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the filtered thread ends here
		if err := dropAllCaps(); err != nil {
			res <- result{err: err}
			return
		}
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			res <- result{err: err}
			return
		}
		fp := unix.SockFprog{Len: uint16(len(prog) / 8), Filter: (*unix.SockFilter)(unsafe.Pointer(&prog[0]))}
		fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER|unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, uintptr(unsafe.Pointer(&fp)))
		if e != 0 {
			res <- result{err: fmt.Errorf("load: %w", e)}
			return
		}
		srv, err := Serve(int(fd), reg, nrs)
		if err != nil {
			res <- result{err: err}
			return
		}
		res <- result{srv, cmd.Start()}
		<-done
	}()
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	err = cmd.Wait()
	close(done)
	r.srv.Stop()
	status := 0
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), status
}

// tree describes dir: every entry's type, mode, content or target.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v", rel, fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			line += fmt.Sprintf(" %q", b)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().IsRegular() && st.Nlink > 1 {
			line += fmt.Sprintf(" links=%d", st.Nlink)
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestFileServerAsTheKernel: scripts that create, write, truncate,
// rename, link and remove, run once with the kernel making the calls
// and once with guardrun making them for the command (FileServer, on
// the worker), leave the same tree, print the same and exit the same:
// links followed where the kernel follows them and not elsewhere, the
// caller's umask, O_EXCL, trailing slashes, "." and "..", the caller's
// own descriptors reopened through /dev/stdout and /proc/self/fd, an
// O_TMPFILE given a name through /proc/self/fd, and the kernel's errors.
func TestFileServerAsTheKernel(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	py, _ := exec.LookPath("python3")
	calls := 0
	reg := NewRegistry()
	fsrv := &FileServer{Decide: func(r *Request, c *FileCall, dst, src *Located) (Performer, error) {
		calls++
		return Performer{}, nil
	}}
	if err := fileRoutes(reg, fsrv.Handle); err != nil {
		t.Fatal(err)
	}
	scripts := []struct{ name, script string }{
		{"create, append, truncate", `echo a > f; echo b >> f; : > g; echo c > g; cat f g; truncate -s 1 f; cat f; echo`},
		{"the umask", `umask 027; echo x > m; mkdir md; mkfifo mf; umask 0; echo y > n; ls -l m n | cut -c1-10`},
		{"exclusive create", `set -C; echo a > e; echo b > e 2>/dev/null || echo refused; cat e`},
		{"a link followed when writing", `mkdir d; ln -s d/target l; echo via > l; cat d/target; ln -s /nonexistent/x bad; echo x > bad 2>/dev/null || echo no-such-dir`},
		{"a link followed twice, and a loop", `ln -s l2 l1; ln -s t l2; echo x > l1; cat t; ln -s loop loop; echo x > loop 2>/dev/null || echo loop`},
		{"a link not followed", `ln -s t l; rm l; ls; mkdir real; ln -s real ld; rmdir ld 2>/dev/null || echo not-a-dir; ls -d real`},
		{"mkdir, rmdir, trailing slashes", `mkdir a a/b; mkdir a/c/; rmdir a/b/; echo x > a/f; rmdir a/f/ 2>/dev/null || echo enotdir; rm a/f/ 2>/dev/null || echo enotdir2; mkdir . 2>/dev/null || echo exists; rmdir . 2>/dev/null || echo einval`},
		{"rename and exchange", `echo 1 > x; echo 2 > y; mv x z; mkdir dd; mv y dd/; mv dd ee; ls -R`},
		{"hard and soft links", `echo 1 > a; ln a b; ln -s a c; ln c d; ls -l b | cut -c11-13; echo 2 >> d; cat a`},
		{"removal", `mkdir -p p/q; echo x > p/q/f; rm -r p; ls; rm nothere 2>/dev/null || echo enoent`},
		{"the caller's own descriptors", `echo out > /dev/stdout; echo err > /dev/stderr; exec 3>f3; echo three > /proc/self/fd/3; echo four >> /dev/fd/3; cat f3`},
		{"relative to a directory descriptor", `mkdir w; cd w; echo here > ../up; cd ..; cat up`},
		{"a file of procfs", `echo 1 > /proc/self/comm 2>/dev/null; echo $?; echo 1 > /proc/selfish 2>/dev/null; echo $?; echo 1 > /home/x/proc/self/fd/1 2>/dev/null; echo $?`},
		{"fifo and socket nodes", `mkfifo ff; ls -l ff | cut -c1`},
	}
	if py != "" {
		scripts = append(scripts, struct{ name, script string }{"O_TMPFILE linked by name",
			`python3 -c '
import os
fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o640)
os.write(fd, b"anon")
here = os.open(".", os.O_RDONLY)
os.link("/proc/self/fd/%d" % fd, "named", dst_dir_fd=here, follow_symlinks=True)
try:
    os.link("/proc/self/fd/%d" % fd, "unfollowed")
except OSError as e:
    print(e.errno)
print(oct(os.stat("named").st_mode & 0o777))
fd2 = os.open(".", os.O_TMPFILE | os.O_RDWR | os.O_EXCL, 0o600)
try:
    os.link("/proc/self/fd/%d" % fd2, "never", dst_dir_fd=here, follow_symlinks=True)
except OSError as e:
    print(e.errno)
'`})
	}
	base := t.TempDir()
	for i, s := range scripts {
		t.Run(s.name, func(t *testing.T) {
			kernel := filepath.Join(base, fmt.Sprintf("k%d", i))
			served := filepath.Join(base, fmt.Sprintf("s%d", i))
			for _, d := range []string{kernel, served} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			k := exec.Command(sh, "-c", s.script)
			k.Dir = kernel
			kout, kerr := k.CombinedOutput()
			kstatus := 0
			if ee, ok := kerr.(*exec.ExitError); ok {
				kstatus = ee.ExitCode()
			}
			before := calls
			sout, sstatus := runFiltered(t, reg, served, sh, "-c", s.script)
			if calls == before {
				t.Errorf("no call was served: the test proves nothing")
			}
			if d := cmp.Diff(sout, string(kout)); d != "" {
				t.Errorf("output (-served +kernel):\n%s", d)
			}
			if sstatus != kstatus {
				t.Errorf("status %d served, %d by the kernel", sstatus, kstatus)
			}
			if d := cmp.Diff(tree(t, served), tree(t, kernel)); d != "" {
				t.Errorf("tree (-served +kernel):\n%s", d)
			}
		})
	}
}
