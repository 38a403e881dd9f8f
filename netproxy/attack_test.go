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
	"testing"
	"time"
)

// TestAttackSNI: against a live TLS server, a ClientHello whose server
// name is not the CONNECT host is refused, whatever its spelling; the
// same name in another case or with a trailing dot is the same host.
func TestAttackSNI(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test", "other.test"}, loopback...), nil), false)
	for _, tc := range []struct {
		name, connect, sni string
		ok                 bool
	}{
		{"SNI of another allowed host", "allowed.test", "other.test", false},
		{"no SNI", "allowed.test", "", false},
		{"SNI uppercase", "allowed.test", "ALLOWED.TEST", true},
		{"SNI with a trailing dot", "allowed.test", "allowed.test.", true},
		{"SNI an IP literal", "allowed.test", "127.0.0.1", false},
		{"SNI a suffix of the host", "allowed.test", "test", false},
		{"SNI the host as a prefix", "allowed.test", "allowed.test.evil", false},
		{"CONNECT to an address with a name in SNI", "127.0.0.1", "allowed.test", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, status := connect(t, f, tc.connect+":"+f.tlsPort)
			if !strings.Contains(status, " 200 ") {
				t.Fatalf("CONNECT: %s", status)
			}
			defer c.Close()
			cfg := &tls.Config{ServerName: tc.sni, RootCAs: f.ca.Pool, InsecureSkipVerify: true}
			tc2 := tls.Client(c, cfg)
			c.SetDeadline(time.Now().Add(5 * time.Second))
			err := tc2.Handshake()
			if tc.ok != (err == nil) {
				t.Fatalf("handshake: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestAttackAddressForms: CONNECT to loopback, private and link-local
// addresses however they are spelled, and to names that resolve there,
// is refused unless allow lists the address; nobody is asked.
func TestAttackAddressForms(t *testing.T) {
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

// TestAttackPlainHost: an absolute-URI request is judged by its URI;
// a Host header naming another host neither decides nor reaches the
// server.
func TestAttackPlainHost(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), []string{"denied.test"}), false)
	for _, tc := range []struct {
		req    string
		status int
		seen   string
	}{
		{"GET http://allowed.test:%s/a HTTP/1.1\r\nHost: denied.test\r\nConnection: close\r\n\r\n", 200, "page for allowed.test:%s/a"},
		{"GET http://denied.test:%s/b HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n", 403, ""},
		{"GET /c HTTP/1.1\r\nHost: allowed.test:%s\r\nConnection: close\r\n\r\n", 400, ""},
	} {
		c, err := net.Dial("tcp", f.proxyURL.Host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, tc.req, f.httpPort)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		c.Close()
		want := tc.seen
		if want != "" {
			want = fmt.Sprintf(want, f.httpPort)
		}
		if resp.StatusCode != tc.status || want != "" && string(b) != want {
			t.Errorf("%q: %d %q", tc.req, resp.StatusCode, b)
		}
	}
}

// TestAttackKeepAlive: two plain requests on one kept-alive connection
// to different hosts are each judged: the second, to a denied host, is
// refused although the first was allowed.
func TestAttackKeepAlive(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), []string{"denied.test"}), false)
	got := pipelined(t, f, fmt.Sprintf("GET http://allowed.test:%s/1 HTTP/1.1\r\nHost: allowed.test\r\n\r\nGET http://denied.test:%s/2 HTTP/1.1\r\nHost: allowed.test\r\n\r\n", f.httpPort, f.httpPort),
		http.MethodGet, http.MethodGet)
	if got[0] != 200 || got[1] != 403 {
		t.Errorf("statuses %v, want [200 403]", got)
	}
	f.record(t, "denied.test", "refused")
}

// TestAttackSilentTunnel: a CONNECT that never sends a ClientHello is
// ended after the bound, with an audit line.
func TestAttackSilentTunnel(t *testing.T) {
	old := peekTimeout
	peekTimeout = 300 * time.Millisecond
	defer func() { peekTimeout = old }()
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	c, status := connect(t, f, "allowed.test:"+f.tlsPort)
	if !strings.Contains(status, " 200 ") {
		t.Fatalf("CONNECT: %s", status)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	t0 := time.Now()
	_, err := c.Read(make([]byte, 1))
	if err == nil || time.Since(t0) > 4*time.Second {
		t.Errorf("the silent tunnel was not ended: %v after %v", err, time.Since(t0))
	}
	f.record(t, "allowed.test", "failed")
}
