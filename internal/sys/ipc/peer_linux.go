package ipc

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

func peerOf(fd int) (Peer, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return Peer{}, err
	}
	return Peer{UID: int(cred.Uid), PID: int(cred.Pid)}, nil
}

// PeerPIDFD is a pidfd of the process at the other end of c
// (SO_PEERPIDFD, Linux 6.5): unlike Peer.PID it cannot come to name
// another process once the peer has exited. The caller closes it.
func PeerPIDFD(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	pidfd := -1
	var perr error
	if err := raw.Control(func(fd uintptr) {
		pidfd, perr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PEERPIDFD)
	}); err != nil {
		return -1, err
	}
	if perr != nil {
		return -1, fmt.Errorf("peer pidfd: %w", perr)
	}
	return pidfd, nil
}
