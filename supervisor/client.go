package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/sys/ipc"
)

// Client asks a supervisor over its socket. It is the approval.Prompter of
// a guardrun process started under `guardrun supervise`, however deep: a
// child of a child inherits GUARDRUN_SOCKET and asks the same person, who
// sees one queue and grants that hold for all of them.
type Client struct {
	path string

	mu sync.Mutex
	// conn is the connection Dial made, used by the first Prompt; later
	// prompts dial again (one request per connection).
	conn *ipc.Conn
}

// Dial connects to the supervisor at path. An error means no supervisor
// of this user answers there: the socket is gone, stale, not a socket,
// or another user's.
func Dial(path string) (*Client, error) {
	conn, err := ipc.Dial(context.Background(), path, Protocol, ipc.Handler{})
	if err != nil {
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	return &Client{path: path, conn: conn}, nil
}

// KeepsSessions reports that the supervisor remembers "approve for
// session" grants itself, for its lifetime, so the caller should not
// consult or fill its own session store.
func (c *Client) KeepsSessions() bool { return true }

// Close releases a connection Dial made and Prompt did not use.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn = nil
	return err
}

// Prompt sends the request and waits, as long as the person takes, for
// the answer. Cancelling ctx withdraws the request.
func (c *Client) Prompt(ctx context.Context, r *approval.Request) (approval.Answer, error) {
	c.mu.Lock()
	conn := c.conn
	c.conn = nil
	c.mu.Unlock()
	if conn == nil {
		var err error
		if conn, err = ipc.Dial(ctx, c.path, Protocol, ipc.Handler{}); err != nil {
			return approval.Answer{}, fmt.Errorf("supervisor: %w", err)
		}
	}
	defer conn.Close()
	// The person may take minutes to answer; only ctx ends the wait.
	var rep reply
	if err := conn.Call(ctx, typeAsk, encodeAsk(r), &rep); err != nil {
		return approval.Answer{}, c.fail(ctx, err)
	}
	if err := checkReply(rep); err != nil {
		return approval.Answer{}, fmt.Errorf("supervisor: %w", err)
	}
	if rep.NoPerson != "" {
		return approval.Answer{}, &approval.NoPersonError{Why: rep.NoPerson, Hint: "start guardrun supervise on a terminal"}
	}
	a := approval.Answer{Approve: rep.Approve, Session: rep.Session, Note: rep.Note, Always: rep.Always && rep.Approve, Front: rep.Front}
	if rep.By == "session" {
		a.By = "session"
	}
	return a, nil
}

func (c *Client) fail(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var re *ipc.RequestError
	if errors.As(err, &re) {
		return fmt.Errorf("supervisor refused the request: %s", re.Msg)
	}
	if errors.Is(err, ipc.ErrClosed) {
		return fmt.Errorf("supervisor at %s went away before answering", c.path)
	}
	return fmt.Errorf("supervisor: %w", err)
}
