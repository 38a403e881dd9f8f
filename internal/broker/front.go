package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/guardrun/guardrun/internal/sys/ipc"
)

// Front is a front in another process, attached over the socket: it
// sees every pending request and its resolution, in order, on Events,
// and answers with Answer.
type Front struct {
	conn *ipc.Conn
	// Events carries the requests that were waiting when it attached,
	// then each change; it is closed when the connection ends.
	Events chan Event

	mu     sync.Mutex
	closed bool
}

// frontBuffer bounds the changes a front may leave unread before it is
// disconnected.
const frontBuffer = 4096

// Attach attaches a front named name to the broker at path, with the
// broker's front token.
func Attach(ctx context.Context, path, name, token string) (*Front, error) {
	f := &Front{Events: make(chan Event, frontBuffer)}
	conn, err := ipc.Dial(ctx, path, Protocol, ipc.Handler{Notice: f.notice})
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	f.conn = conn
	go func() {
		<-conn.Done()
		f.mu.Lock()
		f.closed = true
		close(f.Events)
		f.mu.Unlock()
	}()
	if err := conn.Call(ctx, typeAttach, attachBody{Name: name, Token: token}, &attachReply{}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("broker: %w", err)
	}
	return f, nil
}

func (f *Front) notice(m *ipc.Message) error {
	var ev Event
	switch m.Type {
	case typePending:
		var p Pending
		if err := m.Decode(&p); err != nil {
			return err
		}
		ev.Pending = &p
	case typeResolved:
		var r Resolved
		if err := m.Decode(&r); err != nil {
			return err
		}
		ev.Resolved = &r
	default:
		return fmt.Errorf("unexpected %s notice", m.Type)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	select {
	case f.Events <- ev:
		return nil
	default:
		return errors.New("the front fell behind")
	}
}

// Answer answers request id; an answer for a request answered already
// (anywhere) or withdrawn is refused.
func (f *Front) Answer(ctx context.Context, id string, a Answer) error {
	err := f.conn.Call(ctx, typeAnswer, AnswerBody{ID: id, Answer: a}, &empty{})
	var re *ipc.RequestError
	if errors.As(err, &re) {
		return errors.New(re.Msg)
	}
	return err
}

// Close detaches the front; what it did not answer stays pending.
func (f *Front) Close() error { return f.conn.Close() }
