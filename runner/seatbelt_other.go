//go:build !darwin

package runner

import (
	"context"
	"fmt"
	"runtime"

	"github.com/guardrun/guardrun/sandbox"
)

// Command refuses: Seatbelt is macOS's.
func (seatbeltBackend) Command(ctx context.Context, p *sandbox.Profile, argv, env []string, o Options, stdio Stdio) (Cmd, error) {
	return nil, fmt.Errorf("runner: backend %q is not available on %s", BackendSeatbelt, runtime.GOOS)
}
