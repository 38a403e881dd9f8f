package serve

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/internal/sys/ipc"
)

// procInfo is what the peer check compares between a client and the
// server: namespaces, seccomp filters, no_new_privs, terminal session.
type procInfo struct {
	ns      [3]nsID // mnt, user, pid
	root    nsID    // the root directory (chroot)
	filters int     // Seccomp_filters
	nnp     int     // NoNewPrivs
	// creds are the Uid, Gid and Groups lines of the status: a served
	// command gets the server's, so the peer must have the same.
	// (Capabilities are not compared: both sandboxes drop them all.)
	creds    string
	sid, tty int // session and controlling terminal (stat fields 6, 7)
	// limits is procLimits of a peer, read by checkPeer while its pid
	// is known to be the peer's (empty for the server's own).
	limits string
}

type nsID struct{ dev, ino uint64 }

var nsNames = [3]string{"mnt", "user", "pid"}

// credFields are the lines of /proc/PID/status that make procInfo.creds.
var credFields = []string{"Uid", "Gid", "Groups"}

// readProc reads the whole of a /proc file with plain system calls.
// os.ReadFile would first try to register the descriptor with Go's
// poller (an fcntl, an epoll_ctl that /proc refuses, an fcntl again),
// which the peer check pays for several files per request.
func readProc(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	b := make([]byte, 0, 4096)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

func readProcInfo(pid int) (*procInfo, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	pi := &procInfo{}
	for i, n := range nsNames {
		var st unix.Stat_t
		if err := unix.Stat(dir+"/ns/"+n, &st); err != nil {
			return nil, fmt.Errorf("%s namespace of %d: %w", n, pid, err)
		}
		pi.ns[i] = nsID{st.Dev, st.Ino}
	}
	var st unix.Stat_t
	if err := unix.Stat(dir+"/root", &st); err != nil {
		return nil, fmt.Errorf("root directory of %d: %w", pid, err)
	}
	pi.root = nsID{st.Dev, st.Ino}
	status, err := readProc(dir + "/status")
	if err != nil {
		return nil, err
	}
	for _, name := range credFields {
		v, ok := statusField(status, name)
		if !ok {
			return nil, fmt.Errorf("no %s in %s/status", name, dir)
		}
		pi.creds += name + ":" + strings.Join(strings.Fields(v), " ") + "\n"
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"Seccomp_filters", &pi.filters}, {"NoNewPrivs", &pi.nnp}} {
		s, ok := statusField(status, f.name)
		if !ok {
			return nil, fmt.Errorf("no %s in %s/status", f.name, dir)
		}
		if *f.v, err = strconv.Atoi(s); err != nil {
			return nil, fmt.Errorf("%s in %s/status: %w", f.name, dir, err)
		}
	}
	stat, err := readProc(dir + "/stat")
	if err != nil {
		return nil, err
	}
	end := strings.LastIndexByte(string(stat), ')')
	if end < 0 {
		return nil, errors.New("no command name in " + dir + "/stat")
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 5 {
		return nil, errors.New("short " + dir + "/stat")
	}
	// fields[0] is field 3 (state).
	if pi.sid, err = strconv.Atoi(fields[6-3]); err != nil {
		return nil, err
	}
	if pi.tty, err = strconv.Atoi(fields[7-3]); err != nil {
		return nil, err
	}
	return pi, nil
}

// confined reports whether peer is confined in a way the server is not:
// another mount, user or pid namespace (bwrap's sandbox), more seccomp
// filters or no_new_privs (the landlock backend's, or anything else's).
// A process so confined asking for a command would get the config's
// sandbox instead of its own. Another root directory (chroot) or other
// uids, gids or groups than the server's (setpriv, sg) count as
// confined too: the command would run with the server's.
func (s *Server) confined(peer *procInfo) bool {
	return peer.ns != s.self.ns || peer.root != s.self.root || peer.filters > s.self.filters ||
		peer.nnp > s.self.nnp || peer.creds != s.self.creds
}

// checkPeer reports whether the server may serve the peer of conn,
// whose credentials (the same user: ipc.Listener.Accept checked it) are
// cred: not confined (see confined); it reads the peer's limits for
// sameLimits too. The pid comes with a pidfd (SO_PEERPIDFD), so that
// what is read under /proc/PID is the peer's own: the pidfd is checked
// to be alive after reading. Without SO_PEERPIDFD (kernels before 6.5),
// SO_PEERCRED's pid is used and checked to be alive after reading,
// which a pid reused in between could pass.
func (s *Server) checkPeer(conn *net.UnixConn, cred ipc.Peer) (pid int, peer *procInfo, ok bool) {
	if cred.PID <= 0 {
		return 0, nil, false
	}
	pid = cred.PID
	pidfd := -1
	if s.pidfd {
		var err error
		if pidfd, err = ipc.PeerPIDFD(conn); err != nil {
			return 0, nil, false
		}
		defer unix.Close(pidfd)
		p, err := pidfdPid(pidfd)
		if err != nil || p != pid {
			return 0, nil, false
		}
	}
	peer, err := readProcInfo(pid)
	if err != nil || s.confined(peer) {
		return 0, nil, false
	}
	if peer.limits, err = procLimits(strconv.Itoa(pid)); err != nil {
		return 0, nil, false
	}
	// Still the same process: the pid was not reused while read.
	if pidfd >= 0 {
		if unix.PidfdSendSignal(pidfd, 0, nil, 0) != nil {
			return 0, nil, false
		}
	} else if unix.Kill(pid, 0) != nil {
		return 0, nil, false
	}
	return pid, peer, true
}

// pidfdPid is the pid a pidfd refers to, from its fdinfo.
func pidfdPid(pidfd int) (int, error) {
	b, err := readProc("/proc/self/fdinfo/" + strconv.Itoa(pidfd))
	if err != nil {
		return 0, err
	}
	v, ok := statusField(b, "Pid")
	if !ok {
		return 0, errors.New("pidfd without a Pid")
	}
	return strconv.Atoi(v)
}

// pidfdWorks reports whether SO_PEERPIDFD is available (Linux 6.5).
func pidfdWorks() bool {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	pidfd, err := unix.GetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_PEERPIDFD)
	if err != nil {
		return false
	}
	unix.Close(pidfd)
	return true
}
