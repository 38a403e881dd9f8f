//go:build linux || darwin

package approval

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// takeForeground makes guardrun, when it runs in the foreground job, the
// terminal's foreground process group of its own while it prompts, with TOSTOP set, so that the program that ran it (an
// agent sharing the terminal) is stopped by the kernel if it writes to
// the terminal or reads from it meanwhile: it can neither repaint the
// prompt nor take the person's keys. release gives the terminal back and
// continues whatever was stopped. A program that ignores SIGTTOU can
// still write; see docs/limitations.md. Failures leave things as they
// are: the prompt still works, without this protection.
func takeForeground(tty *os.File) (release func()) {
	fd := int(tty.Fd())
	fg, err := unix.IoctlGetInt(fd, ioctlGetPgrp)
	if err != nil || fg <= 0 || fg != unix.Getpgrp() {
		// Not in the foreground job (run with &): the terminal is not
		// ours to take; reading it stops guardrun as it stops any
		// background job.
		return func() {}
	}
	// Changing the foreground from outside it raises SIGTTOU.
	signal.Ignore(syscall.SIGTTOU)
	own, pid := unix.Getpgrp(), os.Getpid()
	moved := own != pid && unix.Setpgid(0, 0) == nil
	if unix.IoctlSetPointerInt(fd, ioctlSetPgrp, unix.Getpgrp()) != nil {
		if moved {
			unix.Setpgid(0, own)
		}
		signal.Reset(syscall.SIGTTOU)
		return func() {}
	}
	var old *unix.Termios
	if t, err := unix.IoctlGetTermios(fd, ioctlGetTermios); err == nil && t.Lflag&unix.TOSTOP == 0 {
		old = t
		nt := *t
		nt.Lflag |= unix.TOSTOP
		unix.IoctlSetTermios(fd, ioctlSetTermios, &nt)
	}
	return func() {
		if old != nil {
			if t, err := unix.IoctlGetTermios(fd, ioctlGetTermios); err == nil {
				t.Lflag &^= unix.TOSTOP
				unix.IoctlSetTermios(fd, ioctlSetTermios, t)
			}
		}
		unix.IoctlSetPointerInt(fd, ioctlSetPgrp, fg)
		if moved {
			unix.Setpgid(0, own)
		}
		unix.Kill(-fg, unix.SIGCONT)
		signal.Reset(syscall.SIGTTOU)
	}
}

// waitQuiet discards what is typed until the terminal's input has been
// quiet for d: keys typed before the prompt appeared, or while the person
// was still typing at something else, are not an answer. The terminal is
// in raw mode.
func waitQuiet(tty *os.File, d time.Duration) {
	fd := int(tty.Fd())
	var buf [256]byte
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(d/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		if _, err := unix.Read(fd, buf[:]); err != nil {
			return
		}
	}
}

// InjectionPossible reports whether a process of the user may push bytes
// into its terminal's input (TIOCSTI): Linux allows it unless
// dev.tty.legacy_tiocsti is 0, and root always can.
func InjectionPossible() bool {
	if os.Geteuid() == 0 {
		return true
	}
	b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti")
	if err != nil {
		return true // older kernels, and other systems, allow it
	}
	return len(b) == 0 || b[0] != '0'
}
