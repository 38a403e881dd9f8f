package request

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/runner"
	"github.com/guardrun/guardrun/netproxy"
	"github.com/guardrun/guardrun/rules"
)

// proxyAskTimeout bounds how long a connection waits for a person's
// answer before it is refused. A variable so tests can shorten it.
var proxyAskTimeout = 2 * time.Minute

// proxyLookup resolves names for the proxy; nil is the system resolver.
// Only a test build sets it (proxyhook_testhooks.go).
var proxyLookup func(ctx context.Context, host string) ([]netip.Addr, error)

// jobProxy is the network proxy of one job: started before the sandbox,
// closed after it.
type jobProxy struct {
	proxy *netproxy.Proxy
	dir   string
	stop  func() error
	route *runner.ProxyRoute
}

// startProxy starts the proxy for job j (sandbox.network: proxy): a unix
// socket in a fresh 0700 directory, each host judged by sandbox.domains
// and, where they ask, through the same gate and prompt as commands,
// every connection one audit line.
func (s *Session) startProxy(j *Job, cwd string, io IO) (*jobProxy, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("proxy: where is guardrun's own binary: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return nil, fmt.Errorf("proxy: where is guardrun's own binary: %w", err)
	}
	base := s.Env.Getenv("XDG_RUNTIME_DIR")
	if fi, err := os.Stat(base); base == "" || err != nil || !fi.IsDir() {
		base = os.TempDir()
	}
	dir, err := os.MkdirTemp(base, "guardrun-proxy-") // 0700
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	sock := filepath.Join(dir, "proxy.sock")
	// askMu keeps one prompt on the terminal at a time, also when a
	// connection gave up waiting and its prompt is still up.
	var askMu sync.Mutex
	p := &netproxy.Proxy{
		Domains:     s.Loaded.Cfg.Sandbox.Domains,
		AskTimeout:  proxyAskTimeout,
		LookupNetIP: proxyLookup,
		Ask: func(ctx context.Context, q netproxy.Query) netproxy.Answer {
			return s.askHost(ctx, &askMu, j, cwd, q, io)
		},
		Audit: func(r netproxy.Record) { s.auditConnection(j, cwd, r, io) },
		Logf: func(format string, args ...any) {
			fmt.Fprintf(io.Stderr, format+"\n", args...)
		},
	}
	stop, err := p.ServeUnix(sock)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &jobProxy{proxy: p, dir: dir, stop: stop, route: &runner.ProxyRoute{Exe: exe, Socket: sock}}, nil
}

func (jp *jobProxy) close() {
	jp.stop()
	jp.proxy.Close()
	os.RemoveAll(jp.dir)
}

// askHost puts an unlisted host to the gate: the mode, session memory and
// the person, as for a command. The prompt names the command that asked
// and the host and port.
func (s *Session) askHost(ctx context.Context, askMu *sync.Mutex, j *Job, cwd string, q netproxy.Query, io IO) netproxy.Answer {
	hp := q.Host + ":" + strconv.Itoa(q.Port)
	var addrs []string
	for _, a := range q.Addrs {
		addrs = append(addrs, a.String())
	}
	d := &rules.Decision{
		Decision: rules.Ask,
		Reason:   q.Reason,
		Proxy:    true,
		Parts: []rules.Part{{
			Kind: "network", Text: "connect to " + hp, Decision: rules.Ask,
			Reason: q.Reason + " (" + strings.Join(addrs, ", ") + ")",
		}},
	}
	req := &approval.Request{
		Display:  j.Display(),
		Decision: d,
		Cwd:      cwd,
		Sandbox:  "this command wants to reach " + hp + "; " + s.Loaded.Cfg.Sandbox.Domains.Summary(),
		Summary:  "connect to " + hp,
	}
	if s.Store != nil {
		req.Key = approval.CommandKey([][]string{{"network", q.Host, strconv.Itoa(q.Port)}}, []string{""})
	}
	type result struct {
		out approval.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		askMu.Lock()
		defer askMu.Unlock()
		if ctx.Err() != nil {
			done <- result{err: ctx.Err()}
			return
		}
		out, err := s.Ask(ctx, req, io, nil)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return netproxy.Answer{By: "mode", Refusal: fmt.Sprintf("guardrun: denied: %s: %v", hp, r.err)}
		}
		// The gate's hint is about commands; a host is allowed elsewhere.
		refusal := strings.Replace(r.out.Refusal, "add a rule with approval: false to ", "add the host to sandbox.domains.allow in ", 1)
		refusal = strings.Replace(refusal, "add a rule with approval: false", "add the host to sandbox.domains.allow", 1)
		return netproxy.Answer{Allow: r.out.Run, By: r.out.By, Note: r.out.Note, Refusal: refusal}
	case <-ctx.Done():
		return netproxy.Answer{By: "mode", Refusal: fmt.Sprintf("guardrun: denied: no answer about %s in time", hp)}
	}
}

// auditConnection writes one audit line for a connection through the
// proxy: host, port, verdict, who decided, bytes and duration, with the
// command that made it.
func (s *Session) auditConnection(j *Job, cwd string, r netproxy.Record, io IO) {
	rec := approval.Record{
		Time:       r.Start.UTC(),
		Session:    s.ID,
		Cwd:        cwd,
		Op:         "connect",
		Path:       r.Host + ":" + strconv.Itoa(r.Port),
		Host:       r.Host,
		Port:       r.Port,
		Addr:       r.Addr,
		Method:     r.Method,
		Bytes:      r.BytesIn + r.BytesOut,
		BytesIn:    r.BytesIn,
		BytesOut:   r.BytesOut,
		Verdict:    r.Verdict,
		Outcome:    r.Outcome,
		DecidedBy:  r.DecidedBy,
		Reason:     r.Reason,
		Note:       r.Note,
		Sandbox:    s.Backend,
		DurationMS: float64(r.Duration.Microseconds()) / 1000,
	}
	if j.Argv != nil {
		rec.Argv = j.Argv
	} else {
		rec.Script = j.Script
	}
	s.Audit(rec, io.Stderr)
}
