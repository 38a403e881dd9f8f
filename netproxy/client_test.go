package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTokens: on a shared TCP listener each request names its command by
// the token in the proxy URL; none, a wrong one, or one whose command has
// ended is refused with 407 and audited by the proxy; each command's
// records go to its own Audit, and a "yes" to one command does not hold
// for another.
func TestTokens(t *testing.T) {
	old := TokenWait
	TokenWait = 200 * time.Millisecond
	defer func() { TokenWait = old }()
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go f.proxy.ServeTokens(l)

	type cmd struct {
		cl      *Client
		tok     string
		mu      sync.Mutex
		records []Record
		asked   int
	}
	mk := func() *cmd {
		c := &cmd{}
		c.cl = &Client{
			Audit: func(r Record) { c.mu.Lock(); c.records = append(c.records, r); c.mu.Unlock() },
			Ask: func(ctx context.Context, q Query) Answer {
				c.mu.Lock()
				c.asked++
				c.mu.Unlock()
				return Answer{Allow: true, By: "person"}
			},
		}
		tok, err := f.proxy.Register(c.cl)
		if err != nil {
			t.Fatal(err)
		}
		c.tok = tok
		return c
	}
	a, b := mk(), mk()
	get := func(userinfo *url.Userinfo, u string) (int, string) {
		pu := &url.URL{Scheme: "http", Host: l.Addr().String(), User: userinfo}
		hc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: f.ca.Pool}}, Timeout: 10 * time.Second}
		resp, err := hc.Get(u)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	page := "https://allowed.test:" + f.tlsPort + "/"
	if code, body := get(url.UserPassword(ProxyUser, a.tok), page); code != 200 || !strings.Contains(body, "page for allowed.test") {
		t.Fatalf("with the token: %d %q", code, body)
	}
	if code, body := get(url.UserPassword(ProxyUser, a.tok), "http://allowed.test:"+f.httpPort+"/p"); code != 200 || !strings.Contains(body, "/p") {
		t.Fatalf("plain http with the token: %d %q", code, body)
	}
	for _, ui := range []*url.Userinfo{nil, url.UserPassword(ProxyUser, "0123456789abcdef0123456789abcdef"), url.User(ProxyUser)} {
		if code, body := get(ui, page); code == 200 || !strings.Contains(body, "guardrun: refused: a connection to the proxy") {
			t.Errorf("userinfo %v: %d %q, want 407", ui, code, body)
		}
	}
	// What git's libcurl needs to offer its credentials: 407 and a Basic
	// challenge.
	rc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(rc, "CONNECT allowed.test:"+f.tlsPort+" HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(rc), nil)
	rc.Close()
	if err != nil || resp.StatusCode != 407 || !strings.HasPrefix(resp.Header.Get("Proxy-Authenticate"), "Basic") {
		t.Errorf("CONNECT without a token: %v %+v", err, resp)
	}
	// The token as user name works too (curl's http://TOKEN@host).
	if code, _ := get(url.User(b.tok), page); code != 200 {
		t.Errorf("token as user name: %d", code)
	}
	// Unlisted host: asked once per command.
	un := "https://unlisted.test:" + f.tlsPort + "/"
	get(url.UserPassword(ProxyUser, a.tok), un)
	get(url.UserPassword(ProxyUser, a.tok), un)
	get(url.UserPassword(ProxyUser, b.tok), un)
	a.cl.Close()
	if code, _ := get(url.UserPassword(ProxyUser, a.tok), page); code == 200 {
		t.Error("a closed client's token still works")
	}
	f.proxy.Close()
	a.mu.Lock()
	b.mu.Lock()
	defer a.mu.Unlock()
	defer b.mu.Unlock()
	if a.asked != 1 || b.asked != 1 {
		t.Errorf("asked %d and %d times, want once per command", a.asked, b.asked)
	}
	if len(a.records) != 4 || len(b.records) != 2 {
		t.Errorf("records: a %+v, b %+v", a.records, b.records)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	refused := 0
	for _, r := range f.records {
		if r.Outcome == "refused" && strings.Contains(r.Reason, "token") {
			refused++
		}
	}
	if refused != 5 {
		t.Errorf("the proxy audited %d refusals without a valid token, want 5: %+v", refused, f.records)
	}
}

// TestTokenRegisteredLate: a command starts before its registration has
// reached the proxy; its first request waits for it, and a token nobody
// registers is refused after TokenWait.
func TestTokenRegisteredLate(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go f.proxy.ServeTokens(l)
	tok, _ := NewToken()
	get := func(tok string) int {
		pu := &url.URL{Scheme: "http", Host: l.Addr().String(), User: url.UserPassword(ProxyUser, tok)}
		hc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: f.ca.Pool}}, Timeout: 10 * time.Second}
		resp, err := hc.Get("https://allowed.test:" + f.tlsPort + "/")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	done := make(chan int)
	go func() { done <- get(tok) }()
	time.Sleep(100 * time.Millisecond)
	cl := &Client{}
	if err := f.proxy.RegisterToken(cl, tok); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 200 {
		t.Errorf("a request that came before its registration: %d", code)
	}
	if err := f.proxy.RegisterToken(&Client{}, tok); err == nil {
		t.Error("a token in use was registered again")
	}
	old := TokenWait
	TokenWait = 200 * time.Millisecond
	defer func() { TokenWait = old }()
	other, _ := NewToken()
	t0 := time.Now()
	if code := get(other); code == 200 || time.Since(t0) > 5*time.Second {
		t.Errorf("an unregistered token: %d after %v", code, time.Since(t0))
	}
}
