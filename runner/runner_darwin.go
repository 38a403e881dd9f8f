package runner

import "github.com/guardrun/guardrun/seatbelt"

// Check reports whether the OS sandbox works here (sandbox-exec), as a
// sentence that says how to fix it.
func Check() error { return seatbelt.Check() }

// choose: macOS has one backend.
func choose(want string, c Config) (Backend, error) {
	if err := Check(); err != nil {
		return nil, err
	}
	return seatbeltBackend{}, nil
}
