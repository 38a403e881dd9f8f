package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/request"
)

// ProtocolVersions are the MCP versions guardrun speaks: those in which a
// server may ask the client (elicitation/create) while it handles a tool
// call. See docs/mcp.md for why 2026-07-28 is left out.
var ProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Via is what the audit records of requests that came through a tool say
// in "via".
const Via = "mcp"

// maxMessageBytes bounds one message from the client, on stdio and over
// HTTP: a write_file's content (MaxWriteBytes) as JSON text.
const maxMessageBytes = 64 << 20

// Config is how the server was started.
type Config struct {
	// Options are guardrun's common flags (--config, --mode, --session,
	// --backend).
	Options request.Options
	// Env is where config and state are found; its Cwd is the directory
	// the tools work in.
	Env *config.Env
	// Log takes guardrun's own messages: the SDK's errors, config
	// warnings. Never the protocol's stream.
	Log io.Writer
	// NoElicitation never asks the person through the client, even one
	// that declares elicitation (the person answers elsewhere: the
	// supervisor, or nowhere, which is strict).
	NoElicitation bool
	// Version is guardrun's, as the client is told.
	Version string
}

// Server is guardrun's MCP server: one mcp.Server, any number of client
// sessions (one over stdio).
type Server struct {
	cfg  Config
	mcp  *mcp.Server
	runs *calls
	// stdioID names the grants of "approve for session" of the one
	// session a stdio server has, which has no session id of its own.
	stdioID string
	warned  *onceWriter
}

// New builds the server and its tools.
func New(cfg Config) *Server {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	s := &Server{cfg: cfg, runs: newCalls(), stdioID: "mcp-" + rand.Text(), warned: &onceWriter{w: cfg.Log}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "guardrun", Title: "guardrun", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       slog.New(slog.NewTextHandler(cfg.Log, &slog.HandlerOptions{Level: slog.LevelWarn})),
		// Tools (a fixed list, never changed) and logging: no resources,
		// prompts or completions.
		//lint:ignore SA1019 logging is deprecated from protocol 2026-07-28 on, which guardrun does not speak (ProtocolVersions)
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Logging: &mcp.LoggingCapabilities{}},
		SupportedProtocolVersions: ProtocolVersions,
	})
	s.addTools()
	addFixtures(s.mcp)
	return s
}

const instructions = `guardrun runs shell scripts and file operations on this machine for you. ` +
	`Each request is judged by the person's rules and file zones, may wait for the person's approval, ` +
	`and every command runs in an OS sandbox (writes only inside the project's read-write zones, no network unless the rules allow it). ` +
	`A refusal is a tool error starting with "guardrun:" that says why (and the person's note, if any): ` +
	`change the request or ask the person; do not send the same request again unchanged.`

// ServeStdio serves one client on r and w (the process's stdin and
// stdout) until the client closes r or ctx ends. Every call still running
// then is cancelled, and the sandboxes of its commands ended.
func (s *Server) ServeStdio(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ss, err := s.mcp.Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w, MaxLineLength: maxMessageBytes}, nil)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err = <-ended:
	case <-ctx.Done():
	}
	// The session is over: end what its calls run before the SDK waits
	// for their handlers to return.
	s.runs.cancelAll()
	if ctx.Err() != nil {
		ss.Close()
		<-ended
		return nil
	}
	return err
}

// grantSession is the session "approve for session" grants of a client
// session are kept in: --session, else $GUARDRUN_SESSION, else the MCP
// session itself (a stdio server has one).
func (s *Server) grantSession(ss *mcp.ServerSession) string {
	if s.cfg.Options.Session != "" {
		return s.cfg.Options.Session
	}
	if v := s.cfg.Env.Getenv("GUARDRUN_SESSION"); v != "" {
		return v
	}
	if id := ss.ID(); id != "" {
		return "mcp-" + id
	}
	return s.stdioID
}

// open opens the request session a tool call goes through, in dir: the
// config found from there, the OS sandbox checked, grants of the client's
// session, and who answers prompts (see prompterFor).
func (s *Server) open(req *mcp.CallToolRequest, dir string) (*request.Session, error) {
	e := s.cfg.Env.For(dir, noColour(s.cfg.Env.Getenv))
	opts := s.cfg.Options
	opts.Session = s.grantSession(req.Session)
	sess, err := request.OpenEnv(opts, e, request.IO{Stderr: s.warned})
	if err != nil {
		return nil, err
	}
	// A stdio server's terminal is its client's (the agent's), and an
	// HTTP server's is nobody's to take: never ask there.
	sess.NoTerminal = true
	if p := s.prompterFor(req); p != nil {
		sess.Prompter = p
	}
	return sess, nil
}

// noColour is getenv with NO_COLOR set: what the person is shown goes
// into a client's form as plain text.
func noColour(getenv func(string) string) func(string) string {
	return func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return getenv(k)
	}
}

// onceWriter passes each line on once: the same config warning, found
// again by every tool call, is logged the first time.
type onceWriter struct {
	mu   sync.Mutex
	w    io.Writer
	seen map[string]bool
	buf  bytes.Buffer
}

func (o *onceWriter) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	for {
		line, err := o.buf.ReadString('\n')
		if err != nil {
			o.buf.WriteString(line) // an unfinished line waits for its end
			break
		}
		if o.seen == nil {
			o.seen = map[string]bool{}
		}
		if !o.seen[line] {
			o.seen[line] = true
			io.WriteString(o.w, line)
		}
	}
	return len(p), nil
}

// oneLine makes an error one line an agent reads, starting with
// "guardrun: ".
func oneLine(err error) string {
	msg := strings.TrimSpace(strings.ReplaceAll(err.Error(), "\n", " "))
	if !strings.HasPrefix(msg, "guardrun: ") {
		msg = "guardrun: " + msg
	}
	return msg
}

// ProtectStdout keeps fmt's and log's defaults off the protocol's stream of a
// stdio server: nothing but the transport may write there.
func ProtectStdout() (protocol *os.File) {
	protocol = os.Stdout
	os.Stdout = os.Stderr
	return protocol
}

// Shutdown cancels every call still running, ending its command's
// sandbox; the HTTP server's connections are the caller's to close.
func (s *Server) Shutdown() { s.runs.cancelAll() }
