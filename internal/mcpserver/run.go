package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrun/guardrun/internal/request"
)

// Bounds of a run. Keep in sync with the tool's description and schema.
const (
	defaultTimeout   = 300 // seconds
	maxTimeout       = 3600
	defaultOutput    = 20000 // bytes of each stream
	minOutput        = 1024
	maxOutput        = 1 << 20
	progressInterval = 5 * time.Second
)

type runIn struct {
	Script         string `json:"script" jsonschema:"The shell script to run, as for sh -c (the configured shell, bash by default, runs it). May span several lines."`
	Cwd            string `json:"cwd,omitempty" jsonschema:"Directory to run it in: absolute, or relative to the directory guardrun mcp works in (the default)."`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"Seconds the script may run once it is allowed to (time spent waiting for the person's approval does not count); then it is ended. Default 300, at most 3600."`
	MaxOutputBytes int    `json:"max_output_bytes,omitempty" jsonschema:"Bytes kept of stdout and of stderr each; when a stream printed more, its start is dropped and its end kept. Default 20000, at most 1048576."`
}

type runOut struct {
	ExitCode        int    `json:"exit_code" jsonschema:"The script's exit status: 128+N when signal N ended it (143 or 137 after the timeout)."`
	Stdout          string `json:"stdout" jsonschema:"Standard output: its end when stdout_truncated."`
	Stderr          string `json:"stderr" jsonschema:"Standard error: its end when stderr_truncated."`
	StdoutTruncated bool   `json:"stdout_truncated" jsonschema:"The start of stdout was dropped to keep max_output_bytes."`
	StderrTruncated bool   `json:"stderr_truncated" jsonschema:"The start of stderr was dropped to keep max_output_bytes."`
	StdoutBytes     int64  `json:"stdout_bytes" jsonschema:"Bytes the script wrote to stdout in all."`
	StderrBytes     int64  `json:"stderr_bytes" jsonschema:"Bytes the script wrote to stderr in all."`
	TimedOut        bool   `json:"timed_out" jsonschema:"The script was ended at timeout_seconds."`
	DurationMS      int64  `json:"duration_ms" jsonschema:"How long it ran, from when it was allowed to."`
}

// run is the run tool: the script through request.Session.Run, as
// `guardrun -c SCRIPT` takes it (decision, approval, sandbox, audit), its
// output kept to the tail of each stream.
func (s *Server) run(ctx context.Context, req *mcp.CallToolRequest, in runIn) (*mcp.CallToolResult, runOut, error) {
	if strings.TrimSpace(in.Script) == "" {
		return nil, runOut{}, errors.New("guardrun: the script is empty")
	}
	timeout := time.Duration(orDefault(in.TimeoutSeconds, defaultTimeout)) * time.Second
	keep := orDefault(in.MaxOutputBytes, defaultOutput)
	dir, err := s.dir(in.Cwd)
	if err != nil {
		return nil, runOut{}, err
	}
	ctx, end := s.runs.start(ctx, req.Session.ID())
	defer end()
	sess, err := s.open(req, dir)
	if err != nil {
		return nil, runOut{}, errors.New(oneLine(err))
	}
	var phase atomic.Value
	phase.Store("deciding")
	stop := keepAlive(ctx, req, func() string { return phase.Load().(string) })
	defer stop()

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var started time.Time
	var timedOut atomic.Bool
	stdout, stderr := newTail(keep), newTail(keep)
	job := &request.Job{
		Script: in.Script, Cwd: dir, Via: Via,
		// The command is sent no signal this process gets: each call has
		// its own lifetime (its context).
		Signals: make(chan os.Signal),
		// Called once the request was let through, before it runs: the
		// timeout counts from here, not from while the person thinks.
		Commit: func() error {
			started = time.Now()
			phase.Store("running")
			t := time.AfterFunc(timeout, func() { timedOut.Store(true); cancel() })
			context.AfterFunc(runCtx, func() { t.Stop() })
			return nil
		},
	}
	if p, ok := sess.Prompter.(*elicitor); ok {
		p.asking = chain(p.asking, func() { phase.Store("waiting for the person's approval") })
	}
	err = sess.Run(runCtx, job, request.IO{Stdout: stdout, Stderr: stderr})
	code := 0
	var st *request.ExitStatus
	var ref *request.Refusal
	switch {
	case errors.As(err, &ref):
		return nil, runOut{}, errors.New(ref.Line)
	case errors.As(err, &st):
		code = st.Code
	case err != nil && ctx.Err() != nil:
		return nil, runOut{}, fmt.Errorf("guardrun: cancelled: %v", context.Cause(ctx))
	case err != nil:
		return nil, runOut{}, errors.New(oneLine(err))
	}
	o, e := stdout.kept(), stderr.kept()
	out := runOut{
		ExitCode: code, Stdout: o.text, Stderr: e.text,
		StdoutTruncated: o.truncated, StderrTruncated: e.truncated,
		StdoutBytes: o.total, StderrBytes: e.total,
		TimedOut: timedOut.Load(), DurationMS: time.Since(started).Milliseconds(),
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: runText(out, o, e, timeout)}}}, out, nil
}

// runText is the result as the model reads it: the status, then each
// stream that printed anything, a truncated one after a line saying so.
func runText(out runOut, o, e kept, timeout time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit status %d", out.ExitCode)
	if out.TimedOut {
		fmt.Fprintf(&b, " (ended after the timeout of %s)", timeout)
	}
	b.WriteString("\n")
	for _, st := range []struct {
		name string
		k    kept
	}{{"stdout", o}, {"stderr", e}} {
		if st.k.total == 0 {
			continue
		}
		fmt.Fprintf(&b, "--- %s ---\n", st.name)
		if st.k.truncated {
			b.WriteString(st.k.mark(st.name))
		}
		b.WriteString(st.k.text)
		if !strings.HasSuffix(st.k.text, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// dir is the directory a call names (cwd), absolute: relative to the one
// the server works in; it must exist.
func (s *Server) dir(p string) (string, error) {
	base := s.cfg.Env.Cwd
	if p == "" {
		return base, nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	p = filepath.Clean(p)
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return "", fmt.Errorf("guardrun: cwd %s: %v", p, errors.Unwrap(err))
	case !fi.IsDir():
		return "", fmt.Errorf("guardrun: cwd %s is not a directory", p)
	}
	return p, nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func chain(a, b func()) func() {
	return func() {
		if a != nil {
			a()
		}
		b()
	}
}

// keepAlive sends a progress notification every progressInterval while
// the call lasts, when the client asked for progress (a progress token),
// saying what it waits for: a client that restarts its timeout on
// progress then waits out a long approval or build. stop ends it.
func keepAlive(ctx context.Context, req *mcp.CallToolRequest, what func() string) (stop func()) {
	tok := req.Params.GetProgressToken()
	if tok == nil {
		return func() {}
	}
	// The goroutine's stop condition: done closes (stop, which then waits
	// for it, so that no notification follows the call's result) or the
	// call's context ends.
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				secs := time.Since(start).Seconds()
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: tok, Progress: secs,
					Message: fmt.Sprintf("guardrun: %s (%.0fs)", what(), secs),
				})
			}
		}
	}()
	return func() { close(done); <-finished }
}
