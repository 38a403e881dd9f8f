//go:build unix

package cli

import (
	"os/signal"
	"syscall"
)

func ignoreFileSizeSignal() { signal.Ignore(syscall.SIGXFSZ) }
