package seccomp

import (
	"errors"
	"sync"
)

// Filter is a compiled system call filter. It holds only the program, so
// it is safe for concurrent use and one Filter can serve any number of
// sandboxes.
type Filter struct {
	mu   sync.Mutex
	prog []byte // nil once released
}

var errReleased = errors.New("seccomp: filter released")

// BPF returns the program as bwrap's --seccomp reads it: an array of
// struct sock_filter in native byte order. The slice is the caller's.
func (f *Filter) BPF() ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.prog == nil {
		return nil, errReleased
	}
	return append([]byte(nil), f.prog...), nil
}

// Release drops the program. Later calls to BPF and File fail; calling
// Release again does nothing. Files already returned by File stay valid.
func (f *Filter) Release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prog = nil
}
