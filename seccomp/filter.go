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

// Route is one system call the filter hands to user space
// (SECCOMP_RET_USER_NOTIF, BuildRoutes): always, or only when one of Any
// holds, so that the calls whose arguments say they need no judgement
// (an open for reading only) stay in the kernel.
type Route struct {
	// Name is the system call, as libseccomp spells it.
	Name string
	// Any are the conditions, one of which sends the call to user
	// space; none: every call.
	Any []Cond
}

// Cond holds when argument Arg, masked with Mask, equals Val. A mask
// without the high 32 bits compares what the kernel takes as an int.
type Cond struct {
	Arg       uint
	Mask, Val uint64
}

// AnyBit is the conditions that hold when argument arg has one of the
// bits of bits set: one Cond per bit.
func AnyBit(arg uint, bits uint64) []Cond {
	var out []Cond
	for b := uint64(1); b != 0; b <<= 1 {
		if bits&b != 0 {
			out = append(out, Cond{Arg: arg, Mask: b, Val: b})
		}
	}
	return out
}

// Routes is every name routed without conditions.
func Routes(names ...string) []Route {
	out := make([]Route, len(names))
	for i, n := range names {
		out[i] = Route{Name: n}
	}
	return out
}
