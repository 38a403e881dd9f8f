package supervisor

import "golang.org/x/sys/unix"

// waitReadable waits until fd has input or has ended (true), or stop is
// readable or closed (false).
func waitReadable(fd, stop int) (bool, error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(stop), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false, err
		}
		if fds[1].Revents != 0 {
			return false, nil
		}
		if fds[0].Revents != 0 {
			return true, nil
		}
	}
}
