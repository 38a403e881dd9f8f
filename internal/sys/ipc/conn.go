package ipc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// Protocol is what both ends of a Conn must speak: a name and a version,
// exchanged in the hello, and the bounds on its messages.
type Protocol struct {
	// Name and Version are checked in the hello: another name, or
	// another version, ends the connection before any other message
	// (a *VersionError says which).
	Name    string
	Version int
	// MaxMessage bounds a message's frame payload, each way; 0 means
	// DefaultMaxMessage. A longer one is an error: refused unsent, or
	// unread (and the connection ends).
	MaxMessage int
	// Files is how many descriptors one message may carry (0: none).
	Files int
}

// DefaultMaxMessage is a message's bound when the protocol sets none.
const DefaultMaxMessage = 1 << 20

func (p Protocol) max() int {
	if p.MaxMessage > 0 {
		return p.MaxMessage
	}
	return DefaultMaxMessage
}

// Timeouts of a connection's own steps. Variables so tests can shorten
// them.
var (
	// DialTimeout bounds connecting: a live server accepts at once.
	DialTimeout = 2 * time.Second
	// WriteTimeout bounds sending one message to a peer that does not
	// read.
	WriteTimeout = 10 * time.Second
)

// hello is the body of the first message each way.
type hello struct {
	Protocol string `json:"protocol"`
	Version  int    `json:"version"`
}

// VersionError is a peer that speaks another protocol, or another
// version of it: both ends must be the same guardrun.
type VersionError struct {
	Protocol string // ours
	Version  int
	// PeerProtocol and PeerVersion are what the other end said.
	PeerProtocol string
	PeerVersion  int
}

func (e *VersionError) Error() string {
	if e.PeerProtocol != e.Protocol {
		return fmt.Sprintf("the other end speaks %q, not %q: it is not this guardrun's", e.PeerProtocol, e.Protocol)
	}
	return fmt.Sprintf("the other end speaks %s version %d, this guardrun version %d: both must be the same guardrun", e.Protocol, e.PeerVersion, e.Version)
}

// PeerError is the peer ending the connection with an error notice: a
// malformed message, a refused hello, a server too busy.
type PeerError struct{ Msg string }

func (e *PeerError) Error() string { return "the other end ended the connection: " + e.Msg }

// RequestError is a request the peer answered with an error.
type RequestError struct {
	Type string
	Msg  string
}

func (e *RequestError) Error() string { return e.Type + " refused: " + e.Msg }

// ErrClosed is a connection that ended (closed here, or by the peer
// without an error notice) before what was waited for.
var ErrClosed = errors.New("the connection ended")

// Handler is what a Conn does with the peer's requests and notices.
type Handler struct {
	// Request answers a request; it runs in a goroutine of its own,
	// so that requests on one connection are answered concurrently. Its
	// result is the reply's body, or the reply's error (a panic is one
	// too). ctx ends when the sender withdraws the request or the
	// connection ends. Nil: every request is refused.
	Request func(ctx context.Context, m *Message) (any, error)
	// Notice takes a notice, on the connection's reading goroutine and
	// in the order they came: it should not block. An error ends the
	// connection, and the peer is told it. Nil: a notice is an error.
	Notice func(m *Message) error
}

// Conn is one connection of a Protocol, either end. Several goroutines
// may Call and Send on it at once; one runs Serve (Dial starts it for a
// client; a Server's Handle calls it).
type Conn struct {
	uc     *net.UnixConn
	proto  Protocol
	peer   Peer
	client bool // the first message read is the server's hello

	wmu sync.Mutex // one frame at a time

	mu     sync.Mutex
	nextID uint64
	calls  map[uint64]chan *Message
	served bool

	done chan struct{} // closed when Serve ends
	err  error         // why, for the Calls still waiting
}

func newConn(uc *net.UnixConn, p Protocol, peer Peer, client bool) *Conn {
	return &Conn{uc: uc, proto: p, peer: peer, client: client, calls: map[uint64]chan *Message{}, done: make(chan struct{})}
}

// Dial connects to the server at path, checks that it runs as this
// process's user (CheckPeer), sends the hello and starts serving the
// connection with h. It does not wait for the server's hello: a first
// Call's request goes out at once, and a refused hello (another version)
// is that Call's error. An error means no server of this user answers
// there (gone, stale, not a socket, another user's).
func Dial(ctx context.Context, path string, p Protocol, h Handler) (*Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	uc := nc.(*net.UnixConn)
	peer, err := CheckPeer(uc)
	if err != nil {
		uc.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c := newConn(uc, p, peer, true)
	// A hello that cannot be sent (the server refused the connection
	// at once: busy) is not the end: what the server said is read, and
	// is the first Call's error.
	c.sendHello("")
	go c.Serve(context.Background(), h)
	return c, nil
}

// Peer is the process at the other end.
func (c *Conn) Peer() Peer { return c.peer }

// Close ends the connection: Serve returns, waiting Calls fail with
// ErrClosed, the peer sees it end.
func (c *Conn) Close() error { return c.uc.Close() }

// Done is closed when the connection has ended (Serve returned); Err
// then says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the connection ended: nil while it lasts; ErrClosed when
// it was closed, here or by the peer without a word; else the peer's
// *PeerError, a *VersionError, or what broke it.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Send sends a notice: no reply comes.
func (c *Conn) Send(typ string, body any, files ...*os.File) error {
	m, err := c.message(typ, body, files)
	if err != nil {
		return err
	}
	return c.send(m)
}

// Call sends a request and waits for its reply, decoding its body into
// out (strictly; nil ignores it). A refusal is a *RequestError. When ctx
// ends first, the request is withdrawn (the peer's handler sees its
// context end) and ctx's error returned.
func (c *Conn) Call(ctx context.Context, typ string, body, out any, files ...*os.File) error {
	m, err := c.message(typ, body, files)
	if err != nil {
		return err
	}
	ch := make(chan *Message, 1)
	c.mu.Lock()
	c.nextID++
	m.ID = c.nextID
	c.calls[m.ID] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.calls, m.ID)
		c.mu.Unlock()
	}()
	if err := c.send(m); err != nil {
		if !errors.Is(err, errWrite) {
			return err
		}
		// The peer may have said why before it went (a refused
		// hello): Serve reads what came until the end.
		select {
		case <-c.done:
			if c.err != ErrClosed {
				return c.err
			}
		case <-ctx.Done():
		}
		return err
	}
	var r *Message
	select {
	case r = <-ch:
	case <-c.done:
		select {
		case r = <-ch:
		default:
			return c.err
		}
	case <-ctx.Done():
		go c.send(&Message{Cancel: m.ID})
		return ctx.Err()
	}
	if r.Error != "" {
		return &RequestError{Type: typ, Msg: r.Error}
	}
	if out == nil {
		return nil
	}
	return r.Decode(out)
}

func (c *Conn) message(typ string, body any, files []*os.File) (*Message, error) {
	if typ == typeHello || typ == typeError {
		return nil, fmt.Errorf("ipc: %q is not a protocol's message type", typ)
	}
	if err := checkType(typ); err != nil || typ == "" {
		return nil, fmt.Errorf("ipc: message type %q", typ)
	}
	if len(files) > c.proto.Files {
		return nil, fmt.Errorf("ipc: %d descriptors, more than %s takes (%d)", len(files), c.proto.Name, c.proto.Files)
	}
	m := &Message{Type: typ, Files: files}
	if body != nil {
		b, err := marshal(body)
		if err != nil {
			return nil, err
		}
		m.Body = b
	}
	return m, nil
}

// send writes one message, refusing one longer than the protocol's
// bound unsent.
func (c *Conn) send(m *Message) error {
	p, err := EncodeMessage(m)
	if err != nil {
		return err
	}
	if len(p) > c.proto.max() {
		return fmt.Errorf("%w: %s of %d bytes, more than the %d %s takes", ErrTooLarge, m.what(), len(p), c.proto.max(), c.proto.Name)
	}
	frame := AppendFrame(make([]byte, 0, HeaderSize+len(p)), MessageMagic, p)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.uc.SetWriteDeadline(time.Now().Add(WriteTimeout))
	if err := WriteFrame(c.uc, frame, m.Files); err != nil {
		// Part of a frame may have gone: nothing more can follow it.
		// Reading goes on, so that what the peer said before it went
		// is read.
		c.uc.CloseWrite()
		return fmt.Errorf("%w: %w", errWrite, err)
	}
	return nil
}

// errWrite marks a message that could not be written.
var errWrite = errors.New("sending")

func (c *Conn) sendHello(refusal string) error {
	b, _ := marshal(hello{Protocol: c.proto.Name, Version: c.proto.Version})
	return c.send(&Message{Type: typeHello, Body: b, Error: refusal})
}

// sendError tells the peer why the connection ends.
func (c *Conn) sendError(err error) {
	c.send(&Message{Type: typeError, Error: err.Error()})
}

// recv reads one message.
func (c *Conn) recv() (*Message, error) {
	p, files, err := ReadFrame(c.uc, MessageMagic, c.proto.max(), c.proto.Files)
	if err != nil {
		if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrNotFrame) {
			return nil, &protoError{err}
		}
		return nil, err
	}
	m, err := DecodeMessage(p)
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		return nil, &protoError{err}
	}
	m.Files = files
	return m, nil
}

// protoError is a message this end cannot take: the peer is told.
type protoError struct{ err error }

func (e *protoError) Error() string { return e.err.Error() }
func (e *protoError) Unwrap() error { return e.err }

// checkHello checks the peer's hello, m.
func (c *Conn) checkHello(m *Message) error {
	if m.Type == typeError {
		return &PeerError{m.Error}
	}
	if m.Type != typeHello {
		return &protoError{fmt.Errorf("expected a hello, got %s", m.what())}
	}
	var h hello
	if err := m.Decode(&h); err != nil {
		return &protoError{err}
	}
	if h.Protocol != c.proto.Name || h.Version != c.proto.Version {
		return &VersionError{Protocol: c.proto.Name, Version: c.proto.Version, PeerProtocol: h.Protocol, PeerVersion: h.Version}
	}
	if m.Error != "" {
		return &PeerError{m.Error}
	}
	return nil
}

// Serve reads the peer's messages until the connection ends: a reply
// goes to the Call waiting for it, a request and a notice to h, a
// cancel to the request it names. It returns when the connection ends,
// having waited for h's request handlers: nil when it was closed (here
// or by the peer), else why (then also Err), after telling the peer if
// the fault was its message. When ctx ends the connection ends.
func (c *Conn) Serve(ctx context.Context, h Handler) error {
	c.mu.Lock()
	if c.served {
		c.mu.Unlock()
		return errors.New("ipc: Serve called twice")
	}
	c.served = true
	c.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	// When ctx ends, reading stops (and so Serve), the handlers' contexts
	// end and their last replies still go out before the connection
	// closes.
	stop := context.AfterFunc(ctx, func() { c.uc.CloseRead() })
	var wg sync.WaitGroup
	var rmu sync.Mutex
	running := map[uint64]context.CancelFunc{}
	err := c.read(ctx, h, &wg, &rmu, running)
	cancel()
	stop()
	wg.Wait()
	c.uc.Close()
	if err == nil {
		c.err = ErrClosed
	} else {
		c.err = err
	}
	close(c.done)
	return err
}

func (c *Conn) read(ctx context.Context, h Handler, wg *sync.WaitGroup, rmu *sync.Mutex, running map[uint64]context.CancelFunc) error {
	greeted := !c.client
	for {
		m, err := c.recv()
		if err != nil {
			var pe *protoError
			switch {
			case errors.As(err, &pe):
				c.sendError(pe.err)
				return pe.err
			case errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || ctx.Err() != nil:
				return nil
			}
			return err
		}
		if !greeted {
			if err := c.checkHello(m); err != nil {
				if pe, ok := err.(*protoError); ok {
					c.sendError(pe.err)
					return pe.err
				}
				return err
			}
			greeted = true
			continue
		}
		switch {
		case m.Reply != 0:
			c.mu.Lock()
			ch := c.calls[m.Reply]
			c.mu.Unlock()
			if ch == nil {
				// A Call that gave up: nobody waits.
				closeFiles(m.Files)
				continue
			}
			ch <- m
		case m.Cancel != 0:
			rmu.Lock()
			if stop := running[m.Cancel]; stop != nil {
				stop()
			}
			rmu.Unlock()
		case m.Type == typeError:
			return &PeerError{m.Error}
		case m.Type == typeHello:
			err := errors.New("a second hello")
			c.sendError(err)
			return err
		case m.ID != 0:
			rmu.Lock()
			if running[m.ID] != nil {
				rmu.Unlock()
				err := fmt.Errorf("request %d is under way already", m.ID)
				c.sendError(err)
				return err
			}
			rctx, stop := context.WithCancel(ctx)
			running[m.ID] = stop
			rmu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				body, err := c.answer(rctx, h, m)
				rmu.Lock()
				delete(running, m.ID)
				rmu.Unlock()
				stop()
				r := &Message{Reply: m.ID}
				if err == nil && body != nil {
					r.Body, err = marshal(body)
				}
				if err != nil {
					r.Body, r.Error = nil, err.Error()
					if r.Error == "" {
						r.Error = "refused"
					}
				}
				if err := c.send(r); errors.Is(err, ErrTooLarge) {
					c.send(&Message{Reply: m.ID, Error: err.Error()})
				}
			}()
		default:
			if h.Notice == nil {
				closeFiles(m.Files)
				err := fmt.Errorf("unexpected %s", m.what())
				c.sendError(err)
				return err
			}
			if err := h.Notice(m); err != nil {
				c.sendError(err)
				return err
			}
		}
	}
}

// answer runs h.Request, turning a panic into the request's error: no
// request a peer sends may end this process (the supervisor's terminal
// is in raw mode; only a clean exit restores it).
func (c *Conn) answer(ctx context.Context, h Handler, m *Message) (body any, err error) {
	defer func() {
		if r := recover(); r != nil {
			body, err = nil, fmt.Errorf("internal error: %v", r)
		}
	}()
	if h.Request == nil {
		closeFiles(m.Files)
		return nil, fmt.Errorf("no %s requests are taken here", m.Type)
	}
	return h.Request(ctx, m)
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
