//go:build !linux

package approval

// ttySession finds no terminal session: outside Linux there is no /proc to
// key it by, so only an explicit id or $GUARDRUN_SESSION names a session.
//
// TODO(darwin): key by the controlling terminal's device (TIOCGETA-able
// fd's st_rdev), getsid(0) and the leader's start time from
// sysctl kern.proc.pid, as sudo does on macOS.
func ttySession() (string, bool) {
	return "", false
}
