package ipc

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/guardrun/guardrun/internal/sys/sockdir"
)

// PrivateDir makes a fresh directory only this user can enter (0700),
// named prefix and a random suffix, for sockets: under base, or under
// sockdir.Base (XDG_RUNTIME_DIR, else the temporary directory) when base
// is "", or under /tmp when a socket named longest would not fit a
// sockaddr_un there (see sockdir.Make).
func PrivateDir(base, prefix, longest string) (string, error) {
	if base == "" {
		base = sockdir.Base(os.Getenv)
	}
	dir, err := sockdir.Make(base, prefix, longest)
	if err != nil {
		return "", fmt.Errorf("socket directory: %w", err)
	}
	return dir, nil
}

// Listener is a unix socket that admits only processes of this user.
type Listener struct {
	ln   *net.UnixListener
	path string
	dir  string // removed by Close when the Listener made it

	once     sync.Once
	closeErr error
}

// Listen listens on the unix socket path (0600), which should lie in a
// private directory (PrivateDir).
func Listen(path string) (*Listener, error) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return &Listener{ln: ln, path: path}, nil
}

// ListenPrivate makes a private directory (PrivateDir) and listens on
// the socket name in it; Close removes the directory.
func ListenPrivate(base, prefix, name string) (*Listener, error) {
	dir, err := PrivateDir(base, prefix, name)
	if err != nil {
		return nil, err
	}
	l, err := Listen(filepath.Join(dir, name))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	l.dir = dir
	return l, nil
}

// Path is the socket.
func (l *Listener) Path() string { return l.path }

// Dir is the socket's directory, which sandboxes must hide.
func (l *Listener) Dir() string { return filepath.Dir(l.path) }

// Accept waits for the next connection whose peer runs as this user
// (CheckPeer) and returns it with its peer. Other peers are closed
// unanswered: they learn nothing.
func (l *Listener) Accept() (*net.UnixConn, Peer, error) {
	for {
		c, err := l.ln.AcceptUnix()
		if err != nil {
			return nil, Peer{}, err
		}
		p, err := CheckPeer(c)
		if err != nil {
			c.Close()
			continue
		}
		return c, p, nil
	}
}

// Close stops listening and removes the socket, and the directory
// ListenPrivate made. Connections accepted stay open.
func (l *Listener) Close() error {
	l.once.Do(func() {
		l.closeErr = l.ln.Close()
		if l.dir != "" {
			if err := os.RemoveAll(l.dir); err != nil && l.closeErr == nil {
				l.closeErr = err
			}
		}
	})
	return l.closeErr
}

// ErrServerClosed is Serve's error after Close.
var ErrServerClosed = errors.New("ipc: server closed")

func isTemporary(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}
