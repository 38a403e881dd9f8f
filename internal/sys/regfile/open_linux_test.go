package regfile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenLeftAtConfigPath: what a sandboxed command can leave at a config path in
// the workspace, for a later unsandboxed guardrun to read. Each is
// refused (or read) within 5 s, and its error names the path and
// nothing read from it.
func TestOpenLeftAtConfigPath(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	link := func(name, target string) string {
		t.Helper()
		if err := os.Symlink(target, at(name)); err != nil {
			t.Fatal(err)
		}
		return at(name)
	}
	sock, err := net.Listen("unix", at("sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	if err := os.Mkdir(at("dir.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	sparse, err := os.Create(at("sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.Truncate(1 << 40); err != nil {
		t.Fatal(err)
	}
	sparse.Close()
	var pipe [2]int
	if err := unix.Pipe2(pipe[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pipe[0])
	defer unix.Close(pipe[1])
	link("loop-a", "loop-b")
	link("loop-b", "loop-a")
	long := "/" + strings.Repeat("a/", unix.PathMax/2+8) + "f"
	secret := "GUARDRUN_ATTACK_SECRET=s3cr3t-in-the-environment"
	t.Setenv("GUARDRUN_ATTACK_SECRET", "s3cr3t-in-the-environment")

	rows := []struct {
		name    string
		path    string
		refused func(error) bool
	}{
		{"a socket", at("sock"), IsNotRegular},
		{"a link to a socket", link("l-sock", at("sock")), IsNotRegular},
		{"a directory named like a config file", at("dir.yaml"), IsNotRegular},
		{"a link to /dev/zero", link("l-zero", "/dev/zero"), IsNotRegular},
		{"a link to /dev/tty", link("l-tty", "/dev/tty"), IsNotRegular},
		{"a link to /dev/ptmx", link("l-ptmx", "/dev/ptmx"), IsNotRegular},
		{"a link to a pipe's /proc/self/fd name", link("l-fd", "/proc/self/fd/"+itoa(pipe[0])), IsNotRegular},
		{"a link to /proc/self/fd/0", link("l-fd0", "/proc/self/fd/0"), func(err error) bool { return err != nil }},
		{"a link loop", at("loop-a"), func(err error) bool { return errors.Is(err, syscall.ELOOP) }},
		{"a path longer than PATH_MAX", long, func(err error) bool { return errors.Is(err, syscall.ENAMETOOLONG) }},
		{"a sparse 1 TiB file", at("sparse"), func(err error) bool { var tl *TooLargeError; return errors.As(err, &tl) && tl.Size == 1<<40 }},
		// Regular files of the kernel's: reading guardrun's own
		// environment would put its secrets in a parse error the
		// agent reads; others block or act when read.
		{"a link to /proc/self/environ", link("l-environ", "/proc/self/environ"), IsNotRegular},
		{"a link to /proc/self/cmdline", link("l-cmdline", "/proc/self/cmdline"), IsNotRegular},
		{"a link to /proc/thread-self/environ", link("l-tenviron", "/proc/thread-self/environ"), IsNotRegular},
		{"a link to a sysfs file", link("l-sys", "/sys/kernel/mm/transparent_hugepage/enabled"), func(err error) bool { return IsNotRegular(err) || errors.Is(err, os.ErrNotExist) }},
	}
	if os.Geteuid() == 0 {
		// Read as root, /proc/kmsg waits for the kernel's next
		// message and takes it from the system log.
		rows = append(rows, struct {
			name    string
			path    string
			refused func(error) bool
		}{"a link to /proc/kmsg", link("l-kmsg", "/proc/kmsg"), IsNotRegular})
	}
	for _, r := range rows {
		var data []byte
		var err error
		within(t, r.name, func() { data, err = ReadFile(r.path, 1<<20) })
		if err == nil || !r.refused(err) {
			t.Errorf("%s: read %d bytes, %v; want refused", r.name, len(data), err)
			continue
		}
		if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), r.path[:min(len(r.path), 64)]) {
			t.Errorf("%s: error %q, want one naming the path and nothing read", r.name, err)
		}
	}
}

// TestOpenUnderLease: a command's process that outlives it (or a second one
// running) takes a write lease on the config file; an open for reading
// then waits for the lease to be given up, up to
// /proc/sys/fs/lease-break-time (45 s by default), with guardrun (or a
// request of `guardrun serve`). Refused at once instead.
func TestOpenUnderLease(t *testing.T) {
	file := filepath.Join(t.TempDir(), ".guardrun.yaml")
	if err := os.WriteFile(file, []byte("rules: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(file, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_WRLCK); err != nil {
		t.Skipf("no lease: %v", err)
	}
	defer unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_UNLCK)
	within(t, "a file under a write lease", func() { _, err = ReadFile(file, 1<<20) })
	if err == nil {
		t.Errorf("a file under a write lease: read, want refused without waiting")
	}
}

// TestOpenSwapped: a file swapped for a FIFO and back while it is
// read never makes the read wait, and what is read is the file.
func TestOpenSwapped(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config")
	if err := os.WriteFile(file, []byte("rules: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file swapped for a FIFO while it is opened: a rename race
	// in a loop, never making the open wait.
	fifo := filepath.Join(dir, "fifo")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			unix.Mkfifo(fifo, 0o644)
			os.Rename(fifo, file)
			os.WriteFile(fifo, []byte("rules: []\n"), 0o644)
			os.Rename(fifo, file)
		}
	}()
	within(t, "a file swapped for a FIFO, 2000 times", func() {
		for range 2000 {
			if data, err := ReadFile(file, 1<<20); err == nil && string(data) != "rules: []\n" {
				t.Errorf("read %q", data)
			}
		}
	})
	close(stop)
	<-done
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestOpenNoFollow: OpenNoFollow refuses a last component that is a
// link (to a regular file, a device, a FIFO, a loop) without opening
// what it names, and opens a regular file, also under a linked
// directory.
func TestOpenNoFollow(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config")
	if err := os.WriteFile(file, []byte("rules: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "via")); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{file, "/dev/zero", fifo, "/proc/self/environ", "loop"} {
		link := filepath.Join(dir, "l-"+filepath.Base(target))
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		var err error
		saw := false
		watch := target
		if target == "loop" || strings.HasPrefix(target, "/proc") || target == "/dev/zero" {
			watch = file // nothing of ours to watch; the error is what counts
		}
		saw = opened(t, watch, func() {
			within(t, link, func() { _, _, err = OpenNoFollow(link) })
		})
		var nr *NotRegularError
		if !errors.As(err, &nr) || nr.Type != os.ModeSymlink || !strings.Contains(err.Error(), "a symbolic link") {
			t.Errorf("OpenNoFollow(link to %s): %v; want refused as a link", target, err)
		}
		if saw {
			t.Errorf("OpenNoFollow(link to %s): opened it", target)
		}
	}
	for _, p := range []string{file, filepath.Join(dir, "via", "config")} {
		f, _, err := OpenNoFollow(p)
		if err != nil {
			t.Errorf("OpenNoFollow(%s): %v", p, err)
			continue
		}
		f.Close()
	}
}
