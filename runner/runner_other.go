//go:build !linux && !darwin

package runner

import "runtime"

// Check reports that this platform has no OS sandbox.
func Check() error { return unsupported(runtime.GOOS) }

func choose(want string, c Config) (Backend, error) { return nil, unsupported(runtime.GOOS) }
