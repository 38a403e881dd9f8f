package supervisor

import (
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// peerAllowed admits only processes of the supervisor's own user. The
// socket's 0700 directory already keeps others out; the kernel's record of
// who connected (SO_PEERCRED) holds even if the directory's mode is
// loosened later.
func peerAllowed(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || cerr != nil {
		return false
	}
	return int(cred.Uid) == os.Getuid()
}
