//go:build !linux

package regfile

import (
	"errors"
	"os"
	"syscall"
)

func open(path string, nofollow bool) (*os.File, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
	if nofollow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if nofollow && errors.Is(err, syscall.ELOOP) {
		return nil, &NotRegularError{Path: path, Type: os.ModeSymlink}
	}
	return f, err
}
