//go:build !linux && !darwin

package checkpoint

import (
	"context"
	"errors"
	"time"
)

func lockFile(context.Context, string, time.Duration) (func(), error) {
	return nil, errors.New("checkpoints are not supported on this system")
}
