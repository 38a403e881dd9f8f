package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sort"
	"sync"
	"time"
)

// Broker holds the requests waiting for the person and the fronts that
// show them. Its methods are safe for concurrent use; a Server puts it
// on the socket, and in-process fronts (the web page) call it directly.
type Broker struct {
	mu      sync.Mutex
	pending map[string]*pending
	// gone remembers the last requests that left, so that a late answer
	// is told why it was refused.
	gone     map[string]string
	goneList []string
	subs     map[*Subscription]struct{}
	seq      uint64
	prefix   string
	closed   bool
	quit     chan struct{} // closed by Close
}

// pending is one waiting request.
type pending struct {
	p    Pending
	seq  uint64
	done chan Reply // has room for the one answer
}

// maxGone bounds Broker.gone.
const maxGone = 4096

// New is an empty broker.
func New() *Broker {
	var b [4]byte
	rand.Read(b[:])
	return &Broker{
		pending: map[string]*pending{}, gone: map[string]string{}, subs: map[*Subscription]struct{}{},
		prefix: hex.EncodeToString(b[:]), quit: make(chan struct{}),
	}
}

// ErrClosed is Ask's error once the broker is closing.
var ErrClosed = errors.New("the approval broker is shutting down")

// Ask puts a request to every front and waits for the first answer, as
// long as the person takes; when ctx ends first (the asker went away)
// the request is withdrawn from every front.
func (b *Broker) Ask(ctx context.Context, a Request, asker string, askerPID int) (Reply, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return Reply{}, ErrClosed
	}
	b.seq++
	p := &pending{seq: b.seq, done: make(chan Reply, 1)}
	p.p = Pending{ID: b.prefix + "-" + itoa(b.seq), Request: a, Asker: asker, AskerPID: askerPID, Received: time.Now().UTC()}
	b.pending[p.p.ID] = p
	b.broadcast(Event{Pending: &p.p})
	b.mu.Unlock()

	select {
	case r := <-p.done:
		return r, nil
	case <-ctx.Done():
	case <-b.quit:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case r := <-p.done:
		// Answered while the asker left: the answer stands for the
		// fronts (it was given), the asker hears nothing.
		return r, nil
	default:
	}
	how := "withdrawn"
	if b.closed {
		how = "closed"
	}
	b.leave(p.p.ID, how)
	b.broadcast(Event{Resolved: &Resolved{ID: p.p.ID, How: "withdrawn"}})
	if b.closed {
		return Reply{}, ErrClosed
	}
	return Reply{}, ctx.Err()
}

// Answer gives the answer of the front named front to request id. Only
// the first answer to a request is taken: a later one is ErrAnswered,
// one for a request its asker withdrew ErrWithdrawn.
func (b *Broker) Answer(id string, a Answer, front string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.pending[id]
	if p == nil {
		switch b.gone[id] {
		case "answered":
			return ErrAnswered
		case "withdrawn", "closed":
			return ErrWithdrawn
		}
		return ErrUnknown
	}
	if err := checkAnswer(&p.p, a); err != nil {
		return err
	}
	if !a.Approve {
		a.Session, a.Always = false, false
	}
	p.done <- Reply{Approve: a.Approve, Session: a.Session, Always: a.Always, Note: a.Note, By: "person", Front: front}
	b.leave(id, "answered")
	b.broadcast(Event{Resolved: &Resolved{ID: id, How: "answered", Front: front, Approve: a.Approve}})
	return nil
}

// leave takes id off the pending list; b.mu is held.
func (b *Broker) leave(id, how string) {
	delete(b.pending, id)
	b.gone[id] = how
	b.goneList = append(b.goneList, id)
	if len(b.goneList) > maxGone {
		delete(b.gone, b.goneList[0])
		b.goneList = b.goneList[1:]
	}
}

// Pending is what waits now, oldest first.
func (b *Broker) Pending() []Pending {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.snapshot()
}

func (b *Broker) snapshot() []Pending {
	ps := make([]*pending, 0, len(b.pending))
	for _, p := range b.pending {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].seq < ps[j].seq })
	out := make([]Pending, len(ps))
	for i, p := range ps {
		out[i] = p.p
	}
	return out
}

// Close refuses new requests and fails the waiting ones (their askers
// refuse to run them). Subscriptions end.
func (b *Broker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	close(b.quit)
	for s := range b.subs {
		s.end()
	}
	b.subs = map[*Subscription]struct{}{}
}

// Event is a change of the pending list: one of its fields is set.
type Event struct {
	Pending  *Pending
	Resolved *Resolved
}

// Subscription is a front's view of the broker: the requests waiting
// when it subscribed, then every change, in order.
type Subscription struct {
	// Name is the front's name, given with answers.
	Name string
	// C carries the changes; it is closed when the subscription ends
	// (Cancel, the broker closing, or a front too slow to keep up, which
	// then subscribes again to catch up).
	C     chan Event
	b     *Broker
	ended bool
}

// subBuffer is how many changes a front may fall behind by before its
// subscription ends.
const subBuffer = 1024

// Subscribe attaches a front named name: the requests waiting now, and
// a Subscription whose C carries every change after them.
func (b *Broker) Subscribe(name string) ([]Pending, *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &Subscription{Name: name, C: make(chan Event, subBuffer), b: b}
	if b.closed {
		s.end()
		return nil, s
	}
	b.subs[s] = struct{}{}
	return b.snapshot(), s
}

// Cancel detaches the front. Requests stay pending for the others.
func (s *Subscription) Cancel() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	delete(s.b.subs, s)
	s.end()
}

func (s *Subscription) end() {
	if !s.ended {
		s.ended = true
		close(s.C)
	}
}

// broadcast sends ev to every front; b.mu is held. A front whose buffer
// is full is detached rather than waited for.
func (b *Broker) broadcast(ev Event) {
	for s := range b.subs {
		select {
		case s.C <- ev:
		default:
			delete(b.subs, s)
			s.end()
		}
	}
}

func itoa(n uint64) string {
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(buf[i:])
		}
	}
}
