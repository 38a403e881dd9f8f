package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/sys/ipc"
)

// Defaults of a Server's limits.
const (
	// DefaultReadTimeout is how long a client has, from connecting, to
	// send its request. A live guardrun sends at once; this only stops
	// stalled or hostile clients from holding a slot.
	DefaultReadTimeout = 10 * time.Second
	// DefaultMaxConns bounds concurrent connections, and with
	// MaxMessage the memory they can pin.
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

	// ReadTimeout and MaxConns default to the Default... constants
	// when zero. Set them before Serve.
	ReadTimeout time.Duration
	MaxConns    int
	// Relay, when set, is the person's approval broker: requests are
	// offered there too, and the first answer counts (see Relay).
	Relay Relay

	ln  *ipc.Listener
	srv ipc.Server

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
	wg        sync.WaitGroup // the prompt loop
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
	ln, err := ipc.ListenPrivate(base, "guardrun-", socketName)
	if err != nil {
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		prompter: p, ln: ln, ctx: ctx, cancel: cancel,
		grants: map[string]bool{}, wake: make(chan struct{}, 1), serveDone: make(chan struct{}),
	}, nil
}

// Path is the socket, for GUARDRUN_SOCKET.
func (s *Server) Path() string { return s.ln.Path() }

// Serve accepts connections until Close. Each connection gets its own
// goroutine, a deadline for its request and a size limit, so no client
// can stall another or the prompt queue.
func (s *Server) Serve() error {
	s.mu.Lock()
	if s.served || s.ctx.Err() != nil {
		s.mu.Unlock()
		return errors.New("supervisor: Serve called twice or after Close")
	}
	readTimeout := s.ReadTimeout
	if readTimeout <= 0 {
		readTimeout = DefaultReadTimeout
	}
	maxConns := s.MaxConns
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	s.srv = ipc.Server{Protocol: Protocol, MaxConns: maxConns, HelloTimeout: readTimeout,
		Handle: func(ctx context.Context, c *ipc.Conn) { s.handle(ctx, c, readTimeout) }}
	s.served = true
	s.wg.Add(1)
	s.mu.Unlock()
	defer close(s.serveDone)
	go s.promptLoop()

	if err := s.srv.Serve(s.ln); err != nil && s.ctx.Err() == nil {
		return fmt.Errorf("supervisor: %w", err)
	}
	return nil
}

// Close stops accepting, withdraws every waiting request (their clients
// get an error and refuse to run), waits for the handlers and the
// Prompter to return, and removes the socket and its directory. The
// Prompter must return when its context ends.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		s.mu.Lock()
		served := s.served
		s.mu.Unlock()
		if served {
			s.closeErr = s.srv.Close()
			<-s.serveDone
		}
		s.wg.Wait()
		if err := s.ln.Close(); err != nil && s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}

// handle serves one connection: its request, one reply. A client that
// has sent no request within readTimeout of its hello loses the
// connection.
func (s *Server) handle(ctx context.Context, c *ipc.Conn, readTimeout time.Duration) {
	asker := describePeer(c.Peer().PID)
	var asked atomic.Bool
	idle := time.AfterFunc(readTimeout, func() {
		if !asked.Load() {
			c.Close()
		}
	})
	defer idle.Stop()
	c.Serve(ctx, ipc.Handler{Request: func(ctx context.Context, m *ipc.Message) (any, error) {
		asked.Store(true)
		req, err := decodeAsk(m)
		if err != nil {
			return nil, err
		}
		// The request ends when its client withdraws it or goes away
		// (ctx), or the supervisor closes.
		ctx, cancel := context.WithCancel(context.WithValue(context.WithValue(ctx, askerKey{}, asker), peerKey{}, c.Peer().PID))
		defer cancel()
		stop := context.AfterFunc(s.ctx, cancel)
		defer stop()
		return s.decide(ctx, req)
	}})
}

// decide answers one request: from session memory, or by queueing it for
// the person.
func (s *Server) decide(ctx context.Context, req *approval.Request) (reply, error) {
	if s.granted(req.Key) {
		return reply{Approve: true, Session: true, By: "session"}, nil
	}
	// pctx ends the terminal's prompt when the relay's broker answered
	// first, and the relay's request when the terminal did.
	pctx, withdraw := context.WithCancelCause(ctx)
	defer withdraw(nil)
	p := &pending{req: req, ctx: pctx, done: make(chan result, 1)}
	s.mu.Lock()
	s.queue = append(s.queue, p)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	var relayed chan result
	if s.Relay != nil {
		relayed = make(chan result, 1)
		pid, _ := ctx.Value(peerKey{}).(int)
		go func() {
			a, err := s.Relay.PromptFor(pctx, req, pid, peerArgv(pid))
			relayed <- result{ans: a, by: "person", err: err}
		}()
	}
	done := p.done
	for {
		select {
		case res := <-done:
			if res.err != nil {
				if ctx.Err() != nil {
					return reply{}, errors.New("withdrawn: " + s.why())
				}
				if errors.Is(res.err, approval.ErrNoPerson) {
					if relayed != nil {
						// Nobody at the terminal: the broker's fronts
						// may still answer.
						done = nil
						continue
					}
					return reply{NoPerson: res.err.Error()}, nil
				}
				return reply{}, res.err
			}
			front := ""
			if res.by == "person" {
				front = frontName
			}
			return reply{Approve: res.ans.Approve, Session: res.ans.Session, Always: res.ans.Always, Note: res.ans.Note, By: res.by, Front: front}, nil
		case res := <-relayed:
			relayed = nil
			if res.err != nil {
				if done == nil {
					// Nobody at the terminal, and the broker went away
					// or refused: nobody can be asked.
					return reply{NoPerson: "no terminal to ask on, and the approval broker did not answer: " + res.err.Error()}, nil
				}
				// The broker went away or refused: the terminal still
				// asks.
				continue
			}
			withdraw(errAnsweredElsewhere)
			a := res.ans
			if a.Approve && a.Session && req.Key != "" {
				s.mu.Lock()
				s.grants[req.Key] = true
				s.mu.Unlock()
			}
			return reply{Approve: a.Approve, Session: a.Session && a.Approve, Always: a.Always && a.Approve, Note: a.Note, By: "person", Front: a.Front}, nil
		case <-ctx.Done():
			return reply{}, errors.New("withdrawn: " + s.why())
		}
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
