package landlock

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// watchScript adds inotify watches on each of $2.. with the mask $1
// ("all", "nofollow" or "onlydir") and prints "PATH ok" or "PATH errno
// N"; for the first that works it then creates a file named
// "made-inside" in it (a directory) and prints the name of the first
// event the instance reads: the watch must be on the command's own
// instance.
const watchScript = `
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
IN_CREATE, IN_ONLYDIR, IN_DONT_FOLLOW = 0x100, 0x01000000, 0x02000000
mask = {"all": 0xfff, "nofollow": 0xfff | IN_DONT_FOLLOW, "onlydir": 0xfff | IN_ONLYDIR}[sys.argv[1]]
fd = libc.inotify_init1(0)
first = None
for p in sys.argv[2:]:
    wd = libc.inotify_add_watch(fd, p.encode(), ctypes.c_uint32(mask))
    if wd < 0:
        print(p, "errno", ctypes.get_errno())
    else:
        print(p, "ok")
        first = first or p
if first and os.path.isdir(first) and not os.path.islink(first):
    open(os.path.join(first, "made-inside"), "w").close()
    buf = os.read(fd, 4096)
    _, _, _, n = struct.unpack_from("iIII", buf)
    print("event", buf[16:16 + n].rstrip(b"\0").decode())
`

// TestInotifyWatch: inotify_add_watch works where the command may read
// (its events reach the command's own instance) and fails with EACCES
// outside every zone, on a denied name and through a link out of the
// zone, which Landlock alone lets through.
func TestInotifyWatch(t *testing.T) {
	requireLandlock(t)
	if !watchable() {
		t.Skip("pidfd_getfd is refused here: watches are left to the kernel (see Limitations)")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("python3 not installed")
	}
	p := workspace(t, false)
	ws := p.Cwd
	outside, err := os.MkdirTemp("/var/tmp", "guardrun-landlock-outside-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(outside)
	os.Chmod(outside, 0o755)
	for _, d := range []string{"sub", ".secret"} {
		if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p.Deny = append(p.Deny, filepath.Join(ws, ".secret"))
	if err := os.Symlink(outside, filepath.Join(ws, "to-outside")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	eacces := fmt.Sprintf("errno %d", syscall.EACCES)
	for _, tc := range []struct {
		mask string
		args []string
		want map[string]string
	}{
		{"all", []string{"sub", ws, outside, ws + "/.secret", "to-outside", "/proc/self", "/dev"},
			map[string]string{"sub": "ok", ws: "ok", outside: eacces, ws + "/.secret": eacces, "to-outside": eacces,
				"/proc/self": eacces, "/dev": eacces, "event": "made-inside"}},
		// The link itself lies in the zone.
		{"nofollow", []string{"to-outside", outside}, map[string]string{"to-outside": "ok", outside: eacces}},
		{"onlydir", []string{"file", "sub"}, map[string]string{"file": fmt.Sprintf("errno %d", syscall.ENOTDIR), "sub": "ok", "event": "made-inside"}},
	} {
		st, out := run(t, p, nil, `python3 -c '`+watchScript+`' `+tc.mask+` `+quoteAll(tc.args))
		if st != 0 {
			t.Fatalf("%s: status %d:\n%s", tc.mask, st, out)
		}
		got := results(t, out)
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: %s: %q, want %q\n%s", tc.mask, k, got[k], v, out)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "made-inside")); err == nil {
		t.Error("a file was made outside")
	}
}

func quoteAll(args []string) string {
	s := ""
	for _, a := range args {
		s += `"` + a + `" `
	}
	return s
}
