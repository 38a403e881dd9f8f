package ipc

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadFrameFrom: a frame is read whole or refused: another magic,
// a length over the bound (its payload left unread), a stream cut
// inside it. A stream that ends between frames is io.EOF.
func TestReadFrameFrom(t *testing.T) {
	good := AppendFrame(nil, "TEST", []byte("payload"))
	for _, r := range []struct {
		name   string
		in     []byte
		want   string
		err    error
		unread int // bytes left in the reader
	}{
		{"a frame", good, "payload", nil, 0},
		{"an empty payload", AppendFrame(nil, "TEST", nil), "", nil, 0},
		{"a frame and more", append(append([]byte{}, good...), "next"...), "payload", nil, 4},
		{"exactly the bound", AppendFrame(nil, "TEST", []byte(strings.Repeat("x", 16))), strings.Repeat("x", 16), nil, 0},
		{"one over the bound", AppendFrame(nil, "TEST", []byte(strings.Repeat("x", 17))), "", ErrTooLarge, 17},
		{"a length far over the bound", []byte("TEST\xff\xff\xff\xff"), "", ErrTooLarge, 0},
		{"another magic", AppendFrame(nil, "GRS1", []byte("payload")), "", ErrNotFrame, 7},
		{"a line of JSON", []byte(`{"v":1,"type":"ask"}` + "\n"), "", ErrNotFrame, 13},
		{"nothing", nil, "", io.EOF, 0},
		{"half a header", good[:3], "", io.ErrUnexpectedEOF, 0},
		{"a header alone", good[:HeaderSize], "", io.ErrUnexpectedEOF, 0},
		{"a payload cut short", good[:len(good)-1], "", io.ErrUnexpectedEOF, 0},
	} {
		t.Run(r.name, func(t *testing.T) {
			rd := bytes.NewReader(r.in)
			got, err := ReadFrameFrom(rd, "TEST", 16)
			if !errors.Is(err, r.err) {
				t.Fatalf("err = %v, want %v", err, r.err)
			}
			if string(got) != r.want {
				t.Errorf("payload %q, want %q", got, r.want)
			}
			if rd.Len() != r.unread {
				t.Errorf("%d bytes left unread, want %d", rd.Len(), r.unread)
			}
		})
	}
}

// TestMessageForms: DecodeMessage takes the forms Message lists and
// nothing else.
func TestMessageForms(t *testing.T) {
	for _, r := range []struct {
		in   string
		want *Message
	}{
		{`{"type":"hello","body":{"protocol":"p","version":1}}`, &Message{Type: "hello", Body: []byte(`{"protocol":"p","version":1}`)}},
		{`{"type":"ask","id":7,"body":{}}`, &Message{Type: "ask", ID: 7, Body: []byte(`{}`)}},
		{`{"type":"log","body":"a line"}`, &Message{Type: "log", Body: []byte(`"a line"`)}},
		{`{"reply":7,"body":{"ok":true}}`, &Message{Reply: 7, Body: []byte(`{"ok":true}`)}},
		{`{"reply":7,"error":"no"}`, &Message{Reply: 7, Error: "no"}},
		{`{"cancel":7}`, &Message{Cancel: 7}},
		{`{"type":"error","error":"why"}`, &Message{Type: "error", Error: "why"}},
	} {
		got, err := DecodeMessage([]byte(r.in))
		if err != nil {
			t.Errorf("%s: %v", r.in, err)
			continue
		}
		if d := cmp.Diff(got, r.want); d != "" {
			t.Errorf("%s (-got +want):\n%s", r.in, d)
		}
	}
	for _, in := range []string{
		``, `null`, `[]`, `"ask"`, `{}`,
		`{"type":"ask","id":1,"unknown":1}`,
		`{"type":"ask","id":1}{}`,
		`{"type":"Ask","id":1}`,
		`{"type":"a b","id":1}`,
		`{"type":"` + strings.Repeat("a", 65) + `"}`,
		`{"type":"ask","id":1,"error":"x"}`,
		`{"type":"ask","reply":1}`,
		`{"reply":1,"id":2}`,
		`{"reply":1,"body":{},"error":"x"}`,
		`{"cancel":1,"body":{}}`,
		`{"cancel":1,"type":"ask"}`,
		`{"type":"error"}`,
		`{"type":"error","error":"x","body":{}}`,
		`{"type":"hello"}`,
		`{"type":"hello","id":1,"body":{}}`,
		`{"type":"ask","id":-1}`,
		`{"type":"ask","id":1.5}`,
		`{"type":7}`,
	} {
		if m, err := DecodeMessage([]byte(in)); err == nil {
			t.Errorf("%s: accepted as %+v", in, m)
		}
	}
}

// TestDecodeBody: a body is decoded strictly.
func TestDecodeBody(t *testing.T) {
	type body struct {
		A string `json:"a"`
	}
	for _, r := range []struct {
		body string
		ok   bool
	}{
		{`{"a":"x"}`, true},
		{`{"a":"x","b":1}`, false},
		{`{"a":7}`, false},
		{`null`, false},
		{``, false},
	} {
		var b body
		err := (&Message{Type: "t", Body: []byte(r.body)}).Decode(&b)
		if (err == nil) != r.ok {
			t.Errorf("body %q: %v", r.body, err)
		}
	}
}

// FuzzMessage: whatever DecodeMessage takes encodes back, and that
// encoding is stable; no stream makes ReadFrameFrom return more than its
// bound.
func FuzzMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"hello","body":{"protocol":"guardrun-supervisor","version":2}}`,
		`{"type":"ask","id":1,"body":{"display":"ls <x> & y","parts":[]}}`,
		`{"reply":1,"body":{"approve":true}}`,
		`{"reply":1,"error":"withdrawn"}`,
		`{"cancel":3}`,
		`{"type":"error","error":"busy"}`,
		`{"type":"log","body":"\u001b[2J"}`,
		"GRJ1\x05\x00\x00\x00{}{}{",
		"\xff\xfe{}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if p, err := ReadFrameFrom(bytes.NewReader(data), MessageMagic, 64); err == nil && len(p) > 64 {
			t.Fatalf("read %d bytes past a bound of 64", len(p))
		}
		m, err := DecodeMessage(data)
		if err != nil {
			return
		}
		first, err := EncodeMessage(m)
		if err != nil {
			t.Fatalf("re-encode of %q: %v", data, err)
		}
		m2, err := DecodeMessage(first)
		if err != nil {
			t.Fatalf("decode of re-encoded %q: %v", first, err)
		}
		second, err := EncodeMessage(m2)
		if err != nil {
			t.Fatalf("third encoding: %v", err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("encoding not stable:\n%s\n%s", first, second)
		}
	})
}
