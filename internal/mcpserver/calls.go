package mcpserver

import (
	"context"
	"sync"
)

// calls are the tool calls running, by client session, so that a call
// ends with its session: the SDK cancels a handler's context when the
// client cancels the call or closes stdio, but not when an HTTP client
// deletes its session (it waits for the handlers to return), and a
// script waiting in a sandbox would then keep the session open until
// its own timeout.
type calls struct {
	mu        sync.Mutex
	bySession map[string]map[*call]bool
}

type call struct{ cancel context.CancelFunc }

func newCalls() *calls { return &calls{bySession: map[string]map[*call]bool{}} }

// start registers a call of session id; its context ends with ctx, or
// when the session's calls are cancelled. end, which the caller defers,
// releases it.
func (c *calls) start(ctx context.Context, id string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	k := &call{cancel: cancel}
	c.mu.Lock()
	if c.bySession[id] == nil {
		c.bySession[id] = map[*call]bool{}
	}
	c.bySession[id][k] = true
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		delete(c.bySession[id], k)
		if len(c.bySession[id]) == 0 {
			delete(c.bySession, id)
		}
		c.mu.Unlock()
		cancel()
	}
}

// cancelSession cancels every call of session id.
func (c *calls) cancelSession(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.bySession[id] {
		k.cancel()
	}
}

// cancelAll cancels every call.
func (c *calls) cancelAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ks := range c.bySession {
		for k := range ks {
			k.cancel()
		}
	}
}
