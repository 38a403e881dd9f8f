package supervisor

import "golang.org/x/sys/unix"

// waitReadable waits until fd has input or has ended (true), or stop is
// readable or closed (false). select, not poll: macOS's poll does not
// work on terminals.
func waitReadable(fd, stop int) (bool, error) {
	for {
		var r unix.FdSet
		r.Set(fd)
		r.Set(stop)
		_, err := unix.Select(max(fd, stop)+1, &r, nil, nil, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false, err
		}
		if r.IsSet(stop) {
			return false, nil
		}
		if r.IsSet(fd) {
			return true, nil
		}
	}
}
