package landlock

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
)

// metadataScript makes every metadata call, in each of its forms, on
// the file named by $1 (a directory $2 holds it as $3, for the *at
// forms; $4 is a symbolic link to it), and prints one line per call:
// "NAME ok" or "NAME errno N". The calls libc has no wrapper for go
// through syscall(2).
const metadataScript = `
import ctypes, errno, os, sys, struct
f, d, base, link = sys.argv[1:5]
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH = -100, 0x100, 0x1000
libc.syscall.restype = ctypes.c_long
def raw(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
def try_(name, fn):
    try:
        fn()
        print(name, "ok")
    except OSError as e:
        print(name, "errno", e.errno)
B = lambda s: s.encode()
dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
rfd = os.open(f, os.O_RDONLY)
uid, gid = os.getuid(), os.getgid()
try_("chmod", lambda: os.chmod(f, 0o750))
try_("fchmod", lambda: os.fchmod(rfd, 0o751))
try_("fchmodat", lambda: os.chmod(base, 0o752, dir_fd=dfd))
try_("fchmodat-nofollow", lambda: os.chmod(f, 0o753, follow_symlinks=False))
try_("fchmodat2", lambda: raw(452, AT_FDCWD, B(f), 0o754, 0))
try_("fchmodat2-empty", lambda: raw(452, rfd, b"", 0o755, AT_EMPTY_PATH))
try_("chmod-link", lambda: os.chmod(link, 0o756))
try_("chmod-proc-self", lambda: os.chmod("/proc/self/fd/%d" % rfd, 0o757))
try_("chown", lambda: os.chown(f, uid, gid))
try_("lchown", lambda: os.lchown(f, uid, gid))
try_("fchown", lambda: os.fchown(rfd, uid, gid))
try_("fchownat", lambda: os.chown(base, uid, gid, dir_fd=dfd))
try_("utimensat", lambda: os.utime(f, ns=(10**18, 10**18)))
try_("utimensat-fd", lambda: os.utime(rfd, ns=(10**18 + 1, 10**18 + 1)))
try_("utimensat-dirfd", lambda: os.utime(base, dir_fd=dfd, ns=(10**18 + 2, 10**18 + 2)))
try_("utimensat-nofollow", lambda: os.utime(f, follow_symlinks=False))
try_("utime", lambda: raw(132, B(f), struct.pack("qq", 946684800, 946684800)))
try_("utimes", lambda: raw(235, B(f), struct.pack("qqqq", 946684801, 5, 946684801, 5)))
try_("futimesat", lambda: raw(261, dfd, B(base), None))
try_("setxattr", lambda: os.setxattr(f, "user.a", b"1"))
try_("lsetxattr", lambda: os.setxattr(f, "user.b", b"2", follow_symlinks=False))
try_("fsetxattr", lambda: os.setxattr(rfd, "user.c", b"3"))
args = ctypes.create_string_buffer(b"4")
try_("setxattrat", lambda: raw(463, dfd, B(base), 0, b"user.d", struct.pack("QII", ctypes.addressof(args), 1, 0), 16))
try_("removexattr", lambda: os.removexattr(f, "user.a"))
try_("lremovexattr", lambda: os.removexattr(f, "user.b", follow_symlinks=False))
try_("fremovexattr", lambda: os.removexattr(rfd, "user.c"))
try_("removexattrat", lambda: raw(466, dfd, B(base), 0, b"user.d"))
`

// metadataCalls are the lines metadataScript prints.
var metadataCalls = []string{
	"chmod", "fchmod", "fchmodat", "fchmodat-nofollow", "fchmodat2", "fchmodat2-empty", "chmod-link", "chmod-proc-self",
	"chown", "lchown", "fchown", "fchownat",
	"utimensat", "utimensat-fd", "utimensat-dirfd", "utimensat-nofollow", "utime", "utimes", "futimesat",
	"setxattr", "lsetxattr", "fsetxattr", "setxattrat",
	"removexattr", "lremovexattr", "fremovexattr", "removexattrat",
}

func results(t *testing.T, out string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		name, res, ok := strings.Cut(l, " ")
		if ok {
			got[name] = res
		}
	}
	return got
}

func stamp(t *testing.T, path string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	names := make([]byte, 1024)
	n, _ := unix.Llistxattr(path, names)
	if n < 0 {
		n = 0
	}
	return fmt.Sprintf("mode %o uid %d mtime %d ctime %d.%d xattrs %q", st.Mode, st.Uid, st.Mtim.Sec, st.Ctim.Sec, st.Ctim.Nsec, names[:n])
}

// TestMetadataCalls: every metadata call, in every form, works on a file
// in a writable zone (guardrun makes it for the command) and fails with
// EACCES on a file in a read-only zone, leaving it unchanged, including
// through a symbolic link in the zone and through /proc/self/fd.
func TestMetadataCalls(t *testing.T) {
	requireLandlock(t)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("python3 not installed")
	}
	p := workspace(t, false)
	ro, err := os.MkdirTemp("/var/tmp", "guardrun-landlock-ro-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ro)
	os.Chmod(ro, 0o755)
	p.ReadOnly = append(p.ReadOnly, ro)
	ws := p.Cwd
	for _, dir := range []string{ws, ro} {
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := unix.Setxattr(filepath.Join(dir, "f"), "user.keep", []byte("k"), 0); err != nil {
			t.Fatal(err)
		}
	}
	// A link in the zone to the read-only file.
	if err := os.Symlink(filepath.Join(ro, "f"), filepath.Join(ws, "to-ro")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "f"), filepath.Join(ws, "to-ws")); err != nil {
		t.Fatal(err)
	}

	// In the zone: every call does what it says.
	st, out := run(t, p, nil, `python3 -c '`+metadataScript+`' "$PWD/f" "$PWD" f "$PWD/to-ws"`)
	if st != 0 {
		t.Fatalf("status %d:\n%s", st, out)
	}
	got := results(t, out)
	for _, c := range metadataCalls {
		if got[c] != "ok" {
			t.Errorf("in the zone: %s: %q, want ok", c, got[c])
		}
	}
	var fst unix.Stat_t
	if err := unix.Stat(filepath.Join(ws, "f"), &fst); err != nil {
		t.Fatal(err)
	}
	if fst.Mode&0o7777 != 0o757 {
		t.Errorf("the zone file's mode is %o, want the last chmod's 757", fst.Mode&0o7777)
	}
	if xs, _ := unix.Listxattr(filepath.Join(ws, "f"), make([]byte, 256)); xs != len("user.keep\x00") {
		t.Errorf("the zone file's attributes: %d bytes of names, want user.keep alone", xs)
	}

	// Read-only zone, by path, by descriptor and through the link.
	before := stamp(t, filepath.Join(ro, "f"))
	st, out = run(t, p, nil, `python3 -c '`+metadataScript+`' "`+ro+`/f" "`+ro+`" f "$PWD/to-ro"`)
	if st != 0 {
		t.Fatalf("status %d:\n%s", st, out)
	}
	got = results(t, out)
	eacces := fmt.Sprintf("errno %d", syscall.EACCES)
	for _, c := range metadataCalls {
		if got[c] != eacces {
			t.Errorf("read-only zone: %s: %q, want %q", c, got[c], eacces)
		}
	}
	if after := stamp(t, filepath.Join(ro, "f")); after != before {
		t.Errorf("the read-only file changed:\n before %s\n after  %s", before, after)
	}
}

// TestJudgeDeleted: an object whose name was unlinked is judged by the
// name it had (the kernel marks it " (deleted)"), a file really named
// so by its name; a pipe is refused.
func TestJudgeDeleted(t *testing.T) {
	ws := t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	out := t.TempDir()
	out, _ = filepath.EvalSymlinks(out)
	m := &metadata{p: &sandbox.Profile{ReadWrite: []string{ws}, ReadOnly: []string{out}}, rs: &Ruleset{}}
	open := func(p string) int {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		return fd
	}
	for _, tc := range []struct {
		dir, name string
		unlink    bool
		want      bool
	}{
		{ws, "gone", true, true},
		{out, "gone", true, false},
		{out, "x (deleted)", false, false},
		{ws, "y (deleted)", false, true},
	} {
		p := filepath.Join(tc.dir, tc.name)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		fd := open(p)
		if tc.unlink {
			os.Remove(p)
		}
		o, err := m.judgeBy(fd, m.rs.MetadataWritable)
		if (err == nil) != tc.want {
			t.Errorf("%s (unlinked %v): judged %v, want writable %v", p, tc.unlink, err, tc.want)
		}
		if o != nil {
			o.close()
		}
	}
	var pfd [2]int
	if err := unix.Pipe2(pfd[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pfd[1])
	if _, err := m.judgeBy(pfd[0], m.rs.MetadataWritable); err != ErrnoOutside {
		t.Errorf("a pipe: %v, want EACCES", err)
	}
}
