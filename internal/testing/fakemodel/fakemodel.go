package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Step is one model turn of a script: text and, when Tool is set, one
// tool call. Build it with [Call] or [Say].
type Step struct {
	// Tool is the name of the tool to call; empty ends the turn.
	Tool string
	// Args are the call's arguments, marshalled to a JSON object.
	Args map[string]any
	// Text is said before the call, or alone when Tool is empty.
	Text string
	// After, when set, makes Args when the step is played, from the
	// result of the step before it that the same request carries (a
	// zero ToolResult when it carries none): a model acting on what a
	// tool just showed it.
	After func(prev ToolResult) map[string]any
}

// Call is a step that asks the agent to run tool with args.
func Call(tool string, args map[string]any) Step { return Step{Tool: tool, Args: args} }

// CallAfter is a step that asks the agent to run tool with the
// arguments args makes from the previous step's result.
func CallAfter(tool string, args func(prev ToolResult) map[string]any) Step {
	return Step{Tool: tool, After: args}
}

// Say is a step that says text and ends the turn.
func Say(text string) Step { return Step{Text: text} }

// CallID is the id of step n's tool call, as the agents echo it.
func CallID(n int) string { return fmt.Sprintf("fakemodel-call-%d", n) }

// Kind is what a request was taken for.
type Kind string

const (
	// Turn is a model turn: it played a step, or found none left.
	Turn Kind = "turn"
	// Aux is a request answered without consuming a step.
	Aux Kind = "aux"
	// Unknown is a request the server does not speak; it got a 404.
	Unknown Kind = "unknown"
)

// Request is one logged request.
type Request struct {
	Seq      int
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	// Body is the request body as sent (JSON for every API spoken here).
	Body json.RawMessage
	Kind Kind
	// Step is the index of the step this request played, -1 for none.
	Step int
	// Exhausted is set on a turn that came after the last step.
	Exhausted bool
	// Results are the tool results the body carries, in order.
	Results []ToolResult
}

// ToolResult is one tool output an agent sent back to the model.
type ToolResult struct {
	// CallID is the id of the call it answers.
	CallID string
	// Name is the tool's name where the wire format carries it (Gemini).
	Name string
	// Output is the text the model receives.
	Output string
	// IsError is set where the wire format marks the result as an error
	// (Messages is_error).
	IsError bool
}

// Server is a running fake model. Its methods are safe for concurrent use.
type Server struct {
	// URL is http://127.0.0.1:PORT, without a trailing slash.
	URL string

	srv   *http.Server
	ln    net.Listener
	mu    sync.Mutex
	steps []Step
	next  int
	log   []Request
}

// New starts a server on 127.0.0.1 playing steps. Close stops it.
func New(steps ...Step) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, steps: steps}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve)}
	go s.srv.Serve(ln)
	return s, nil
}

// Start is New for a test: it fails t when the server cannot start and
// closes it when t ends.
func Start(t testing.TB, steps ...Step) *Server {
	t.Helper()
	s, err := New(steps...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Close stops the server and drops open connections.
func (s *Server) Close() { s.srv.Close() }

// Requests returns a copy of the log, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// Played is the number of steps played so far.
func (s *Server) Played() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// ToolResult returns the result of step n's tool call from the first
// request after step n that carries it.
func (s *Server) ToolResult(n int) (ToolResult, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := CallID(n)
	played := false
	for _, r := range s.log {
		if r.Step == n {
			played = true
			continue
		}
		if !played {
			continue
		}
		for _, res := range r.Results {
			if res.CallID == id {
				return res, true
			}
		}
	}
	return ToolResult{}, false
}

// Summary is a short text of the log for a failing test's message.
func (s *Server) Summary() string {
	var b strings.Builder
	for _, r := range s.Requests() {
		fmt.Fprintf(&b, "#%d %s %s", r.Seq, r.Method, r.Path)
		if r.RawQuery != "" {
			fmt.Fprintf(&b, "?%s", r.RawQuery)
		}
		fmt.Fprintf(&b, " %s", r.Kind)
		if r.Step >= 0 {
			fmt.Fprintf(&b, " step %d", r.Step)
		}
		if r.Exhausted {
			b.WriteString(" exhausted")
		}
		for _, res := range r.Results {
			fmt.Fprintf(&b, "\n    result %s: %.200q", res.CallID, res.Output)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// maxBody bounds one request body; agents send the whole conversation
// each turn, which stays far below this in a test.
const maxBody = 32 << 20

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, "fakemodel: read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{
		Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: json.RawMessage(body), Kind: Unknown, Step: -1,
	}
	var h handler
	switch path := r.URL.Path; {
	case r.Method != http.MethodPost:
	case path == "/v1/messages/count_tokens":
		h = countTokens{field: "input_tokens"}
	case path == "/v1/messages":
		h = &messages{}
	case path == "/v1/responses":
		h = &responses{}
	case strings.HasSuffix(path, ":streamGenerateContent"):
		h = &gemini{stream: true}
	case strings.HasSuffix(path, ":generateContent"):
		h = &gemini{}
	case strings.HasSuffix(path, ":countTokens"):
		h = countTokens{field: "totalTokens"}
	}
	if h == nil {
		s.record(&req)
		http.Error(w, fmt.Sprintf("fakemodel: no such endpoint: %s %s", r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	turn, results, err := h.parse(body)
	if err != nil {
		s.record(&req)
		http.Error(w, "fakemodel: "+err.Error(), http.StatusBadRequest)
		return
	}
	req.Results = results
	req.Kind = Aux
	step := Step{Text: "ok"}
	if turn {
		req.Kind = Turn
		s.mu.Lock()
		if s.next < len(s.steps) {
			req.Step = s.next
			step = s.steps[s.next]
			s.next++
		} else {
			req.Exhausted = true
			step = Step{Text: "fakemodel: the script has no more steps"}
		}
		s.mu.Unlock()
	}
	if step.After != nil {
		var prev ToolResult
		for _, r := range results {
			if r.CallID == CallID(req.Step-1) {
				prev = r
			}
		}
		step.Args = step.After(prev)
	}
	s.record(&req)
	h.reply(w, step, req.Step)
}

func (s *Server) record(r *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Seq = len(s.log)
	s.log = append(s.log, *r)
}

// handler is one wire format: parse tells whether a body is a model turn
// and which tool results it carries; reply answers with step (n is its
// index, -1 for an answer that played none).
type handler interface {
	parse(body []byte) (turn bool, results []ToolResult, err error)
	reply(w http.ResponseWriter, step Step, n int)
}

type countTokens struct{ field string }

func (c countTokens) parse(body []byte) (bool, []ToolResult, error) { return false, nil, nil }

func (c countTokens) reply(w http.ResponseWriter, _ Step, _ int) {
	writeJSON(w, map[string]any{c.field: 100})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events, each flushed at once.
type sse struct{ w http.ResponseWriter }

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

// event writes one event; an empty name writes a data-only event.
func (e sse) event(name string, data any) {
	var b bytes.Buffer
	if name != "" {
		fmt.Fprintf(&b, "event: %s\n", name)
	}
	j, _ := json.Marshal(data)
	fmt.Fprintf(&b, "data: %s\n\n", j)
	e.w.Write(b.Bytes())
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

func argsJSON(step Step) string {
	args := step.Args
	if args == nil {
		args = map[string]any{}
	}
	j, err := json.Marshal(args)
	if err != nil {
		// Args come from the test's own literals; one that does not
		// marshal is a bug in the test.
		panic(fmt.Sprintf("fakemodel: step arguments: %v", err))
	}
	return string(j)
}

// textOf flattens a tool result's content: a string, or a list of blocks
// with "text" (Messages tool_result content, Responses output items).
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			parts = append(parts, b.Text)
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}
