//go:build !linux && !darwin

package approval

import (
	"os"
	"time"
)

func takeForeground(tty *os.File) (release func()) { return func() {} }

func waitQuiet(tty *os.File, d time.Duration) {}

// InjectionPossible is true where guardrun cannot tell.
func InjectionPossible() bool { return true }
