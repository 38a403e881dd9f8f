//go:build !linux && !darwin

package runner

import (
	"context"
	"errors"
	"runtime"

	"github.com/guardrun/guardrun/sandbox"
)

var errUnsupported = errors.New("no OS sandbox for " + runtime.GOOS + ": guardrun sandboxes commands on Linux (bubblewrap) and macOS (Seatbelt)")

// Check reports that this platform has no OS sandbox.
func Check() error { return errUnsupported }

// Run refuses: without an OS sandbox nothing may run through it.
func Run(ctx context.Context, p *sandbox.Profile, argv []string, env []string, stdio Stdio) (int, error) {
	return 0, errUnsupported
}

// CheckCached is Check; nothing here is worth remembering.
func CheckCached(cacheFile string) error { return Check() }

// RunWith refuses, as Run does.
func RunWith(ctx context.Context, o Options, p *sandbox.Profile, argv []string, env []string, stdio Stdio) (int, error) {
	return 0, errUnsupported
}

// CheckBackend is Check.
func CheckBackend(name, cacheFile string) error { return Check() }

func choose(want, cacheFile string) (string, error) { return "", errUnsupported }
