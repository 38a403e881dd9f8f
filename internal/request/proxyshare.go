package request

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/guardrun/guardrun/internal/sys/sockdir"
	"github.com/guardrun/guardrun/netproxy"
	"github.com/guardrun/guardrun/runner"
	"github.com/guardrun/guardrun/sandbox"
)

// The supervisor's shared proxy (netproxy.Shared): the supervisor's
// session audits its connections; each command's guardrun joins it and
// answers its questions about hosts through its own gate.

// StartSharedProxy starts the supervisor's proxy for session s, whose
// grants are session's; its connections are audited in s's log.
func StartSharedProxy(s *Session, session string, io IO) (*netproxy.Shared, error) {
	return netproxy.StartShared(netproxy.SharedOptions{
		Domains: s.Loaded.Cfg.Sandbox.Domains, AskTimeout: proxyAskTimeout, LookupNetIP: proxyLookup,
		TCP:  s.Backend.ProxyMode() == runner.ProxyLoopback,
		Base: sockdir.Base(s.Env.Getenv),
		Audit: func(cmd *netproxy.Command, r netproxy.Record) {
			owner := connOwner{session: session, backend: s.Backend.Name(), pid: os.Getpid(), script: "(unknown: no valid proxy token)"}
			if cmd != nil {
				owner = connOwner{argv: cmd.Argv, script: cmd.Script, cwd: cmd.Cwd, session: cmd.Session, backend: cmd.Backend, pid: cmd.PID}
			}
			s.auditConnectionOf(owner, r, io)
		},
	})
}

// joinSharedProxy registers job j with the supervisor's proxy named by
// $GUARDRUN_PROXY. ok is false when there is none, or it does not answer
// (a stale variable): the command then gets a proxy of its own.
func (s *Session) joinSharedProxy(j *Job, cwd string, io IO) (jp *jobProxy, ok bool, err error) {
	// askMu keeps one prompt on the terminal at a time.
	var askMu sync.Mutex
	o := netproxy.JoinOptions{
		Command: netproxy.Command{Argv: j.Argv, Cwd: cwd, Session: s.ID, Backend: s.Backend.Name()},
		TCP:     s.Backend.ProxyMode() == runner.ProxyLoopback,
		Ask: func(ctx context.Context, q netproxy.Query) netproxy.Answer {
			ctx, cancel := context.WithTimeout(ctx, proxyAskTimeout)
			defer cancel()
			return s.askHost(ctx, &askMu, j, cwd, q, io)
		},
		Log: func(line string) { fmt.Fprintln(io.Stderr, line) },
	}
	if j.Argv == nil {
		o.Command.Script = j.Script
	}
	m, ok, err := netproxy.Join(s.Env.Getenv, o)
	if !ok || err != nil {
		return nil, ok, err
	}
	jp = &jobProxy{close: m.Close}
	if o.TCP {
		jp.addr = m.Addr
		jp.env = sandbox.ProxyEnv(netproxy.TokenAddr(m.Token, m.Addr.String()))
		return jp, true, nil
	}
	exe, err := guardrunExe()
	if err != nil {
		m.Close()
		return nil, true, fmt.Errorf("proxy: the supervisor's proxy: %w", err)
	}
	jp.route = &runner.ProxyRoute{Exe: exe, Socket: m.BridgeSocket, Token: m.Token}
	return jp, true, nil
}
