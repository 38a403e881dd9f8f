package supervisor

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/sys/ipc"
	"github.com/guardrun/guardrun/rules"
)

// The protocol on the supervisor's socket: package ipc's messages, in
// Protocol, one request per connection.
//
//	client → {"type":"ask","id":1,"body":{"display":..., "cwd":..., "sandbox":...,
//	          "detail":..., "key":..., "summary":..., "parts":[...]}}
//	server ← {"reply":1,"body":{"approve":true,"session":false,"always":false,"note":"","by":"person","front":"supervisor"}}
//	server ← {"reply":1,"error":"..."}     the request was not shown
//	server ← {"reply":1,"body":{"approve":false,"no_person":"..."}}  nobody can be asked (why)
//
// (after the hellos). The client keeps the connection open until the
// reply arrives; closing it, or cancelling the request, withdraws it.
// parts are rules.Part values as `guardrun explain --json` prints them.
// Keep in sync: Protocol's Version changes with any field.

// Protocol is the supervisor socket's protocol.
var Protocol = ipc.Protocol{Name: "guardrun-supervisor", Version: 4, MaxMessage: MaxMessage}

// MaxMessage bounds one message. Longer requests are refused unread, so
// a client cannot make the supervisor buffer more.
const MaxMessage = 1 << 20

// typeAsk is the request's type.
const typeAsk = "ask"

// wireRequest carries an approval.Request; its Decision is reduced to the
// parts, which is all a prompt shows.
type wireRequest struct {
	Display string       `json:"display"`
	Cwd     string       `json:"cwd"`
	Sandbox string       `json:"sandbox"`
	Detail  string       `json:"detail,omitempty"`
	Key     string       `json:"key,omitempty"`
	Summary string       `json:"summary,omitempty"`
	Parts   []rules.Part `json:"parts"`
	// Always and Project are the rule "always in this project" offers
	// (approval.Request).
	Always  string `json:"always,omitempty"`
	Project string `json:"project,omitempty"`
}

// reply is the supervisor's answer to one request.
type reply struct {
	Approve bool   `json:"approve"`
	Session bool   `json:"session"`
	Note    string `json:"note"`
	// By is "person" or "session" (the supervisor's session memory).
	By string `json:"by,omitempty"`
	// NoPerson is set, to why, when nobody can be asked (a supervisor
	// with no terminal): the request was not shown, and interactive
	// mode acts as strict for it.
	NoPerson string `json:"no_person,omitempty"`
	// Always keeps the request's project rule (the asker stores it).
	Always bool `json:"always,omitempty"`
	// Front is where the person answered: "supervisor" (its terminal),
	// or the front of the broker it relayed the request to ("web").
	Front string `json:"front,omitempty"`
}

// encodeAsk is a request's body.
func encodeAsk(r *approval.Request) *wireRequest {
	w := &wireRequest{
		Display: r.Display, Cwd: r.Cwd, Sandbox: r.Sandbox, Detail: r.Detail,
		Key: r.Key, Summary: r.Summary, Always: r.Always, Project: r.Project,
	}
	if r.Decision != nil {
		w.Parts = r.Decision.Parts
	}
	return w
}

// decodeAsk parses an ask request strictly: unknown fields, a malformed
// session key and a missing body are errors.
func decodeAsk(m *ipc.Message) (*approval.Request, error) {
	if m.Type != typeAsk || m.ID == 0 {
		return nil, fmt.Errorf("unknown request type %q", m.Type)
	}
	var w wireRequest
	if err := m.Decode(&w); err != nil {
		return nil, err
	}
	if !validKey(w.Key) {
		return nil, errors.New("malformed session key")
	}
	if w.Always != "" && !filepath.IsAbs(w.Project) {
		return nil, errors.New("an always-in-this-project rule without its project")
	}
	return &approval.Request{
		Display: w.Display, Cwd: w.Cwd, Sandbox: w.Sandbox, Detail: w.Detail,
		Key: w.Key, Summary: w.Summary, Always: w.Always, Project: w.Project,
		// Only requests that ask reach a prompter.
		Decision: &rules.Decision{Decision: rules.Ask, Parts: w.Parts},
	}, nil
}

// checkReply refuses a reply that names an unknown answerer.
func checkReply(r reply) error {
	switch r.By {
	case "", "person", "session":
		return nil
	}
	return fmt.Errorf("unknown answerer %q", r.By)
}

// validKey accepts what approval.RequestKey makes: empty (cannot be
// remembered) or a hex sha256.
func validKey(k string) bool {
	if k == "" {
		return true
	}
	if len(k) != 64 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
