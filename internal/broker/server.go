package broker

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/internal/sys/ipc"
)

// Server puts a Broker on its socket.
type Server struct {
	// Broker is what the socket serves.
	Broker *Broker
	// FrontToken, when set, lets a connection that presents it attach
	// as a front and answer; without it no connection can.
	FrontToken string

	ln   *ipc.Listener
	lock *os.File
	srv  ipc.Server

	closeOnce sync.Once
	closeErr  error
}

// AlreadyRunningError is Listen's error when a broker already serves
// the socket.
type AlreadyRunningError struct {
	Path string
	PID  int
}

func (e *AlreadyRunningError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("an approval broker already runs (pid %d) at %s", e.PID, e.Path)
	}
	return "an approval broker already runs at " + e.Path
}

// Listen takes the broker's socket at path (SocketPath): its directory
// is made private (0700) and must be this user's, a lock beside the
// socket makes the broker the only one (*AlreadyRunningError when
// another holds it), and a socket a dead broker left is replaced.
func Listen(path string, b *Broker) (*Server, error) {
	dir := filepath.Dir(path)
	if err := privateDir(dir); err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	lockPath := filepath.Join(dir, "lock")
	lf, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		data := make([]byte, 32)
		n, _ := lf.ReadAt(data, 0)
		lf.Close()
		pid, _ := strconv.Atoi(string(trimSpace(data[:n])))
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &AlreadyRunningError{Path: path, PID: pid}
		}
		return nil, fmt.Errorf("broker: lock %s: %w", lockPath, err)
	}
	lf.Truncate(0)
	lf.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	// Holding the lock, whatever is at path is a dead broker's.
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		lf.Close()
		return nil, fmt.Errorf("broker: %w", err)
	}
	ln, err := ipc.Listen(path)
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("broker: %w", err)
	}
	srv := &Server{Broker: b, ln: ln, lock: lf}
	srv.srv = ipc.Server{Protocol: Protocol, MaxConns: 256, Handle: srv.handle}
	return srv, nil
}

// privateDir makes dir (0700) or checks the one there: a directory, not
// a link, this user's, that no one else can write or enter.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	case !ok || int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s is not yours: refusing to listen there", dir)
	case fi.Mode().Perm()&0o077 != 0:
		if err := os.Chmod(dir, 0o700); err != nil {
			return err
		}
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == 0 || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

// Path is the socket.
func (s *Server) Path() string { return s.ln.Path() }

// Serve answers connections until Close.
func (s *Server) Serve() error {
	if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, ipc.ErrServerClosed) {
		return fmt.Errorf("broker: %w", err)
	}
	return nil
}

// Close stops the broker: waiting requests fail (their askers refuse
// them), fronts are detached, the socket and the lock are released.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.Broker.Close()
		s.closeErr = s.srv.Close()
		if err := s.ln.Close(); err != nil && s.closeErr == nil {
			s.closeErr = err
		}
		os.Remove(s.ln.Path())
		s.lock.Close()
	})
	return s.closeErr
}

// handle serves one connection: its asks, or, once attached, a front.
func (s *Server) handle(ctx context.Context, c *ipc.Conn) {
	peer := c.Peer()
	asker := describe(peer.PID)
	var mu sync.Mutex
	var front *Subscription
	defer func() {
		mu.Lock()
		if front != nil {
			front.Cancel()
		}
		mu.Unlock()
	}()
	c.Serve(ctx, ipc.Handler{Request: func(ctx context.Context, m *ipc.Message) (any, error) {
		switch m.Type {
		case typeAsk:
			var a Request
			if err := m.Decode(&a); err != nil {
				return nil, err
			}
			if err := checkAsk(&a); err != nil {
				return nil, err
			}
			r, err := s.Broker.Ask(ctx, a, asker, peer.PID)
			if err != nil {
				return nil, err
			}
			return r, nil
		case typeAttach:
			var ab attachBody
			if err := m.Decode(&ab); err != nil {
				return nil, err
			}
			if s.FrontToken == "" || subtle.ConstantTimeCompare([]byte(ab.Token), []byte(s.FrontToken)) != 1 {
				// Slow a guesser down; the token is 256 bits anyway.
				time.Sleep(100 * time.Millisecond)
				return nil, errors.New("attach refused: a front needs the broker's front token")
			}
			if ab.Name == "" || len(ab.Name) > 64 {
				return nil, errors.New("attach refused: a front needs a name of 1 to 64 bytes")
			}
			mu.Lock()
			defer mu.Unlock()
			if front != nil {
				return nil, errors.New("attached already")
			}
			snap, sub := s.Broker.Subscribe(ab.Name)
			front = sub
			for i := range snap {
				if err := c.Send(typePending, &snap[i]); err != nil {
					return nil, err
				}
			}
			go relay(c, sub)
			return attachReply{Pending: len(snap)}, nil
		case typeAnswer:
			mu.Lock()
			f := front
			mu.Unlock()
			if f == nil {
				return nil, errors.New("answer refused: this connection is not an attached front")
			}
			var ab AnswerBody
			if err := m.Decode(&ab); err != nil {
				return nil, err
			}
			if err := s.Broker.Answer(ab.ID, ab.Answer, f.Name); err != nil {
				return nil, err
			}
			return empty{}, nil
		}
		return nil, fmt.Errorf("unknown request type %q", m.Type)
	}})
}

// relay sends a front's changes until its subscription ends; a front
// that fell behind is disconnected, and catches up when it attaches
// again.
func relay(c *ipc.Conn, sub *Subscription) {
	for ev := range sub.C {
		var err error
		switch {
		case ev.Pending != nil:
			err = c.Send(typePending, ev.Pending)
		case ev.Resolved != nil:
			err = c.Send(typeResolved, ev.Resolved)
		}
		if err != nil {
			c.Close()
			return
		}
	}
	c.Close()
}
