package supervisor

import "golang.org/x/sys/unix"

const ioctlGetTermios = unix.TIOCGETA
