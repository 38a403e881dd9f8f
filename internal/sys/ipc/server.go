package ipc

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Defaults of a Server's bounds.
const (
	// DefaultMaxConns bounds a server's connections at once, and with
	// the protocol's MaxMessage the memory they can pin.
	DefaultMaxConns = 64
	// DefaultHelloTimeout is how long a client has, from connecting, to
	// send its hello.
	DefaultHelloTimeout = 10 * time.Second
)

// Server serves a Protocol on a Listener: each connection in a
// goroutine of its own, from its hello on, so that no client can stall
// another. Set its fields before Serve.
type Server struct {
	Protocol Protocol
	// Handle serves one connection whose hello was accepted (Conn.Peer
	// says who it is), typically by calling c.Serve(ctx, h); the
	// connection is closed when it returns. ctx ends when the Server is
	// closed.
	Handle func(ctx context.Context, c *Conn)
	// MaxConns bounds the connections served at once (0:
	// DefaultMaxConns); one past it is told the server is busy, and
	// closed.
	MaxConns int
	// HelloTimeout bounds the wait for a client's hello (0:
	// DefaultHelloTimeout).
	HelloTimeout time.Duration

	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	ln     *Listener
	closed bool
	wg     sync.WaitGroup
}

func (s *Server) init() {
	s.once.Do(func() { s.ctx, s.cancel = context.WithCancel(context.Background()) })
}

// Serve accepts connections on l until Close, which closes l. It
// returns nil after Close, ErrServerClosed when called after it, or
// the error that stopped accepting.
func (s *Server) Serve(l *Listener) error {
	s.init()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.ln = l
	s.mu.Unlock()
	max := s.MaxConns
	if max <= 0 {
		max = DefaultMaxConns
	}
	slots := make(chan struct{}, max)
	for {
		uc, peer, err := l.Accept()
		if err != nil {
			if s.ctx.Err() != nil {
				return nil
			}
			if isTemporary(err) {
				// Out of descriptors: wait for connections to end.
				time.Sleep(20 * time.Millisecond)
				continue
			}
			return fmt.Errorf("accept: %w", err)
		}
		c := newConn(uc, s.Protocol, peer, false)
		select {
		case slots <- struct{}{}:
		default:
			c.sendError(fmt.Errorf("busy: too many connections (%d)", max))
			uc.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-slots }()
			defer uc.Close()
			if s.hello(c) {
				s.Handle(s.ctx, c)
			}
		}()
	}
}

// hello reads the client's hello and answers it with the server's:
// with an error, ending the connection, when the client speaks another
// protocol or version.
func (s *Server) hello(c *Conn) bool {
	t := s.HelloTimeout
	if t <= 0 {
		t = DefaultHelloTimeout
	}
	c.uc.SetReadDeadline(time.Now().Add(t))
	m, err := c.recv()
	if err != nil {
		if pe, ok := err.(*protoError); ok {
			c.sendError(pe.err)
		} else if isTemporary(err) {
			c.sendError(fmt.Errorf("no hello within %v", t))
		}
		return false
	}
	c.uc.SetReadDeadline(time.Time{})
	if err := c.checkHello(m); err != nil {
		switch e := err.(type) {
		case *VersionError:
			c.sendHello(fmt.Sprintf("%s version %d is not spoken here: this end speaks version %d", e.PeerProtocol, e.PeerVersion, e.Version))
		case *protoError:
			c.sendError(e.err)
		}
		return false
	}
	return c.sendHello("") == nil
}

// Close stops accepting, closes l and every connection (their contexts
// end), and waits for the handlers to return.
func (s *Server) Close() error {
	s.init()
	s.mu.Lock()
	s.closed = true
	ln := s.ln
	s.mu.Unlock()
	s.cancel()
	var err error
	if ln != nil {
		err = ln.Close()
	}
	s.wg.Wait()
	return err
}
