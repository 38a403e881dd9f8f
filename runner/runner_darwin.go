package runner

import "github.com/guardrun/guardrun/seatbelt"

// choose: macOS has one backend, which works where sandbox-exec does.
func choose(want string, c Config) (Backend, error) {
	if err := seatbelt.Check(); err != nil {
		return nil, err
	}
	return seatbeltBackend{}, nil
}
