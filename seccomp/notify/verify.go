package notify

import (
	"context"
	"sync"

	"github.com/guardrun/guardrun/sandbox"
)

// Verify is what a verified request runs under: the prediction of what
// it may run and change, and who is asked about a call outside it. One
// Verify serves one request; after the command it holds every call that
// was held and its answer.
type Verify struct {
	// Prediction is what the request may do (sandbox.Prediction).
	Prediction *sandbox.Prediction
	// Hold is asked about each exec or write outside the prediction
	// while the caller waits in the call (the approval gate: a person,
	// or a refusal in strict mode); true lets the call be made. ctx ends
	// when the caller stops waiting. Nil refuses every one.
	Hold func(ctx context.Context, c sandbox.HeldCall) (bool, error)
	// Quote shows an argv in the records (nil: sandbox's sh quoting).
	Quote func(argv []string) string

	mu   sync.Mutex
	held []sandbox.HeldCall
}

// Held is every call that was held, in order, with its answer.
func (v *Verify) Held() []sandbox.HeldCall {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]sandbox.HeldCall(nil), v.held...)
}

// Refused is the first held call that was refused, if one was: the
// request then ends refused (exit 77) with its Line.
func (v *Verify) Refused() (sandbox.HeldCall, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, h := range v.held {
		if !h.Allowed {
			return h, true
		}
	}
	return sandbox.HeldCall{}, false
}

func (v *Verify) record(h sandbox.HeldCall) {
	v.mu.Lock()
	v.held = append(v.held, h)
	v.mu.Unlock()
}

func (v *Verify) quote(argv []string) string {
	if v.Quote != nil {
		return v.Quote(argv)
	}
	return sandbox.QuoteSh(argv)
}
