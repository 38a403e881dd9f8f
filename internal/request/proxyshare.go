package request

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/guardrun/guardrun/netproxy"
	"github.com/guardrun/guardrun/runner"
	"github.com/guardrun/guardrun/sandbox"
)

// The supervisor's shared proxy. `guardrun supervise` with network: proxy
// runs one netproxy.Proxy for its lifetime and puts its control socket in
// the agent's environment ($GUARDRUN_PROXY, in a 0700 directory that
// sandboxes hide; under landlock also $GUARDRUN_PROXY_ADDR, the proxy's
// loopback TCP address). Each guardrun the agent starts, for a command
// that needs the proxy, makes a secret token, registers it there and
// keeps the connection open while the command runs:
//
//	child → {"v":1,"type":"register","token":"...","argv":[...]|"script":"...","cwd":"...","session":"...","backend":"bwrap"}
//	proxy ← {"type":"ask","id":1,"host":"h","port":443,"addrs":[...],"reason":"..."}
//	child → {"type":"answer","id":1,"allow":true,"by":"person","note":"","refusal":""}
//	proxy ← {"type":"log","line":"guardrun: blocked: ..."}
//	proxy ← {"error":"..."}                       the registration was refused
//
// The child does not wait for an answer before it starts the command (a
// round trip to another process costs milliseconds on a busy machine):
// the proxy holds a request or a bridge that names a token not yet
// registered for a moment (netproxy.TokenWait).
//
// Which command a connection belongs to is never taken from the
// connection's word: under bwrap the bridge hands its listener over on
// the proxy's bridge socket with the command's token (the command itself
// cannot open a unix socket), under landlock each request carries the
// token (known only to the command, in its proxy URL; none or a wrong
// one, 407). Hosts that ask go to the child, which asks through its gate
// (mode, session memory, the supervisor's prompt) exactly as for a
// command; the child hanging up ends the command's registration, token
// and connections. The proxy writes the audit lines itself, with the
// command the child registered.

// ProxyEnvVar names the shared proxy's control socket, ProxyAddrEnvVar
// its loopback TCP address (landlock).
const (
	ProxyEnvVar     = "GUARDRUN_PROXY"
	ProxyAddrEnvVar = "GUARDRUN_PROXY_ADDR"
)

// bridgeSockName is the shared proxy's socket for bwrap bridges, next to
// its control socket.
const bridgeSockName = "bridge.sock"

type shareMsg struct {
	V       int      `json:"v,omitempty"`
	Type    string   `json:"type,omitempty"`
	Argv    []string `json:"argv,omitempty"`
	Script  string   `json:"script,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Session string   `json:"session,omitempty"`
	Backend string   `json:"backend,omitempty"`

	Socket string `json:"socket,omitempty"`
	Addr   string `json:"addr,omitempty"`
	Token  string `json:"token,omitempty"`
	Error  string `json:"error,omitempty"`

	ID      int64    `json:"id,omitempty"`
	Host    string   `json:"host,omitempty"`
	Port    int      `json:"port,omitempty"`
	Addrs   []string `json:"addrs,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Allow   bool     `json:"allow,omitempty"`
	By      string   `json:"by,omitempty"`
	Note    string   `json:"note,omitempty"`
	Refusal string   `json:"refusal,omitempty"`
	Line    string   `json:"line,omitempty"`
}

// shareConn sends and reads shareMsg lines.
type shareConn struct {
	c  *net.UnixConn
	br *bufio.Reader
	mu sync.Mutex
}

func (sc *shareConn) send(m shareMsg) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err = sc.c.Write(append(b, '\n'))
	return err
}

func (sc *shareConn) read() (shareMsg, error) {
	var m shareMsg
	line, err := sc.br.ReadSlice('\n')
	if err != nil {
		return m, err
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("proxy control: malformed message: %w", err)
	}
	return m, nil
}

// SharedProxy is the supervisor's side.
type SharedProxy struct {
	s   *Session
	p   *netproxy.Proxy
	dir string
	ctl *net.UnixListener
	tcp net.Listener // landlock: where commands connect, with their token
	io  IO
}

// StartSharedProxy starts the supervisor's proxy and its control socket.
func StartSharedProxy(s *Session, session string, io IO) (*SharedProxy, error) {
	dir, err := proxyDir(s.Env)
	if err != nil {
		return nil, err
	}
	sp := &SharedProxy{s: s, dir: dir, io: io}
	sp.p = &netproxy.Proxy{
		Domains: s.Loaded.Cfg.Sandbox.Domains, AskTimeout: proxyAskTimeout, LookupNetIP: proxyLookup,
		// Requests that name no command (no valid token).
		Audit: func(r netproxy.Record) {
			sp.s.auditConnectionOf(connOwner{session: session, backend: s.Backend.Name(), pid: os.Getpid(),
				script: "(unknown: no valid proxy token)"}, r, io)
		},
	}
	sp.ctl, err = net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "control.sock"), Net: "unix"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("proxy: %w", err)
	}
	if s.Backend.ProxyMode() == runner.ProxyLoopback {
		sp.tcp, err = net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			go sp.p.ServeTokens(sp.tcp)
		}
	} else {
		_, err = sp.p.ServeUnixTokens(filepath.Join(dir, bridgeSockName))
	}
	if err != nil {
		sp.ctl.Close()
		sp.p.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("proxy: %w", err)
	}
	go sp.serve()
	return sp, nil
}

func (sp *SharedProxy) path() string { return filepath.Join(sp.dir, "control.sock") }

// Env are the agent's variables that lead its commands here.
func (sp *SharedProxy) Env() []string {
	out := []string{ProxyEnvVar + "=" + sp.path()}
	if sp.tcp != nil {
		out = append(out, ProxyAddrEnvVar+"="+sp.tcp.Addr().String())
	}
	return out
}

func (sp *SharedProxy) Close() {
	sp.ctl.Close()
	sp.p.Close()
	os.RemoveAll(sp.dir)
}

func (sp *SharedProxy) serve() {
	for {
		c, err := sp.ctl.AcceptUnix()
		if err != nil {
			return
		}
		go sp.handle(c)
	}
}

// handle serves one command's registration for as long as the child
// keeps it open.
func (sp *SharedProxy) handle(c *net.UnixConn) {
	defer c.Close()
	pid, err := netproxy.PeerPID(c)
	if err != nil {
		return
	}
	sc := &shareConn{c: c, br: bufio.NewReaderSize(c, 64<<10)}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	reg, err := sc.read()
	if err != nil || reg.V != 1 || reg.Type != "register" {
		sc.send(shareMsg{Error: "expected a register message"})
		return
	}
	c.SetReadDeadline(time.Time{})
	owner := connOwner{argv: reg.Argv, script: reg.Script, cwd: reg.Cwd, session: reg.Session, backend: reg.Backend, pid: pid}

	var (
		amu     sync.Mutex
		waiting = map[int64]chan shareMsg{}
		nextID  int64
		gone    = make(chan struct{})
	)
	cl := &netproxy.Client{
		Audit: func(r netproxy.Record) { sp.s.auditConnectionOf(owner, r, sp.io) },
		Logf: func(format string, args ...any) {
			sc.send(shareMsg{Type: "log", Line: fmt.Sprintf(format, args...)})
		},
		Ask: func(ctx context.Context, q netproxy.Query) netproxy.Answer {
			ch := make(chan shareMsg, 1)
			amu.Lock()
			nextID++
			id := nextID
			waiting[id] = ch
			amu.Unlock()
			defer func() { amu.Lock(); delete(waiting, id); amu.Unlock() }()
			var addrs []string
			for _, a := range q.Addrs {
				addrs = append(addrs, a.String())
			}
			hp := net.JoinHostPort(q.Host, strconv.Itoa(q.Port))
			if err := sc.send(shareMsg{Type: "ask", ID: id, Host: q.Host, Port: q.Port, Addrs: addrs, Reason: q.Reason}); err != nil {
				return netproxy.Answer{By: "mode", Refusal: "guardrun: denied: " + hp + ": the command's guardrun is gone"}
			}
			select {
			case m := <-ch:
				return netproxy.Answer{Allow: m.Allow, By: m.By, Note: m.Note, Refusal: m.Refusal}
			case <-ctx.Done():
				return netproxy.Answer{By: "mode", Refusal: fmt.Sprintf("guardrun: denied: no answer about %s in time", hp)}
			case <-gone:
				return netproxy.Answer{By: "mode", Refusal: "guardrun: denied: " + hp + ": the command's guardrun is gone"}
			}
		},
	}
	if err := sp.p.RegisterToken(cl, reg.Token); err != nil {
		sc.send(shareMsg{Error: err.Error()})
		return
	}
	defer cl.Close()
	defer close(gone)
	for {
		m, err := sc.read()
		if err != nil {
			return
		}
		if m.Type != "answer" {
			return
		}
		amu.Lock()
		ch := waiting[m.ID]
		amu.Unlock()
		if ch != nil {
			select {
			case ch <- m:
			default:
			}
		}
	}
}

// joinSharedProxy registers job j with the supervisor's proxy named by
// $GUARDRUN_PROXY. ok is false when there is none, or it does not answer
// (a stale variable): the command then gets a proxy of its own.
func (s *Session) joinSharedProxy(j *Job, cwd string, io IO) (jp *jobProxy, ok bool, err error) {
	path := s.Env.Getenv(ProxyEnvVar)
	if path == "" {
		return nil, false, nil
	}
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return nil, false, nil
	}
	uc := c.(*net.UnixConn)
	sc := &shareConn{c: uc, br: bufio.NewReaderSize(uc, 64<<10)}
	fail := func(err error) (*jobProxy, bool, error) {
		c.Close()
		return nil, true, fmt.Errorf("proxy: the supervisor's proxy: %w", err)
	}
	tok, err := netproxy.NewToken()
	if err != nil {
		return fail(err)
	}
	jp = &jobProxy{close: func() { c.Close() }}
	if s.Backend.ProxyMode() == runner.ProxyLoopback {
		ap, err := netip.ParseAddrPort(s.Env.Getenv(ProxyAddrEnvVar))
		if err != nil || !ap.Addr().IsLoopback() {
			return fail(fmt.Errorf("$%s is not a loopback address and port: %q", ProxyAddrEnvVar, s.Env.Getenv(ProxyAddrEnvVar)))
		}
		jp.addr = ap
		jp.env = sandbox.ProxyEnv(netproxy.TokenAddr(tok, ap.String()))
	} else {
		exe, err := guardrunExe()
		if err != nil {
			return fail(err)
		}
		jp.route = &runner.ProxyRoute{Exe: exe, Socket: filepath.Join(filepath.Dir(path), bridgeSockName), Token: tok}
	}
	// Sent, not waited for: see the protocol above.
	reg := shareMsg{V: 1, Type: "register", Token: tok, Argv: j.Argv, Cwd: cwd, Session: s.ID, Backend: s.Backend.Name()}
	if j.Argv == nil {
		reg.Script = j.Script
	}
	if err := sc.send(reg); err != nil {
		return fail(err)
	}
	var askMu sync.Mutex
	go func() {
		for {
			m, err := sc.read()
			if err != nil {
				return
			}
			switch m.Type {
			case "":
				if m.Error != "" {
					fmt.Fprintf(io.Stderr, "guardrun: the supervisor's proxy refused this command: %s\n", m.Error)
				}
			case "log":
				fmt.Fprintln(io.Stderr, m.Line)
			case "ask":
				go func(m shareMsg) {
					q := netproxy.Query{Host: m.Host, Port: m.Port, Reason: m.Reason}
					for _, a := range m.Addrs {
						if ad, err := netip.ParseAddr(a); err == nil {
							q.Addrs = append(q.Addrs, ad)
						}
					}
					ctx, cancel := context.WithTimeout(context.Background(), proxyAskTimeout)
					a := s.askHost(ctx, &askMu, j, cwd, q, io)
					cancel()
					sc.send(shareMsg{Type: "answer", ID: m.ID, Allow: a.Allow, By: a.By, Note: a.Note, Refusal: a.Refusal})
				}(m)
			}
		}
	}()
	return jp, true, nil
}
