package landlock

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestAttackSweepPlanted: what a command can leave in guardrun's
// temporary directory when that lies in a zone it writes, for the next
// guardrun's sweep: a free lock file beside a link to a directory it
// wants emptied, beside a directory holding a link out, or beside
// another user's directory; a lock file that is a FIFO or another
// user's. The sweep returns at once, removes no file outside the
// temporary directory and nothing that is not this user's, and removes
// the directory it may (the link in it, not the link's target).
func TestAttackSweepPlanted(t *testing.T) {
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

// TestAttackTodayUnprivileged runs this file's and its neighbours'
// attack rows again as an unprivileged user when the suite runs as root:
// without CAP_DAC_OVERRIDE a directory or file a command made unreadable
// stops a read or a removal that root's would not.
func TestAttackTodayUnprivileged(t *testing.T) {
	const user = "guardrun-test"
	if os.Getenv("GUARDRUN_TEST_CHILD") != "" || os.Geteuid() != 0 {
		t.Skip("not root, or the re-executed copy: the rows ran as this user")
	}
	runAsUser(t, user, "TestAttackSweepPlanted", "TestAttackBudgetLinks", "TestAttackBudgetNoRetry", "TestAttackTmpDirLinkedBase")
}
