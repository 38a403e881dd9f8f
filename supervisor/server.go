package supervisor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/sys/sockdir"
)

// Defaults of a Server's limits.
const (
	// DefaultReadTimeout is how long a client has, from connecting, to
	// send its whole request. A live guardrun sends at once; this only
	// stops stalled or hostile clients from holding a slot.
	DefaultReadTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds sending a reply to a client that does
	// not read.
	DefaultWriteTimeout = 5 * time.Second
	// DefaultMaxConns bounds concurrent connections, and with MaxLine the
	// memory they can pin.
	DefaultMaxConns = 64
)

// socketName is the socket's name inside its private directory.
const socketName = "socket"

// Server answers approval requests on a unix socket in a fresh private
// directory. Requests are queued and handed to the Prompter one at a time;
// requests whose key was approved "for session" are approved without
// asking for the Server's lifetime.
type Server struct {
	prompter approval.Prompter

	// ReadTimeout, WriteTimeout and MaxConns default to the Default...
	// constants when zero. Set them before Serve.
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	MaxConns     int

	ln   *net.UnixListener
	dir  string
	path string

	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	queue  []*pending
	grants map[string]bool
	served bool
	// wake has room for one token: enqueue leaves one, the prompt loop
	// takes it, so no wake-up is lost and enqueue never blocks.
	wake chan struct{}

	serveDone chan struct{}
	wg        sync.WaitGroup // connection handlers and the prompt loop
	closeOnce sync.Once
	closeErr  error
}

// pending is a request waiting for the person.
type pending struct {
	req *approval.Request
	// ctx ends when the client goes away or the server closes; such a
	// request is skipped, or its prompt withdrawn.
	ctx  context.Context
	done chan result
}

type result struct {
	ans approval.Answer
	by  string
	err error
}

// Listen creates a directory only the user can enter (0700) under base
// ($XDG_RUNTIME_DIR or the temporary directory when base is empty) and a
// socket in it (0600). The directory is what command sandboxes hide; the
// Prompter asks the person. Call Serve to answer, Close to remove it.
func Listen(base string, p approval.Prompter) (*Server, error) {
	if p == nil {
		return nil, errors.New("supervisor: no prompter")
	}
	if base == "" {
		base = sockdir.Base(os.Getenv)
	}
	dir, err := sockdir.Make(base, "guardrun-", socketName)
	if err != nil {
		return nil, fmt.Errorf("supervisor: socket directory: %w", err)
	}
	path := filepath.Join(dir, socketName)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("supervisor: listen: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("supervisor: socket: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		prompter: p, ln: ln, dir: dir, path: path, ctx: ctx, cancel: cancel,
		grants: map[string]bool{}, wake: make(chan struct{}, 1), serveDone: make(chan struct{}),
	}, nil
}

// Path is the socket, for GUARDRUN_SOCKET.
func (s *Server) Path() string { return s.path }

// Dir is the socket's private directory, which sandboxes must hide.
func (s *Server) Dir() string { return s.dir }

// Serve accepts connections until Close. Each connection gets its own
// goroutine, a deadline for its request and a size limit, so no client
// can stall another or the prompt queue.
func (s *Server) Serve() error {
	s.mu.Lock()
	if s.served || s.ctx.Err() != nil {
		s.mu.Unlock()
		return errors.New("supervisor: Serve called twice or after Close")
	}
	s.served = true
	s.wg.Add(1)
	s.mu.Unlock()
	defer close(s.serveDone)
	go s.promptLoop()

	readTimeout, maxConns := s.ReadTimeout, s.MaxConns
	if readTimeout <= 0 {
		readTimeout = DefaultReadTimeout
	}
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	slots := make(chan struct{}, maxConns)
	for {
		conn, err := s.ln.AcceptUnix()
		if err != nil {
			if s.ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				// Out of descriptors: wait for handlers to finish.
				time.Sleep(20 * time.Millisecond)
				continue
			}
			return fmt.Errorf("supervisor: accept: %w", err)
		}
		select {
		case slots <- struct{}{}:
		default:
			s.reply(conn, Reply{Error: "the supervisor is busy: too many connections"})
			conn.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-slots }()
			s.handle(conn, readTimeout)
		}()
	}
}

func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// Close stops accepting, withdraws every waiting request (their clients
// get an error and refuse to run), waits for the handlers and the
// Prompter to return, and removes the socket and its directory. The
// Prompter must return when its context ends.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		s.closeErr = s.ln.Close()
		s.mu.Lock()
		served := s.served
		s.mu.Unlock()
		if served {
			<-s.serveDone
		}
		s.wg.Wait()
		if err := os.RemoveAll(s.dir); err != nil && s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}

// handle serves one connection: one request, one reply.
func (s *Server) handle(conn *net.UnixConn, readTimeout time.Duration) {
	defer conn.Close()
	// Whatever a client sends, it must not take the supervisor down: the
	// person's terminal is in raw mode and only a clean exit restores it.
	defer func() {
		if r := recover(); r != nil {
			s.reply(conn, Reply{Error: "internal error"})
		}
	}()
	pid, ok := peerAllowed(conn)
	if !ok {
		return
	}
	conn.SetReadDeadline(time.Now().Add(readTimeout))
	br := bufio.NewReaderSize(conn, 64<<10)
	line, err := ReadLine(br, MaxLine)
	if err != nil {
		var ne net.Error
		switch {
		case errors.Is(err, ErrTooLarge):
			s.reply(conn, Reply{Error: fmt.Sprintf("request larger than %d bytes", MaxLine)})
		case errors.Is(err, ErrTruncated):
			s.reply(conn, Reply{Error: "request truncated"})
		case errors.As(err, &ne) && ne.Timeout():
			s.reply(conn, Reply{Error: "request not sent in time"})
		}
		return
	}
	req, err := DecodeAsk(line)
	if err != nil {
		s.reply(conn, Reply{Error: err.Error()})
		return
	}
	if br.Buffered() > 0 {
		s.reply(conn, Reply{Error: "one request per connection"})
		return
	}
	conn.SetReadDeadline(time.Time{})

	// The client says nothing more until it has its answer: anything it
	// sends, or its hanging up, withdraws the request.
	ctx, cancel := context.WithCancel(context.WithValue(s.ctx, askerKey{}, describePeer(pid)))
	defer cancel()
	go func() {
		var b [1]byte
		conn.Read(b[:]) // returns when the client talks, hangs up, or conn closes
		cancel()
	}()

	rep := s.decide(ctx, req)
	if ctx.Err() != nil && s.ctx.Err() == nil {
		return // the client is gone; nobody to tell
	}
	s.reply(conn, rep)
}

func (s *Server) reply(conn net.Conn, r Reply) {
	wt := s.WriteTimeout
	if wt <= 0 {
		wt = DefaultWriteTimeout
	}
	conn.SetWriteDeadline(time.Now().Add(wt))
	conn.Write(EncodeReply(r))
}

// decide answers one request: from session memory, or by queueing it for
// the person.
func (s *Server) decide(ctx context.Context, req *approval.Request) Reply {
	if s.granted(req.Key) {
		return Reply{Approve: true, Session: true, By: "session"}
	}
	p := &pending{req: req, ctx: ctx, done: make(chan result, 1)}
	s.mu.Lock()
	s.queue = append(s.queue, p)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	select {
	case res := <-p.done:
		if res.err != nil {
			if ctx.Err() != nil {
				return Reply{Error: "withdrawn: " + s.why()}
			}
			return Reply{Error: res.err.Error()}
		}
		return Reply{Approve: res.ans.Approve, Session: res.ans.Session, Note: res.ans.Note, By: res.by}
	case <-ctx.Done():
		return Reply{Error: "withdrawn: " + s.why()}
	}
}

func (s *Server) why() string {
	if s.ctx.Err() != nil {
		return "the supervisor is shutting down"
	}
	return "the client went away"
}

// promptLoop is the one goroutine that talks to the Prompter, so the
// person sees one request at a time, in arrival order. It ends with the
// server's context.
func (s *Server) promptLoop() {
	defer s.wg.Done()
	shown := 0 // prompts since the queue was last empty
	for {
		p, _ := s.next()
		if p == nil {
			select {
			case <-s.wake:
				continue
			case <-s.ctx.Done():
				return
			}
		}
		// An earlier answer in the queue may have granted this one.
		if s.granted(p.req.Key) {
			p.done <- result{ans: approval.Answer{Approve: true, Session: true}, by: "session"}
			continue
		}
		shown++
		ans, err := s.ask(p, shown)
		if err == nil && ans.Approve && ans.Session && p.req.Key != "" {
			s.mu.Lock()
			s.grants[p.req.Key] = true
			s.mu.Unlock()
		}
		p.done <- result{ans: ans, by: "person", err: err}
		if err == nil && ans.DenyAll {
			s.denyWaiting(ans.Note)
		}
		if s.waitingNow() == 0 {
			shown = 0
		}
	}
}

// denyWaiting refuses every request in the queue, as the person asked
// with N, with their note.
func (s *Server) denyWaiting(note string) {
	if note == "" {
		note = "denied together with every request waiting"
	}
	s.mu.Lock()
	q := s.queue
	s.queue = nil
	s.mu.Unlock()
	for _, p := range q {
		p.done <- result{ans: approval.Answer{Note: note}, by: "person"}
	}
}

// ask calls the Prompter. A panic there (a request no test foresaw)
// refuses that request instead of ending the supervisor with the
// person's terminal in raw mode.
func (s *Server) ask(p *pending, position int) (a approval.Answer, err error) {
	defer func() {
		if r := recover(); r != nil {
			a, err = approval.Answer{}, fmt.Errorf("internal error while asking: %v", r)
		}
	}()
	ctx := context.WithValue(p.ctx, queueKey{}, queueInfo{position: position, waiting: s.waitingNow})
	return s.prompter.Prompt(ctx, p.req)
}

// next takes the first request whose client is still there, and says how
// many live ones wait behind it.
func (s *Server) next() (*pending, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.queue) > 0 {
		p := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		if p.ctx.Err() != nil {
			p.done <- result{err: p.ctx.Err()}
			continue
		}
		behind := 0
		for _, q := range s.queue {
			if q.ctx.Err() == nil {
				behind++
			}
		}
		return p, behind
	}
	s.queue = nil
	return nil, 0
}

func (s *Server) granted(key string) bool {
	if key == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grants[key]
}

// queueInfo is where a request stands in the queue, for its prompt.
type queueInfo struct {
	// position counts the prompts shown since the queue was last empty:
	// 1 for a request asked alone.
	position int
	// waiting is how many live requests wait behind it now.
	waiting func() int
}

type queueKey struct{}
type askerKey struct{}

func queueOf(ctx context.Context) queueInfo {
	q, _ := ctx.Value(queueKey{}).(queueInfo)
	if q.waiting == nil {
		q.waiting = func() int { return 0 }
	}
	return q
}

// askerOf is who asked, as the kernel told the supervisor: "asked by pid
// N: argv", sanitized; empty when unknown.
func askerOf(ctx context.Context) string {
	s, _ := ctx.Value(askerKey{}).(string)
	return s
}

// Waiting is, inside a Server's call to its Prompter, how many more
// requests wait behind the one being asked.
func Waiting(ctx context.Context) int {
	return queueOf(ctx).waiting()
}

// waitingNow counts the live requests in the queue.
func (s *Server) waitingNow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, q := range s.queue {
		if q.ctx.Err() == nil {
			n++
		}
	}
	return n
}
