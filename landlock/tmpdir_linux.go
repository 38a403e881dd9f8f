package landlock

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/internal/sys/sockdir"
)

// The command's $TMPDIR is a directory of its own in guardrun's
// temporary directory (sockdir.TempDir: $TMPDIR when it names a
// directory this user can write, reached through no link, else /tmp),
// tmpPrefix plus a random name, beside a lock file of the
// same name plus tmpLockSuffix that the guardrun which made it holds
// locked (flock) for as long as the directory may be in use. A lock is
// released when its holder dies, even by SIGKILL: a lock file whose lock
// can be taken belongs to a guardrun that is gone, and sweepTmp removes
// its directory, then the lock file. The lock file is outside the
// command's reach ($TMPDIR is all it sees of the temporary directory),
// and is made under tmpStaging and renamed once locked, so that no lock
// file under its own name is ever free while its owner runs; the
// directory is made after it, and removed before it.
const (
	tmpPrefix     = "guardrun-tmp-"
	tmpLockSuffix = ".lock"
	tmpStaging    = ".guardrun-tmp-new-"
	// stagingAge is how old a lock file under tmpStaging must be for
	// sweepTmp to take it for left (made, and its guardrun killed
	// before the rename): the instant between making and locking it.
	stagingAge = time.Minute
)

var (
	tmpMu    sync.Mutex
	tmpLocks = map[string]*os.File{} // by directory, the lock files this process holds
)

// makeTmp makes the command's $TMPDIR, locked until removeTmp.
func makeTmp() (string, error) {
	base := sockdir.TempDir()
	f, err := os.CreateTemp(base, tmpStaging+"*")
	if err != nil {
		return "", err
	}
	stage := f.Name()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		os.Remove(stage)
		return "", fmt.Errorf("lock %s: %w", stage, err)
	}
	dir := filepath.Join(base, tmpPrefix+strings.TrimPrefix(filepath.Base(stage), tmpStaging))
	if err := unix.Renameat2(unix.AT_FDCWD, stage, unix.AT_FDCWD, dir+tmpLockSuffix, unix.RENAME_NOREPLACE); err != nil {
		f.Close()
		os.Remove(stage)
		return "", fmt.Errorf("rename %s: %w", stage, err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		os.Remove(dir + tmpLockSuffix)
		f.Close()
		return "", err
	}
	tmpMu.Lock()
	tmpLocks[dir] = f
	tmpMu.Unlock()
	return dir, nil
}

// removeTmp removes the command's $TMPDIR, then its lock file, and
// releases the lock.
func removeTmp(dir string) {
	if dir == "" {
		return
	}
	removeTree(dir)
	tmpMu.Lock()
	lock := tmpLocks[dir]
	delete(tmpLocks, dir)
	tmpMu.Unlock()
	if lock != nil {
		os.Remove(dir + tmpLockSuffix)
		lock.Close()
	}
}

// sweepTmp removes what guardruns killed before they could clean up left
// in sockdir.TempDir(): the $TMPDIR beside each of this user's lock files
// whose lock can be taken, then the lock file. It follows no link,
// leaves other users' files alone, and never touches a directory whose
// lock file is held (its command may still run) or a directory without
// a lock file (an older guardrun's, which it cannot tell from one in
// use).
func sweepTmp() {
	d, err := os.Open(sockdir.TempDir())
	if err != nil {
		return
	}
	defer d.Close()
	// Every name is looked up in the directory opened here, through its
	// descriptor's name in /proc: a temporary directory swapped for a
	// link while the sweep runs (one the environment put in an rw zone,
	// `export TMPDIR := $(CURDIR)/t`) cannot send a removal that was
	// checked in one directory into another. Without /proc, nothing is
	// found, and nothing removed.
	base := "/proc/self/fd/" + strconv.Itoa(int(d.Fd()))
	for {
		names, err := d.Readdirnames(512)
		for _, n := range names {
			switch {
			case strings.HasPrefix(n, tmpPrefix) && strings.HasSuffix(n, tmpLockSuffix):
				sweepOne(base, n, false)
			case strings.HasPrefix(n, tmpStaging):
				sweepOne(base, n, true)
			}
		}
		if err != nil {
			return
		}
	}
}

// sweepOne takes the lock file name in base and, if it was free, removes
// the directory it stands for and the lock file itself.
func sweepOne(base, name string, staging bool) {
	path := filepath.Join(base, name)
	lock, err := lockFile(path)
	if err != nil {
		return
	}
	defer lock.Close()
	var st unix.Stat_t
	if unix.Fstat(int(lock.Fd()), &st) != nil {
		return
	}
	// Still the file at that name: another sweeper may have removed it
	// between this one's open and its lock.
	var now unix.Stat_t
	if unix.Lstat(path, &now) != nil || now.Ino != st.Ino || now.Dev != st.Dev {
		return
	}
	if staging {
		if time.Since(time.Unix(st.Ctim.Unix())) < stagingAge {
			return // being made
		}
	} else {
		dir := strings.TrimSuffix(path, tmpLockSuffix)
		var ds unix.Stat_t
		err := unix.Lstat(dir, &ds)
		if err == nil && (ds.Mode&unix.S_IFMT != unix.S_IFDIR || int(ds.Uid) != os.Geteuid()) {
			return // not the directory guardrun made there
		}
		if err == nil {
			removeTree(dir)
		}
	}
	os.Remove(path)
}

// lockFile opens the regular file at path (no link followed), checks that
// this user owns it, and takes its lock without waiting.
func lockFile(path string) (*os.File, error) {
	f, err := openOwn(unix.AT_FDCWD, path, unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// removeTree removes dir and everything in it, following no link; when
// directories the command made unreadable or unwritable stopped that,
// they are given back to the user first.
func removeTree(dir string) {
	if err := os.RemoveAll(dir); err != nil {
		unlockTree(unix.AT_FDCWD, dir)
		_ = os.RemoveAll(dir)
	}
}
