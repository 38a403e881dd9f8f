package ipc

import "golang.org/x/sys/unix"

func peerOf(fd int) (Peer, error) {
	x, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return Peer{}, err
	}
	p := Peer{UID: int(x.Uid)}
	if pid, err := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID); err == nil {
		p.PID = pid
	}
	return p, nil
}
