package approval

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminalOwner on macOS: the processes' open files cannot be listed
// without libproc, so the master's holder is not found; what the
// kernel does say is each process's controlling terminal. Walking up
// the ancestors past those on this terminal, the first one that runs on
// another terminal made this one below it (Codex, script, expect on the
// person's terminal): a program's. One on no terminal (Terminal.app,
// sshd, the tmux server, launchd) ends the walk: taken for a person's.
// The terminal is refused only when it is provably a program's.
func terminalOwner(*os.File) TerminalOwner {
	self, err := unix.SysctlKinfoProc("kern.proc.pid", os.Getpid())
	if err != nil {
		return TerminalOwner{Person: true}
	}
	tdev := self.Eproc.Tdev
	pid := int(self.Eproc.Ppid)
	for i := 0; pid > 1 && i < 128; i++ {
		kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
		if err != nil || int(kp.Proc.P_pid) != pid {
			break
		}
		switch kp.Eproc.Tdev {
		case tdev:
			pid = int(kp.Eproc.Ppid)
			continue
		case -1: // NODEV: no controlling terminal
			return TerminalOwner{Person: true, PID: pid, Name: comm(kp)}
		}
		return ownedBy(pid, comm(kp), "(/dev/tty)")
	}
	return TerminalOwner{Person: true}
}

func comm(kp *unix.KinfoProc) string {
	b := kp.Proc.P_comm[:]
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	return string(b)
}
