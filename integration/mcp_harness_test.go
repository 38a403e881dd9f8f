//go:build linux

package integration

// How the guardrun mcp tests reach the server as its users do: the
// official Go SDK's client, over stdio (guardrun mcp as a subprocess on
// real pipes) or over streamable HTTP (guardrun mcp --listen, its token
// read from what it prints), optionally answering the approval forms
// the server sends (elicitation).

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpTransports are the two ways a client reaches guardrun mcp.
var mcpTransports = []string{"stdio", "http"}

// answerer answers the approval forms guardrun sends, as the person
// would in the client's dialog; it records each form.
type answerer struct {
	mu    sync.Mutex
	forms []*mcp.ElicitParams
	// answer is the reply to every form; nil: the handler fails.
	answer func(*mcp.ElicitParams) (*mcp.ElicitResult, error)
}

func (a *answerer) handle(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a.mu.Lock()
	a.forms = append(a.forms, req.Params)
	a.mu.Unlock()
	return a.answer(req.Params)
}

func (a *answerer) asked() []*mcp.ElicitParams {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*mcp.ElicitParams(nil), a.forms...)
}

// accept answers every form with decision (and note).
func accept(decision, note string) func(*mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return func(*mcp.ElicitParams) (*mcp.ElicitResult, error) {
		c := map[string]any{"decision": decision}
		if note != "" {
			c["note"] = note
		}
		return &mcp.ElicitResult{Action: "accept", Content: c}, nil
	}
}

// action answers every form with a bare action (decline, cancel).
func action(a string) func(*mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return func(*mcp.ElicitParams) (*mcp.ElicitResult, error) { return &mcp.ElicitResult{Action: a}, nil }
}

// mcpServer is one guardrun mcp and a client session connected to it.
type mcpServer struct {
	t       testing.TB
	session *mcp.ClientSession
	cmd     *exec.Cmd
	stderr  *lockedBuffer
	// progress holds a line per progress notification: token, message.
	progress *lockedBuffer
	// stdin is a stdio server's standard input.
	stdin io.Closer
	// url and token of an HTTP server.
	url, token string
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startMCP starts guardrun mcp (args after the verb) in w's work
// directory and connects a client over transport; a client that answers
// forms declares elicitation, one with a nil answerer does not. The
// client offers protocol 2025-11-25, as the agent CLIs do.
func startMCP(t testing.TB, w *world, transport string, a *answerer, args ...string) *mcpServer {
	t.Helper()
	s := &mcpServer{t: t, stderr: &lockedBuffer{}, progress: &lockedBuffer{}}
	opts := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			fmt.Fprintf(s.progress, "%v %s\n", req.Params.ProgressToken, req.Params.Message)
		},
	}
	if a != nil {
		opts.ElicitationHandler = a.handle
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "guardrun-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var tr mcp.Transport
	switch transport {
	case "stdio":
		// Real pipes, as an agent starts its servers; the test holds the
		// write end of stdin, to close it as an agent that exits does.
		s.cmd = exec.Command(guardrunBin, append([]string{"mcp"}, args...)...)
		s.cmd.Dir, s.cmd.Env, s.cmd.Stderr = w.work, w.env, s.stderr
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		in, err := s.cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s.stdin = in
		tr = &mcp.IOTransport{Reader: out, Writer: in}
	case "http":
		s.listen(w, args...)
		tr = &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: bearer(s.token), MaxRetries: -1}
	default:
		t.Fatalf("unknown transport %q", transport)
	}
	sess, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting to guardrun mcp over %s: %v\nstderr: %s", transport, err, s.stderr)
	}
	s.session = sess
	t.Cleanup(func() { s.close() })
	return s
}

// listen starts guardrun mcp --listen 127.0.0.1:0 and reads the URL and
// token it prints.
func (s *mcpServer) listen(w *world, args ...string) {
	t := s.t
	t.Helper()
	s.cmd = exec.Command(guardrunBin, append([]string{"mcp", "--listen", "127.0.0.1:0"}, args...)...)
	s.cmd.Dir, s.cmd.Env, s.cmd.Stderr = w.work, w.env, s.stderr
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	urlRe := regexp.MustCompile(`^guardrun mcp: listening on (http://127\.0\.0\.1:\d+/mcp)$`)
	tokenRe := regexp.MustCompile(`^  token: (\S+)$`)
	deadline := time.After(20 * time.Second)
	for s.url == "" || s.token == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("guardrun mcp --listen ended before it printed its URL and token; stderr: %s", s.stderr)
			}
			if m := urlRe.FindStringSubmatch(l); m != nil {
				s.url = m[1]
			}
			if m := tokenRe.FindStringSubmatch(l); m != nil {
				s.token = m[1]
			}
		case <-deadline:
			t.Fatalf("guardrun mcp --listen printed no URL and token in 20s; stderr: %s", s.stderr)
		}
	}
	go func() {
		for range lines {
		}
	}()
}

// close ends the server and the client session: a stdio server by
// closing its stdin, as an agent that exits does (the server must then
// exit), an HTTP server by SIGTERM (^C).
func (s *mcpServer) close() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	if s.stdin != nil {
		s.stdin.Close()
	} else {
		s.cmd.Process.Signal(syscall.SIGTERM)
	}
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
		s.t.Errorf("guardrun mcp did not exit within 10s of its client closing; stderr: %s", s.stderr)
	}
	if s.session != nil {
		s.session.Close()
		s.session = nil
	}
	s.cmd = nil
}

// call calls a tool and returns its result; a protocol error fails the
// test.
func (s *mcpServer) call(t testing.TB, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s %v: %v\nstderr: %s", name, args, err, s.stderr)
	}
	return r
}

// text is a result's text content, every block joined.
func toolText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// bearer is an HTTP client that sends token as a bearer token.
func bearer(token string) *http.Client {
	return &http.Client{Transport: headerTransport{"Authorization": "Bearer " + token}}
}

type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpWorld is a world for guardrun mcp with config, whose WORK stands for
// the work directory, and files (relative to it) to start with.
func mcpWorld(t testing.TB, config string, files map[string]string) *world {
	t.Helper()
	w := runWorld(t, "")
	cfg := w.getenv("GUARDRUN_CONFIG")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(config, "WORK", w.work)), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(w.work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func describe(r *mcp.CallToolResult) string {
	return fmt.Sprintf("isError=%v text=%q", r.IsError, toolText(r))
}
