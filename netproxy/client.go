package netproxy

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Client is one command served by a proxy that several commands share
// (the supervisor's): its own gate, audit and log, and its own memory of
// a person's "yes". A proxy's fields (Ask, Audit, Logf) make its default
// client, which serves the connections of Serve and ServeUnix.
//
// A shared proxy tells its clients apart without trusting what they say:
// a connection handed over by a command's bridge (ServeUnixFor) belongs
// to that command, and a request on a ServeTokens listener names its
// command by a secret token (Proxy-Authorization: Basic, which clients
// send when the proxy URL carries it as userinfo, http://guardrun:TOKEN@).
type Client struct {
	// Ask, Audit and Logf are as in Proxy, for this command.
	Ask   func(ctx context.Context, q Query) Answer
	Audit func(Record)
	Logf  func(format string, args ...any)

	p     *Proxy
	token string

	mu       sync.Mutex
	approved map[string]Answer // host:port a person answered for this command
	refused  map[string]Answer // host:port a person refused for this command
	pending  map[string]*pendingAsk
	conns    map[net.Conn]struct{}
	closed   bool
	askMu    sync.Mutex // one prompt at a time
	// life ends when the client (or the proxy) is closed: a question
	// still waiting for a person is withdrawn then.
	life    context.Context
	endLife context.CancelFunc
}

func (c *Client) initMaps() {
	c.approved = map[string]Answer{}
	c.refused = map[string]Answer{}
	c.pending = map[string]*pendingAsk{}
	c.conns = map[net.Conn]struct{}{}
	c.life, c.endLife = context.WithCancel(context.Background())
}

// Register adds c to the proxy with a new token and returns it, for the
// proxy URL of a command that connects over TCP (ServeTokens). Close c
// when its command ends: its token stops working and its connections
// end.
func (p *Proxy) Register(c *Client) (string, error) {
	tok, err := NewToken()
	if err != nil {
		return "", err
	}
	return tok, p.RegisterToken(c, tok)
}

// NewToken is a fresh secret for a client (128 random bits, hex).
func NewToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// ValidToken reports whether tok has NewToken's form.
func ValidToken(tok string) bool {
	if len(tok) != 32 {
		return false
	}
	_, err := hex.DecodeString(tok)
	return err == nil
}

// RegisterToken adds c to the proxy under tok, a token the command made
// (NewToken), so that the command need not wait for the proxy's answer
// before it starts: a request naming a token that is not registered yet
// waits for it a moment (TokenWait). A token in use is refused.
func (p *Proxy) RegisterToken(c *Client, tok string) error {
	if !ValidToken(tok) {
		return errors.New("proxy: malformed token")
	}
	p.init()
	c.initMaps()
	c.p, c.token = p, tok
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("proxy: closed")
	}
	if _, ok := p.clients[tok]; ok {
		return errors.New("proxy: token in use")
	}
	p.clients[tok] = c
	close(p.registered)
	p.registered = make(chan struct{})
	return nil
}

// TokenWait is how long a request with an unknown token waits for its
// command's registration, which may still be on its way.
var TokenWait = 5 * time.Second

// lookup finds the client of tok, waiting up to TokenWait for it to be
// registered.
func (p *Proxy) lookup(tok string) *Client {
	deadline := time.NewTimer(TokenWait)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		var found *Client
		for k, c := range p.clients {
			if subtle.ConstantTimeCompare([]byte(k), []byte(tok)) == 1 {
				found = c
			}
		}
		wake, closed := p.registered, p.closed
		p.mu.Unlock()
		if found != nil || closed || !ValidToken(tok) {
			return found
		}
		select {
		case <-wake:
		case <-deadline.C:
			return nil
		}
	}
}

// Token is the client's secret, as Register returned it.
func (c *Client) Token() string { return c.token }

// Close ends the client: its token is refused from now on and every
// connection it has open is closed.
func (c *Client) Close() {
	if c.p == nil {
		return
	}
	c.p.mu.Lock()
	if c.p.clients[c.token] == c {
		delete(c.p.clients, c.token)
	}
	c.p.mu.Unlock()
	c.endLife()
	c.mu.Lock()
	c.closed = true
	conns := make([]net.Conn, 0, len(c.conns))
	for x := range c.conns {
		conns = append(conns, x)
	}
	c.mu.Unlock()
	for _, x := range conns {
		x.Close()
	}
}

// track remembers a connection of this client's (also in the proxy's
// set) so that closing either ends it; the returned func forgets it.
func (c *Client) track(x net.Conn) func() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		x.Close()
		return func() {}
	}
	c.conns[x] = struct{}{}
	c.mu.Unlock()
	untrack := c.p.track(x)
	return func() {
		untrack()
		c.mu.Lock()
		delete(c.conns, x)
		c.mu.Unlock()
	}
}

func (c *Client) audit(r Record) {
	if r.Outcome == "refused" && c.Logf != nil {
		c.Logf("%s", r.Reason)
	}
	if c.Audit != nil {
		c.Audit(r)
	}
}

// taggedConn is a connection whose client is known from where it was
// accepted: a listener handed over for one command (client set), or the
// shared TCP listener, where every request must carry a token (auth).
type taggedConn struct {
	net.Conn
	client *Client
	auth   bool
}

// tagListener tags every connection it accepts.
type tagListener struct {
	net.Listener
	client *Client
	auth   bool
}

func (l *tagListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &taggedConn{Conn: c, client: l.client, auth: l.auth}, nil
}

// unwrap is the connection under the tag, which io.Copy can splice.
func unwrap(c net.Conn) net.Conn {
	if t, ok := c.(*taggedConn); ok {
		return t.Conn
	}
	return c
}

// ServeTokens accepts proxy clients on l until Close; each request must
// name a registered client by its token (Proxy-Authorization: Basic with
// the token as password, or as user name). A request without a valid
// token is refused with 407 and audited through the proxy's own Audit.
func (p *Proxy) ServeTokens(l net.Listener) error {
	return p.Serve(&tagListener{Listener: l, auth: true})
}

// ServeClient accepts connections on l that all belong to c.
func (p *Proxy) ServeClient(l net.Listener, c *Client) error {
	return p.Serve(&tagListener{Listener: l, client: c})
}

type connKey struct{}

// clientOf finds the client a request belongs to: by its connection, or
// by its token on a ServeTokens listener. nil and a refusal when neither.
func (p *Proxy) clientOf(r *http.Request) (*Client, *refusal) {
	t, _ := r.Context().Value(connKey{}).(*taggedConn)
	switch {
	case t == nil:
		return p.def, nil
	case t.client != nil:
		return t.client, nil
	case !t.auth:
		return p.def, nil
	}
	tok := proxyToken(r.Header.Get("Proxy-Authorization"))
	if tok == "" {
		return nil, refuse(http.StatusProxyAuthRequired, "guardrun: refused: a connection to the proxy without its token (use the proxy URL from HTTPS_PROXY, with its user and password)")
	}
	found := p.lookup(tok)
	if found == nil {
		return nil, refuse(http.StatusProxyAuthRequired, "guardrun: refused: a connection to the proxy with a token that is not (or no longer) valid")
	}
	return found, nil
}

// proxyToken is the token of a Proxy-Authorization: Basic header: the
// password, or the user name when the password is empty.
func proxyToken(h string) string {
	scheme, enc, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return ""
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return ""
	}
	user, pass, _ := strings.Cut(string(raw), ":")
	if pass != "" {
		return pass
	}
	return user
}

// ProxyUser is the user name of the proxy URL that carries a token.
const ProxyUser = "guardrun"

// TokenAddr is the userinfo and address for a proxy URL that carries the
// token: guardrun:TOKEN@addr.
func TokenAddr(token, addr string) string {
	return ProxyUser + ":" + token + "@" + addr
}
