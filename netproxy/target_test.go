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

// TestHostForms: CONNECT authorities however spelled are judged
// as the host they name, and the audit names the host dialed.
func TestHostForms(t *testing.T) {
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

// TestAddressFormsEmbedded: addresses that lead to this machine or its
// networks through an embedding (6to4, IPv4-compatible, Teredo), a zone,
// a deprecated range or an IPv4 spelling that only some resolvers read
// are refused before anyone is asked, and nothing is resolved for them.
func TestAddressFormsEmbedded(t *testing.T) {
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

// TestNoLookupBeforeApproval: a name that sandbox.domains does not
// list is not resolved until a person approved it: the resolver's query
// for "SECRET.attacker.example" would carry the secret out of the
// sandbox (to the attacker's name server) even when the connection is
// refused.
func TestNoLookupBeforeApproval(t *testing.T) {
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

// TestDNSAnswers: a name whose answer mixes addresses is dialed
// only at the ones that passed the check, and it is resolved once per
// connection, so that a second answer cannot differ from the checked
// one.
func TestDNSAnswers(t *testing.T) {
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

// TestAuditBytes: the audit counts every byte of a tunnel, those
// the client sent with its CONNECT (before the proxy's answer) too, and
// names the host and address dialed.
func TestAuditBytes(t *testing.T) {
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

// TestAddressForms: CONNECT to loopback, private and link-local
// addresses however they are spelled, and to names that resolve there,
// is refused unless allow lists the address; nobody is asked.
func TestAddressForms(t *testing.T) {
	f := newFixture(t, domains(t, []string{"*.test", "localhost", "*.evil"}, nil), true)
	f.proxy.LookupNetIP = func(ctx context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "mapped.evil":
			return []netip.Addr{netip.MustParseAddr("::ffff:127.0.0.1")}, nil
		case "meta.evil":
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
		case "mixed.evil":
			return []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("fe80::1")}, nil
		case "localhost":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, fmt.Errorf("no such host")
	}
	for _, target := range []string{
		"127.0.0.1:443", "127.1.2.3:443", "[::1]:443", "[::ffff:127.0.0.1]:443", "[::ffff:7f00:1]:443",
		"0.0.0.0:443", "[::]:443", "10.0.0.1:443", "192.168.1.1:443", "172.16.0.1:443",
		"100.64.0.1:443", "169.254.169.254:80", "[fe80::1]:443", "[fd00::1]:443",
		"2130706433:443", "0x7f000001:443", "0177.0.0.1:443", "127.1:443", "017700000001:443",
		"localhost:443", "localhost.:443", "LOCALHOST:443",
		"mapped.evil:443", "meta.evil:80", "mixed.evil:443",
	} {
		_, status := connect(t, f, target)
		if strings.Contains(status, " 200 ") {
			t.Errorf("CONNECT %s: %s", target, status)
		}
	}
	if len(f.asked) != 0 {
		t.Errorf("asked about refused addresses: %v", f.asked)
	}
}
