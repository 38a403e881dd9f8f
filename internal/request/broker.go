package request

import (
	"context"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/broker"
	"github.com/guardrun/guardrun/internal/config"
)

// brokerPrompter is the person's approval broker (`guardrun web`) when
// one answers at its well-known socket (broker.SocketPath), else nil.
// It is asked before the terminal: it offers the request everywhere the
// person may be looking, the terminal's own front included.
func brokerPrompter(e *config.Env) (approval.Prompter, func()) {
	c, err := broker.Dial(context.Background(), broker.SocketPath(e))
	if err != nil {
		return nil, nil
	}
	return c, func() { c.Close() }
}
