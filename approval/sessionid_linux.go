package approval

import (
	"fmt"
	"os"
	"strings"
)

// ttySession keys the controlling terminal's session as sudo keys its tty
// tickets: the terminal (tty_nr), the session id, and the session leader's
// start time, so that a session id the kernel hands out again later is a
// new session; plus the boot id, so that numbers repeated after a reboot
// are too.
func ttySession() (string, bool) {
	self, err := readProcStat("/proc/self/stat")
	if err != nil || self.TTY == 0 || self.Session <= 0 {
		return "", false
	}
	leader, err := readProcStat(fmt.Sprintf("/proc/%d/stat", self.Session))
	if err != nil {
		return "", false
	}
	return ttyKey(self, leader, bootID())
}

func readProcStat(path string) (procStat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(b)
}

// bootID is the kernel's random id of this boot without dashes, or ""
// when it cannot be read or does not look like one.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	id := strings.ReplaceAll(strings.TrimSpace(string(b)), "-", "")
	if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
		return ""
	}
	return id
}
