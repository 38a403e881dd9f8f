package bwrap

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/guardrun/guardrun/sandbox"
)

// heldMasks are the empty files masks are mounted on, held open with a
// shared flock for the sandbox's lifetime.
//
// A denied path that does not exist is masked at its first missing
// component, and a mount needs a mount point: an empty directory on the
// host.
// Left behind, such files would litter the user's trees (an empty .env in
// every directory an agent worked in). So the run that creates one removes
// it afterwards, but only when no other sandbox is using it as its mount
// point: every run holds a shared lock on each empty file it masks, and
// removes a placeholder only if it can take the lock exclusively. The
// last holder removes it, creator or not (placeholderMode tells
// guardrun's placeholders from the user's own empty directories); a run
// that finds it gone before it holds it makes its own.
// A file removed from under a running sandbox would silently unmount its
// mask there; this protocol prevents that between guardrun processes.
// (Another program deleting it on the host can still do so; see the
// package's Limitations.)
type heldMasks struct {
	files []heldMask
}

type heldMask struct {
	path    string
	f       *os.File
	created bool
}

// holdMasks makes and holds the mount points of the profile's masks.
//
// A path seen existing may be another run's mount point that its creator
// removes before this run holds it (two commands of `make -j2` in one
// tree): the arguments would then bind a source that is gone and bwrap
// would not start. holdMasks starts over with fresh stats when that
// happens, and this run makes the mount point itself.
func holdMasks(p *sandbox.Profile, stat *statCache) (*heldMasks, error) {
	for try := 1; ; try++ {
		h, vanished, err := holdMasksOnce(p, stat)
		if err != nil || vanished == "" {
			return h, err
		}
		h.release()
		if try == maxHoldTries {
			return nil, fmt.Errorf("bwrap: %s keeps appearing and disappearing (another process is creating and removing it); not starting", vanished)
		}
		stat.reset()
	}
}

// maxHoldTries bounds holdMasks' restarts.
const maxHoldTries = 20

// holdMasksOnce is one pass of holdMasks; vanished names a path it saw
// existing that was gone when it went to hold it.
func holdMasksOnce(p *sandbox.Profile, stat *statCache) (_ *heldMasks, vanished string, _ error) {
	h := &heldMasks{}
	for _, fm := range Placeholders(p, stat.stat) {
		stat.created(fm) // made below, by us or by whoever raced us
		var f *os.File
		err := os.Mkdir(fm, placeholderMode)
		if err == nil {
			f, err = os.OpenFile(fm, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
			if err != nil {
				os.Remove(fm)
			}
		}
		switch {
		case err == nil:
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
				f.Close()
				os.Remove(fm)
				h.release()
				return nil, "", fmt.Errorf("bwrap: lock %s: %w", fm, err)
			}
			h.files = append(h.files, heldMask{path: fm, f: f, created: true})
		case errors.Is(err, fs.ErrExist):
			// Someone else made it meanwhile: hold it as theirs.
			if m, ok := holdExisting(fm); ok {
				h.files = append(h.files, m)
			} else if _, err := os.Lstat(fm); errors.Is(err, fs.ErrNotExist) {
				return h, fm, nil
			}
		case errors.Is(err, fs.ErrNotExist):
			// Its parent, seen existing, was another run's placeholder.
			return h, filepath.Dir(fm), nil
		default:
			// bwrap, running as the same user, would fail the same way;
			// say so now with the path in hand.
			h.release()
			return nil, "", fmt.Errorf("bwrap: cannot create the mount point that masks %s: %w", fm, err)
		}
	}
	// Existing empty regular files under masks may be another run's mount
	// points: hold them so their creator does not remove them under us.
	for _, x := range append(slices.Clone(p.Deny), p.ReadOnlyOver...) {
		if slices.ContainsFunc(h.files, func(m heldMask) bool { return m.path == x }) {
			continue
		}
		if r := stat.get(x); !r.emptyFile && !(r.isDir && emptyDir(x)) {
			continue
		}
		if m, ok := holdExisting(x); ok {
			h.files = append(h.files, m)
		} else if _, err := os.Lstat(x); errors.Is(err, fs.ErrNotExist) {
			return h, x, nil
		}
	}
	return h, "", nil
}

// holdExisting takes a shared lock on path if it is an empty regular file,
// and checks that the path still names the locked file afterwards (its
// creator may have removed it in between).
func holdExisting(path string) (heldMask, bool) {
	for range 3 {
		fi, err := os.Lstat(path)
		if err != nil || !(fi.Mode().IsRegular() && fi.Size() == 0 || fi.IsDir() && emptyDir(path)) {
			return heldMask{}, false
		}
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != nil {
			return heldMask{}, false
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
			f.Close()
			return heldMask{}, false
		}
		if sameFile(f, path) {
			return heldMask{path: path, f: f}, true
		}
		f.Close()
	}
	return heldMask{}, false
}

func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(path)
	return err == nil && os.SameFile(a, b)
}

// placeholderMode marks the directories Command makes as mount points:
// read-only and sticky, which nobody gives an empty directory of their
// own. The last run to hold one removes it, whoever made it.
const placeholderMode = 0o555 | os.ModeSticky

// isPlaceholder reports whether fi is a directory's mode as Command makes
// a placeholder (placeholderMode, whatever the umask took from its
// permission bits), owned by this user. Its emptiness is for the caller.
func isPlaceholder(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.IsDir() && fi.Mode()&os.ModeSticky != 0 && fi.Mode().Perm()&0o222 == 0 && int(st.Uid) == os.Geteuid()
}

// release removes the mount points nobody else holds any more, if they
// are still empty: the ones this run made, and another run's
// placeholders (a run that overlapped this one leaves its own to the
// last holder: with make -j2 every placeholder was left behind), then
// drops every lock. An empty file or directory of the user's that a
// mask went on is never removed.
func (h *heldMasks) release() {
	if h == nil {
		return
	}
	for _, m := range h.files {
		if syscall.Flock(int(m.f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			// Rmdir fails on a directory that is no longer empty.
			if fi, err := m.f.Stat(); err == nil && sameFile(m.f, m.path) {
				switch {
				case fi.IsDir() && (m.created || isPlaceholder(fi)):
					syscall.Rmdir(m.path) // os.Remove would try unlink first
				case m.created && fi.Mode().IsRegular() && fi.Size() == 0:
					os.Remove(m.path)
				}
			}
		}
		m.f.Close()
	}
	h.files = nil
}

// emptyDir reports whether path is a directory with nothing in it (a
// placeholder of a missing read-only path, perhaps another run's).
func emptyDir(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && err != nil
}
