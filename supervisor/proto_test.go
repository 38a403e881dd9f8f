package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/sys/ipc"
	"github.com/guardrun/guardrun/rules"
)

const testKey = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func sampleRequest() *approval.Request {
	return &approval.Request{
		Display: "touch 'a b' > /tmp/x && echo <ok>",
		Cwd:     "/work/proj",
		Sandbox: "workspace /work/proj (rw); network off",
		Detail:  "--- a\n+++ b\n",
		Key:     testKey,
		Summary: "touch 'a b'",
		Decision: &rules.Decision{Decision: rules.Ask, Parts: []rules.Part{
			{Kind: "command", Text: "touch 'a b'", Decision: rules.Ask, Reason: "matches rule", Rule: "touch", Pos: "1:1", Argv: []string{"touch", "a b"}},
			{Kind: "command", Text: "echo <ok>", Decision: rules.Allow, Reason: "allowed", Pos: "1:25", Argv: []string{"echo", "<ok>"}},
		}},
	}
}

// askPayload is the frame payload of an ask request with id 1.
func askPayload(t testing.TB, r *approval.Request) []byte {
	t.Helper()
	body, err := json.Marshal(encodeAsk(r))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ipc.EncodeMessage(&ipc.Message{Type: typeAsk, ID: 1, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// decodePayload is what the server makes of an ask request's payload.
func decodePayload(p []byte) (*approval.Request, error) {
	m, err := ipc.DecodeMessage(p)
	if err != nil {
		return nil, err
	}
	return decodeAsk(m)
}

func TestAskRoundTrip(t *testing.T) {
	want := sampleRequest()
	got, err := decodePayload(askPayload(t, want))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("round trip (-got +want):\n%s", d)
	}
}

func TestDecodeAskRefuses(t *testing.T) {
	valid := `{"type":"ask","id":1,"body":{"display":"ls","cwd":"/","sandbox":"","parts":[]}}`
	if _, err := decodePayload([]byte(valid)); err != nil {
		t.Fatalf("valid message refused: %v", err)
	}
	for _, tc := range []struct{ name, msg string }{
		{"empty", ``},
		{"not json", `hello`},
		{"truncated object", valid[:len(valid)-3]},
		{"array", `[1,2]`},
		{"null", `null`},
		{"the old line protocol", `{"v":1,"type":"ask","request":{"display":"ls","cwd":"/","sandbox":""}}`},
		{"no id", strings.Replace(valid, `"id":1,`, ``, 1)},
		{"unknown type", strings.Replace(valid, `"ask"`, `"grant"`, 1)},
		{"no body", `{"type":"ask","id":1}`},
		{"null body", `{"type":"ask","id":1,"body":null}`},
		{"unknown field", strings.Replace(valid, `"display"`, `"approve":true,"display"`, 1)},
		{"unknown top field", strings.Replace(valid, `"id":1`, `"id":1,"by":"session"`, 1)},
		{"trailing data", valid + `{}`},
		{"two messages", valid + "\n" + valid},
		{"wrong type", strings.Replace(valid, `"display":"ls"`, `"display":7`, 1)},
		{"bad verdict", strings.Replace(valid, `"parts":[]`, `"parts":[{"kind":"command","text":"x","decision":"maybe","reason":"","pos":""}]`, 1)},
		{"short key", strings.Replace(valid, `"parts"`, `"key":"abc","parts"`, 1)},
		{"key with slash", strings.Replace(valid, `"parts"`, `"key":"`+strings.Repeat("a/", 32)+`","parts"`, 1)},
		{"upper-case key", strings.Replace(valid, `"parts"`, `"key":"`+strings.ToUpper(testKey)+`","parts"`, 1)},
		{"deep nesting", strings.Repeat("[", 20000) + strings.Repeat("]", 20000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r, err := decodePayload([]byte(tc.msg)); err == nil {
				t.Errorf("accepted: %+v", r)
			}
		})
	}
}

// TestPromptRefusesOversized: a request larger than the supervisor takes
// is not sent.
func TestPromptRefusesOversized(t *testing.T) {
	f := newFake()
	s := startServer(t, f)
	r := sampleRequest()
	r.Display = strings.Repeat("x", MaxMessage)
	c, err := Dial(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Prompt(context.Background(), r); !errors.Is(err, ipc.ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	if f.count() != 0 {
		t.Error("an oversized request was shown")
	}
}

func TestDecodeReply(t *testing.T) {
	decode := func(body string) (reply, error) {
		var r reply
		if err := (&ipc.Message{Reply: 1, Body: []byte(body)}).Decode(&r); err != nil {
			return r, err
		}
		return r, checkReply(r)
	}
	got, err := decode(`{"approve":true,"session":true,"note":"ok","by":"session"}`)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(got, reply{Approve: true, Session: true, Note: "ok", By: "session"}); d != "" {
		t.Errorf("(-got +want):\n%s", d)
	}
	for _, body := range []string{
		`{"approve":true,"by":"root"}`,
		`{"approve":"yes"}`,
		`{"approve":true,"extra":1}`,
		`{"approve":true}x`,
		`{"v":1,"approve":true}`,
	} {
		if r, err := decode(body); err == nil {
			t.Errorf("%.60s: accepted %+v", body, r)
		}
	}
}

// FuzzDecode checks that whatever the server takes as an ask request
// renders, and that its encoding is stable: encode → decode → encode
// gives the same bytes, and the request decodes to the same value (an
// empty list and a missing one are the same request: "argv":[] is sent
// as no argv).
func FuzzDecode(f *testing.F) {
	f.Add(askPayload(f, sampleRequest()))
	f.Add([]byte(`{"type":"ask","id":1,"body":{"display":"ls","cwd":"/","sandbox":"","parts":[]}}`))
	f.Add([]byte(`{"type":"ask","id":7,"body":{"display":"\u001b[2J\u202e","cwd":"","sandbox":"","parts":null}}`))
	f.Add([]byte(`{"type":"ask","id":2,"body":{"display":"x","cwd":"","sandbox":"","parts":[{"kind":"command","text":"x","decision":"ask","reason":"","pos":"","argv":[]}]}}`))
	f.Add([]byte(`{"type":"ask","id":1`))
	f.Add([]byte("\xff\xfe{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodePayload(data)
		if err != nil {
			return
		}
		// Whatever was accepted renders.
		approval.Render(r, approval.Style{Color: true})
		first := askPayload(t, r)
		r2, err := decodePayload(first)
		if err != nil {
			t.Fatalf("decode of re-encoded %q: %v", first, err)
		}
		if d := cmp.Diff(r2, r, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("round trip (-got +want):\n%s", d)
		}
		second := askPayload(t, r2)
		if !bytes.Equal(first, second) {
			t.Fatalf("encoding not stable:\n%s\n%s", first, second)
		}
	})
}
