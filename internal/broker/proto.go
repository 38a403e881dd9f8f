package broker

import (
	"errors"
	"fmt"
	"time"

	"github.com/guardrun/guardrun/internal/sys/ipc"
	"github.com/guardrun/guardrun/rules"
)

// The broker's protocol: package ipc's messages (after the hellos).
//
// An asking process:
//
//	asker → {"type":"ask","id":1,"body":Ask}
//	broker ← {"reply":1,"body":Reply}          the first answer any front gave
//	broker ← {"reply":1,"error":"..."}         refused (malformed, the broker closing)
//	asker → {"cancel":1}                       withdrawn: the asker gave up
//
// A connection may carry any number of asks at once; closing it
// withdraws them all.
//
// A front:
//
//	front → {"type":"attach","id":1,"body":{"name":"...","token":"..."}}
//	broker ← {"type":"pending","body":Pending}   each request waiting now, then each new one
//	broker ← {"reply":1,"body":{"pending":N}}    attached: N were waiting
//	broker ← {"type":"resolved","body":Resolved} answered (here or elsewhere) or withdrawn
//	front → {"type":"answer","id":2,"body":AnswerBody}
//	broker ← {"reply":2,"body":{}}               taken
//	broker ← {"reply":2,"error":"..."}           refused: answered already, withdrawn, unknown
//
// Keep in sync: Version changes with any field of these bodies.

// Protocol is the broker socket's protocol.
var Protocol = ipc.Protocol{Name: "guardrun-broker", Version: 1, MaxMessage: MaxMessage}

// MaxMessage bounds one message: a request with its file diff.
const MaxMessage = 4 << 20

// maxDetail bounds the detail (a diff) an asker sends; a longer one is
// cut with a line saying so.
const maxDetail = 2 << 20

// Message types.
const (
	typeAsk      = "ask"
	typeAttach   = "attach"
	typeAnswer   = "answer"
	typePending  = "pending"
	typeResolved = "resolved"
)

// Request is a request as a terminal prompt would show it.
type Request struct {
	// Display is what will run: the script, or the quoted argv.
	Display string `json:"display"`
	Cwd     string `json:"cwd"`
	// Sandbox is the one-line sandbox summary (zones, network).
	Sandbox string `json:"sandbox"`
	// Detail is a file operation's presentation (approval.DiffDetail,
	// NewFileDetail): text with SGR colours only.
	Detail string `json:"detail,omitempty"`
	// Summary is the request on one line.
	Summary string `json:"summary,omitempty"`
	// Parts are the decision's parts, as `guardrun explain --json`
	// prints them; the asking ones are what the prompt lists.
	Parts []rules.Part `json:"parts"`
	// CanRemember is set when "approve for session" is offered (the
	// asker has a session to keep the grant in).
	CanRemember bool `json:"can_remember"`
	// Always is the rule "always in this project" would keep, and
	// Project where; empty when not offered.
	Always  string `json:"always,omitempty"`
	Project string `json:"project,omitempty"`
	// PID and Command are the process the request is for, as the asker
	// says: itself, or for a relay (Via "supervisor") the process that
	// asked it. The broker names the connecting process from the kernel.
	PID     int      `json:"pid,omitempty"`
	Command []string `json:"command,omitempty"`
	Via     string   `json:"via,omitempty"`
}

// Pending is a request waiting for an answer, as fronts see it.
type Pending struct {
	ID string `json:"id"`
	Request
	// Asker names the process that connected, from the kernel's record:
	// "pid N: argv".
	Asker    string    `json:"asker"`
	AskerPID int       `json:"asker_pid"`
	Received time.Time `json:"received"`
}

// Reply is the broker's answer to an ask.
type Reply struct {
	Approve bool   `json:"approve"`
	Session bool   `json:"session"`
	Always  bool   `json:"always"`
	Note    string `json:"note"`
	// By is who answered: "person".
	By string `json:"by"`
	// Front is where: the front's name ("web", "terminal", ...).
	Front string `json:"front"`
}

// Answer is a front's answer to one pending request.
type Answer struct {
	Approve bool   `json:"approve"`
	Session bool   `json:"session,omitempty"`
	Always  bool   `json:"always,omitempty"`
	Note    string `json:"note,omitempty"`
}

// AnswerBody is an answer on the wire.
type AnswerBody struct {
	ID string `json:"id"`
	Answer
}

// Resolved says a request left the pending list.
type Resolved struct {
	ID string `json:"id"`
	// How is "answered" or "withdrawn".
	How string `json:"how"`
	// Front and Approve say how it was answered.
	Front   string `json:"front,omitempty"`
	Approve bool   `json:"approve,omitempty"`
}

type attachBody struct {
	Name  string `json:"name"`
	Token string `json:"token"`
}

type attachReply struct {
	Pending int `json:"pending"`
}

type empty struct{}

// Errors of Answer.
var (
	// ErrAnswered is an answer for a request answered already.
	ErrAnswered = errors.New("the request was answered already")
	// ErrWithdrawn is an answer for a request its asker withdrew.
	ErrWithdrawn = errors.New("the request was withdrawn: the process that asked went away")
	// ErrUnknown is an answer for no request the broker has held.
	ErrUnknown = errors.New("no such request")
)

// checkAsk refuses an ask no prompt could show honestly.
func checkAsk(a *Request) error {
	if a.Display == "" && len(a.Parts) == 0 {
		return errors.New("an ask with nothing to show")
	}
	if a.Always != "" && a.Project == "" {
		return errors.New("an always-in-this-project rule without its project")
	}
	return nil
}

// checkAnswer refuses an answer the request does not offer.
func checkAnswer(p *Pending, a Answer) error {
	switch {
	case a.Session && !a.Approve, a.Always && !a.Approve:
		return errors.New("an answer that denies and remembers")
	case a.Session && a.Always:
		return errors.New("an answer for the session and always")
	case a.Session && !p.CanRemember:
		return fmt.Errorf("request %s cannot be approved for the session", p.ID)
	case a.Always && p.Always == "":
		return fmt.Errorf("request %s offers no rule for the project", p.ID)
	}
	return nil
}
