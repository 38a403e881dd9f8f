//go:build !linux

package serve

import "errors"

// Server is `guardrun serve`'s server; only Linux has one.
type Server struct{}

// Listen fails: the served fast path is Linux only.
func Listen(Config) (*Server, error) {
	return nil, errors.New("serve: only available on Linux")
}

func (s *Server) Path() string { return "" }
func (s *Server) Serve() error { return nil }
func (s *Server) Close()       {}
