package ipc

import (
	"errors"
	"fmt"
	"net"
	"os"
)

// Peer is the process at the other end of a connection, as the kernel
// recorded it when the connection was made (not as the process says).
type Peer struct {
	UID int
	// PID is 0 where the system does not say.
	PID int
}

// ErrForeignPeer is a peer that runs as another user than this process.
var ErrForeignPeer = errors.New("the other end runs as another user")

// PeerOf reads the kernel's record of who is at the other end of c:
// SO_PEERCRED on Linux, LOCAL_PEERCRED and LOCAL_PEERPID on macOS.
// Elsewhere it fails: guardrun's sockets admit no peer it cannot name.
func PeerOf(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{}, fmt.Errorf("peer credentials: %w", err)
	}
	var p Peer
	var perr error
	if err := raw.Control(func(fd uintptr) { p, perr = peerOf(int(fd)) }); err != nil {
		return Peer{}, fmt.Errorf("peer credentials: %w", err)
	}
	if perr != nil {
		return Peer{}, fmt.Errorf("peer credentials: %w", perr)
	}
	return p, nil
}

// CheckPeer is PeerOf, failing with ErrForeignPeer unless the peer runs
// as this process's effective user. A socket's private directory keeps
// other users out already; the kernel's record holds even if the
// directory's mode is loosened later, and for a client it says that the
// socket it was told of is its own user's.
func CheckPeer(c *net.UnixConn) (Peer, error) {
	p, err := PeerOf(c)
	if err != nil {
		return Peer{}, err
	}
	if p.UID != os.Geteuid() {
		return Peer{}, fmt.Errorf("%w (uid %d, this process %d)", ErrForeignPeer, p.UID, os.Geteuid())
	}
	return p, nil
}
