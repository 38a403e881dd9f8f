package approval

import "golang.org/x/sys/unix"

const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
	ioctlGetPgrp    = unix.TIOCGPGRP
	ioctlSetPgrp    = unix.TIOCSPGRP
)
