//go:build !linux

package notify

import "errors"

var errUnsupported = errors.New("notify: seccomp user notifications are a Linux feature")

// Server serves notifications; there are none here.
type Server struct{}

// Serve fails: there is no seccomp here.
func Serve(listener int, reg *Registry, nrs map[int32]string) (*Server, error) {
	return nil, errUnsupported
}

// Stop does nothing.
func (s *Server) Stop() error { return nil }
