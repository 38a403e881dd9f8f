//go:build !darwin

package seatbelt

import (
	"context"
	"errors"
	"os/exec"

	"github.com/guardrun/guardrun/sandbox"
)

var errNotDarwin = errors.New("seatbelt: sandbox-exec is only available on macOS")

// Command is unavailable off macOS; it exists so callers build everywhere.
// os/exec is imported for the type only: nothing is run.
func Command(ctx context.Context, p *sandbox.Profile, argv []string, env []string) (*exec.Cmd, error) {
	return nil, errNotDarwin
}

// Check reports that sandbox-exec is unavailable off macOS.
func Check() error { return errNotDarwin }

// Cleanup does nothing off macOS, where Command never creates anything.
func Cleanup(cmd *exec.Cmd) error { return nil }
