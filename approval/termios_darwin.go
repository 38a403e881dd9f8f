package approval

import "golang.org/x/sys/unix"

const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
	ioctlGetPgrp    = unix.TIOCGPGRP
	ioctlSetPgrp    = unix.TIOCSPGRP
)
