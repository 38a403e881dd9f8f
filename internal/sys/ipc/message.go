package ipc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// MessageMagic starts every frame of a Conn: JSON messages, framing
// version 1.
const MessageMagic = "GRJ1"

// Message is one message of a Conn, one JSON object per frame. It is
// one of:
//
//	{"type":"hello","body":{"protocol":"NAME","version":N}}  first, each way
//	{"type":"T","id":N,"body":...}     a request, answered by one reply
//	{"reply":N,"body":...}             the reply to request N
//	{"reply":N,"error":"..."}          request N refused
//	{"cancel":N}                       request N withdrawn by its sender
//	{"type":"T","body":...}            a notice: no reply
//	{"type":"error","error":"..."}     the connection ends, and why
//
// Unknown fields, anything else, and trailing data are errors.
type Message struct {
	Type   string          `json:"type,omitempty"`
	ID     uint64          `json:"id,omitempty"`
	Reply  uint64          `json:"reply,omitempty"`
	Cancel uint64          `json:"cancel,omitempty"`
	Error  string          `json:"error,omitempty"`
	Body   json.RawMessage `json:"body,omitempty"`
	// Files came with the message (a protocol with Protocol.Files);
	// whoever takes the message closes them.
	Files []*os.File `json:"-"`
}

// The types a protocol cannot use for its own messages.
const (
	typeHello = "hello"
	typeError = "error"
)

// Decode decodes the message's body into v strictly: a missing or null
// body, an unknown field, a wrong type or data after the value is an
// error.
func (m *Message) Decode(v any) error {
	if len(m.Body) == 0 || string(m.Body) == "null" {
		return fmt.Errorf("%s: a message without a body", m.what())
	}
	if err := strictUnmarshal(m.Body, v); err != nil {
		return fmt.Errorf("%s: %w", m.what(), err)
	}
	return nil
}

func (m *Message) what() string {
	switch {
	case m.Reply != 0:
		return fmt.Sprintf("reply to %d", m.Reply)
	case m.Type != "":
		return m.Type
	}
	return "message"
}

// EncodeMessage renders m as a frame's payload.
func EncodeMessage(m *Message) ([]byte, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	return marshal(m)
}

// DecodeMessage parses a frame's payload strictly (see Message).
func DecodeMessage(payload []byte) (*Message, error) {
	m := &Message{}
	if err := strictUnmarshal(payload, m); err != nil {
		return nil, err
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return m, nil
}

// check says whether m is one of the forms Message lists.
func (m *Message) check() error {
	body := len(m.Body) > 0
	switch {
	case m.Reply != 0:
		if m.Type != "" || m.ID != 0 || m.Cancel != 0 || body && m.Error != "" {
			return errors.New("malformed message: a reply with other fields")
		}
	case m.Cancel != 0:
		if m.Type != "" || m.ID != 0 || body || m.Error != "" {
			return errors.New("malformed message: a cancel with other fields")
		}
	case m.Type == typeError:
		if m.ID != 0 || body || m.Error == "" {
			return errors.New("malformed message: an error notice needs its error and nothing else")
		}
	case m.Type == typeHello:
		if m.ID != 0 || !body {
			return errors.New("malformed message: a hello needs its body and no id")
		}
	case m.Type != "":
		if err := checkType(m.Type); err != nil {
			return err
		}
		if m.Error != "" {
			return errors.New("malformed message: a request or notice with an error")
		}
	default:
		return errors.New("malformed message: no type, reply or cancel")
	}
	return nil
}

// checkType accepts a protocol's message type: 1 to 64 of a-z, 0-9, -.
func checkType(t string) error {
	if len(t) > 64 {
		return errors.New("malformed message: a type longer than 64 bytes")
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("malformed message: type %q", t)
		}
	}
	return nil
}

// marshal is JSON without HTML escaping (commands are full of < > &,
// escaping them only makes messages longer) and without a newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
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
