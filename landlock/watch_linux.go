package landlock

import (
	"errors"
	"os"
	"slices"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp/notify"
)

// WatchCalls are the system calls that watch a file by name, which
// Landlock does not check: inotify_add_watch needs only the right to
// read the inode, so a command could watch a directory outside every
// zone and learn which files there are opened, written and created
// (names, no content). The landlock backend routes them to guardrun,
// which opens what the command named as its kernel would, judges the
// object it holds (Readable), and adds the watch itself to the command's
// own inotify instance (a pidfd_getfd duplicate: the same instance), on
// that object; outside, the call fails with EACCES.
//
// (fanotify is not among them: fanotify_init is refused by the filter
// for every command.)
var WatchCalls = []string{"inotify_add_watch"}

// watchable reports whether pidfd_getfd works here: without it (Docker's
// default seccomp profile refuses it to containers without
// CAP_SYS_PTRACE) guardrun cannot reach the command's inotify instance,
// and WatchCalls are left to the kernel (see the package's Limitations).
var watchable = sync.OnceValue(func() bool {
	pidfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, 0, 0)
	if err != nil {
		// EBADF: the call works, descriptor 0 is just closed.
		return errors.Is(err, unix.EBADF)
	}
	unix.Close(fd)
	return true
})

// notifyCalls are the system calls the landlock backend serves in user
// space here, in the order a Registry names them (sorted).
func notifyCalls() []string {
	names := append([]string(nil), MetadataCalls...)
	if watchable() {
		names = append(names, WatchCalls...)
	}
	slices.Sort(names)
	return names
}

// registerWatch adds the handler of WatchCalls to reg, where it can work.
func registerWatch(reg *notify.Registry, p *sandbox.Profile, rs *Ruleset) error {
	if !watchable() {
		return nil
	}
	m := &metadata{p: p, rs: judgeRuleset(rs)}
	return reg.Handle("inotify_add_watch", m.inotifyAddWatch)
}

// inotifyAddWatch serves inotify_add_watch(fd, path, mask).
func (m *metadata) inotifyAddWatch(r *notify.Request) notify.Response {
	mask := uint32(r.Args[2])
	path, err := r.ReadPath(r.Args[1])
	if err != nil {
		return fail(err)
	}
	ofd, err := r.Open(notify.AtFDCWD, path, mask&unix.IN_DONT_FOLLOW != 0)
	if err != nil {
		return fail(err)
	}
	o, err := m.judgeBy(ofd, m.rs.Watchable)
	if err != nil {
		return fail(err)
	}
	defer o.close()
	if mask&unix.IN_ONLYDIR != 0 && !o.dir {
		return notify.Fail(syscall.ENOTDIR)
	}
	ifd, err := r.GetFD(r.FDArg(0))
	if err != nil {
		return fail(err)
	}
	defer unix.Close(ifd)
	// The object guardrun holds, through its descriptor: the magic link
	// leads to it and no further, whatever the command's names now say
	// (IN_DONT_FOLLOW was applied when it was opened).
	wd, err := unix.InotifyAddWatch(ifd, o.proc(), mask&^unix.IN_DONT_FOLLOW)
	if err != nil {
		return fail(err)
	}
	return notify.Value(int64(wd))
}
