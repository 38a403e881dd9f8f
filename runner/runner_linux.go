package runner

import (
	"errors"
	"fmt"
)

func choose(want string, c Config) (Backend, error) {
	bw, ll := &bwrapBackend{c}, &landlockBackend{c}
	switch want {
	case BackendBwrap:
		return checked(bw)
	case BackendLandlock:
		return checked(ll)
	}
	berr := checkBwrapAuto(c.CheckCache)
	if berr == nil {
		return bw, nil
	}
	lerr := ll.Check()
	if lerr == nil {
		return ll, nil
	}
	return nil, errors.Join(berr, fmt.Errorf("and the landlock backend cannot be used either: %w", lerr))
}

// checked is b when it works here.
func checked(b Backend) (Backend, error) {
	if err := b.Check(); err != nil {
		return nil, err
	}
	return b, nil
}
