package supervisor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/guardrun/guardrun/approval"
)

// dialTimeout bounds connecting to a supervisor; a live one accepts at
// once.
const dialTimeout = 2 * time.Second

// Client asks a supervisor over its socket. It is the approval.Prompter of
// a guardrun process started under `guardrun supervise`, however deep: a
// child of a child inherits GUARDRUN_SOCKET and asks the same person, who
// sees one queue and grants that hold for all of them.
type Client struct {
	path string

	mu sync.Mutex
	// conn is the connection Dial made, used by the first Prompt; later
	// prompts dial again (one request per connection).
	conn net.Conn
}

// Dial connects to the supervisor at path. An error means no supervisor
// answers there: the socket is gone, stale, or not a socket.
func Dial(path string) (*Client, error) {
	conn, err := net.DialTimeout("unix", path, dialTimeout)
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
	line, err := EncodeAsk(r)
	if err != nil {
		return approval.Answer{}, fmt.Errorf("supervisor: %w", err)
	}
	c.mu.Lock()
	conn := c.conn
	c.conn = nil
	c.mu.Unlock()
	if conn == nil {
		var d net.Dialer
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		conn, err = d.DialContext(dctx, "unix", c.path)
		cancel()
		if err != nil {
			return approval.Answer{}, fmt.Errorf("supervisor: %w", err)
		}
	}
	defer conn.Close()
	// The person may take minutes to answer; only ctx ends the wait.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(line); err != nil {
		return approval.Answer{}, c.fail(ctx, "send", err)
	}
	conn.SetWriteDeadline(time.Time{})
	reply, err := ReadLine(bufio.NewReaderSize(conn, 4096), maxReply)
	if err != nil {
		return approval.Answer{}, c.fail(ctx, "read answer", err)
	}
	rep, err := DecodeReply(reply)
	if err != nil {
		return approval.Answer{}, fmt.Errorf("supervisor: %w", err)
	}
	if rep.Error != "" {
		return approval.Answer{}, fmt.Errorf("supervisor refused the request: %s", rep.Error)
	}
	a := approval.Answer{Approve: rep.Approve, Session: rep.Session, Note: rep.Note}
	if rep.By == "session" {
		a.By = "session"
	}
	return a, nil
}

func (c *Client) fail(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, ErrTruncated) || errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("supervisor at %s went away before answering", c.path)
	}
	return fmt.Errorf("supervisor: %s: %w", what, err)
}
