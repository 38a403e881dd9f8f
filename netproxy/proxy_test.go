package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/testing/testtls"
	"github.com/guardrun/guardrun/rules"
)

// fixture is a proxy on 127.0.0.1 with a TLS and a plain HTTP server
// behind it, under names its resolver maps to 127.0.0.1.
type fixture struct {
	proxy    *Proxy
	proxyURL *url.URL
	tlsPort  string
	httpPort string
	ca       *testtls.CA
	mu       sync.Mutex
	records  []Record
	asked    []string
	lookedUp []string
	answer   Answer
	askDelay time.Duration
}

func domains(t testing.TB, allow, deny []string) rules.Domains {
	t.Helper()
	var d rules.Domains
	for _, a := range allow {
		p, err := rules.ParseHostPattern(a)
		if err != nil {
			t.Fatal(err)
		}
		d.Allow = append(d.Allow, p)
	}
	for _, a := range deny {
		p, err := rules.ParseHostPattern(a)
		if err != nil {
			t.Fatal(err)
		}
		d.Deny = append(d.Deny, p)
	}
	return d
}

func newFixture(t *testing.T, d rules.Domains, ask bool) *fixture {
	t.Helper()
	f := &fixture{ca: testtls.New(t, "allowed.test", "unlisted.test", "other.test", "denied.test", "loop.test")}
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "page for %s%s", r.Host, r.URL.Path)
	})
	ts := httptest.NewUnstartedServer(page)
	ts.TLS = f.ca.ServerConfig()
	ts.StartTLS()
	t.Cleanup(ts.Close)
	hs := httptest.NewServer(page)
	t.Cleanup(hs.Close)
	_, f.tlsPort, _ = net.SplitHostPort(ts.Listener.Addr().String())
	_, f.httpPort, _ = net.SplitHostPort(hs.Listener.Addr().String())

	f.proxy = &Proxy{
		Domains: d,
		LookupNetIP: func(ctx context.Context, host string) ([]netip.Addr, error) {
			f.mu.Lock()
			f.lookedUp = append(f.lookedUp, host)
			f.mu.Unlock()
			if strings.HasSuffix(host, ".test") {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}
			return nil, fmt.Errorf("no such host %s (tests never resolve real names)", host)
		},
		Audit: func(r Record) {
			f.mu.Lock()
			f.records = append(f.records, r)
			f.mu.Unlock()
		},
	}
	if ask {
		f.answer = Answer{Allow: true, By: "person"}
		f.proxy.Ask = func(ctx context.Context, q Query) Answer {
			f.mu.Lock()
			f.asked = append(f.asked, fmt.Sprintf("%s:%d", q.Host, q.Port))
			a, delay := f.answer, f.askDelay
			f.mu.Unlock()
			select {
			case <-time.After(delay):
				return a
			case <-ctx.Done():
				return Answer{By: "mode"}
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go f.proxy.Serve(l)
	t.Cleanup(func() { f.proxy.Close() })
	f.proxyURL = &url.URL{Scheme: "http", Host: l.Addr().String()}
	return f
}

func (f *fixture) client() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(f.proxyURL),
		TLSClientConfig: &tls.Config{RootCAs: f.ca.Pool},
	}, Timeout: 10 * time.Second}
}

func (f *fixture) get(t *testing.T, u string) (string, error) {
	t.Helper()
	resp, err := f.client().Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return string(b), fmt.Errorf("status %s: %s", resp.Status, b)
	}
	return string(b), nil
}

// record waits for an audit record for host with the given outcome.
// forget drops the audit records kept so far.
func (f *fixture) forget() {
	f.mu.Lock()
	f.records = nil
	f.mu.Unlock()
}

func (f *fixture) record(t *testing.T, host, outcome string) Record {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.mu.Lock()
		for _, r := range f.records {
			if r.Host == host && r.Outcome == outcome {
				f.mu.Unlock()
				return r
			}
		}
		all := fmt.Sprintf("%+v", f.records)
		f.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no %s record for %s in %s", outcome, host, all)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var loopback = []string{"127.0.0.0/8"}

func TestAllowedHost(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	body, err := f.get(t, "https://allowed.test:"+f.tlsPort+"/x")
	if err != nil || body != "page for allowed.test:"+f.tlsPort+"/x" {
		t.Fatalf("got %q, %v", body, err)
	}
	body, err = f.get(t, "http://allowed.test:"+f.httpPort+"/plain")
	if err != nil || !strings.Contains(body, "/plain") {
		t.Fatalf("plain http: got %q, %v", body, err)
	}
	// A plain request cannot name another site on the same address in
	// its Host header: the host judged is the host asked.
	// (Go's client puts req.Host into the request line; write it by hand.)
	c, err := net.Dial("tcp", f.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET http://allowed.test:%s/h HTTP/1.1\r\nHost: denied.test\r\nConnection: close\r\n\r\n", f.httpPort)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	c.Close()
	if string(b) != "page for allowed.test:"+f.httpPort+"/h" {
		t.Errorf("the server saw %q", b)
	}
	f.proxy.Close() // ends the kept-alive tunnel, which writes its record
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.records) != 3 {
		t.Fatalf("want one audit record per connection, got %+v", f.records)
	}
	for _, r := range f.records {
		if r.Outcome != "connected" || r.Verdict != "allow" || r.DecidedBy != "rule" || r.Host != "allowed.test" || r.BytesIn == 0 {
			t.Errorf("record %+v", r)
		}
	}
}

func TestDeniedHost(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"*.test"}, loopback...), []string{"denied.test"}), true)
	_, err := f.get(t, "https://denied.test:"+f.tlsPort+"/")
	if err == nil || !strings.Contains(err.Error(), "denied.test matches sandbox.domains.deny") {
		t.Fatalf("want a refusal naming the deny entry, got %v", err)
	}
	r := f.record(t, "denied.test", "refused")
	if r.Verdict != "block" {
		t.Errorf("record %+v", r)
	}
	if len(f.asked) != 0 || len(f.lookedUp) != 0 {
		t.Errorf("a denied host was asked about (%v) or resolved (%v)", f.asked, f.lookedUp)
	}
	_, err = f.get(t, "http://denied.test:"+f.httpPort+"/")
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("plain http to a denied host: want 403, got %v", err)
	}
}

func TestUnlistedHostAsks(t *testing.T) {
	f := newFixture(t, domains(t, loopback, nil), true)
	for i := 0; i < 2; i++ {
		if _, err := f.get(t, "https://unlisted.test:"+f.tlsPort+"/"); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"unlisted.test:" + f.tlsPort}; fmt.Sprint(f.asked) != fmt.Sprint(want) {
		t.Errorf("asked %v, want once: %v", f.asked, want)
	}

	f = newFixture(t, domains(t, loopback, nil), true)
	f.answer = Answer{By: "person", Note: "not that one", Refusal: "guardrun: denied by user: not that one"}
	_, err := f.get(t, "https://unlisted.test:"+f.tlsPort+"/")
	if err == nil || !strings.Contains(err.Error(), "denied by user: not that one") {
		t.Fatalf("want the person's refusal, got %v", err)
	}
	r := f.record(t, "unlisted.test", "refused")
	if r.Verdict != "ask" || r.DecidedBy != "person" || r.Note != "not that one" {
		t.Errorf("record %+v", r)
	}
}

func TestAskIsBounded(t *testing.T) {
	f := newFixture(t, domains(t, loopback, nil), true)
	f.askDelay = time.Hour
	f.proxy.AskTimeout = 200 * time.Millisecond
	start := time.Now()
	_, err := f.get(t, "https://unlisted.test:"+f.tlsPort+"/")
	if err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Fatalf("want a refusal after the bound, got %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the CONNECT waited %v", time.Since(start))
	}
}

func TestStrictRefusesUnlisted(t *testing.T) {
	f := newFixture(t, domains(t, loopback, nil), false)
	_, err := f.get(t, "https://unlisted.test:"+f.tlsPort+"/")
	if err == nil || !strings.Contains(err.Error(), "strict") {
		t.Fatalf("got %v", err)
	}
}

// connect opens a tunnel by hand and returns the connection after a 200.
func connect(t *testing.T, f *fixture, target string) (net.Conn, string) {
	t.Helper()
	c, err := net.Dial("tcp", f.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	for {
		l, err := br.ReadString('\n')
		if err != nil || l == "\r\n" {
			break
		}
	}
	return c, strings.TrimSpace(line)
}

// pipelined writes raw, requests one after another, on one new
// connection to the proxy and returns the status of the response to
// each; methods are the requests' methods, in order.
func pipelined(t *testing.T, f *fixture, raw string, methods ...string) []int {
	t.Helper()
	c, err := net.Dial("tcp", f.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, raw)
	br := bufio.NewReader(c)
	var got []int
	for _, m := range methods {
		resp, err := http.ReadResponse(br, &http.Request{Method: m})
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		io.Copy(io.Discard, resp.Body)
		got = append(got, resp.StatusCode)
	}
	return got
}

func TestSNI(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	target := "allowed.test:" + f.tlsPort
	for _, tc := range []struct {
		name, sni string
		ok        bool
	}{
		{"matching SNI", "allowed.test", true},
		{"SNI of another host", "other.test", false},
		{"no SNI", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, status := connect(t, f, target)
			if !strings.Contains(status, " 200 ") {
				t.Fatalf("CONNECT: %s", status)
			}
			tc2 := tls.Client(c, &tls.Config{ServerName: tc.sni, RootCAs: f.ca.Pool, InsecureSkipVerify: tc.sni == ""})
			c.SetDeadline(time.Now().Add(5 * time.Second))
			err := tc2.Handshake()
			if tc.ok != (err == nil) {
				t.Fatalf("handshake: %v, want ok=%v", err, tc.ok)
			}
			if !tc.ok {
				r := f.record(t, "allowed.test", "refused")
				f.forget()
				if !strings.Contains(r.Reason, "server name") {
					t.Errorf("record %+v", r)
				}
			}
		})
	}
}

func TestAddressesRefused(t *testing.T) {
	f := newFixture(t, domains(t, []string{"*.test"}, nil), true)
	for _, tc := range []struct{ target, want string }{
		{"10.1.2.3:443", "10.1.2.3 is a private address"},
		{"169.254.169.254:80", "link-local"},
		{"127.0.0.1:" + f.tlsPort, "loopback"},
		{"[::1]:443", "loopback"},
		{"loop.test:" + f.tlsPort, "loop.test resolves to 127.0.0.1, a loopback address"},
	} {
		_, status := connect(t, f, tc.target)
		if !strings.Contains(status, "403") || !strings.Contains(status, tc.want) {
			t.Errorf("CONNECT %s: %s, want 403 and %q", tc.target, status, tc.want)
		}
	}
	if len(f.asked) != 0 {
		t.Errorf("asked about refused addresses: %v", f.asked)
	}
}

func TestCheckHello(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    hello
		host string
		port int
		ok   bool
	}{
		{"ssh to port 22 passes", hello{}, "github.com", 22, true},
		{"no TLS on 443 refused", hello{}, "github.com", 443, false},
		{"matching SNI, any case, trailing dot", hello{tls: true, sni: "GitHub.com."}, "github.com", 443, true},
		{"address without SNI", hello{tls: true}, "10.0.0.1", 443, true},
		{"address with a name", hello{tls: true, sni: "github.com"}, "10.0.0.1", 443, false},
		{"subdomain is not the host", hello{tls: true, sni: "api.github.com"}, "github.com", 443, false},
	} {
		if got := checkHello(&tc.h, tc.host, tc.port); (got == "") != tc.ok {
			t.Errorf("%s: %q", tc.name, got)
		}
	}
}
