//go:build linux

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/landlock"
	"github.com/guardrun/guardrun/sandbox"
)

func words(ws ...string) []sandbox.Word {
	out := make([]sandbox.Word, len(ws))
	for i, w := range ws {
		out[i] = sandbox.Word{Text: w}
	}
	return out
}

// shell is the prediction's entry for the request's own shell.
func shell(script string) sandbox.Exec {
	return sandbox.Exec{Program: "sh", Args: words("-c", script), Part: script}
}

// held is what a test checks of a held call.
type held struct {
	Kind, By, What string
	Allowed        bool
	Why            string // a part of Reason
}

func heldOf(hs []sandbox.HeldCall) []held {
	var out []held
	for _, h := range hs {
		what := h.Path
		if h.Kind == sandbox.HeldExec {
			what = sandbox.QuoteSh(h.Argv)
		}
		why := ""
		for _, w := range []string{"threads", "shared memory", "no one can be asked"} {
			if strings.Contains(h.Reason, w) {
				why = w
			}
		}
		out = append(out, held{Kind: h.Kind, By: h.By, What: what, Allowed: h.Allowed, Why: why})
	}
	return out
}

// TestVerify: a verified command runs what its prediction allows without
// a held call; an exec or a write outside it is held, and refused (EPERM,
// nothing done, the call recorded with a line the agent can act on)
// when no one allows it, or made when the answer allows it; an exec goes
// on only for a single-threaded caller whose argv lies in its own memory
// (a vfork child of one, as posix_spawn makes, included); memfd_create
// is refused and /proc/PID/mem is never written.
func TestVerify(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("sed"); err != nil {
		t.Skip(err)
	}
	py, _ := exec.LookPath("python3")
	f := newFixture(t)
	file := filepath.Join(f.ws, "file")
	if err := os.WriteFile(file, []byte("line one\nline two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	allowAll := func(context.Context, sandbox.HeldCall) (bool, error) { return true, nil }
	ws := func(n string) string { return filepath.Join(f.ws, n) }
	type tc struct {
		name    string
		script  string
		exec    []sandbox.Exec
		write   []sandbox.PathPattern
		hold    func(context.Context, sandbox.HeldCall) (bool, error)
		status  int // -1: any
		out     string
		held    []held
		exist   []string
		missing []string
		// landlockRefuses: the landlock backend refuses the call
		// itself, before the prediction is looked at (no held call).
		landlockRefuses bool
	}
	cases := []tc{
		{name: "a predicted command runs with no held call", script: `sed -n p file`,
			exec: []sandbox.Exec{{Program: "sed", Args: words("-n", "p", "file"), Part: "sed -n p file"}},
			out:  "line one\nline two\n"},
		{name: "sed's e command runs sh, held and refused", script: `sed -n '1e touch M' file`,
			exec:    []sandbox.Exec{{Program: "sed", Args: words("-n", "1e touch M", "file"), Part: "sed -n '1e touch M'"}},
			status:  -1,
			held:    []held{{Kind: "exec", By: "sed -n '1e touch M'", What: "sh -c 'touch M'", Why: "no one can be asked"}},
			missing: []string{ws("M")}},
		{name: "sed's e command held and allowed: posix_spawn's child execs", script: `sed -n '1e touch M' file`,
			exec: []sandbox.Exec{{Program: "sed", Args: words("-n", "1e touch M", "file"), Part: "sed -n '1e touch M'"}},
			hold: allowAll, status: -1,
			held: []held{{Kind: "exec", By: "sed -n '1e touch M'", What: "sh -c 'touch M'", Allowed: true},
				{Kind: "exec", By: "sh -c 'touch M'", What: "touch M", Allowed: true},
				{Kind: "create", By: "touch M", What: ws("M"), Allowed: true},
				{Kind: "metadata", By: "touch M", What: ws("M"), Allowed: true}},
			exist: []string{ws("M")}},
		{name: "a vfork child of a predicted program execs a predicted program", script: `sed -n '1e touch M' file`,
			exec: []sandbox.Exec{{Program: "sed", Args: words("-n", "1e touch M", "file"), Part: "sed e"},
				{Program: "sh", Args: words("-c", "touch M"), Part: "sed's sh"}, {Program: "touch", Args: words("M"), Part: "touch M"}},
			write:  []sandbox.PathPattern{{Path: ws("M")}},
			status: -1, exist: []string{ws("M")}},
		{name: "a predicted write is made, another held and refused", script: `echo a > out.txt; echo b > other.txt; cat out.txt`,
			exec:   []sandbox.Exec{{Program: "cat", Args: words("out.txt"), Part: "cat out.txt"}},
			write:  []sandbox.PathPattern{{Path: ws("out.txt")}},
			status: -1, out: "a\n",
			held:    []held{{Kind: "create", By: "echo a > out.txt; echo b > other.txt; cat out.txt", What: ws("other.txt"), Why: "no one can be asked"}},
			exist:   []string{ws("out.txt")},
			missing: []string{ws("other.txt")}},
		{name: "a write held and allowed", script: `echo b > other.txt && cat other.txt`,
			exec: []sandbox.Exec{{Program: "cat", Args: words("other.txt"), Part: "cat other.txt"}},
			hold: allowAll, out: "b\n",
			held:  []held{{Kind: "create", By: "echo b > other.txt && cat other.txt", What: ws("other.txt"), Allowed: true}},
			exist: []string{ws("other.txt")}},
		{name: "removing and renaming are writes", script: `rm -f file; mv Makefile M2`,
			exec:   []sandbox.Exec{{Program: "rm", Args: words("-f", "file"), Part: "rm -f file"}, {Program: "mv", Args: words("Makefile", "M2"), Part: "mv Makefile M2"}},
			write:  []sandbox.PathPattern{{Path: ws("M2")}},
			status: -1,
			held: []held{{Kind: "remove", By: "rm -f file", What: ws("file"), Why: "no one can be asked"},
				{Kind: "rename", By: "mv Makefile M2", What: ws("M2"), Why: "no one can be asked"}},
			exist: []string{ws("file"), ws("Makefile")}, missing: []string{ws("M2")}},
		{name: "the temporary directory, /dev/null and pipes need no prediction", script: `echo x > "${TMPDIR:-/tmp}/t" && cat "${TMPDIR:-/tmp}/t" >/dev/null && echo y > /dev/null && echo z > /dev/stdout`,
			exec: []sandbox.Exec{{Program: "cat", Args: []sandbox.Word{{Any: true}}, Part: "cat $TMPDIR/t"}},
			out:  "z\n"},
		{name: "the metadata of a predicted path changes, another's is held", script: `echo a > out.txt; chmod 600 out.txt; chmod 600 Makefile`,
			exec:   []sandbox.Exec{{Program: "chmod", Args: []sandbox.Word{{Text: "600"}, {Any: true}}, Part: "chmod 600"}},
			write:  []sandbox.PathPattern{{Path: ws("out.txt")}},
			status: -1,
			held:   []held{{Kind: "metadata", By: "chmod 600", What: ws("Makefile"), Why: "no one can be asked"}}},
		{name: "the times of /dev/null are not the command's: held, the host's device untouched", script: `touch -d 2001-01-01 /dev/null`,
			exec:            []sandbox.Exec{{Program: "touch", AnyArgs: true, Part: "touch /dev/null"}},
			status:          -1,
			held:            []held{{Kind: "metadata", By: "touch /dev/null", What: "/dev/null", Why: "no one can be asked"}},
			landlockRefuses: true},
		{name: "the times of /dev/null, held and allowed, are the command's own copy's (as root): the host's device untouched", script: `touch -d 2001-01-01 /dev/null`,
			exec: []sandbox.Exec{{Program: "touch", AnyArgs: true, Part: "touch /dev/null"}},
			hold: allowAll, status: -1,
			held:            []held{{Kind: "metadata", By: "touch /dev/null", What: "/dev/null", Allowed: true}},
			landlockRefuses: true},
		{name: "a link planted at a predicted path leads nowhere else", script: `ln -s Makefile out.txt; echo x > out.txt`,
			exec:   []sandbox.Exec{{Program: "ln", Args: words("-s", "Makefile", "out.txt"), Part: "ln -s"}},
			write:  []sandbox.PathPattern{{Path: ws("out.txt")}},
			status: -1,
			held:   []held{{Kind: "write", By: "ln -s Makefile out.txt; echo x > out.txt", What: ws("Makefile"), Why: "no one can be asked"}},
			exist:  []string{ws("out.txt")}},
		{name: "a hard link or a rename of another file to a predicted path is held", script: `ln Makefile out.txt; mv Makefile out.txt`,
			exec:   []sandbox.Exec{{Program: "ln", Args: words("Makefile", "out.txt"), Part: "ln"}, {Program: "mv", Args: words("Makefile", "out.txt"), Part: "mv"}},
			write:  []sandbox.PathPattern{{Path: ws("out.txt")}},
			status: -1,
			held: []held{{Kind: "link", By: "ln", What: ws("out.txt"), Why: "no one can be asked"},
				{Kind: "rename", By: "mv", What: ws("out.txt"), Why: "no one can be asked"}},
			exist: []string{ws("Makefile")}, missing: []string{ws("out.txt")}},
		{name: "a descriptor opened for reading is not reopened for writing", script: `exec 3<Makefile; echo x > /proc/self/fd/3`,
			status: -1,
			held:   []held{{Kind: "write", By: "exec 3<Makefile; echo x > /proc/self/fd/3", What: ws("Makefile"), Why: "no one can be asked"}}},
		{name: "a program outside the prediction is held", script: `touch N`,
			status:  -1,
			held:    []held{{Kind: "exec", By: "touch N", What: "touch N", Why: "no one can be asked"}},
			missing: []string{ws("N")}},
	}
	// As root under bwrap the command's /dev/null is its own copy, on no
	// path inside: its metadata calls are refused (EACCES) unasked. As
	// another user it is the host's, at /dev/null: asked, and made by
	// guardrun as that user, whom the kernel refuses (EPERM). Landlock
	// refuses them itself.
	nullOut, nullHeld := "utime 13\nfchmod 13\n", []held(nil)
	// A denied file: asked under bwrap and refused by its read-only
	// mount (EROFS); landlock refuses it itself (EACCES).
	deniedOut, deniedHeld := "utime 30\nchmod 30\n", []held{{Kind: "metadata", By: "python3", What: ws(".env"), Allowed: true}}
	if landlockTest() {
		deniedOut = "utime 13\nchmod 13\n"
	}
	if os.Geteuid() != 0 && !landlockTest() {
		nullOut, nullHeld = "utime 1\nfchmod 1\n", []held{{Kind: "metadata", By: "python3", What: "/dev/null", Allowed: true}}
	}
	if py != "" {
		cases = append(cases,
			tc{name: "a denied file's times and mode, held and allowed, stay: under bwrap it is the host's /dev/null bound read-only",
				script: `python3 -c '
import os
for name, call in (("utime", lambda: os.utime(".env", (978307200, 978307200))), ("chmod", lambda: os.chmod(".env", 0o666))):
    try:
        call()
        print(name, "made")
    except OSError as e:
        print(name, e.errno)
'`,
				exec: []sandbox.Exec{{Program: "python3", AnyArgs: true, Part: "python3"}},
				hold: allowAll, out: deniedOut, held: deniedHeld, landlockRefuses: true},
			tc{name: "a device node is never made, even at a predicted path with every held call allowed (guardrun, as root, could make it)",
				script: `python3 -c '
import os, stat
for name, kind, dev in (("c", stat.S_IFCHR, os.makedev(1, 3)), ("b", stat.S_IFBLK, os.makedev(7, 0))):
    try:
        os.mknod(name, kind | 0o666, dev)
        print(name, "made")
    except OSError as e:
        print(name, e.errno)
'`,
				exec:  []sandbox.Exec{{Program: "python3", AnyArgs: true, Part: "python3"}},
				write: []sandbox.PathPattern{{Path: ws("c")}, {Path: ws("b")}},
				hold:  allowAll, out: "c 1\nb 1\n", missing: []string{ws("c"), ws("b")}},
			tc{name: "the times and mode of the /dev/null a command was given as input do not change through its descriptor, even with every held call allowed",
				script: `python3 -c '
import os
for name, call in (("utime", lambda: os.utime(0, (978307200, 978307200))), ("fchmod", lambda: os.fchmod(0, 0o666))):
    try:
        call()
        print(name, "made")
    except OSError as e:
        print(name, e.errno)
'`,
				exec: []sandbox.Exec{{Program: "python3", AnyArgs: true, Part: "python3"}},
				hold: allowAll, out: nullOut, held: nullHeld},
			tc{name: "a multi-threaded caller's exec is refused, predicted or not",
				script: `python3 -c 'import threading, time, os; threading.Thread(target=time.sleep, args=(5,), daemon=True).start(); os.execv("/bin/true", ["true"])'`,
				exec:   []sandbox.Exec{{Program: "python3", AnyArgs: true, Part: "python3"}, {Program: "true", Part: "true"}},
				hold:   allowAll, status: -1,
				held: []held{{Kind: "exec", By: "python3", What: "true", Why: "threads"}}},
			tc{name: "an argv in shared memory is refused",
				script: `python3 -c '
import ctypes, mmap
m = mmap.mmap(-1, 4096, flags=mmap.MAP_SHARED)
m.write(b"/bin/true\0")
buf = ctypes.c_char.from_buffer(m)
path = ctypes.addressof(buf)
argv = (ctypes.c_char_p * 2)(ctypes.c_char_p(path), None)
ctypes.CDLL(None, use_errno=True).execv(ctypes.c_char_p(path), argv)
print("refused", ctypes.get_errno())
'`,
				exec: []sandbox.Exec{{Program: "python3", AnyArgs: true, Part: "python3"}, {Program: "true", Part: "true"}},
				hold: allowAll, status: -1, out: "refused 1\n",
				held: []held{{Kind: "exec", By: "python3", What: "/bin/true", Why: "shared memory"}}},
			tc{name: "memfd_create is refused, and /proc/self/mem is never written",
				script: `python3 -c '
import os
try:
    os.memfd_create("x")
except OSError as e:
    print("memfd", e.errno)
try:
    open("/proc/self/mem", "r+b")
except OSError as e:
    print("mem", e.errno)
'`,
				exec: []sandbox.Exec{{Program: "python3", AnyArgs: true, Part: "python3"}},
				hold: allowAll, out: "memfd 38\nmem 13\n"},
			tc{name: "Linux AIO and MADV_FREE are refused: the kernel would change an exec's memory after guardrun read it",
				script: `python3 -c '
import ctypes, mmap
libc = ctypes.CDLL(None, use_errno=True)
ctx = ctypes.c_ulong(0)
print("aio", libc.syscall(206, 1, ctypes.byref(ctx)), ctypes.get_errno())
m = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
for name, advice in (("free", 8), ("dontneed", 4)):
    ctypes.set_errno(0)
    print(name, libc.madvise(ctypes.c_void_p(addr), 4096, advice), ctypes.get_errno())
'`,
				exec: []sandbox.Exec{{Program: "python3", AnyArgs: true, Part: "python3"}},
				out:  "aio -1 38\nfree -1 22\ndontneed 0 0\n"},
			tc{name: "an unnamed file (O_TMPFILE) linked at a predicted name is made, at another held",
				script: `python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for n in ("out.txt", "other.txt"):
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o644)
    os.write(fd, b"made\\n")
    # linkat(AT_FDCWD, /proc/self/fd/N, AT_FDCWD, n, AT_SYMLINK_FOLLOW)
    if libc.linkat(-100, b"/proc/self/fd/%d" % fd, -100, n.encode(), 0x400) != 0:
        print(n, ctypes.get_errno())
'`,
				exec:   []sandbox.Exec{{Program: "python3", AnyArgs: true, Part: "python3"}},
				write:  []sandbox.PathPattern{{Path: ws("out.txt")}},
				status: -1, out: "other.txt 1\n",
				held:    []held{{Kind: "link", By: "python3", What: ws("other.txt"), Why: "no one can be asked"}},
				exist:   []string{ws("out.txt")},
				missing: []string{ws("other.txt")}},
		)
	}
	makefile, err := os.ReadFile(ws("Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			null, _ := os.Stat(os.DevNull)
			defer func() {
				if fi, err := os.Stat(os.DevNull); err == nil && null != nil && !fi.ModTime().Equal(null.ModTime()) {
					t.Errorf("the host's /dev/null changed: modified %v, was %v", fi.ModTime(), null.ModTime())
					os.Chtimes(os.DevNull, null.ModTime(), null.ModTime())
				}
				// No case may change a file outside its prediction.
				if b, err := os.ReadFile(ws("Makefile")); err != nil || !bytes.Equal(b, makefile) {
					t.Errorf("Makefile changed: %q, %v", b, err)
					os.WriteFile(ws("Makefile"), makefile, 0o644)
				}
				if fi, err := os.Stat(ws("Makefile")); err == nil && fi.Mode().Perm() != 0o644 {
					t.Errorf("Makefile's mode changed: %v", fi.Mode())
					os.Chmod(ws("Makefile"), 0o644)
				}
			}()
			for _, p := range append(c.missing, ws("out.txt"), ws("other.txt"), ws("M"), ws("N"), ws("M2")) {
				os.Remove(p)
			}
			if err := os.WriteFile(file, []byte("line one\nline two\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.landlockRefuses && landlockTest() {
				c.held = nil
			}
			pred := &sandbox.Prediction{Exec: append([]sandbox.Exec{shell(c.script)}, c.exec...), Write: c.write}
			v := &Verify{Prediction: pred, Hold: c.hold}
			var out, errb bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			o := f.opts()
			o.Verify = v
			status, err := RunWith(ctx, o, f.profile, []string{"/bin/sh", "-c", c.script}, f.env, Stdio{Stdout: &out, Stderr: &errb})
			if err != nil {
				t.Fatalf("the sandbox did not start: %v\n%s%s", err, out.String(), errb.String())
			}
			if c.status >= 0 && status != c.status {
				t.Errorf("status %d, want %d\nstdout: %s\nstderr: %s", status, c.status, out.String(), errb.String())
			}
			if c.out != "" && out.String() != c.out {
				t.Errorf("stdout %q, want %q\nstderr: %s", out.String(), c.out, errb.String())
			}
			if d := cmp.Diff(heldOf(v.Held()), c.held); d != "" {
				t.Errorf("held calls (-got +want):\n%s\nstderr: %s", d, errb.String())
			}
			_, refused := v.Refused()
			wantRefused := false
			for _, h := range c.held {
				wantRefused = wantRefused || !h.Allowed
			}
			if refused != wantRefused {
				t.Errorf("Refused: %v, want %v", refused, wantRefused)
			}
			for _, p := range c.exist {
				if _, err := os.Lstat(p); err != nil {
					t.Errorf("%s: %v", p, err)
				}
			}
			for _, p := range c.missing {
				if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists: %v", p, err)
				}
			}
		})
	}
	// The line the request ends with.
	v := &Verify{Prediction: &sandbox.Prediction{Exec: []sandbox.Exec{shell(`sed -n '1e touch M' file`),
		{Program: "sed", Args: words("-n", "1e touch M", "file"), Part: "sed -n ':a;e touch M'"}}}}
	o := f.opts()
	o.Verify = v
	if _, err := RunWith(context.Background(), o, f.profile, []string{"/bin/sh", "-c", `sed -n '1e touch M' file`}, f.env, Stdio{}); err != nil {
		t.Fatal(err)
	}
	h, ok := v.Refused()
	want := "guardrun: refused at run time: sed -n ':a;e touch M' wants to run sh -c 'touch M', which the analysis did not predict (no one can be asked)"
	if !ok || h.Line(nil) != want {
		t.Errorf("line %q, want %q", h.Line(nil), want)
	}
}

// TestVerifyReopensOwnOutput: a command whose standard output is a file
// (guardrun -c ... > log) may open it again for writing through
// /dev/stdout, which gives it nothing its descriptor has not; its
// standard input, a file opened for reading, is not opened for writing
// that way.
func TestVerifyReopensOwnOutput(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	ws := func(n string) string { return filepath.Join(f.ws, n) }
	if err := os.WriteFile(ws("file"), []byte("line one\nline two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const script = `sed -n 1p file > /dev/stdout; echo x > /dev/stdin`
	log, err := os.OpenFile(ws("log"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	in, err := os.Open(ws("Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	makefile, _ := os.ReadFile(ws("Makefile"))
	v := &Verify{Prediction: &sandbox.Prediction{Exec: []sandbox.Exec{shell(script),
		{Program: "sed", Args: words("-n", "1p", "file"), Part: "sed -n 1p file"}}}}
	o := f.opts()
	o.Verify = v
	var errb bytes.Buffer
	if _, err := RunWith(context.Background(), o, f.profile, []string{"/bin/sh", "-c", script}, f.env, Stdio{Stdin: in, Stdout: log, Stderr: &errb}); err != nil {
		t.Fatalf("the sandbox did not start: %v\n%s", err, errb.String())
	}
	if b, _ := os.ReadFile(ws("log")); string(b) != "line one\n" {
		t.Errorf("the log holds %q, want the line written through /dev/stdout\n%s", b, errb.String())
	}
	want := []held{{Kind: "write", By: script, What: ws("Makefile"), Why: "no one can be asked"}}
	if d := cmp.Diff(heldOf(v.Held()), want); d != "" {
		t.Errorf("held calls (-got +want):\n%s", d)
	}
	if b, _ := os.ReadFile(ws("Makefile")); !bytes.Equal(b, makefile) {
		t.Errorf("the standard input, opened for reading, was written: %q", b)
	}
}

// TestVerifyReopensNullOutput: a verified command whose standard output
// is the /dev/null guardrun gives a command with no output, and whose
// standard error is a caller's /dev/null (under bwrap, as root, both
// are handed over as the command's own copy of the device, which is on no
// path inside), may still write to them through /dev/stdout and
// /dev/stderr: `echo oops > /dev/stderr` is ordinary shell.
func TestVerifyReopensNullOutput(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	const script = `echo x > /dev/stdout && echo y > /dev/stderr && echo z >> /dev/stderr`
	v := &Verify{Prediction: &sandbox.Prediction{Exec: []sandbox.Exec{shell(script)}}}
	o := f.opts()
	o.Verify = v
	status, err := RunWith(context.Background(), o, f.profile, []string{"/bin/sh", "-c", script}, f.env, Stdio{Stderr: null})
	if err != nil {
		t.Fatalf("the sandbox did not start: %v", err)
	}
	if status != 0 {
		t.Errorf("status %d, want 0: a write through /dev/stdout or /dev/stderr failed", status)
	}
	if d := cmp.Diff(heldOf(v.Held()), []held(nil)); d != "" {
		t.Errorf("held calls (-got +want):\n%s", d)
	}
}

// TestVerifyOwnOutputNotRead: a verified command whose standard output
// is a file it may not read (a denied one, appended to by the caller) may
// write to it again through /dev/stdout, but not open it for reading
// that way: guardrun would make that open for it.
func TestVerifyOwnOutputNotRead(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	out, err := os.OpenFile(f.secret, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	const script = `exec 3<>/dev/stdout && cat <&3 >&2`
	v := &Verify{Prediction: &sandbox.Prediction{Exec: []sandbox.Exec{shell(script), {Program: "cat", Part: "cat"}}}}
	o := f.opts()
	o.Verify = v
	var errb bytes.Buffer
	if _, err := RunWith(context.Background(), o, f.profile, []string{"/bin/sh", "-c", script}, f.env, Stdio{Stdout: out, Stderr: &errb}); err != nil {
		t.Fatalf("the sandbox did not start: %v\n%s", err, errb.String())
	}
	if strings.Contains(errb.String(), strings.TrimSpace(secretText)) {
		t.Errorf("the command read the denied file it writes to through /dev/stdout:\n%s", errb.String())
	}
}

// TestVerifyExecFromRewritableFile: what an exec names may not lie in a
// mapping of a file another process of the command can rewrite
// meanwhile: one in bwrap's own /dev tmpfs (/dev/shm), or a protected
// name (.git/config) that Landlock lets the command change and guardrun
// restores after it. A write there is held like any other (the sandbox
// does not refuse it), and even allowed, the exec that reads its path
// from such a file is refused, so a program other than the one guardrun
// looked at never runs.
func TestVerifyExecFromRewritableFile(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip(err)
	}
	f := newFixture(t)
	gitConfig := filepath.Join(f.ws, ".git/config")
	for _, c := range []struct {
		path   string
		writes bool // the sandbox lets the command write it
	}{
		{"/dev/shm/argv", !landlockTest()},
		{gitConfig, landlockTest()},
	} {
		t.Run(c.path, func(t *testing.T) {
			script := `python3 -c '
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
try:
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
except OSError as e:
    print("open", e.errno)
    sys.exit(0)
os.write(fd, b"/bin/true".ljust(4096, b"\0"))
w = os.fork()
if w == 0:
    while True:
        os.pwrite(fd, b"/bin/echo", 0)
        os.pwrite(fd, b"/bin/true", 0)
for i in range(100):
    if os.fork() == 0:
        m = mmap.mmap(fd, 4096, flags=mmap.MAP_PRIVATE)
        path = ctypes.addressof(ctypes.c_char.from_buffer(m))
        argv = (ctypes.c_char_p * 3)(b"x", b"ran-from-a-rewritten-file", None)
        libc.execv(ctypes.c_char_p(path), argv)
        os._exit(1)
    os.wait()
os.kill(w, 9)
' ` + c.path
			var wrote bool
			v := &Verify{
				Prediction: &sandbox.Prediction{Exec: []sandbox.Exec{shell(script),
					{Program: "python3", AnyArgs: true, Part: "python3"}, {Program: "true", AnyArgs: true, Part: "true"}}},
				Hold: func(_ context.Context, h sandbox.HeldCall) (bool, error) {
					write := h.Kind == sandbox.HeldCreate || h.Kind == sandbox.HeldWrite
					wrote = wrote || write && h.Path == c.path
					return write, nil // the write only
				},
			}
			o := f.opts()
			o.Verify = v
			var out bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if _, err := RunWith(ctx, o, f.profile, []string{"/bin/sh", "-c", script}, f.env, Stdio{Stdout: &out, Stderr: &out}); err != nil {
				t.Fatalf("the sandbox did not start: %v\n%s", err, out.String())
			}
			if strings.Contains(out.String(), "ran-from-a-rewritten-file") {
				t.Errorf("a program other than the one guardrun looked at ran:\n%s", out.String())
			}
			if wrote != c.writes {
				t.Errorf("the write was held: %v, want %v\n%s", wrote, c.writes, out.String())
			}
			for _, h := range v.Held() {
				if h.Kind == sandbox.HeldExec && !strings.Contains(h.Reason, "which the sandbox can write") {
					t.Errorf("an exec refused for another reason: %+v", h)
				}
			}
		})
	}
}

// TestVerifyRefusedOnce: once a held call is refused, the request ends
// refused, and the calls held after it are refused without a question:
// the person is asked once, not once per call a command can make.
func TestVerifyRefusedOnce(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	ws := func(n string) string { return filepath.Join(f.ws, n) }
	const script = `touch A; touch B; echo x > C`
	asked := 0
	v := &Verify{
		Prediction: &sandbox.Prediction{Exec: []sandbox.Exec{shell(script)}},
		Hold: func(context.Context, sandbox.HeldCall) (bool, error) {
			asked++
			return false, nil
		},
	}
	o := f.opts()
	o.Verify = v
	var out bytes.Buffer
	if _, err := RunWith(context.Background(), o, f.profile, []string{"/bin/sh", "-c", script}, f.env, Stdio{Stdout: &out, Stderr: &out}); err != nil {
		t.Fatalf("the sandbox did not start: %v\n%s", err, out.String())
	}
	var got []string
	for _, h := range v.Held() {
		got = append(got, fmt.Sprintf("%s %s %v %s", h.Kind, h.Path+sandbox.QuoteSh(h.Argv), h.Allowed, h.Reason))
	}
	want := []string{
		"exec touch A false ",
		"exec touch B false the request was refused at an earlier call",
		"create " + ws("C") + " false the request was refused at an earlier call",
	}
	if d := cmp.Diff(got, want); d != "" || asked != 1 {
		t.Errorf("asked %d times, want 1; held calls (-got +want):\n%s", asked, d)
	}
	for _, n := range []string{"A", "B", "C"} {
		if _, err := os.Lstat(ws(n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists: %v", n, err)
		}
	}
}

// TestVerifyBind: binding a unix socket to a path creates a file there,
// a write like any other: outside the prediction it is held and
// refused, and no file is made; at a predicted path or in the command's
// temporary directory the socket is bound. With the network on (only
// socketpair ends, whose names the filter lets through at some lengths)
// and with a unix socket listed (socket(AF_UNIX) allowed).
func TestVerifyBind(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip(err)
	}
	f := newFixture(t)
	listed, err := net.Listen("unix", filepath.Join(f.outside, "listed.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer listed.Close()
	profiles := []struct {
		name string
		spec sandbox.Spec
	}{
		{name: "network on", spec: sandbox.Spec{Network: true}},
		{name: "a unix socket listed", spec: sandbox.Spec{UnixSockets: []string{listed.Addr().String()}}},
	}
	// bindPy NAME...: a socket bound to each name (a socketpair end
	// where socket(AF_UNIX) is refused), and what each bind said.
	const bindPy = `import socket, sys
for n in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX)
    except OSError:
        s = socket.socketpair()[0]
    try:
        s.bind(n)
        print(n, "bound")
    except OSError as e:
        print(n, e.errno)
`
	ws := func(n string) string { return filepath.Join(f.ws, n) }
	// Names of 9 and 13 bytes: the lengths a bind with the network on
	// keeps (sun_path and its NUL, after the family).
	const unpredicted, predicted = "sock-9byt", "sock-13-bytes"
	for _, pr := range profiles {
		t.Run(pr.name, func(t *testing.T) {
			os.Remove(ws(unpredicted))
			os.Remove(ws(predicted))
			spec := pr.spec
			spec.Zones = []sandbox.Zone{{Name: "ws", Root: f.ws, Writable: true}, {Name: "probe", Root: suiteDir}}
			spec.SystemRead = sandbox.DefaultSystemPaths
			spec.Cwd, spec.Home = f.ws, f.home
			p, err := sandbox.Derive(spec)
			if err != nil {
				t.Fatal(err)
			}
			script := `python3 -c '` + bindPy + `' ` + unpredicted + ` ` + predicted + ` "${TMPDIR:-/tmp}/tmp-sock"`
			v := &Verify{Prediction: &sandbox.Prediction{
				Exec:  []sandbox.Exec{shell(script), {Program: "python3", AnyArgs: true, Part: "bind.py"}},
				Write: []sandbox.PathPattern{{Path: ws(predicted)}},
			}}
			o := f.opts()
			o.Verify = v
			if len(spec.UnixSockets) > 0 {
				o.LandlockAccept = []string{landlock.AcceptUnixSockets}
			}
			var out, errb bytes.Buffer
			if _, err := RunWith(context.Background(), o, p, []string{"/bin/sh", "-c", script}, f.env, Stdio{Stdout: &out, Stderr: &errb}); err != nil {
				t.Fatalf("the sandbox did not start: %v\n%s", err, errb.String())
			}
			if _, err := os.Lstat(ws(unpredicted)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a socket was bound outside the prediction: %v\n%s%s", err, out.String(), errb.String())
			}
			if landlockTest() && spec.Network {
				// Landlock shares the host's network namespace: every
				// unix path is refused there (landlock.AbstractBind).
				return
			}
			if fi, err := os.Lstat(ws(predicted)); err != nil || fi.Mode().Type() != os.ModeSocket {
				t.Errorf("the socket at the predicted path: %v, %v\n%s%s", fi, err, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), "/tmp-sock bound") {
				t.Errorf("the socket in the temporary directory was not bound:\n%s%s", out.String(), errb.String())
			}
			want := []held{{Kind: "create", By: "bind.py", What: ws(unpredicted), Why: "no one can be asked"}}
			if d := cmp.Diff(heldOf(v.Held()), want); d != "" {
				t.Errorf("held calls (-got +want):\n%s", d)
			}
		})
	}
}

// TestVerifiedStartUnderLandlock: under the landlock backend guardrun
// answers the first exec of a verified command's child while the thread
// that forked it waits in the kernel for that exec. The command starts
// with a single P for guardrun's goroutines (GOMAXPROCS=1, one CPU),
// with a collection at nearly every allocation, and with several
// verified commands starting at once (guardrun serve), instead of
// guardrun waiting for itself for ever. Each case runs in a copy of the
// test binary, which is killed if it does not finish.
func TestVerifiedStartUnderLandlock(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	if err := os.WriteFile(filepath.Join(f.ws, "file"), []byte("line one\nline two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, maxprocs, gogc, atOnce, times string
	}{
		{name: "one P", maxprocs: "1", gogc: "100", atOnce: "1", times: "3"},
		{name: "a collection at nearly every allocation", maxprocs: "2", gogc: "1", atOnce: "1", times: "30"},
		{name: "four verified commands starting at once", maxprocs: "2", gogc: "100", atOnce: "4", times: "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			helper := exec.Command(os.Args[0], "-test.run=^TestVerifiedStartHelper$", "-test.count=1", "-test.v")
			helper.Env = append(os.Environ(),
				"GUARDRUN_TEST_HELPER=verified-start",
				"GUARDRUN_TEST_HELPER_BASE="+f.base,
				"GUARDRUN_TEST_HELPER_AT_ONCE="+tc.atOnce,
				"GUARDRUN_TEST_HELPER_TIMES="+tc.times,
				"GUARDRUN_TEST_PROBE="+probePath,
				"GUARDRUN_TEST_BACKEND="+BackendLandlock,
				"GOMAXPROCS="+tc.maxprocs, "GOGC="+tc.gogc)
			helper.Stdout, helper.Stderr = &out, &out
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- helper.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("the verified commands did not run: %v\n%s", err, out.String())
				}
			case <-time.After(90 * time.Second):
				helper.Process.Kill()
				<-done
				t.Errorf("the verified commands did not start in 90s (guardrun waits for its own answer to the child's first exec):\n%s", out.String())
			}
		})
	}
}

// TestVerifiedStartHelper is the helper of
// TestVerifiedStartUnderLandlock: GUARDRUN_TEST_HELPER_AT_ONCE verified
// commands at once, GUARDRUN_TEST_HELPER_TIMES times each; it does
// nothing in a normal run.
func TestVerifiedStartHelper(t *testing.T) {
	if os.Getenv("GUARDRUN_TEST_HELPER") != "verified-start" {
		t.Skip("helper process for TestVerifiedStartUnderLandlock")
	}
	f := fixtureAt(t, os.Getenv("GUARDRUN_TEST_HELPER_BASE"), false)
	const script = `sed -n 1p file`
	run := func() error {
		v := &Verify{Prediction: &sandbox.Prediction{Exec: []sandbox.Exec{shell(script),
			{Program: "sed", Args: words("-n", "1p", "file"), Part: script}}}}
		var out bytes.Buffer
		o := f.opts()
		o.Verify = v
		status, err := RunWith(context.Background(), o, f.profile, []string{"/bin/sh", "-c", script}, f.env, Stdio{Stdout: &out, Stderr: &out})
		switch {
		case err != nil:
			return err
		case status != 0 || out.String() != "line one\n" || len(v.Held()) != 0:
			return fmt.Errorf("status %d, held %v, output %q", status, v.Held(), out.String())
		}
		return nil
	}
	n, err := strconv.Atoi(os.Getenv("GUARDRUN_TEST_HELPER_AT_ONCE"))
	if err != nil {
		t.Fatal(err)
	}
	times, err := strconv.Atoi(os.Getenv("GUARDRUN_TEST_HELPER_TIMES"))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, n)
	for range n {
		go func() {
			for range times {
				if err := run(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
