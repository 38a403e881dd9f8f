package supervisor

import (
	"context"
	"errors"

	"github.com/guardrun/guardrun/approval"
)

// Relay is the person's approval broker (`guardrun web`), as a
// supervisor attaches to it: each request the agent's commands make is
// offered there as well as on the supervisor's terminal, and the first
// answer in either place is the one given (the other is withdrawn).
// internal/broker's Client is one.
type Relay interface {
	// PromptFor asks for the request that process pid (argv command)
	// made; cancelling ctx withdraws it.
	PromptFor(ctx context.Context, r *approval.Request, pid int, command []string) (approval.Answer, error)
}

// errAnsweredElsewhere withdraws a terminal prompt whose request the
// relay's broker answered.
var errAnsweredElsewhere = errors.New("answered on another of the person's fronts")

// peerKey carries the asking process's pid to decide.
type peerKey struct{}

// frontName is where the supervisor's own terminal answers, in the
// audit's front.
const frontName = "supervisor"
