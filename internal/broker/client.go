package broker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/sys/ipc"
)

// Client asks the person's broker. It is an approval.Prompter: the
// prompter chain of internal/request uses it when a broker runs, and any
// other front that needs a person (an MCP server whose client cannot
// ask) can use it as is, or call Ask. Any number of Prompts may wait on
// one Client at once.
type Client struct {
	path string
	conn *ipc.Conn
	// Via marks every request as relayed ("supervisor"); empty for a
	// process asking for itself.
	Via string
}

// Dial connects to the broker at path (SocketPath). An error means no
// broker of this user answers there.
func Dial(ctx context.Context, path string) (*Client, error) {
	conn, err := ipc.Dial(ctx, path, Protocol, ipc.Handler{})
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	return &Client{path: path, conn: conn}, nil
}

// Close ends the connection; Prompts still waiting are withdrawn.
func (c *Client) Close() error { return c.conn.Close() }

// Prompt posts r to the broker and waits, as long as the person takes,
// for the first answer any front gives; cancelling ctx withdraws it.
// A broker that goes away or refuses the request is an
// *approval.NoAnswerError: the gate refuses the request, never runs it.
func (c *Client) Prompt(ctx context.Context, r *approval.Request) (approval.Answer, error) {
	return c.PromptFor(ctx, r, os.Getpid(), os.Args)
}

// PromptFor is Prompt for a request that process pid (argv command)
// made, as a relay says.
func (c *Client) PromptFor(ctx context.Context, r *approval.Request, pid int, command []string) (approval.Answer, error) {
	a := RequestOf(r)
	a.PID, a.Command, a.Via = pid, command, c.Via
	var rep Reply
	err := c.conn.Call(ctx, typeAsk, &a, &rep)
	if err != nil {
		if ctx.Err() != nil {
			return approval.Answer{}, ctx.Err()
		}
		var re *ipc.RequestError
		if errors.As(err, &re) {
			return approval.Answer{}, &approval.NoAnswerError{By: "broker", Why: "the approval broker refused the request (" + re.Msg + ")"}
		}
		return approval.Answer{}, &approval.NoAnswerError{By: "broker", Why: "the approval broker went away before anyone answered"}
	}
	if rep.By != "person" {
		return approval.Answer{}, &approval.NoAnswerError{By: "broker", Why: fmt.Sprintf("the approval broker answered for %q, not a person", rep.By)}
	}
	return approval.Answer{Approve: rep.Approve, Session: rep.Session && rep.Approve, Always: rep.Always && rep.Approve, Note: rep.Note, Front: rep.Front}, nil
}

// RequestOf is the presentation of r that fronts show.
func RequestOf(r *approval.Request) Request {
	a := Request{
		Display: r.Display, Cwd: r.Cwd, Sandbox: r.Sandbox, Detail: r.Detail, Summary: r.Summary,
		CanRemember: r.Key != "", Always: r.Always, Project: r.Project,
	}
	if r.Decision != nil {
		a.Parts = r.Decision.Parts
	}
	if len(a.Detail) > maxDetail {
		cut := strings.LastIndexByte(a.Detail[:maxDetail], '\n') + 1
		a.Detail = a.Detail[:cut] + fmt.Sprintf("… (%d more bytes not shown here)\n", len(r.Detail)-cut)
	}
	return a
}
