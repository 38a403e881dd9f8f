//go:build !(cgo && linux)

package seccomp

import (
	"errors"
	"os"

	"github.com/guardrun/guardrun/sandbox"
)

var errUnsupported = errors.New("seccomp: requires linux and cgo")

// Build fails: filters are compiled by libseccomp, through cgo, on Linux.
func Build(p sandbox.SeccompPolicy) (*Filter, error) {
	return nil, errUnsupported
}

// File fails: see Build.
func (f *Filter) File() (*os.File, error) {
	return nil, errUnsupported
}

// ProgramFile fails: see Build.
func ProgramFile(prog []byte) (*os.File, error) {
	return nil, errUnsupported
}

// Supported reports why no filter can be built here.
func Supported() error {
	return errUnsupported
}

// BuildCached fails: see Build.
func BuildCached(p sandbox.SeccompPolicy, dir string) (*Filter, error) {
	return nil, errUnsupported
}

// BuildRoutes fails: see Build.
func BuildRoutes(p sandbox.SeccompPolicy, routes []Route) (*Filter, map[int32]string, error) {
	return nil, nil, errUnsupported
}

// BuildRoutesCached fails: see Build.
func BuildRoutesCached(p sandbox.SeccompPolicy, routes []Route, dir string) (*Filter, map[int32]string, error) {
	return nil, nil, errUnsupported
}
