//go:build !linux

package runner

import (
	"context"
	"fmt"
	"runtime"

	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/sandbox"
)

// Check reports that bubblewrap needs Linux.
func (*bwrapBackend) Check() error { return bwrap.Check() }

// Command refuses: bwrap runs nothing here.
func (*bwrapBackend) Command(ctx context.Context, p *sandbox.Profile, argv, env []string, o Options, stdio Stdio) (Cmd, error) {
	return nil, fmt.Errorf("runner: backend %q is not available on %s", BackendBwrap, runtime.GOOS)
}
