//go:build !linux && !darwin

package checkpoint

import "errors"

func restore(root, target string, changes []Change, obj *objects) error {
	return errors.New("undo is not supported on this system")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
