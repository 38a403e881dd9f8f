package netproxy

import (
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
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	owner := cl
	if owner == nil {
		owner = p.def
	}
	untrack := owner.track(&listenerConn{l})
	go func() {
		for {
			c, err := l.AcceptUnix()
			if err != nil {
				return
			}
			go p.takeListener(c, cl)
		}
	}()
	return func() error { untrack(); return l.Close() }, nil
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

// takeListener reads one handed-over listener from a bridge and serves it.
func (p *Proxy) takeListener(c *net.UnixConn, cl *Client) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := checkPeer(c); err != nil {
		p.logf("guardrun: proxy: %v", err)
		return
	}
	buf := make([]byte, 1+64)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil || n < 1 || buf[0] != 'L' {
		return
	}
	fds, err := rights(oob[:oobn])
	if err != nil {
		p.logf("guardrun: proxy: %v", err)
		return
	}
	defer func() {
		for _, fd := range fds[1:] {
			unix.Close(fd)
		}
	}()
	if cl == nil {
		// The listener's command, by the token the bridge was given.
		tok := string(buf[1:n])
		if cl = p.lookup(tok); cl == nil {
			unix.Close(fds[0])
			p.logf("guardrun: proxy: a bridge without a valid token was turned away")
			return
		}
	} else if n != 1 {
		unix.Close(fds[0])
		return
	}
	f := os.NewFile(uintptr(fds[0]), "sandbox listener")
	l, err := net.FileListener(f)
	f.Close()
	if err != nil {
		p.logf("guardrun: proxy: the bridge did not send a listener: %v", err)
		return
	}
	if _, ok := l.(*net.TCPListener); !ok {
		l.Close()
		p.logf("guardrun: proxy: the bridge sent a %T, not a TCP listener", l)
		return
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
	c.Write([]byte{'K'})
}

func rights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("bridge message: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		r, err := unix.ParseUnixRights(&m)
		if err == nil {
			fds = append(fds, r...)
		}
	}
	if len(fds) == 0 {
		return nil, errors.New("the bridge sent no descriptor")
	}
	return fds, nil
}

// checkPeer accepts only a process of this user (the sandbox's user
// namespace maps the same user).
func checkPeer(c *net.UnixConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var cerr error
	raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if cerr != nil {
		return fmt.Errorf("peer credentials: %w", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("refused a bridge of uid %d", cred.Uid)
	}
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
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		return fmt.Errorf("the proxy at %s: %w", socket, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := c.WriteMsgUnix(append([]byte{'L'}, token...), unix.UnixRights(int(lf.Fd())), nil); err != nil {
		return fmt.Errorf("hand the listener to the proxy: %w", err)
	}
	ack := make([]byte, 1)
	if _, err := io.ReadFull(c, ack); err != nil || ack[0] != 'K' {
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
