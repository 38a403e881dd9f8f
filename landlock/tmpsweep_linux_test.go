package landlock

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSweep: what a command (or another local user) can leave in
// guardrun's temporary directory to make the next command's sweep delete
// or chmod what it should not, or hang. Each row lays out the temporary
// directory as such a command would (links, a lock file of its own for a
// name it chose, entries of another owner) and then sweeps: the victim,
// outside the temporary directory, stays as it was, and what the row
// says is kept is kept.
func TestSweep(t *testing.T) {
	const nobody = 65534
	rows := []struct {
		name, class string
		root        bool // needs root (chown to another user)
		// setup lays out tmp; victim is a directory outside it with a
		// file "f" in it, mode 0755. It returns the paths that must
		// still exist after the sweep, and those that must be gone.
		setup func(t *testing.T, tmp, victim string) (kept, gone []string)
	}{
		{name: "lock file is a link to a free lock file", class: "symlinked lock",
			setup: func(t *testing.T, tmp, victim string) ([]string, []string) {
				mk(t, filepath.Join(victim, "guardrun-tmp-v.lock"), "")
				mkdir(t, filepath.Join(tmp, "guardrun-tmp-a"))
				ln(t, filepath.Join(victim, "guardrun-tmp-v.lock"), filepath.Join(tmp, "guardrun-tmp-a.lock"))
				return []string{filepath.Join(tmp, "guardrun-tmp-a"), filepath.Join(victim, "guardrun-tmp-v.lock")}, nil
			}},
		{name: "lock file is a link to a directory", class: "symlinked lock",
			setup: func(t *testing.T, tmp, victim string) ([]string, []string) {
				ln(t, victim, filepath.Join(tmp, "guardrun-tmp-a.lock"))
				return []string{filepath.Join(victim, "f")}, nil
			}},
		{name: "free lock, the directory is a link to the victim", class: "symlinked dir",
			setup: func(t *testing.T, tmp, victim string) ([]string, []string) {
				mk(t, filepath.Join(tmp, "guardrun-tmp-a.lock"), "")
				ln(t, victim, filepath.Join(tmp, "guardrun-tmp-a"))
				return []string{filepath.Join(victim, "f"), filepath.Join(tmp, "guardrun-tmp-a")}, nil
			}},
		{name: "free lock, the directory is a regular file", class: "replaced dir",
			setup: func(t *testing.T, tmp, victim string) ([]string, []string) {
				mk(t, filepath.Join(tmp, "guardrun-tmp-a.lock"), "")
				mk(t, filepath.Join(tmp, "guardrun-tmp-a"), "x")
				return []string{filepath.Join(tmp, "guardrun-tmp-a")}, nil
			}},
		{name: "free lock of a name the command chose, links out at depth under mode 0 dirs", class: "links out",
			setup: func(t *testing.T, tmp, victim string) ([]string, []string) {
				d := filepath.Join(tmp, "guardrun-tmp-evil")
				mk(t, d+".lock", "")
				mkdir(t, filepath.Join(d, "a", "b"))
				ln(t, victim, filepath.Join(d, "a", "b", "dir"))
				ln(t, filepath.Join(victim, "f"), filepath.Join(d, "a", "file"))
				if err := os.Link(filepath.Join(victim, "f"), filepath.Join(d, "a", "hard")); err != nil {
					t.Fatal(err)
				}
				chmod(t, filepath.Join(d, "a", "b"), 0)
				chmod(t, filepath.Join(d, "a"), 0)
				return []string{filepath.Join(victim, "f")}, []string{d, d + ".lock"}
			}},
		{name: "lock file is a fifo", class: "hang",
			setup: func(t *testing.T, tmp, victim string) ([]string, []string) {
				if err := unix.Mkfifo(filepath.Join(tmp, "guardrun-tmp-a.lock"), 0o600); err != nil {
					t.Fatal(err)
				}
				mkdir(t, filepath.Join(tmp, "guardrun-tmp-a"))
				return []string{filepath.Join(tmp, "guardrun-tmp-a")}, nil
			}},
		{name: "staging name is a fifo", class: "hang",
			setup: func(t *testing.T, tmp, victim string) ([]string, []string) {
				if err := unix.Mkfifo(filepath.Join(tmp, tmpStaging+"a"), 0o600); err != nil {
					t.Fatal(err)
				}
				return []string{filepath.Join(tmp, tmpStaging+"a")}, nil
			}},
		{name: "staging lock file just made", class: "held lock",
			setup: func(t *testing.T, tmp, victim string) ([]string, []string) {
				mk(t, filepath.Join(tmp, tmpStaging+"a"), "")
				return []string{filepath.Join(tmp, tmpStaging+"a")}, nil
			}},
		{name: "lock held by a running guardrun", class: "held lock",
			setup: func(t *testing.T, tmp, victim string) ([]string, []string) {
				p := filepath.Join(tmp, "guardrun-tmp-a.lock")
				mk(t, p, "")
				f, err := os.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { f.Close() })
				if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
					t.Fatal(err)
				}
				mkdir(t, filepath.Join(tmp, "guardrun-tmp-a"))
				return []string{p, filepath.Join(tmp, "guardrun-tmp-a")}, nil
			}},
		{name: "lock file of another user", class: "other user", root: true,
			setup: func(t *testing.T, tmp, victim string) ([]string, []string) {
				mk(t, filepath.Join(tmp, "guardrun-tmp-a.lock"), "")
				mkdir(t, filepath.Join(tmp, "guardrun-tmp-a"))
				chown(t, filepath.Join(tmp, "guardrun-tmp-a.lock"), nobody)
				return []string{filepath.Join(tmp, "guardrun-tmp-a.lock"), filepath.Join(tmp, "guardrun-tmp-a")}, nil
			}},
		{name: "free lock, the directory of another user", class: "other user", root: true,
			setup: func(t *testing.T, tmp, victim string) ([]string, []string) {
				mk(t, filepath.Join(tmp, "guardrun-tmp-a.lock"), "")
				mkdir(t, filepath.Join(tmp, "guardrun-tmp-a", "d"))
				chown(t, filepath.Join(tmp, "guardrun-tmp-a"), nobody)
				return []string{filepath.Join(tmp, "guardrun-tmp-a", "d")}, nil
			}},
		{name: "free lock, a hard link to the victim's file", class: "links out",
			setup: func(t *testing.T, tmp, victim string) ([]string, []string) {
				if err := os.Link(filepath.Join(victim, "f"), filepath.Join(tmp, "guardrun-tmp-a.lock")); err != nil {
					t.Fatal(err)
				}
				return []string{filepath.Join(victim, "f")}, []string{filepath.Join(tmp, "guardrun-tmp-a.lock")}
			}},
	}
	for _, r := range rows {
		t.Run(r.class+"/"+r.name, func(t *testing.T) {
			if r.root && os.Geteuid() != 0 {
				t.Skip("needs root to give files to another user")
			}
			root := t.TempDir()
			tmp, victim := filepath.Join(root, "tmp"), filepath.Join(root, "victim")
			mkdir(t, tmp)
			mkdir(t, victim)
			chmod(t, victim, 0o755)
			mk(t, filepath.Join(victim, "f"), "precious")
			t.Setenv("TMPDIR", tmp)
			kept, gone := r.setup(t, tmp, victim)
			t.Cleanup(func() { unlockTree(unix.AT_FDCWD, tmp) })
			done := make(chan struct{})
			go func() { sweepTmp(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the sweep hangs")
			}
			if b, err := os.ReadFile(filepath.Join(victim, "f")); err != nil || string(b) != "precious" {
				t.Errorf("the victim's file: %q, %v", b, err)
			}
			var st syscall.Stat_t
			if err := syscall.Stat(victim, &st); err != nil || st.Mode&0o7777 != 0o755 {
				t.Errorf("the victim's mode: %o, %v, want 755", st.Mode&0o7777, err)
			}
			for _, p := range kept {
				if _, err := os.Lstat(p); err != nil {
					t.Errorf("%s removed: %v", p, err)
				}
			}
			for _, p := range gone {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s not removed", p)
				}
			}
		})
	}
}

func mk(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
}

func ln(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func chmod(t *testing.T, p string, m os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, m); err != nil {
		t.Fatal(err)
	}
}

func chown(t *testing.T, p string, uid int) {
	t.Helper()
	if err := os.Lchown(p, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// TestSweepBaseSwapped: guardrun's own $TMPDIR chosen by the
// environment inside an rw zone (a Makefile's `export TMPDIR :=
// $(CURDIR)/t`, run with SHELL=guardrun) lets a sandboxed command swap
// that directory for a link between the sweep's look at a stale
// $TMPDIR of a name it made, with a free lock, and the removal. The
// removal must not land on a live $TMPDIR of the same name in another
// directory (the link's other target), whose lock is held.
func TestSweepBaseSwapped(t *testing.T) {
	root := t.TempDir()
	mine, other := filepath.Join(root, "mine"), filepath.Join(root, "other")
	live := filepath.Join(other, "guardrun-tmp-x")
	mkdir(t, filepath.Join(live, "d"))
	mk(t, filepath.Join(live, "d", "f"), "live")
	mk(t, live+tmpLockSuffix, "")
	held, err := os.Open(live + tmpLockSuffix)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := unix.Flock(int(held.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(root, "base")
	t.Setenv("TMPDIR", base)
	point := func(to string) {
		tmp := base + ".new"
		os.Remove(tmp)
		if err := os.Symlink(to, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, base); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	flipped := make(chan struct{})
	go func() {
		defer close(flipped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			point(mine)
			point(other)
		}
	}()
	deadline := time.Now().Add(3 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		stale := filepath.Join(mine, "guardrun-tmp-x")
		if err := os.MkdirAll(stale, 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(stale + tmpLockSuffix); err != nil {
			mk(t, stale+tmpLockSuffix, "")
		}
		sweepTmp()
		if _, err := os.Stat(filepath.Join(live, "d", "f")); err != nil {
			close(stop)
			<-flipped
			t.Fatalf("sweep %d removed the live $TMPDIR %s of another directory: %v", n, live, err)
		}
	}
	close(stop)
	<-flipped
}

// TestSweepPlanted: what a command can leave in guardrun's
// temporary directory when that lies in a zone it writes, for the next
// guardrun's sweep: a free lock file beside a link to a directory it
// wants emptied, beside a directory holding a link out, or beside
// another user's directory; a lock file that is a FIFO or another
// user's. The sweep returns at once, removes no file outside the
// temporary directory and nothing that is not this user's, and removes
// the directory it may (the link in it, not the link's target).
func TestSweepPlanted(t *testing.T) {
	base := t.TempDir()
	tmp, victim := filepath.Join(base, "tmp"), filepath.Join(base, "victim")
	for _, d := range []string{tmp, victim} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(victim, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	at := func(name string) string { return filepath.Join(tmp, tmpPrefix+name) }
	lock := func(name string) {
		t.Helper()
		if err := os.WriteFile(at(name)+tmpLockSuffix, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A link to the victim, with a free lock file.
	lock("link")
	if err := os.Symlink(victim, at("link")); err != nil {
		t.Fatal(err)
	}
	// A directory with a link to the victim in it, and a free lock
	// file: swept, the link removed, the victim kept.
	lock("inner")
	if err := os.Mkdir(at("inner"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(at("inner"), "l")); err != nil {
		t.Fatal(err)
	}
	// A lock file that is a FIFO, beside a directory.
	if err := syscall.Mkfifo(at("fifo")+tmpLockSuffix, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(at("fifo"), 0o700); err != nil {
		t.Fatal(err)
	}
	other := os.Geteuid() == 0
	if other {
		// Another user's lock file, and another user's directory
		// beside a free lock file of this user's.
		lock("theirlock")
		if err := os.Mkdir(at("theirlock"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(at("theirlock")+tmpLockSuffix, 1, 1); err != nil {
			t.Fatal(err)
		}
		lock("theirdir")
		if err := os.Mkdir(at("theirdir"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(at("theirdir"), 1, 1); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() { sweepTmp(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		if f, err := os.OpenFile(at("fifo")+tmpLockSuffix, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("the sweep still runs after 5 s")
	}
	if _, err := os.Stat(filepath.Join(victim, "file")); err != nil {
		t.Errorf("the victim's file: %v, want kept", err)
	}
	for _, kept := range []string{"link", "fifo", "fifo" + tmpLockSuffix} {
		if _, err := os.Lstat(at(kept)); err != nil {
			t.Errorf("%s: %v, want kept (not guardrun's)", at(kept), err)
		}
	}
	if other {
		for _, kept := range []string{"theirlock", "theirlock" + tmpLockSuffix, "theirdir"} {
			if _, err := os.Lstat(at(kept)); err != nil {
				t.Errorf("%s: %v, want kept (another user's)", at(kept), err)
			}
		}
	}
	for _, gone := range []string{"inner", "inner" + tmpLockSuffix} {
		if _, err := os.Lstat(at(gone)); err == nil {
			t.Errorf("%s: still there, want swept", at(gone))
		}
	}
}

// TestSweepAndBudgetUnprivileged runs the sweep rows of this file and
// the budget rows of watchbudget_linux_test.go again as an unprivileged
// user when the suite runs as root:
// without CAP_DAC_OVERRIDE a directory or file a command made unreadable
// stops a read or a removal that root's would not.
func TestSweepAndBudgetUnprivileged(t *testing.T) {
	const user = "guardrun-test"
	if os.Getenv("GUARDRUN_TEST_CHILD") != "" || os.Geteuid() != 0 {
		t.Skip("not root, or the re-executed copy: the rows ran as this user")
	}
	runAsUser(t, user, "TestSweepPlanted", "TestBudgetLinks", "TestBudgetNoRetry", "TestTmpDirLinkedBase")
}

// TestTmpDirLinkedBase: guardrun's $TMPDIR is in the workspace,
// and an earlier command replaced it with a link to a directory some
// program loads everything under (here: elsewhere). The next command's
// own $TMPDIR, which it writes, is made in /tmp, not where the link
// points, and nothing is left behind in either.
func TestTmpDirLinkedBase(t *testing.T) {
	requireLandlock(t)
	root := t.TempDir()
	elsewhere := filepath.Join(root, "elsewhere")
	if err := os.Mkdir(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{"link", "link/sub", "/proc/self/cwd"} {
		if !strings.HasPrefix(base, "/") {
			os.Remove(filepath.Join(root, "link"))
			if err := os.Symlink(elsewhere, filepath.Join(root, "link")); err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Join(elsewhere, "sub"), 0o755)
			base = filepath.Join(root, base)
		}
		t.Setenv("TMPDIR", base)
		p := workspace(t, false)
		p.PrivateTmp = true
		st, out := run(t, p, nil, `echo x > "$TMPDIR/f" && echo "$TMPDIR"`)
		dir := strings.TrimSpace(out)
		if st != 0 || filepath.Dir(dir) != "/tmp" {
			t.Errorf("TMPDIR=%s: status %d, %q; want the command's $TMPDIR in /tmp", base, st, out)
		}
		for _, d := range []string{elsewhere, filepath.Join(elsewhere, "sub")} {
			if ents, _ := os.ReadDir(d); len(ents) > 0 && !(d == elsewhere && len(ents) == 1 && ents[0].Name() == "sub") {
				t.Errorf("TMPDIR=%s: %s holds %v, want nothing of guardrun's", base, d, ents)
			}
		}
	}
}
