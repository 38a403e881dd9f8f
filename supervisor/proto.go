package supervisor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/rules"
)

// The protocol on the supervisor's socket: one request per connection,
// each message one line of JSON.
//
//	client → {"v":1,"type":"ask","request":{"display":..., "cwd":..., "sandbox":...,
//	          "detail":..., "key":..., "summary":..., "parts":[...]}}
//	server ← {"v":1,"approve":true,"session":false,"note":"","by":"person"}
//	server ← {"v":1,"approve":false,"error":"..."}     the request was not shown
//
// The client keeps the connection open until the reply arrives; closing
// it (or sending anything more) withdraws the request. parts are
// rules.Part values as `guardrun explain --json` prints them.
// Keep in sync: Version changes when a field's meaning does; new
// optional fields are refused by an older supervisor, which then fails
// closed.
const (
	// Version is the protocol version this package speaks.
	Version = 1
	// MaxLine bounds one message, newline included. Longer requests are
	// refused unread, so a client cannot make the supervisor buffer more.
	MaxLine = 1 << 20
	// maxReply bounds a reply: a note typed by a person.
	maxReply = 64 << 10
)

// ErrTooLarge is a message longer than the limit.
var ErrTooLarge = errors.New("message too large")

// ErrTruncated is a message that ended without its newline.
var ErrTruncated = errors.New("message truncated")

// ask is the request message.
type ask struct {
	V       int          `json:"v"`
	Type    string       `json:"type"`
	Request *wireRequest `json:"request"`
}

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
}

// Reply is the supervisor's answer to one request.
type Reply struct {
	V       int    `json:"v"`
	Approve bool   `json:"approve"`
	Session bool   `json:"session"`
	Note    string `json:"note"`
	// By is "person" or "session" (the supervisor's session memory).
	By string `json:"by,omitempty"`
	// Error is set when the request was refused unasked: malformed, a
	// version this supervisor does not speak, or withdrawn.
	Error string `json:"error,omitempty"`
}

// EncodeAsk renders a request as one protocol line, newline included.
func EncodeAsk(r *approval.Request) ([]byte, error) {
	w := &wireRequest{
		Display: r.Display, Cwd: r.Cwd, Sandbox: r.Sandbox, Detail: r.Detail,
		Key: r.Key, Summary: r.Summary,
	}
	if r.Decision != nil {
		w.Parts = r.Decision.Parts
	}
	line, err := marshalLine(ask{V: Version, Type: "ask", Request: w})
	if err != nil {
		return nil, err
	}
	if len(line) > MaxLine {
		return nil, fmt.Errorf("request is %d bytes, more than the supervisor takes (%d): %w", len(line), MaxLine, ErrTooLarge)
	}
	return line, nil
}

// DecodeAsk parses one request line (with or without its newline). It
// refuses anything but exactly one well-formed version-1 ask: unknown
// fields, trailing data, a malformed session key.
func DecodeAsk(line []byte) (*approval.Request, error) {
	if len(line) > MaxLine {
		return nil, ErrTooLarge
	}
	var m ask
	if err := strictUnmarshal(line, &m); err != nil {
		return nil, err
	}
	if m.V != Version {
		return nil, fmt.Errorf("protocol version %d is not spoken here (this supervisor speaks %d)", m.V, Version)
	}
	if m.Type != "ask" {
		return nil, fmt.Errorf("unknown message type %q", m.Type)
	}
	w := m.Request
	if w == nil {
		return nil, errors.New("ask without a request")
	}
	if !validKey(w.Key) {
		return nil, errors.New("malformed session key")
	}
	return &approval.Request{
		Display: w.Display, Cwd: w.Cwd, Sandbox: w.Sandbox, Detail: w.Detail,
		Key: w.Key, Summary: w.Summary,
		// Only requests that ask reach a prompter.
		Decision: &rules.Decision{Decision: rules.Ask, Parts: w.Parts},
	}, nil
}

// EncodeReply renders a reply as one protocol line.
func EncodeReply(r Reply) []byte {
	r.V = Version
	line, err := marshalLine(r)
	if err != nil {
		// A Reply holds only strings and bools; this cannot happen.
		panic(err)
	}
	return line
}

// DecodeReply parses one reply line.
func DecodeReply(line []byte) (Reply, error) {
	var r Reply
	if len(line) > maxReply {
		return r, ErrTooLarge
	}
	if err := strictUnmarshal(line, &r); err != nil {
		return Reply{}, err
	}
	if r.V != Version {
		return Reply{}, fmt.Errorf("protocol version %d is not spoken here (this client speaks %d)", r.V, Version)
	}
	switch r.By {
	case "", "person", "session":
	default:
		return Reply{}, fmt.Errorf("unknown answerer %q", r.By)
	}
	return r, nil
}

// ReadLine reads one message line of at most max bytes (newline
// included) and returns it without the newline. It never buffers more
// than max: a longer line is ErrTooLarge, unread beyond the limit; a line
// cut short by EOF is ErrTruncated.
func ReadLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			return nil, ErrTooLarge
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(line) == 0 {
				return nil, io.EOF
			}
			return nil, ErrTruncated
		default:
			return nil, err
		}
	}
}

func marshalLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// Commands are full of < > &; escaping them only makes lines longer.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode appends the newline
		return nil, err
	}
	return b.Bytes(), nil
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("malformed message: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("malformed message: data after the message")
	}
	return nil
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
