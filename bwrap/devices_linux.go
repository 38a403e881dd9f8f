package bwrap

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// The nodes bwrap's --dev binds from the host's /dev. A bind mount of a
// node is the host's own inode: a command whose uid owns it (root owns
// all of them) could change its mode, owner and times through the bind,
// and `chmod 000 /dev/null` in a sandbox would break the machine. A
// read-only mount would refuse those calls and still let the device be
// written, but bwrap marks every read-only bind nodev, which makes the
// device unusable.
//
// So, where the caller owns a node and may make device nodes (root), the
// sandbox gets copies made for the one command: the same device (type,
// major, minor), mode and owner, in a directory of their own, bound over
// bwrap's. What a command changes on them goes with them when it ends.
var hostDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// deviceCopies are the copies of one command's device nodes.
type deviceCopies struct {
	dir   string
	pairs [][2]string // host path of a copy, path inside
	rdevs []uint64    // the device of each pair
	// opened are copies opened for the command's stdio (stdio).
	opened []*os.File
	// lock holds dir locked (flock) while the command may use it:
	// removeStale leaves it alone.
	lock *os.File
}

// copyDevices makes copies of the nodes of names that this process owns,
// in a fresh directory under the first of parents on a file system that
// holds devices (not mounted nodev) and where it may make them. Nil when
// no node needs one, or none could be made; then the sandbox binds the
// host's nodes as bwrap does.
func copyDevices(parents []string, names []string) *deviceCopies {
	euid := uint32(os.Geteuid())
	type node struct {
		name string
		st   unix.Stat_t
	}
	var owned []node
	for _, n := range names {
		var st unix.Stat_t
		if unix.Stat(n, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Uid == euid {
			owned = append(owned, node{n, st})
		}
	}
	if len(owned) == 0 {
		return nil
	}
	for _, parent := range parents {
		if parent != "" {
			removeStale(parent, euid)
		}
	}
	for _, parent := range parents {
		if parent == "" {
			continue
		}
		var fs unix.Statfs_t
		if unix.Statfs(parent, &fs) != nil || fs.Flags&unix.ST_NODEV != 0 {
			continue
		}
		dir, err := os.MkdirTemp(parent, copiesPrefix)
		if err != nil {
			continue
		}
		d := &deviceCopies{dir: dir}
		if d.lock, err = os.Open(dir); err != nil || unix.Flock(int(d.lock.Fd()), unix.LOCK_EX) != nil {
			d.remove()
			continue
		}
		ok := true
		for _, n := range owned {
			p := filepath.Join(dir, filepath.Base(n.name))
			// mknod applies the umask; the copy then gets the host's mode
			// and owner exactly.
			if unix.Mknod(p, n.st.Mode, int(n.st.Rdev)) != nil || unix.Chmod(p, n.st.Mode&0o7777) != nil || unix.Lchown(p, int(n.st.Uid), int(n.st.Gid)) != nil {
				ok = false
				break
			}
			d.pairs = append(d.pairs, [2]string{p, n.name})
			d.rdevs = append(d.rdevs, n.st.Rdev)
		}
		if ok {
			return d
		}
		d.remove()
	}
	return nil
}

// copiesPrefix begins the name of each command's directory of copies.
const copiesPrefix = ".guardrun-dev-"

// staleAfter is how old a directory of copies no process holds locked
// must be to be removed: one a guardrun has just made is locked a moment
// after it is made.
var staleAfter = 10 * time.Second

// removeStale removes the directories of copies in parent that a
// guardrun killed before it could remove its own (SIGKILL) left: this
// user's, unlocked, older than staleAfter.
func removeStale(parent string, euid uint32) {
	dirs, _ := filepath.Glob(filepath.Join(parent, copiesPrefix+"*"))
	for _, dir := range dirs {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Uid == euid && time.Since(time.Unix(st.Ctim.Unix())) >= staleAfter &&
			unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil {
			os.RemoveAll(dir)
		}
		unix.Close(fd)
	}
}

// binds are the copies as Options.Devices.
func (d *deviceCopies) binds() [][2]string {
	if d == nil {
		return nil
	}
	return d.pairs
}

// stdio replaces the command's standard input, output and error where
// they are one of the copied devices, by whatever name the caller opened
// it (nil, which os/exec opens as the host's /dev/null, counts as that):
// the command's descriptor is then the copy, opened with the same access
// mode, and an fchmod or a chmod of /proc/self/fd/0 changes the copy, not
// the host's node. Other descriptors (a pipe, the person's terminal) stay.
func (d *deviceCopies) stdio(in *io.Reader, out, errOut *io.Writer) error {
	if d == nil {
		return nil
	}
	if f, err := d.reopen(*in, os.O_RDONLY); err != nil {
		return err
	} else if f != nil {
		*in = f
	}
	for _, w := range []*io.Writer{out, errOut} {
		if f, err := d.reopen(*w, os.O_WRONLY); err != nil {
			return err
		} else if f != nil {
			*w = f
		}
	}
	return nil
}

// reopen is the copy to hand over for the stdio value v, opened with v's
// access mode (flag for a nil v, the copy of /dev/null); nil when v is not
// one of the copied devices.
func (d *deviceCopies) reopen(v any, flag int) (*os.File, error) {
	i := slices.IndexFunc(d.pairs, func(p [2]string) bool { return p[1] == "/dev/null" })
	if v != nil {
		f, ok := v.(*os.File)
		if !ok || f == nil {
			return nil, nil
		}
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			return nil, fmt.Errorf("bwrap: the command's stdio %s: %w", f.Name(), err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFCHR {
			return nil, nil
		}
		if i = slices.Index(d.rdevs, st.Rdev); i < 0 {
			return nil, nil
		}
		fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
		if err != nil {
			return nil, fmt.Errorf("bwrap: the command's stdio %s: %w", f.Name(), err)
		}
		flag = fl & (unix.O_ACCMODE | unix.O_APPEND | unix.O_NONBLOCK)
		// /dev/tty is its opener's controlling terminal: opened again
		// here it is guardrun's, the same one only if the kernel says
		// f's terminal is (TIOCGSID answers only for the caller's own).
		// Another terminal's is refused: handed guardrun's instead, the
		// command would reach the terminal a person may be answering
		// guardrun on.
		if st.Rdev == unix.Mkdev(5, 0) {
			if _, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGSID); err != nil {
				return nil, fmt.Errorf("bwrap: the command's standard input or output is /dev/tty of a terminal that is not guardrun's own (%v): give it the terminal by its own name", err)
			}
		}
	}
	if i < 0 {
		return nil, nil
	}
	c, err := os.OpenFile(d.pairs[i][0], flag|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("bwrap: the command's stdio (%s): %w", d.pairs[i][1], err)
	}
	d.opened = append(d.opened, c)
	return c, nil
}

// closeOpened closes the copies opened for stdio, once the command holds
// them.
func (d *deviceCopies) closeOpened() {
	if d == nil {
		return
	}
	for _, f := range d.opened {
		f.Close()
	}
	d.opened = nil
}

func (d *deviceCopies) remove() {
	if d != nil {
		d.closeOpened()
		os.RemoveAll(d.dir)
		if d.lock != nil {
			d.lock.Close()
		}
	}
}
