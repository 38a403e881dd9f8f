package notify

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// HelperArg is argv[1] of guardrun's own executable started as the
// helper of a verified command (helper_cgo_linux.go):
// "EXE HelperArg FILTER-FD SOCKET-FD ARGV...". The helper loads the
// verified command's filter with a listener on itself, after its exec,
// hands the listener to guardrun and then execs ARGV: so that guardrun is
// never in the middle of starting a process while that process's first
// routed call waits for guardrun's answer (Go's fork holds a processor of
// the runtime until the child execs, and a collection that stops the
// world would wait for it: neither would ever go on).
const HelperArg = "\x01guardrun-verify-init"

// Helper is what a verified command's helper is given (its filter and
// its end of the socket, as descriptors of the process started), and
// guardrun's end of that socket.
type Helper struct {
	Filter *os.File // the helper's filter, from its start
	Theirs *os.File // the helper's end of the socket
	ours   *os.File
}

// NewHelper is a Helper handing over filter (closed with the Helper).
func NewHelper(filter *os.File) (*Helper, error) {
	if !HelperAvailable {
		filter.Close()
		return nil, errors.New("this guardrun was built without cgo and has no helper for verified commands")
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		filter.Close()
		return nil, fmt.Errorf("verified command's socket: %w", err)
	}
	// Ours non-blocking, so that the handshake can time out; theirs as
	// it is, for the helper's plain reads.
	if err := unix.SetNonblock(fds[0], true); err != nil {
		filter.Close()
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, err
	}
	return &Helper{Filter: filter, ours: os.NewFile(uintptr(fds[0]), "verify"), Theirs: os.NewFile(uintptr(fds[1]), "verify-helper")}, nil
}

// Argv is argv run behind the helper exe, which finds its filter and its
// socket at filterFD and socketFD.
func (h *Helper) Argv(exe string, filterFD, socketFD int, argv []string) []string {
	return append([]string{exe, HelperArg, strconv.Itoa(filterFD), strconv.Itoa(socketFD)}, argv...)
}

// Handshake, once the helper started, takes its listener, serves it with
// reg (nrs: the numbers of the routed calls, as Serve takes them) and
// tells the helper to go on. It gives up when the helper does not hand
// the listener over within timeout, or ended (the socket's end of file).
func (h *Helper) Handshake(reg *Registry, nrs map[int32]string, timeout time.Duration) (*Server, error) {
	h.Theirs.Close()
	h.Theirs = nil
	h.Filter.Close()
	h.Filter = nil
	if err := h.ours.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return nil, fmt.Errorf("the verified command's socket: %w", err)
	}
	rc, err := h.ours.SyscallConn()
	if err != nil {
		return nil, err
	}
	listener := -1
	var rerr error
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	err = rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, err := unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EAGAIN {
			return false
		}
		if err != nil {
			rerr = err
			return true
		}
		if n != 1 || buf[0] != 'L' {
			rerr = errors.New("the helper said nothing")
			return true
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			rerr = errors.New("the helper sent no listener")
			return true
		}
		fds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 1 {
			rerr = errors.New("the helper sent no listener")
			return true
		}
		listener = fds[0]
		return true
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return nil, fmt.Errorf("the verified command's helper: %w", err)
	}
	srv, err := Serve(listener, reg, nrs)
	if err != nil {
		unix.Close(listener)
		return nil, err
	}
	if _, err := h.ours.Write([]byte{'K'}); err != nil {
		_ = srv.Stop()
		return nil, fmt.Errorf("the verified command's helper: %w", err)
	}
	h.ours.Close()
	h.ours = nil
	return srv, nil
}

// Close closes what the Helper still holds.
func (h *Helper) Close() {
	if h == nil {
		return
	}
	for _, f := range []*os.File{h.Filter, h.Theirs, h.ours} {
		if f != nil {
			f.Close()
		}
	}
	h.Filter, h.Theirs, h.ours = nil, nil, nil
}
