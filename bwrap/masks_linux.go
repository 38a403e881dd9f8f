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
// last holder removes it, creator or not (sandbox.PlaceholderPerm tells
// guardrun's placeholders from the user's own empty directories); a run
// that finds it gone before it holds it makes its own.
// A file removed from under a running sandbox would silently unmount its
// mask there; this protocol prevents that between guardrun processes.
// (Another program deleting it on the host can still do so; see the
// package's Limitations.)
type heldMasks struct {
	files []heldMask
}

// heldMask is one held mount point. Its descriptor is a plain one, not
// an *os.File: os.OpenFile would try (and fail) to register each with
// the poller, four system calls more for each of the twenty or so a
// command holds.
type heldMask struct {
	path    string
	fd      int
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
		// stat still answers "missing" for fm, made below by us or by
		// whoever raced us, so that Args puts the mask on it, where
		// Placeholders said (see statCache).
		fd := -1
		err := os.Mkdir(fm, sandbox.PlaceholderPerm)
		if err == nil {
			fd, err = openNoEINTR(fm, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
			if err != nil {
				syscall.Rmdir(fm)
				err = &fs.PathError{Op: "open", Path: fm, Err: err}
			}
		}
		switch {
		case err == nil:
			if err := flockNoEINTR(fd, syscall.LOCK_SH); err != nil {
				syscall.Close(fd)
				syscall.Rmdir(fm)
				h.release()
				return nil, "", fmt.Errorf("bwrap: lock %s: %w", fm, err)
			}
			h.files = append(h.files, heldMask{path: fm, fd: fd, created: true})
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
		r := stat.get(x)
		if !r.emptyFile && !r.isDir {
			continue
		}
		if r.isDir && !emptyDir(x) {
			// A directory with something in it is no one's mount
			// point; one that is gone was, and its creator removed it
			// since it was seen: the arguments would bind it.
			if _, err := os.Lstat(x); errors.Is(err, fs.ErrNotExist) {
				return h, x, nil
			}
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

// holdExisting takes a shared lock on path if it is an empty regular file
// or directory,
// and checks that the path still names the locked file afterwards (its
// creator may have removed it in between).
func holdExisting(path string) (heldMask, bool) {
	for range 3 {
		fi, err := os.Lstat(path)
		if err != nil || !(fi.Mode().IsRegular() && fi.Size() == 0 || fi.IsDir() && emptyDir(path)) {
			return heldMask{}, false
		}
		fd, err := openNoEINTR(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC)
		if err != nil {
			return heldMask{}, false
		}
		if err := flockNoEINTR(fd, syscall.LOCK_SH); err != nil {
			syscall.Close(fd)
			return heldMask{}, false
		}
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) == nil && samePath(&st, path) {
			return heldMask{path: path, fd: fd}, true
		}
		syscall.Close(fd)
	}
	return heldMask{}, false
}

// samePath reports whether path (not followed) is the file st describes.
func samePath(st *syscall.Stat_t, path string) bool {
	var b syscall.Stat_t
	return syscall.Lstat(path, &b) == nil && b.Dev == st.Dev && b.Ino == st.Ino
}

func openNoEINTR(path string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(path, flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func flockNoEINTR(fd, how int) error {
	for {
		if err := syscall.Flock(fd, how); err != syscall.EINTR {
			return err
		}
	}
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
		var st syscall.Stat_t
		if flockNoEINTR(m.fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil && syscall.Fstat(m.fd, &st) == nil && samePath(&st, m.path) {
			// Rmdir fails on a directory that is no longer empty.
			switch {
			case st.Mode&syscall.S_IFMT == syscall.S_IFDIR && (m.created || placeholderStat(&st)):
				syscall.Rmdir(m.path)
			case m.created && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Size == 0:
				syscall.Unlink(m.path)
			}
		}
		syscall.Close(m.fd)
	}
	h.files = nil
}
