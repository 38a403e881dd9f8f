package integration

import (
	"os"

	"golang.org/x/sys/unix"
)

// The tests hold the ptys they run guardrun on, as a terminal emulator
// holds its own, and guardrun takes a pty for a person's only when its
// holder runs on no terminal of its own (approval.TerminalOwnerOf).
// Under CI the test process has no controlling terminal; run from a
// person's terminal it gives that one up first, so the tests see what
// CI sees.
func init() {
	if f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		unix.IoctlSetInt(int(f.Fd()), unix.TIOCNOTTY, 0)
		f.Close()
	}
}
