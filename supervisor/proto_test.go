package supervisor

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/guardrun/guardrun/approval"
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

func TestAskRoundTrip(t *testing.T) {
	want := sampleRequest()
	line, err := EncodeAsk(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
		t.Fatalf("not one line: %q", line)
	}
	if !bytes.Contains(line, []byte("<ok>")) {
		t.Errorf("HTML escaping makes lines longer for nothing: %s", line)
	}
	got, err := DecodeAsk(line)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("round trip (-got +want):\n%s", d)
	}
}

func TestDecodeAskRefuses(t *testing.T) {
	valid := `{"v":1,"type":"ask","request":{"display":"ls","cwd":"/","sandbox":"","parts":[]}}`
	if _, err := DecodeAsk([]byte(valid)); err != nil {
		t.Fatalf("valid line refused: %v", err)
	}
	for _, tc := range []struct{ name, line string }{
		{"empty", ``},
		{"not json", `hello`},
		{"truncated object", valid[:len(valid)-3]},
		{"array", `[1,2]`},
		{"null", `null`},
		{"no version", `{"type":"ask","request":{"display":"ls","cwd":"/","sandbox":""}}`},
		{"future version", strings.Replace(valid, `"v":1`, `"v":2`, 1)},
		{"unknown type", strings.Replace(valid, `"ask"`, `"grant"`, 1)},
		{"no request", `{"v":1,"type":"ask"}`},
		{"null request", `{"v":1,"type":"ask","request":null}`},
		{"unknown field", strings.Replace(valid, `"display"`, `"approve":true,"display"`, 1)},
		{"unknown top field", strings.Replace(valid, `"v":1`, `"v":1,"by":"session"`, 1)},
		{"trailing data", valid + `{}`},
		{"two messages", valid + "\n" + valid},
		{"wrong type", strings.Replace(valid, `"display":"ls"`, `"display":7`, 1)},
		{"bad verdict", strings.Replace(valid, `"parts":[]`, `"parts":[{"kind":"command","text":"x","decision":"maybe","reason":"","pos":""}]`, 1)},
		{"short key", strings.Replace(valid, `"parts"`, `"key":"abc","parts"`, 1)},
		{"key with slash", strings.Replace(valid, `"parts"`, `"key":"`+strings.Repeat("a/", 32)+`","parts"`, 1)},
		{"upper-case key", strings.Replace(valid, `"parts"`, `"key":"`+strings.ToUpper(testKey)+`","parts"`, 1)},
		{"oversized", `{"v":1,"type":"ask","request":{"display":"` + strings.Repeat("x", MaxLine) + `"}}`},
		{"deep nesting", strings.Repeat("[", 20000) + strings.Repeat("]", 20000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r, err := DecodeAsk([]byte(tc.line)); err == nil {
				t.Errorf("accepted: %+v", r)
			}
		})
	}
}

func TestEncodeAskRefusesOversized(t *testing.T) {
	r := sampleRequest()
	r.Display = strings.Repeat("x", MaxLine)
	if _, err := EncodeAsk(r); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
}

func TestDecodeReply(t *testing.T) {
	got, err := DecodeReply(EncodeReply(Reply{Approve: true, Session: true, Note: "ok", By: "session"}))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(got, Reply{V: 1, Approve: true, Session: true, Note: "ok", By: "session"}); d != "" {
		t.Errorf("(-got +want):\n%s", d)
	}
	for _, line := range []string{
		`{"v":1,"approve":true,"by":"root"}`,
		`{"v":2,"approve":true}`,
		`{"v":1,"approve":"yes"}`,
		`{"v":1,"approve":true,"extra":1}`,
		`{"v":1,"approve":true}x`,
		`{"v":1,"note":"` + strings.Repeat("x", maxReply) + `"}`,
	} {
		if r, err := DecodeReply([]byte(line)); err == nil {
			t.Errorf("%.60s: accepted %+v", line, r)
		}
	}
}

func TestReadLine(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		max      int
		want     string
		err      error
	}{
		{"line", "abc\nrest", 10, "abc", nil},
		{"exactly max with newline", "abcd\n", 5, "abcd", nil},
		{"one over", "abcde\n", 5, "", ErrTooLarge},
		{"no newline", "abc", 10, "", ErrTruncated},
		{"empty", "", 10, "", io.EOF},
		{"long, beyond the buffer", strings.Repeat("x", 100) + "\n", 1000, strings.Repeat("x", 100), nil},
		{"too long, beyond the buffer", strings.Repeat("x", 5000) + "\n", 1000, "", ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadLine(bufio.NewReaderSize(strings.NewReader(tc.in), 16), tc.max)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if string(got) != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// ReadLine must not read (and so buffer) far past the limit of a line
// that never ends.
func TestReadLineStopsAtLimit(t *testing.T) {
	r := &countingReader{}
	_, err := ReadLine(bufio.NewReaderSize(r, 4096), 1<<16)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v", err)
	}
	if r.n > 1<<16+4096 {
		t.Errorf("read %d bytes for a %d-byte limit", r.n, 1<<16)
	}
}

type countingReader struct{ n int }

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	c.n += len(p)
	return len(p), nil
}

// FuzzDecode checks that whatever DecodeAsk accepts renders, and that
// its encoding is stable: encode → decode → encode gives the same bytes,
// and the request decodes to the same value (an empty list and a missing
// one are the same request: "argv":[] is sent as no argv).
func FuzzDecode(f *testing.F) {
	line, _ := EncodeAsk(sampleRequest())
	f.Add(line)
	f.Add([]byte(`{"v":1,"type":"ask","request":{"display":"ls","cwd":"/","sandbox":"","parts":[]}}`))
	f.Add([]byte(`{"v":1,"type":"ask","request":{"display":"\u001b[2J\u202e","cwd":"","sandbox":"","parts":null}}`))
	f.Add([]byte(`{"v":1,"type":"ask","request":{"display":"x","cwd":"","sandbox":"","parts":[{"kind":"command","text":"x","decision":"ask","reason":"","pos":"","argv":[]}]}}`))
	f.Add([]byte(`{"v":1,"type":"ask"`))
	f.Add([]byte("\xff\xfe{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeAsk(data)
		if err != nil {
			return
		}
		// Whatever was accepted renders.
		approval.Render(r, approval.Style{Color: true})
		first, err := EncodeAsk(r)
		if errors.Is(err, ErrTooLarge) {
			return
		}
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		r2, err := DecodeAsk(first)
		if err != nil {
			t.Fatalf("decode of re-encoded %q: %v", first, err)
		}
		if d := cmp.Diff(r2, r, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("round trip (-got +want):\n%s", d)
		}
		second, err := EncodeAsk(r2)
		if err != nil {
			t.Fatalf("third encoding: %v", err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("encoding not stable:\n%s\n%s", first, second)
		}
	})
}
