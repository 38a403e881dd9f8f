package netproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guardrun/guardrun/rules"
)

// Query is what the proxy asks a person about: a host the command wants
// to reach that sandbox.domains neither allows nor denies.
type Query struct {
	Host string
	Port int
	// Addrs are the addresses the host resolved to (already checked).
	Addrs []netip.Addr
	// Reason says why it asks.
	Reason string
}

// Answer is the gate's reply to a Query.
type Answer struct {
	Allow bool
	// By is who decided: person, session or mode.
	By string
	// Note is the person's note.
	Note string
	// Refusal is the one line explaining a refusal.
	Refusal string
}

// Record is one connection, for the audit log.
type Record struct {
	Host string
	Port int
	// Addr is the address connected to, when it got that far.
	Addr string
	// Method is CONNECT, or the plain HTTP method.
	Method string
	// Verdict is sandbox.domains' verdict: allow, ask or block.
	Verdict string
	// Outcome is connected, refused or failed.
	Outcome   string
	DecidedBy string
	Reason    string
	Note      string
	// BytesOut went from the command to the host, BytesIn back.
	BytesOut, BytesIn int64
	Start             time.Time
	Duration          time.Duration
}

// Proxy is the host-side HTTP proxy. Set its fields before the first
// Serve; it is safe for concurrent use after that.
type Proxy struct {
	// Domains judges each host.
	Domains rules.Domains
	// Ask resolves a host that Domains neither allows nor denies. Nil
	// refuses such hosts (strict). The context carries the bound on how
	// long a connection waits for the answer.
	Ask func(ctx context.Context, q Query) Answer
	// AskTimeout bounds the wait for Ask; 0 means DefaultAskTimeout.
	AskTimeout time.Duration
	// LookupNetIP resolves a host name; nil means the system resolver.
	// Tests map names to their own servers here.
	LookupNetIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// Audit receives one record per connection; nil means none.
	Audit func(Record)
	// Logf, when set, receives refusals as one line each, for the
	// person and the agent reading the command's stderr.
	Logf func(format string, args ...any)

	once      sync.Once
	srv       *http.Server
	transport *http.Transport

	// def is the client of connections that name none (Serve,
	// ServeUnix): the proxy's own Ask, Audit and Logf.
	def *Client

	mu      sync.Mutex
	clients map[string]*Client // by token (Register)
	// registered is closed (and replaced) at each registration.
	registered chan struct{}
	conns      map[net.Conn]struct{}
	warnedFull bool // the log said once that maxConns was reached
	closed     bool
	active     sync.WaitGroup // requests being handled; Close waits for their records
}

type pendingAsk struct {
	done chan struct{}
	ans  Answer
}

// DefaultAskTimeout is how long a connection waits for a person.
const DefaultAskTimeout = 2 * time.Minute

// DialTimeout bounds connecting to a host.
var DialTimeout = 15 * time.Second

// peekTimeout bounds the wait for a TLS ClientHello after CONNECT.
var peekTimeout = 30 * time.Second

func (p *Proxy) init() {
	p.once.Do(func() {
		p.conns = map[net.Conn]struct{}{}
		p.clients = map[string]*Client{}
		p.registered = make(chan struct{})
		p.def = &Client{Ask: p.Ask, Audit: p.Audit, Logf: p.Logf, p: p}
		p.def.initMaps()
		p.transport = &http.Transport{
			Proxy:              nil,
			DialContext:        p.dialFromContext,
			DisableKeepAlives:  true,
			DisableCompression: true,
			ForceAttemptHTTP2:  false,
			// Only plain http:// requests reach the transport.
			ResponseHeaderTimeout: 5 * time.Minute,
		}
		p.srv = &http.Server{
			Handler:           p,
			ReadHeaderTimeout: 30 * time.Second,
			IdleTimeout:       idleTimeout,
			ConnState: func(c net.Conn, s http.ConnState) {
				p.mu.Lock()
				full := false
				switch s {
				case http.StateNew:
					// Past maxConns open connections (tunnels count
					// twice) a new one is closed at once: commands
					// cannot make the proxy hold without end.
					if full = len(p.conns) >= maxConns; !full {
						p.conns[c] = struct{}{}
					}
				case http.StateClosed, http.StateHijacked:
					// A hijacked connection is closed by its handler
					// (a refusal) or tracked by it (a tunnel); the
					// server never reports it closed.
					delete(p.conns, c)
				}
				warn := full && !p.warnedFull
				p.warnedFull = p.warnedFull || full
				p.mu.Unlock()
				if full {
					c.Close()
				}
				if warn {
					p.logf("guardrun: proxy: %d connections open; closing new ones until some end", maxConns)
				}
			},
			ConnContext: func(ctx context.Context, c net.Conn) context.Context {
				if t, ok := c.(*taggedConn); ok {
					return context.WithValue(ctx, connKey{}, t)
				}
				return ctx
			},
			ErrorLog: nil,
		}
	})
}

// Serve accepts proxy clients on l until Close. It may be called for any
// number of listeners.
func (p *Proxy) Serve(l net.Listener) error {
	p.init()
	err := p.srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops every listener and ends every connection, tunnels too.
func (p *Proxy) Close() error {
	p.init()
	p.mu.Lock()
	p.closed = true
	close(p.registered) // lookups waiting for a token give up
	p.registered = make(chan struct{})
	conns := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	// Questions still up are withdrawn: nobody waits for their answer.
	p.def.endLife()
	for _, cl := range p.clients {
		cl.endLife()
	}
	p.mu.Unlock()
	err := p.srv.Close()
	for _, c := range conns {
		c.Close() // hijacked tunnels are not closed by srv.Close
	}
	p.transport.CloseIdleConnections()
	// Every handler ends soon once its connections are closed; wait for
	// their audit records, but not for a prompt nobody answers.
	done := make(chan struct{})
	go func() { p.active.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	return err
}

// track remembers a hijacked connection (or an upstream one) so that
// Close ends it; the returned func forgets it.
func (p *Proxy) track(c net.Conn) func() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		return func() {}
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
	}
}

// refusal is a connection the proxy will not make.
type refusal struct {
	status int // HTTP status for the client
	msg    string
}

func (r *refusal) Error() string { return r.msg }

func refuse(status int, format string, args ...any) *refusal {
	return &refusal{status: status, msg: fmt.Sprintf(format, args...)}
}

// judged is a host the proxy has decided to connect to.
type judged struct {
	host  string
	port  int
	addrs []netip.Addr
}

// judge decides host:port: sandbox.domains first (a denied name is never
// even resolved), then a person for a host that is not listed, then the
// addresses it resolves to. A name that is not listed is resolved only
// once a person allowed it: the lookup alone would carry the name, and
// whatever a command hid in it, to that name's DNS servers. An address
// is checked before anyone is asked. rec is filled in for the audit
// either way.
func (p *Proxy) judge(ctx context.Context, cl *Client, rawHost string, port int, rec *Record) (*judged, *refusal) {
	rec.Host, rec.Port = rawHost, port
	host, err := rules.NormalizeHost(rawHost)
	if err == nil {
		err = checkHostForm(host)
	}
	if err != nil {
		rec.Verdict, rec.DecidedBy = "block", "policy"
		return nil, refuse(http.StatusBadRequest, "guardrun: refused: %v", err)
	}
	rec.Host = host
	if port <= 0 || port > 65535 {
		rec.Verdict, rec.DecidedBy = "block", "policy"
		return nil, refuse(http.StatusBadRequest, "guardrun: refused: port %d", port)
	}
	v, why := p.Domains.HostVerdict(host)
	rec.Verdict, rec.Reason = v.String(), why
	if v == rules.Block {
		rec.DecidedBy = "policy"
		return nil, refuse(http.StatusForbidden, "guardrun: blocked: %s:%d: %s", host, port, why)
	}
	if addrs, ok := p.loopback(host, port); ok {
		rec.Verdict, rec.DecidedBy = "allow", "rule"
		rec.Reason = fmt.Sprintf("%s:%d is a loopback port sandbox.domains.loopback lists", host, port)
		return &judged{host: host, port: port, addrs: addrs}, nil
	}
	var addrs []netip.Addr
	resolve := func() *refusal {
		var rf *refusal
		if addrs, rf = p.resolve(ctx, host); rf != nil {
			rec.DecidedBy, rec.Verdict, rec.Reason = "policy", "block", rf.msg
		}
		return rf
	}
	_, aerr := netip.ParseAddr(host)
	if v == rules.Allow || aerr == nil || host == "localhost" {
		if rf := resolve(); rf != nil {
			return nil, rf
		}
	}
	if v == rules.Ask {
		// Addrs is empty for a name: it is not resolved yet.
		ans := cl.ask(ctx, Query{Host: host, Port: port, Addrs: addrs, Reason: why})
		rec.DecidedBy, rec.Note = ans.By, ans.Note
		if !ans.Allow {
			msg := ans.Refusal
			if msg == "" {
				msg = fmt.Sprintf("guardrun: denied: %s:%d was not approved", host, port)
			}
			return nil, refuse(http.StatusForbidden, "%s", msg)
		}
	} else {
		rec.DecidedBy = "rule"
	}
	if addrs == nil {
		if rf := resolve(); rf != nil {
			return nil, rf
		}
	}
	return &judged{host: host, port: port, addrs: addrs}, nil
}

// checkHostForm refuses host forms that name something other than what
// they seem to: an IPv6 address with a zone (an address or CIDR entry
// never matches it, so deny would not either), and a name whose last
// label is a number, which some resolvers read as an IPv4 address
// (inet_aton: 2130706433, 0x7f.1 and 127.1 are all 127.0.0.1) and others
// send to DNS.
func checkHostForm(host string) error {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return fmt.Errorf("host %q: an address with a zone is not accepted", host)
		}
		return nil
	}
	last := host[strings.LastIndexByte(host, '.')+1:]
	digits := strings.TrimLeft(last, "0123456789")
	hex := strings.TrimPrefix(last, "0x")
	if digits == "" || hex != last && strings.Trim(hex, "0123456789abcdef") == "" {
		return fmt.Errorf("host %q is neither a host name (its last label is a number) nor an IPv4 address as four decimal numbers (a.b.c.d)", host)
	}
	return nil
}

// resolve looks the host up (an address stands for itself) and keeps the
// addresses the command may reach: a loopback, private, link-local,
// unspecified or multicast address, or one of this host's own (an
// interface's, a broadcast, a locally delivered route's; see hostLocal),
// only when sandbox.domains.allow names it by address or CIDR, and never
// one that deny names. It runs for every connection.
func (p *Proxy) resolve(ctx context.Context, host string) ([]netip.Addr, *refusal) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a.Unmap()}
	} else if host == "localhost" {
		// The host's own loopback, whatever a resolver says: never
		// looked up, and judged, as an address is, before anyone is
		// asked.
		addrs = []netip.Addr{loopback4, loopback6}
	} else {
		lookup := p.LookupNetIP
		if lookup == nil {
			lookup = func(ctx context.Context, h string) ([]netip.Addr, error) {
				return net.DefaultResolver.LookupNetIP(ctx, "ip", h)
			}
		}
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		found, err := lookup(lctx, host)
		cancel()
		if err != nil {
			return nil, refuse(http.StatusBadGateway, "guardrun: refused: %s does not resolve: %v", host, err)
		}
		for _, a := range found {
			// A zone would keep deny's address entries from matching;
			// the address is judged, and dialed, without it.
			addrs = append(addrs, a.Unmap().WithZone(""))
		}
		if len(addrs) == 0 {
			return nil, refuse(http.StatusBadGateway, "guardrun: refused: %s has no address", host)
		}
	}
	// The host's own addresses, enumerated now: they change.
	local, err := hostLocalNow()
	if err != nil {
		return nil, refuse(http.StatusBadGateway, "guardrun: refused: %s: cannot tell whether it is this host: %v", host, err)
	}
	var ok []netip.Addr
	var why string
	for _, a := range addrs {
		allowed, denied := p.Domains.AddrListed(a)
		// An IPv4 address deny lists is denied also as a gateway
		// (NAT64, 6to4, Teredo) reaches it.
		_, v4s := embeddedIPv4(a)
		for _, v4 := range v4s {
			if _, d := p.Domains.AddrListed(v4); d {
				allowed, denied = false, true
			}
		}
		switch {
		case denied:
			why = fmt.Sprintf("%s resolves to %s, which sandbox.domains.deny lists", host, a)
		case allowed:
			ok = append(ok, a)
		case a.IsLoopback() && (a == loopback4 || a == loopback6):
			why = fmt.Sprintf("%s resolves to %s, a loopback address (a server there is reached as localhost, 127.0.0.1 or [::1] on a port sandbox.domains.loopback lists)", host, a)
		case specialKind(a) != "":
			why = fmt.Sprintf("%s resolves to %s, a %s address (allow it by address or CIDR in sandbox.domains.allow to reach it)", host, a, specialKind(a))
		case local.ownAddress(a) != "":
			// The proxy dials from the host: this reaches the host's
			// own services.
			why = fmt.Sprintf("%s resolves to %s, %s (allow it by address or CIDR in sandbox.domains.allow to reach it)", host, a, local.ownAddress(a))
		default:
			ok = append(ok, a)
		}
	}
	if len(ok) == 0 {
		if host == addrs[0].String() {
			why = strings.Replace(why, host+" resolves to "+host+", which", host, 1)
			why = strings.Replace(why, host+" resolves to "+host+", a", host+" is a", 1)
		}
		return nil, refuse(http.StatusForbidden, "guardrun: blocked: %s", why)
	}
	return ok, nil
}

var (
	loopback4 = netip.MustParseAddr("127.0.0.1")
	loopback6 = netip.IPv6Loopback()
)

// loopback returns the addresses to dial for host:port when it is a
// port of the host's loopback that sandbox.domains.loopback lists: the
// name localhost (never looked up: 127.0.0.1, then ::1), 127.0.0.1 or
// ::1, less what deny names. Only those: another loopback address
// (127.0.0.2), the unspecified one and the host's other addresses stay
// refused as this host's own.
func (p *Proxy) loopback(host string, port int) ([]netip.Addr, bool) {
	if !slices.Contains(p.Domains.Loopback, port) {
		return nil, false
	}
	var cand []netip.Addr
	if host == "localhost" {
		cand = []netip.Addr{loopback4, loopback6}
	} else if a, err := netip.ParseAddr(host); err == nil && (a.Unmap() == loopback4 || a == loopback6) {
		cand = []netip.Addr{a.Unmap()}
	}
	var out []netip.Addr
	for _, a := range cand {
		if _, denied := p.Domains.AddrListed(a); !denied {
			out = append(out, a)
		}
	}
	return out, len(out) > 0
}

// specialKind names what makes an address off-limits by default, or "".
func specialKind(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsPrivate():
		return "private"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case cgnat.Contains(a):
		return "shared (carrier-grade NAT)"
	case a.Is4() && a.As4()[0] == 0, a.Is4() && a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "reserved"
	case nat64Local.Contains(a):
		return "local-use NAT64"
	case ipv4Compat.Contains(a):
		// ::a.b.c.d (RFC 4291, deprecated): automatic tunnels (sit0)
		// send it to the IPv4 address; nothing legitimate uses it.
		return "IPv4-compatible (deprecated)"
	case siteLocal.Contains(a):
		return "site-local"
	}
	via, v4s := embeddedIPv4(a)
	for _, v4 := range v4s {
		if k := specialKind(v4); k != "" {
			return k + " (through " + via + ")"
		}
	}
	return ""
}

// embeddedIPv4 is the IPv4 addresses an IPv6 address carries to a
// gateway that connects to them, and the mechanism: NAT64 (RFC 6052,
// the last 32 bits), 6to4 (RFC 3056, bits 16-47) or Teredo (RFC 4380:
// the server in bits 32-63, the client inverted in the last 32 bits).
func embeddedIPv4(a netip.Addr) (string, []netip.Addr) {
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return "NAT64", []netip.Addr{netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})}
	case sixToFour.Contains(a):
		return "6to4", []netip.Addr{netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})}
	case teredo.Contains(a):
		return "Teredo", []netip.Addr{
			netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}),
			netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]}),
		}
	}
	return "", nil
}

var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
)

var (
	cgnat      = netip.MustParsePrefix("100.64.0.0/10")
	ipv4Compat = netip.MustParsePrefix("::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
	siteLocal  = netip.MustParsePrefix("fec0::/10")
)

// ask asks once per host:port at a time: concurrent connections of the
// command to the same host wait for the same answer, and a person's yes,
// or no, holds for the rest of the command (the client's lifetime), so
// that a command cannot ask again and again until it hears yes.
func (c *Client) ask(ctx context.Context, q Query) Answer {
	p := c.p
	key := net.JoinHostPort(q.Host, strconv.Itoa(q.Port))
	c.mu.Lock()
	if a, ok := c.approved[key]; ok {
		c.mu.Unlock()
		return a
	}
	if a, ok := c.refused[key]; ok {
		c.mu.Unlock()
		return a
	}
	pa, waiting := c.pending[key]
	if !waiting && len(c.pending) >= maxPendingAsks {
		// A command cannot queue a question per host it makes up: the
		// person answers a few at a time, the rest are refused now.
		n := len(c.pending)
		c.mu.Unlock()
		return Answer{By: "mode", Refusal: fmt.Sprintf("guardrun: denied: %s: %d other hosts are already waiting for an answer", key, n)}
	}
	if !waiting {
		pa = &pendingAsk{done: make(chan struct{})}
		c.pending[key] = pa
	}
	c.mu.Unlock()

	timeout := p.AskTimeout
	if timeout <= 0 {
		timeout = DefaultAskTimeout
	}
	if !waiting {
		go func() {
			var a Answer
			if c.Ask == nil {
				a = Answer{By: "mode", Refusal: fmt.Sprintf("guardrun: denied (strict mode): %s needs approval", key)}
			} else {
				actx, cancel := context.WithTimeout(c.life, timeout)
				c.askMu.Lock()
				a = c.Ask(actx, q)
				c.askMu.Unlock()
				if actx.Err() != nil && !a.Allow && a.Refusal == "" {
					a.Refusal = fmt.Sprintf("guardrun: denied: no answer about %s within %s", key, timeout)
				}
				cancel()
			}
			c.mu.Lock()
			pa.ans = a
			if a.Allow {
				c.approved[key] = a
			} else if a.By == "person" {
				c.refused[key] = a
			}
			delete(c.pending, key)
			c.mu.Unlock()
			close(pa.done)
		}()
	}
	t := time.NewTimer(timeout + time.Second)
	defer t.Stop()
	select {
	case <-pa.done:
		return pa.ans
	case <-ctx.Done():
		return Answer{By: "mode", Refusal: fmt.Sprintf("guardrun: denied: the connection to %s ended while waiting for an answer", key)}
	case <-t.C:
		return Answer{By: "mode", Refusal: fmt.Sprintf("guardrun: denied: no answer about %s within %s", key, timeout)}
	}
}

// dial connects to one of the checked addresses, in order.
func (p *Proxy) dial(ctx context.Context, j *judged) (net.Conn, error) {
	d := net.Dialer{Timeout: DialTimeout}
	var errs []error
	for _, a := range j.addrs {
		c, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(a, uint16(j.port)).String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// refuseUnknown answers and audits a request that names no client.
func (p *Proxy) refuseUnknown(w http.ResponseWriter, r *http.Request, rf *refusal) {
	rec := Record{Method: r.Method, Start: time.Now(), Host: r.Host, Verdict: "block",
		DecidedBy: "policy", Outcome: "refused", Reason: rf.msg}
	if r.Method != http.MethodConnect && r.URL != nil && r.URL.Host != "" {
		rec.Host = r.URL.Host
	}
	if h, port, err := splitHostPort(rec.Host, 80); err == nil {
		rec.Host, rec.Port = h, port
	}
	writeRefusal(w, rf)
	rec.Duration = time.Since(rec.Start)
	if p.Audit != nil {
		p.Audit(rec)
	}
}

// ServeHTTP handles CONNECT and absolute-form plain HTTP requests.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Counted under mu, so that no handler starts once Close waits.
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		http.Error(w, "guardrun: the proxy is closing", http.StatusServiceUnavailable)
		return
	}
	p.active.Add(1)
	p.mu.Unlock()
	defer p.active.Done()
	cl, rf := p.clientOf(r)
	if rf != nil {
		p.refuseUnknown(w, r, rf)
		return
	}
	if r.Method == http.MethodConnect {
		p.connect(w, r, cl)
		return
	}
	p.plain(w, r, cl)
}

func splitHostPort(hostport string, defPort int) (string, int, error) {
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		if defPort == 0 || strings.Count(hostport, ":") > 0 && !strings.HasPrefix(hostport, "[") {
			return "", 0, err
		}
		return strings.Trim(hostport, "[]"), defPort, nil
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return "", 0, fmt.Errorf("port %q", ps)
	}
	return host, port, nil
}

func (p *Proxy) connect(w http.ResponseWriter, r *http.Request, cl *Client) {
	rec := Record{Method: "CONNECT", Start: time.Now()}
	finish := func(outcome, reason string) {
		rec.Outcome = outcome
		if reason != "" {
			rec.Reason = reason
		}
		rec.Duration = time.Since(rec.Start)
		cl.audit(rec)
	}
	host, port, err := splitHostPort(r.Host, 0)
	if err != nil {
		rec.Host, rec.Verdict, rec.DecidedBy = r.Host, "block", "policy"
		msg := fmt.Sprintf("guardrun: refused: CONNECT %q: want host:port", r.Host)
		http.Error(w, msg, http.StatusBadRequest)
		finish("refused", msg)
		return
	}
	j, rf := p.judge(r.Context(), cl, host, port, &rec)
	if rf != nil {
		writeRefusal(w, rf)
		finish("refused", rf.msg)
		return
	}
	up, err := p.dial(r.Context(), j)
	if err != nil {
		msg := fmt.Sprintf("guardrun: cannot reach %s:%d: %v", j.host, j.port, err)
		http.Error(w, msg, http.StatusBadGateway)
		finish("failed", msg)
		return
	}
	defer up.Close()
	rec.Addr = up.RemoteAddr().String()
	untrackUp := cl.track(up)
	defer untrackUp()

	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "guardrun: proxy cannot tunnel here", http.StatusInternalServerError)
		finish("failed", "no hijacker")
		return
	}
	client, brw, err := hj.Hijack()
	if err != nil {
		finish("failed", err.Error())
		return
	}
	client = unwrap(client)
	defer client.Close()
	untrack := cl.track(client)
	defer untrack()
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		finish("failed", err.Error())
		return
	}

	// Whatever the client sent before the reply (rare) is in brw.
	var in io.Reader = client
	if n := brw.Reader.Buffered(); n > 0 {
		head, _ := brw.Reader.Peek(n)
		in = io.MultiReader(strings.NewReader(string(head)), client)
	}
	client.SetReadDeadline(time.Now().Add(peekTimeout))
	hello, err := peekHello(in)
	client.SetReadDeadline(time.Time{})
	if err != nil {
		finish("failed", fmt.Sprintf("guardrun: %s:%d: reading the client's first bytes: %v", j.host, j.port, err))
		return
	}
	// A refused ClientHello, the first or the one after a
	// HelloRetryRequest, ends the tunnel with a TLS alert.
	refuse := func(isTLS bool, msg string) {
		if isTLS {
			client.Write(tlsAlertUnrecognizedName)
		}
		rec.Verdict, rec.DecidedBy = "block", "policy"
		finish("refused", msg)
	}
	if msg := checkHello(hello, j.host, j.port); msg != "" {
		refuse(hello.tls, msg)
		return
	}
	if _, err := up.Write(hello.raw); err != nil {
		finish("failed", err.Error())
		return
	}
	rec.BytesOut = int64(len(hello.raw))

	var rest io.Reader = client
	if in != client {
		// Bytes buffered beyond the hello are in the multi-reader.
		rest = in
	}
	if hello.tls {
		held := hello.rest
		for retried := false; ; retried = true {
			next, h2, err := followHandshake(up, client, rest, held, retried, &rec)
			if err != nil {
				finish("failed", fmt.Sprintf("guardrun: %s:%d: %v", j.host, j.port, err))
				return
			}
			rest = next
			if h2 == nil {
				break
			}
			if msg := checkHello(h2, j.host, j.port); msg != "" {
				refuse(true, msg+" (in the ClientHello after a HelloRetryRequest)")
				return
			}
			if _, err := up.Write(h2.raw); err != nil {
				finish("failed", err.Error())
				return
			}
			rec.BytesOut += int64(len(h2.raw))
			held = h2.rest
		}
	}
	out, back := pipe(up, client, rest)
	rec.BytesOut += out
	rec.BytesIn += back
	finish("connected", "")
}

// followHandshake passes a TLS tunnel's handshake on until the host's
// ServerHello, once a ClientHello went to the host: the host's answer
// goes to the client as it comes; the client's next bytes (held, then
// src) wait, unread, so that nothing reaches the host before the answer
// is known. A ServerHello
// ends the watch: it returns the reader to copy the client from. A
// HelloRetryRequest asks the client for a second ClientHello, which is
// returned (h2) for the caller to judge and send, with the reader of
// the bytes past it. Anything else (not TLS, an alert, a
// HelloRetryRequest after one (retried), no answer within peekTimeout)
// is an error: the tunnel ends.
func followHandshake(up, client net.Conn, src io.Reader, held []byte, retried bool, rec *Record) (next io.Reader, h2 *hello, err error) {
	up.SetReadDeadline(time.Now().Add(peekTimeout))
	a, err := readServerHello(up, retried)
	up.SetReadDeadline(time.Time{})
	if a != nil {
		n, werr := client.Write(a.raw)
		rec.BytesIn += int64(n)
		if err == nil {
			err = werr
		}
	}
	switch {
	case err != nil:
		return nil, nil, err
	case a.alert:
		return nil, nil, fmt.Errorf("the host ended the TLS handshake with alert %d", a.desc)
	}
	next = src
	if len(held) > 0 {
		next = io.MultiReader(bytes.NewReader(held), src)
	}
	if !a.retry {
		return next, nil, nil
	}
	if retried {
		return nil, nil, errors.New("a second TLS HelloRetryRequest")
	}
	client.SetReadDeadline(time.Now().Add(peekTimeout))
	h2, err = readHello(&records{r: next}, true)
	client.SetReadDeadline(time.Time{})
	if err != nil {
		return nil, nil, fmt.Errorf("reading the ClientHello after a HelloRetryRequest: %v", err)
	}
	return next, h2, nil
}

// pipe copies in both directions until both are done: command to host
// from src (which reads the client), host to command into client. Half
// closes are passed on. Each direction copies through a user-space
// buffer (copyBuffered), which measured faster than splice(2).
func pipe(up, client net.Conn, src io.Reader) (out, back int64) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		back = copyBuffered(client, up)
		closeWrite(client)
	}()
	out = copyBuffered(up, src)
	closeWrite(up)
	wg.Wait()
	return out, back
}

// copyBufSize is the buffer of each direction of a tunnel: a read and a
// write in user space per wake-up. Measured on loopback
// (BenchmarkThroughput and variants alternating in one loop), it beats
// every alternative tried: splice(2) through a pipe ((*net.TCPConn)
// ReadFrom, or a splice loop with a 1 MiB pipe, SPLICE_F_MOVE and with or
// without SPLICE_F_MORE) 0.32-0.42 of a direct download against
// 0.51-0.54 here: the proxy's own CPU went down (43 against 51 ms per
// 100 MB) but the client's went up more (45 against 30), probably because
// the pages it reads were filled long before by the server, not just now
// by the proxy; 64 KiB to 512 KiB buffers
// 0.35-0.65 and 4 MiB 0.53-0.56 against 0.61-0.71 for 1 MiB on a quieter
// run; 4 MiB socket buffers won in 12 of 17 runs and lost up to 9 % in
// the others, and fixing SO_RCVBUF would turn off the kernel's receive window
// tuning for real hosts; Nagle on was worse. See docs/network.md.
const copyBufSize = 1 << 20

var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// bufPool lends the tunnels' buffers to the plain-HTTP reverse proxy,
// whose own are 32 KiB.
type bufPool struct{}

func (bufPool) Get() []byte  { return *copyBufs.Get().(*[]byte) }
func (bufPool) Put(b []byte) { copyBufs.Put(&b) }

// copyBuffered copies with a pooled buffer; the wrappers hide ReadFrom
// and WriteTo so that io.CopyBuffer really uses it.
func copyBuffered(dst io.Writer, src io.Reader) int64 {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	n, _ := io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, *bp)
	return n
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// writeRefusal answers a refused request: the status, and the refusal as
// the reason phrase too, since clients print the status line of a failed
// CONNECT (urllib: "Tunnel connection failed: 403 guardrun: blocked ...").
func writeRefusal(w http.ResponseWriter, rf *refusal) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, rf.msg, rf.status)
		return
	}
	c, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	reason := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r > 0x7e {
			return '?'
		}
		return r
	}, rf.msg)
	body := rf.msg + "\n"
	challenge := ""
	if rf.status == http.StatusProxyAuthRequired {
		// Clients that wait for a challenge before sending credentials
		// (git's libcurl) need it.
		challenge = "Proxy-Authenticate: Basic realm=\"guardrun\"\r\n"
	}
	fmt.Fprintf(brw, "HTTP/1.1 %d %s\r\n%sContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		rf.status, reason, challenge, len(body), body)
	brw.Flush()
}

type addrsKey struct{}

// dialFromContext is the plain-HTTP transport's dialer: it connects only
// to the addresses the handler checked, carried in the context.
func (p *Proxy) dialFromContext(ctx context.Context, network, _ string) (net.Conn, error) {
	j, ok := ctx.Value(addrsKey{}).(*judged)
	if !ok {
		return nil, errors.New("guardrun: internal: a plain HTTP request without a checked address")
	}
	c, err := p.dial(ctx, j)
	if err != nil {
		return nil, err
	}
	if r, ok := ctx.Value(recKey{}).(*Record); ok {
		r.Addr = c.RemoteAddr().String()
	}
	return c, nil
}

type recKey struct{}

// plain forwards an absolute-form http:// request.
func (p *Proxy) plain(w http.ResponseWriter, r *http.Request, cl *Client) {
	rec := Record{Method: r.Method, Start: time.Now()}
	finish := func(outcome, reason string) {
		rec.Outcome = outcome
		if reason != "" {
			rec.Reason = reason
		}
		rec.Duration = time.Since(rec.Start)
		cl.audit(rec)
	}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		rec.Host, rec.Verdict, rec.DecidedBy = r.Host, "block", "policy"
		msg := "guardrun: this is a proxy: send absolute http:// URLs or CONNECT"
		http.Error(w, msg, http.StatusBadRequest)
		finish("refused", msg)
		return
	}
	if r.URL.Scheme != "http" {
		rec.Host, rec.Verdict, rec.DecidedBy = r.URL.Host, "block", "policy"
		msg := fmt.Sprintf("guardrun: refused: %s:// through a plain proxy request; use CONNECT", r.URL.Scheme)
		http.Error(w, msg, http.StatusBadRequest)
		finish("refused", msg)
		return
	}
	host, port, err := splitHostPort(r.URL.Host, 80)
	if err != nil {
		rec.Host, rec.Verdict, rec.DecidedBy = r.URL.Host, "block", "policy"
		msg := fmt.Sprintf("guardrun: refused: host %q", r.URL.Host)
		http.Error(w, msg, http.StatusBadRequest)
		finish("refused", msg)
		return
	}
	j, rf := p.judge(r.Context(), cl, host, port, &rec)
	if rf != nil {
		http.Error(w, rf.msg, rf.status)
		finish("refused", rf.msg)
		return
	}
	ctx := context.WithValue(context.WithValue(r.Context(), addrsKey{}, j), recKey{}, &rec)
	body := &countReader{r: r.Body}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = body
	}
	cw := &countWriter{ResponseWriter: w}
	var failed error
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL
			// The Host header is the host that was judged, never another
			// site served from the same address.
			pr.Out.Host = pr.In.URL.Host
			pr.Out.Header.Del("Proxy-Authorization")
			pr.Out.Header.Del("Proxy-Connection")
		},
		Transport: p.transport,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			failed = err
			http.Error(w, fmt.Sprintf("guardrun: cannot reach %s:%d: %v", j.host, j.port, err), http.StatusBadGateway)
		},
		FlushInterval: -1,
		BufferPool:    bufPool{},
	}
	rp.ServeHTTP(cw, r.WithContext(ctx))
	rec.BytesOut, rec.BytesIn = body.n, cw.n
	if failed != nil {
		finish("failed", fmt.Sprintf("guardrun: cannot reach %s:%d: %v", j.host, j.port, failed))
		return
	}
	finish("connected", "")
}

type countReader struct {
	r io.ReadCloser
	n int64
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

func (c *countReader) Close() error { return c.r.Close() }

type countWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

func (c *countWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// maxPendingAsks bounds the hosts a command may have waiting for a
// person at once; idleTimeout closes a client connection idle between
// requests; maxConns bounds the connections a proxy holds open. A
// tunnel holds two (the command's and the host's) and, while it copies,
// a copy buffer per direction: 1024 connections are at most 512 tunnels,
// 1 GiB of buffers if each stalls with its buffers full.
var (
	maxPendingAsks = 8
	idleTimeout    = 2 * time.Minute
	maxConns       = 1024
)
