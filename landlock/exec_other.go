//go:build !linux

package landlock

import (
	"context"
	"errors"

	"github.com/guardrun/guardrun/sandbox"
)

var errUnsupported = errors.New("landlock: Landlock is a Linux security module; there is none on this system")

// ABI reports that there is no Landlock here.
func ABI() (int, error) { return 0, errUnsupported }

// Check reports that there is no Landlock here.
func Check() error { return errUnsupported }

// Cmd is a command under Landlock; there is none here.
type Cmd struct{ Ruleset *Ruleset }

// Command fails: there is no Landlock here.
func Command(ctx context.Context, p *sandbox.Profile, argv, env []string, cfg Config) (*Cmd, error) {
	return nil, errUnsupported
}

// SelfExe is guardrun's own executable as the Linux backend grants it;
// there is none here.
func SelfExe() string { return "" }
