package notify

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/guardrun/guardrun/seccomp"
)

// Handler serves one system call of the sandboxed command: it does what
// the call asks itself, on the caller's behalf, and says what the call
// returns. It runs in guardrun, on a thread without capabilities (see
// Server), concurrently with other handlers; it must not block for long
// (the caller waits, and Stop waits for it).
type Handler func(r *Request) Response

// Response is what the caller's system call returns: Val on success
// (Errno 0), or -1 with errno Errno. There is deliberately no "let the
// kernel carry on" answer (SECCOMP_USER_NOTIF_FLAG_CONTINUE): the kernel
// would then read the arguments again from the caller's memory, which a
// thread of the caller can change after the handler looked at them.
// Handlers emulate the call instead.
type Response struct {
	Val   int64
	Errno syscall.Errno

	// fd, when set (fdSet), is a descriptor of guardrun's that the
	// answer installs in the caller (SECCOMP_IOCTL_NOTIF_ADDFD) and
	// returns the number of; the answer closes guardrun's copy.
	fd      int
	fdSet   bool
	cloexec bool
	// cont lets the kernel carry on with the call: only ever for an
	// exec (Request.ContinueExec), which guardrun cannot make itself.
	cont bool
}

// FD is a successful return of a new descriptor: fd, guardrun's own,
// installed in the caller (close-on-exec if cloexec) and its number
// returned in one step (SECCOMP_ADDFD_FLAG_SEND, Linux 5.14), as open
// returns one. Sending the answer closes fd.
func FD(fd int, cloexec bool) Response {
	return Response{fd: fd, fdSet: true, cloexec: cloexec}
}

// Value is a successful return of v.
func Value(v int64) Response { return Response{Val: v} }

// Fail is a failed return with errno e (EPERM when e is 0: a handler
// that fails must fail the call).
func Fail(e syscall.Errno) Response {
	if e == 0 {
		e = syscall.EPERM
	}
	return Response{Val: -1, Errno: e}
}

// Registry is the notification registry: the system calls the sandboxed
// command makes that guardrun serves in user space, and the Handler for
// each. One Registry is made per command; whatever it names is routed to
// user space by the command's seccomp filter (seccomp.BuildRoutes with
// Names), and the Server started on the filter's listener calls the
// handler for each notification. A task can have only one filter with a
// listener (the kernel answers EBUSY to a second), so every user-space
// system call of the landlock backend goes through this one registry.
//
// To add a handler: call Handle with the system call's name (as
// libseccomp spells it) before the command starts. Reading the caller's
// arguments goes through the Request (ReadPath, ReadBytes, Dir, PathFD,
// GetFD), which check that the call is still waiting after each read.
type Registry struct {
	mu       sync.Mutex
	handlers map[string]Handler
	// when are the conditions of a name routed only on some calls
	// (HandleWhen); a name without is routed on every call.
	when map[string][]seccomp.Cond
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{handlers: map[string]Handler{}, when: map[string][]seccomp.Cond{}}
}

// HandleWhen is Handle for the calls of name that meet one of when
// (seccomp.Route): the others stay in the kernel and never reach h. An
// empty when routes every call, as Handle does.
func (g *Registry) HandleWhen(name string, when []seccomp.Cond, h Handler) error {
	if err := g.Handle(name, h); err != nil {
		return err
	}
	if len(when) > 0 {
		g.mu.Lock()
		g.when[name] = append([]seccomp.Cond(nil), when...)
		g.mu.Unlock()
	}
	return nil
}

// Routes are the system calls routed to user space with their
// conditions, sorted by name: what the command's filter is built with
// (seccomp.BuildRoutes).
func (g *Registry) Routes() []seccomp.Route {
	names := g.Names()
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]seccomp.Route, len(names))
	for i, n := range names {
		out[i] = seccomp.Route{Name: n, Any: g.when[n]}
	}
	return out
}

// Handle routes the system call name to h. A name can have only one
// handler: a second Handle for it is an error.
func (g *Registry) Handle(name string, h Handler) error {
	if name == "" || h == nil {
		return fmt.Errorf("notify: Handle needs a system call name and a handler")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.handlers[name]; ok {
		return fmt.Errorf("notify: %s already has a handler", name)
	}
	g.handlers[name] = h
	return nil
}

// Names are the system calls routed to user space, sorted.
func (g *Registry) Names() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, 0, len(g.handlers))
	for n := range g.handlers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Key identifies the routes (for caching a compiled filter).
func (g *Registry) Key() string {
	var b strings.Builder
	for _, r := range g.Routes() {
		fmt.Fprintf(&b, "%s%v;", r.Name, r.Any)
	}
	return b.String()
}

func (g *Registry) handler(name string) Handler {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.handlers[name]
}

// Request is one system call of the sandboxed command waiting for
// guardrun's answer. Its fields are what the kernel reported; anything
// behind a pointer must be read with the methods below, which check
// afterwards that the call is still waiting (so that what was read is
// the caller's, not a recycled pid's).
type Request struct {
	// ID is the kernel's cookie for this notification.
	ID uint64
	// Pid is the calling thread's id (in guardrun's pid namespace).
	Pid int
	// Syscall is the system call's name, Nr its number.
	Syscall string
	Nr      int32
	// Args are the raw argument registers.
	Args [6]uint64
	// IP is the caller's instruction pointer; Arch its AUDIT_ARCH.
	IP   uint64
	Arch uint32

	s *Server
}
