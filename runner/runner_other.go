//go:build !linux && !darwin

package runner

import "runtime"

func choose(want string, c Config) (Backend, error) { return nil, unsupported(runtime.GOOS) }
