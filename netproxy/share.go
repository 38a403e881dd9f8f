package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/guardrun/guardrun/internal/sys/ipc"
	"github.com/guardrun/guardrun/rules"
)

// A shared proxy. `guardrun supervise` with network: proxy runs one
// Proxy for its lifetime (StartShared) and puts its control socket in the
// agent's environment ($GUARDRUN_PROXY, in a 0700 directory that
// sandboxes hide; under landlock also $GUARDRUN_PROXY_ADDR, the proxy's
// loopback TCP address). Each guardrun the agent starts, for a command
// that needs the proxy, makes a secret token, registers it there (Join)
// and keeps the connection open while the command runs. On the control
// socket, package ipc's messages in protocol guardrun-proxy (after the
// hellos):
//
//	child → {"type":"register","body":{"token":"...","argv":[...]|"script":"...","cwd":"...","session":"...","backend":"bwrap"}}
//	proxy ← {"type":"ask","id":1,"body":{"host":"h","port":443,"addrs":[...],"reason":"..."}}
//	child → {"reply":1,"body":{"allow":true,"by":"person","note":"","refusal":""}}
//	proxy ← {"type":"log","body":{"line":"guardrun: blocked: ..."}}
//	proxy ← {"type":"error","error":"..."}     the registration was refused
//
// The child does not wait for an answer before it starts the command (a
// round trip to another process costs milliseconds on a busy machine):
// the proxy holds a request or a bridge that names a token not yet
// registered for a moment (TokenWait).
//
// Which command a connection belongs to is never taken from the
// connection's word: under bwrap the bridge hands its listener over on
// the proxy's bridge socket with the command's token (the command itself
// cannot open a unix socket), under landlock each request carries the
// token (known only to the command, in its proxy URL; none or a wrong
// one, 407). Hosts that ask go to the child, which asks through its gate
// (mode, session memory, the supervisor's prompt) exactly as for a
// command; the child hanging up ends the command's registration, token
// and connections. The proxy's side audits each connection, with the
// command the child registered and the pid the kernel gives for it.

// SharedEnvVar names a shared proxy's control socket, SharedAddrEnvVar
// its loopback TCP address (landlock).
const (
	SharedEnvVar     = "GUARDRUN_PROXY"
	SharedAddrEnvVar = "GUARDRUN_PROXY_ADDR"
)

// shareProtocol is the control socket's protocol.
var shareProtocol = ipc.Protocol{Name: "guardrun-proxy", Version: 2}

const (
	controlSockName = "control.sock"
	// bridgeSockName is the shared proxy's socket for bwrap bridges,
	// next to its control socket.
	bridgeSockName = "bridge.sock"
	// registerTimeout bounds the wait for a child's registration.
	registerTimeout = 10 * time.Second
)

// Command is a command registered with a shared proxy, whose
// connections its audit records name.
type Command struct {
	Argv    []string `json:"argv,omitempty"`
	Script  string   `json:"script,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Session string   `json:"session,omitempty"`
	Backend string   `json:"backend,omitempty"`
	// PID is the process that registered it, as the kernel says (it is
	// not sent).
	PID int `json:"-"`
}

type registration struct {
	Token string `json:"token"`
	Command
}

type wireQuery struct {
	Host   string   `json:"host"`
	Port   int      `json:"port"`
	Addrs  []string `json:"addrs,omitempty"`
	Reason string   `json:"reason"`
}

type wireAnswer struct {
	Allow   bool   `json:"allow"`
	By      string `json:"by"`
	Note    string `json:"note"`
	Refusal string `json:"refusal"`
}

type logLine struct {
	Line string `json:"line"`
}

// SharedOptions are a shared proxy's.
type SharedOptions struct {
	Domains     rules.Domains
	AskTimeout  time.Duration
	LookupNetIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// TCP has commands connect to a loopback TCP port with their token
	// (landlock); else their bridges hand listeners over (bwrap).
	TCP bool
	// Base is where the sockets' private directory is made (see
	// ipc.PrivateDir).
	Base string
	// Audit records a connection; cmd is the command it belongs to, nil
	// for a request that names none (no valid token).
	Audit func(cmd *Command, r Record)
}

// Shared is a proxy that the commands of a session share.
type Shared struct {
	p   *Proxy
	o   SharedOptions
	dir string
	ctl *ipc.Listener
	srv ipc.Server
	tcp net.Listener
}

// StartShared starts a shared proxy and its control socket.
func StartShared(o SharedOptions) (*Shared, error) {
	dir, err := ipc.PrivateDir(o.Base, "guardrun-proxy-", controlSockName)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	sp := &Shared{o: o, dir: dir}
	sp.p = &Proxy{
		Domains: o.Domains, AskTimeout: o.AskTimeout, LookupNetIP: o.LookupNetIP,
		// Requests that name no command (no valid token).
		Audit: func(r Record) { sp.audit(nil, r) },
	}
	sp.ctl, err = ipc.Listen(filepath.Join(dir, controlSockName))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("proxy: %w", err)
	}
	if o.TCP {
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
	sp.srv = ipc.Server{Protocol: shareProtocol, Handle: sp.handle}
	go sp.srv.Serve(sp.ctl)
	return sp, nil
}

func (sp *Shared) audit(cmd *Command, r Record) {
	if sp.o.Audit != nil {
		sp.o.Audit(cmd, r)
	}
}

// Env are the agent's variables that lead its commands here.
func (sp *Shared) Env() []string {
	out := []string{SharedEnvVar + "=" + sp.ctl.Path()}
	if sp.tcp != nil {
		out = append(out, SharedAddrEnvVar+"="+sp.tcp.Addr().String())
	}
	return out
}

// Close stops the proxy: every registration ends, and the sockets go.
func (sp *Shared) Close() {
	sp.srv.Close()
	sp.p.Close()
	os.RemoveAll(sp.dir)
}

// handle serves one command's registration for as long as the child
// keeps it open.
func (sp *Shared) handle(ctx context.Context, c *ipc.Conn) {
	var cl *Client
	var registered atomic.Bool
	late := time.AfterFunc(registerTimeout, func() {
		if !registered.Load() {
			c.Close()
		}
	})
	defer late.Stop()
	notice := func(m *ipc.Message) error {
		if m.Type != "register" || cl != nil {
			return errors.New("expected a register message")
		}
		var reg registration
		if err := m.Decode(&reg); err != nil {
			return err
		}
		cmd := reg.Command
		cmd.PID = c.Peer().PID
		n := &Client{
			Audit: func(r Record) { sp.audit(&cmd, r) },
			Logf: func(format string, args ...any) {
				c.Send("log", logLine{Line: fmt.Sprintf(format, args...)})
			},
			Ask: func(ctx context.Context, q Query) Answer { return askChild(ctx, c, q) },
		}
		if err := sp.p.RegisterToken(n, reg.Token); err != nil {
			return err
		}
		cl = n
		registered.Store(true)
		return nil
	}
	c.Serve(ctx, ipc.Handler{Notice: notice})
	if cl != nil {
		cl.Close()
	}
}

// askChild puts q to the command's guardrun.
func askChild(ctx context.Context, c *ipc.Conn, q Query) Answer {
	hp := net.JoinHostPort(q.Host, strconv.Itoa(q.Port))
	wq := wireQuery{Host: q.Host, Port: q.Port, Reason: q.Reason}
	for _, a := range q.Addrs {
		wq.Addrs = append(wq.Addrs, a.String())
	}
	var a wireAnswer
	switch err := c.Call(ctx, "ask", wq, &a); {
	case err == nil:
		return Answer(a)
	case ctx.Err() != nil:
		return Answer{By: "mode", Refusal: fmt.Sprintf("guardrun: denied: no answer about %s in time", hp)}
	default:
		return Answer{By: "mode", Refusal: "guardrun: denied: " + hp + ": the command's guardrun is gone"}
	}
}

// Member is one command's registration with a shared proxy, kept for
// as long as the command runs.
type Member struct {
	c *ipc.Conn
	// Token is the command's: in its proxy URL (landlock), or given to
	// its bridge (bwrap).
	Token string
	// Addr is the proxy's loopback address (landlock); BridgeSocket is
	// where the command's bridge hands its listener over (bwrap).
	Addr         netip.AddrPort
	BridgeSocket string
}

// JoinOptions are a command's, for Join.
type JoinOptions struct {
	Command Command
	// TCP: the command connects to the proxy's loopback address
	// (landlock); else its bridge hands a listener over (bwrap).
	TCP bool
	// Ask answers the proxy's question about a host, for the command:
	// through its gate. Questions come concurrently; ctx ends when the
	// proxy gives up waiting.
	Ask func(ctx context.Context, q Query) Answer
	// Log receives the proxy's lines for the command's stderr.
	Log func(line string)
}

// Join registers a command with the shared proxy that getenv names
// ($GUARDRUN_PROXY). ok is false when there is none, or none of this
// user answers there (a stale variable): the command then gets a proxy
// of its own. The registration is sent, not waited for (see above).
func Join(getenv func(string) string, o JoinOptions) (m *Member, ok bool, err error) {
	path := getenv(SharedEnvVar)
	if path == "" {
		return nil, false, nil
	}
	logf := func(line string) {
		if o.Log != nil {
			o.Log(line)
		}
	}
	c, err := ipc.Dial(context.Background(), path, shareProtocol, ipc.Handler{
		Request: func(ctx context.Context, m *ipc.Message) (any, error) {
			var wq wireQuery
			if m.Type != "ask" {
				return nil, fmt.Errorf("unknown request %q", m.Type)
			}
			if err := m.Decode(&wq); err != nil {
				return nil, err
			}
			q := Query{Host: wq.Host, Port: wq.Port, Reason: wq.Reason}
			for _, a := range wq.Addrs {
				if ad, err := netip.ParseAddr(a); err == nil {
					q.Addrs = append(q.Addrs, ad)
				}
			}
			a := o.Ask(ctx, q)
			return wireAnswer(a), nil
		},
		Notice: func(m *ipc.Message) error {
			var l logLine
			if m.Type != "log" {
				return fmt.Errorf("unexpected %s", m.Type)
			}
			if err := m.Decode(&l); err != nil {
				return err
			}
			logf(l.Line)
			return nil
		},
	})
	if err != nil {
		return nil, false, nil
	}
	fail := func(err error) (*Member, bool, error) {
		c.Close()
		return nil, true, fmt.Errorf("proxy: the supervisor's proxy: %w", err)
	}
	tok, err := NewToken()
	if err != nil {
		return fail(err)
	}
	m = &Member{c: c, Token: tok}
	if o.TCP {
		ap, err := netip.ParseAddrPort(getenv(SharedAddrEnvVar))
		if err != nil || !ap.Addr().IsLoopback() {
			return fail(fmt.Errorf("$%s is not a loopback address and port: %q", SharedAddrEnvVar, getenv(SharedAddrEnvVar)))
		}
		m.Addr = ap
	} else {
		m.BridgeSocket = filepath.Join(filepath.Dir(path), bridgeSockName)
	}
	if err := c.Send("register", registration{Token: tok, Command: o.Command}); err != nil {
		return fail(err)
	}
	go func() {
		<-c.Done()
		var pe *ipc.PeerError
		var ve *ipc.VersionError
		switch err := c.Err(); {
		case errors.As(err, &pe):
			logf("guardrun: the supervisor's proxy refused this command: " + pe.Msg)
		case errors.As(err, &ve):
			logf("guardrun: the supervisor's proxy refused this command: " + ve.Error())
		}
	}()
	return m, true, nil
}

// Close ends the registration: the command's token and connections end.
func (m *Member) Close() { m.c.Close() }
