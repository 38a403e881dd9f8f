package request

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/sys/ipc"
	"github.com/guardrun/guardrun/internal/sys/sockdir"
	"github.com/guardrun/guardrun/netproxy"
	"github.com/guardrun/guardrun/rules"
	"github.com/guardrun/guardrun/runner"
	"github.com/guardrun/guardrun/sandbox"
)

// proxyAskTimeout bounds how long a connection waits for a person's
// answer before it is refused. A variable so tests can shorten it.
var proxyAskTimeout = 2 * time.Minute

// proxyLookup resolves names for the proxy; nil is the system resolver.
// Only a test build sets it (proxyhook_testhooks.go).
var proxyLookup func(ctx context.Context, host string) ([]netip.Addr, error)

// jobProxy is the network proxy of one job: started before the sandbox
// (or registered with the supervisor's), closed after it.
type jobProxy struct {
	// route is the bwrap sandbox's way to the proxy (nil under landlock).
	route *runner.ProxyRoute
	// addr is where a landlock sandbox connects to the proxy; env the
	// proxy variables it gets (with the token in the URL).
	addr  netip.AddrPort
	env   []string
	close func()
}

// proxyFor gives job j the proxy: the supervisor's, shared by every
// command of its session, when $GUARDRUN_PROXY names one that answers,
// else one of its own for the command's lifetime.
func (s *Session) proxyFor(j *Job, cwd string, io IO) (*jobProxy, error) {
	if jp, ok, err := s.joinSharedProxy(j, cwd, io); ok || err != nil {
		return jp, err
	}
	return s.startProxy(j, cwd, io)
}

// proxyError says why commands with the proxy cannot run under this
// session's backend, or nil.
func proxyError(s *Session) error {
	if !s.Sandboxed || !s.Loaded.Cfg.Sandbox.Proxy {
		return nil
	}
	return s.Backend.CheckProxy()
}

// guardrunExe is guardrun's own binary, which the bwrap bridge runs.
func guardrunExe() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("proxy: where is guardrun's own binary: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", fmt.Errorf("proxy: where is guardrun's own binary: %w", err)
	}
	return exe, nil
}

// proxyDir makes a fresh 0700 directory for proxy sockets.
func proxyDir(e *config.Env) (string, error) {
	dir, err := ipc.PrivateDir(sockdir.Base(e.Getenv), "guardrun-proxy-", "control.sock")
	if err != nil {
		return "", fmt.Errorf("proxy: %w", err)
	}
	return dir, nil
}

// startProxy starts the proxy for job j (sandbox.network: proxy), each
// host judged by sandbox.domains and, where they ask, through the same
// gate and prompt as commands, every connection one audit line. bwrap:
// a unix socket in a fresh 0700 directory, on which the sandbox's bridge
// hands over its listener. landlock: a loopback TCP port, each request
// carrying the command's token.
func (s *Session) startProxy(j *Job, cwd string, io IO) (*jobProxy, error) {
	// askMu keeps one prompt on the terminal at a time, also when a
	// connection gave up waiting and its prompt is still up.
	var askMu sync.Mutex
	ask := func(ctx context.Context, q netproxy.Query) netproxy.Answer {
		return s.askHost(ctx, &askMu, j, cwd, q, io)
	}
	audit := func(r netproxy.Record) { s.auditConnection(j, cwd, r, io) }
	logf := func(format string, args ...any) {
		fmt.Fprintf(io.Stderr, format+"\n", args...)
	}
	if s.Backend.ProxyMode() == runner.ProxyLoopback {
		p := &netproxy.Proxy{
			Domains: s.Loaded.Cfg.Sandbox.Domains, AskTimeout: proxyAskTimeout, LookupNetIP: proxyLookup,
			Audit: audit, // requests without the token
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("proxy: %w", err)
		}
		cl := &netproxy.Client{Ask: ask, Audit: audit, Logf: logf}
		tok, err := p.Register(cl)
		if err != nil {
			l.Close()
			return nil, err
		}
		go p.ServeTokens(l)
		addr := l.Addr().(*net.TCPAddr).AddrPort()
		return &jobProxy{
			addr:  addr,
			env:   sandbox.ProxyEnv(netproxy.TokenAddr(tok, addr.String())),
			close: func() { cl.Close(); p.Close() },
		}, nil
	}
	exe, err := guardrunExe()
	if err != nil {
		return nil, err
	}
	dir, err := proxyDir(s.Env)
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "proxy.sock")
	p := &netproxy.Proxy{
		Domains:     s.Loaded.Cfg.Sandbox.Domains,
		AskTimeout:  proxyAskTimeout,
		LookupNetIP: proxyLookup,
		Ask:         ask,
		Audit:       audit,
		Logf:        logf,
	}
	stop, err := p.ServeUnix(sock)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &jobProxy{
		route: &runner.ProxyRoute{Exe: exe, Socket: sock},
		close: func() { stop(); p.Close(); os.RemoveAll(dir) },
	}, nil
}

// askHost puts an unlisted host to the gate: the mode, session memory and
// the person, as for a command. The prompt names the command that asked
// and the host and port.
func (s *Session) askHost(ctx context.Context, askMu *sync.Mutex, j *Job, cwd string, q netproxy.Query, io IO) netproxy.Answer {
	hp := q.Host + ":" + strconv.Itoa(q.Port)
	// A name is not resolved before the answer: Addrs only for an address.
	var addrs []string
	for _, a := range q.Addrs {
		addrs = append(addrs, a.String())
	}
	partReason := q.Reason
	if len(addrs) > 0 {
		partReason += " (" + strings.Join(addrs, ", ") + ")"
	}
	d := &rules.Decision{
		Decision: rules.Ask,
		Reason:   q.Reason,
		Proxy:    true,
		Parts: []rules.Part{{
			Kind: "network", Text: "connect to " + hp, Decision: rules.Ask,
			Reason: partReason,
		}},
	}
	req := &approval.Request{
		Display:  s.Display(j),
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
	c := connOwner{argv: j.Argv, script: j.Script, cwd: cwd, session: s.ID, backend: s.Backend.Name(), pid: os.Getpid()}
	s.auditConnectionOf(c, r, io)
}

// connOwner is the command a connection belongs to, for its audit line.
type connOwner struct {
	argv    []string
	script  string
	cwd     string
	session string
	backend string
	pid     int
}

func (s *Session) auditConnectionOf(c connOwner, r netproxy.Record, io IO) {
	rec := approval.Record{
		Time:       r.Start.UTC(),
		Session:    c.session,
		Cwd:        c.cwd,
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
		Sandbox:    c.backend,
		DurationMS: float64(r.Duration.Microseconds()) / 1000,
		PID:        c.pid,
	}
	if c.argv != nil {
		rec.Argv = c.argv
	} else {
		rec.Script = c.script
	}
	s.Audit(rec, io.Stderr)
}
