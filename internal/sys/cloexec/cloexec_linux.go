package cloexec

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// All marks every descriptor above stdio close-on-exec. os/exec does not
// close descriptors that lack the flag (Go's own always have it, but cgo
// code, a library or the caller may have cleared it), and a sandbox
// launcher such as bwrap hands its inherited descriptors on to the
// command. Descriptors passed through exec.Cmd.ExtraFiles are dup'ed by
// os/exec after this and still arrive.
func All() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	// Kernels before 5.11: one descriptor at a time.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // closed meanwhile (ReadDir's own), or already set
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err != nil {
			return err
		}
	}
	return nil
}
