package cli

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// holdSecrets makes this process not dumpable, as ssh-agent does: the
// page's token is in its memory, and a process of the same user (an
// agent's own, outside any sandbox) could otherwise read it through
// /proc/PID/mem, or attach a debugger.
func holdSecrets() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("web: make guardrun web not dumpable: %w", err)
	}
	return nil
}
