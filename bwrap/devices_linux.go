package bwrap

import (
	"os"
	"path/filepath"
	"strings"
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

// devicePrefix starts the name of a directory of copies.
const devicePrefix = ".guardrun-dev-"

// deviceCopyAge is how old a directory of copies must be for copyDevices
// to take it for one a guardrun killed before its command ended left
// behind. Its copies are only needed while bwrap sets the sandbox up: a
// bind keeps its node after the name is gone, so removing the directory
// of a command still running takes nothing from it.
const deviceCopyAge = time.Minute

// deviceCopies are the copies of one command's device nodes.
type deviceCopies struct {
	dir   string
	pairs [][2]string // host path of a copy, path inside
}

// copyDevices makes copies of the nodes of names that this process owns,
// in a fresh directory under the first of parents on a file system that
// holds devices (not mounted nodev) and where it may make them. Nil when
// no node needs one, or none could be made; then the sandbox binds the
// host's nodes as bwrap does. In each parent it tries, it first removes
// what commands of killed guardruns left there (sweepDevices).
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
		if parent == "" {
			continue
		}
		var fs unix.Statfs_t
		if unix.Statfs(parent, &fs) != nil || fs.Flags&unix.ST_NODEV != 0 {
			continue
		}
		sweepDevices(parent, euid)
		dir, err := os.MkdirTemp(parent, devicePrefix)
		if err != nil {
			continue
		}
		d := &deviceCopies{dir: dir}
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
		}
		if ok {
			return d
		}
		os.RemoveAll(dir)
	}
	return nil
}

// sweepDevices removes the directories of copies in parent that this
// user made over deviceCopyAge ago (see deviceCopyAge).
func sweepDevices(parent string, euid uint32) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), devicePrefix) || !e.IsDir() {
			continue
		}
		p := filepath.Join(parent, e.Name())
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != euid {
			continue
		}
		if time.Since(time.Unix(st.Mtim.Unix())) > deviceCopyAge {
			os.RemoveAll(p)
		}
	}
}

// binds are the copies as Options.Devices.
func (d *deviceCopies) binds() [][2]string {
	if d == nil {
		return nil
	}
	return d.pairs
}

func (d *deviceCopies) remove() {
	if d != nil {
		os.RemoveAll(d.dir)
	}
}
