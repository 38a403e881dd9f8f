package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/internal/sys/ipc"
)

// ServeUnix listens on the unix socket path for sandboxes' bridges and
// serves what they hand over: each bridge connects once and passes (as
// SCM_RIGHTS) one listening TCP socket that it made on loopback inside
// the sandbox's own, otherwise empty, network namespace. The proxy then
// accepts the command's connections on that socket directly, so nothing
// inside the sandbox copies bytes. Put path in a directory only this user
// can enter (0700): whoever connects can hand the proxy a listener.
// Close (of the Proxy) or the returned stop ends it.
func (p *Proxy) ServeUnix(path string) (stop func() error, err error) {
	return p.ServeUnixFor(path, nil)
}

// ServeUnixFor is ServeUnix for one client of a shared proxy: the
// connections on the listeners handed over on path belong to c (nil: the
// proxy's own client). Closing c closes those listeners too.
func (p *Proxy) ServeUnixFor(path string, cl *Client) (stop func() error, err error) {
	p.init()
	if cl == nil {
		cl = p.def
	}
	return p.serveUnix(path, cl)
}

// ServeUnixTokens is ServeUnix for a shared proxy: each bridge names its
// command by the token it was given (Bridge's token), and the listener it
// hands over belongs to that client (waiting, as ServeTokens does, for a
// registration still on its way). A bridge without a valid token is
// turned away.
func (p *Proxy) ServeUnixTokens(path string) (stop func() error, err error) {
	p.init()
	return p.serveUnix(path, nil)
}

func (p *Proxy) serveUnix(path string, cl *Client) (stop func() error, err error) {
	l, err := ipc.Listen(path)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	owner := cl
	if owner == nil {
		owner = p.def
	}
	srv := &ipc.Server{Protocol: bridgeProtocol, MaxConns: maxConns, HelloTimeout: bridgeTimeout,
		Handle: func(ctx context.Context, c *ipc.Conn) { p.serveBridge(ctx, c, cl) }}
	untrack := owner.track(&closerConn{srv.Close})
	go srv.Serve(l)
	return func() error { untrack(); return srv.Close() }, nil
}

// The bridge socket's protocol: after the hellos, the bridge's one
// request, with its listener's descriptor, and the proxy's empty reply
// once it serves the listener (an error reply when it does not):
//
//	bridge → {"type":"listener","id":1,"body":{"token":"..."}}   + SCM_RIGHTS
//	proxy  ← {"reply":1,"body":{}}
var bridgeProtocol = ipc.Protocol{Name: "guardrun-bridge", Version: 1, MaxMessage: 4096, Files: 1}

// bridgeTimeout bounds a bridge's handover.
const bridgeTimeout = 10 * time.Second

// handover is the bridge's request: the token of its command (empty on
// a command's own proxy, ServeUnixFor).
type handover struct {
	Token string `json:"token,omitempty"`
}

// serveBridge serves one bridge's connection: its handover, within
// bridgeTimeout.
func (p *Proxy) serveBridge(ctx context.Context, c *ipc.Conn, cl *Client) {
	late := time.AfterFunc(bridgeTimeout, func() { c.Close() })
	defer late.Stop()
	c.Serve(ctx, ipc.Handler{Request: func(ctx context.Context, m *ipc.Message) (any, error) {
		if err := p.takeListener(m, cl); err != nil {
			return nil, err
		}
		return struct{}{}, nil
	}})
}

// listenerConn lets Close reach the unix listener through the set of
// tracked connections.
type listenerConn struct{ net.Listener }

func (l *listenerConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (l *listenerConn) Write([]byte) (int, error)        { return 0, io.EOF }
func (l *listenerConn) LocalAddr() net.Addr              { return l.Addr() }
func (l *listenerConn) RemoteAddr() net.Addr             { return l.Addr() }
func (l *listenerConn) SetDeadline(time.Time) error      { return nil }
func (l *listenerConn) SetReadDeadline(time.Time) error  { return nil }
func (l *listenerConn) SetWriteDeadline(time.Time) error { return nil }

// closerConn lets Close reach a server (a bridge socket's) the same way.
type closerConn struct{ close func() error }

func (c *closerConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (c *closerConn) Write([]byte) (int, error)        { return 0, io.EOF }
func (c *closerConn) Close() error                     { return c.close() }
func (c *closerConn) LocalAddr() net.Addr              { return bridgeAddr{} }
func (c *closerConn) RemoteAddr() net.Addr             { return bridgeAddr{} }
func (c *closerConn) SetDeadline(time.Time) error      { return nil }
func (c *closerConn) SetReadDeadline(time.Time) error  { return nil }
func (c *closerConn) SetWriteDeadline(time.Time) error { return nil }

type bridgeAddr struct{}

func (bridgeAddr) Network() string { return "unix" }
func (bridgeAddr) String() string  { return "bridge socket" }

// takeListener serves the listener a bridge handed over with m.
func (p *Proxy) takeListener(m *ipc.Message, cl *Client) error {
	files := m.Files
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if m.Type != "listener" {
		return fmt.Errorf("unknown request %q", m.Type)
	}
	var h handover
	if err := m.Decode(&h); err != nil {
		return err
	}
	if len(files) != 1 {
		p.logf("guardrun: proxy: the bridge sent no descriptor")
		return errors.New("no listener came with the request")
	}
	if cl == nil {
		// The listener's command, by the token the bridge was given.
		if cl = p.lookup(h.Token); cl == nil {
			p.logf("guardrun: proxy: a bridge without a valid token was turned away")
			return errors.New("no valid token")
		}
	} else if h.Token != "" {
		return errors.New("a token where none is taken")
	}
	l, err := net.FileListener(files[0])
	if err != nil {
		p.logf("guardrun: proxy: the bridge did not send a listener: %v", err)
		return err
	}
	if _, ok := l.(*net.TCPListener); !ok {
		l.Close()
		p.logf("guardrun: proxy: the bridge sent a %T, not a TCP listener", l)
		return errors.New("not a TCP listener")
	}
	untrack := cl.track(&listenerConn{l})
	go func() {
		defer untrack()
		if cl == p.def {
			p.Serve(l)
		} else {
			p.ServeClient(l, cl)
		}
	}()
	return nil
}

func (p *Proxy) logf(format string, args ...any) {
	if p.Logf != nil {
		p.Logf(format, args...)
	}
}

// Bridge is the first process inside a bwrap sandbox with the proxy
// (guardrun's hidden verb): it makes a TCP listener on listen (loopback
// in the sandbox's empty network namespace), hands it to the proxy over
// the unix socket, applies the command's own seccomp program (read from
// filterFD: refusing unix sockets, so the proxy's socket is out of the
// command's reach) and executes argv in its place. It returns only on
// failure, with the exit status to use.
func Bridge(socket, listen, token string, filterFD int, argv []string, stderr io.Writer) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "guardrun: proxy bridge: "+format+"\n", args...)
		return 125
	}
	if len(argv) == 0 {
		return fail("no command")
	}
	prog, err := readFilter(filterFD)
	if err != nil {
		return fail("%v", err)
	}
	if err := handOver(socket, listen, token); err != nil {
		return fail("%v", err)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(stderr, "guardrun: %s: %v\n", argv[0], errors.Unwrap(err))
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 127
		}
		return 126
	}
	if err := installFilter(prog); err != nil {
		return fail("seccomp: %v", err)
	}
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprintf(stderr, "guardrun: %s: %v\n", argv[0], err)
	return 126
}

func readFilter(fd int) ([]byte, error) {
	f := os.NewFile(uintptr(fd), "seccomp filter")
	if f == nil {
		return nil, fmt.Errorf("no seccomp filter on descriptor %d", fd)
	}
	defer f.Close()
	prog, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	if len(prog) == 0 || len(prog)%8 != 0 || len(prog)/8 > 4096 {
		return nil, fmt.Errorf("seccomp filter: %d bytes is not a BPF program", len(prog))
	}
	return prog, nil
}

// handOver makes the listener and passes it to the proxy.
func handOver(socket, listen, token string) error {
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", listen, err)
	}
	defer l.Close()
	lf, err := l.(*net.TCPListener).File()
	if err != nil {
		return err
	}
	defer lf.Close()
	ctx, cancel := context.WithTimeout(context.Background(), bridgeTimeout)
	defer cancel()
	c, err := ipc.Dial(ctx, socket, bridgeProtocol, ipc.Handler{})
	if err != nil {
		return fmt.Errorf("the proxy at %s: %w", socket, err)
	}
	defer c.Close()
	if err := c.Call(ctx, "listener", handover{Token: token}, nil, lf); err != nil {
		return fmt.Errorf("the proxy did not take the listener (%v)", err)
	}
	return nil
}

// installFilter loads a BPF program as this process's seccomp filter, on
// every thread, after no_new_privs (which bwrap has set already).
func installFilter(prog []byte) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	fp := unix.SockFprog{Len: uint16(len(prog) / 8), Filter: (*unix.SockFilter)(unsafe.Pointer(&prog[0]))}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fp)))
	if errno != 0 {
		return errno
	}
	if r != 0 {
		return fmt.Errorf("thread %d could not be synchronised", r)
	}
	return nil
}

// BridgeMain parses the hidden verb's arguments:
// --socket PATH --listen ADDR [--token TOKEN] --filter-fd N -- CMD [ARG...].
func BridgeMain(args []string, stderr io.Writer) int {
	var socket, listen, token string
	fd := -1
loop:
	for len(args) > 0 {
		switch a := args[0]; a {
		case "--":
			return Bridge(socket, listen, token, fd, args[1:], stderr)
		case "--socket", "--listen", "--token", "--filter-fd":
			if len(args) < 2 {
				break loop
			}
			switch a {
			case "--socket":
				socket = args[1]
			case "--listen":
				listen = args[1]
			case "--token":
				if !ValidToken(args[1]) {
					fmt.Fprintln(stderr, "guardrun: proxy bridge: bad --token")
					return 125
				}
				token = args[1]
			case "--filter-fd":
				n, err := strconv.Atoi(args[1])
				if err != nil || n < 3 {
					fmt.Fprintf(stderr, "guardrun: proxy bridge: bad --filter-fd %q\n", args[1])
					return 125
				}
				fd = n
			}
			args = args[2:]
			continue
		}
		break loop
	}
	fmt.Fprintln(stderr, "guardrun: proxy bridge: usage: --socket PATH --listen ADDR [--token TOKEN] --filter-fd N -- CMD [ARG...]")
	return 125
}
