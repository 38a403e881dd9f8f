//go:build !linux

package bwrap

import "errors"

// Check reports that bubblewrap sandboxes exist only on Linux.
func Check() error {
	return errors.New("bubblewrap sandboxes need Linux")
}
