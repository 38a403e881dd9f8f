package netproxy

import (
	"crypto/tls"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLoopbackPorts: the ports sandbox.domains.loopback lists are
// reached on the host's loopback (localhost, 127.0.0.1, ::1) without a
// question, each connection audited; every other port there, every other
// loopback address, a name that merely resolves to 127.0.0.1 and the
// host's other addresses stay refused, and deny still beats the list.
func TestLoopbackPorts(t *testing.T) {
	f := newFixture(t, domains(t, []string{"*.test"}, nil), true)
	httpPort, _ := strconv.Atoi(f.httpPort)
	tlsPort, _ := strconv.Atoi(f.tlsPort)
	f.proxy.Domains.Loopback = []int{httpPort, tlsPort}
	free := freePort(t)

	for _, u := range []string{"http://localhost:" + f.httpPort + "/health", "http://127.0.0.1:" + f.httpPort + "/health"} {
		body, err := f.get(t, u)
		if err != nil || !strings.Contains(body, "/health") {
			t.Fatalf("GET %s: %q, %v", u, body, err)
		}
	}
	r := f.record(t, "localhost", "connected")
	if r.Verdict != "allow" || r.DecidedBy != "rule" || r.Addr != "127.0.0.1:"+f.httpPort || !strings.Contains(r.Reason, "sandbox.domains.loopback") {
		t.Errorf("the audit record of a loopback request: %+v", r)
	}

	// A tunnel to a listed port: TLS to the server, no name given.
	c, status := connect(t, f, "127.0.0.1:"+f.tlsPort)
	if !strings.Contains(status, " 200 ") {
		t.Fatalf("CONNECT 127.0.0.1:%s: %s", f.tlsPort, status)
	}
	tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true})
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if err := tc.Handshake(); err != nil {
		t.Errorf("TLS through the tunnel to a listed loopback port: %v", err)
	}

	refused := []struct{ target, want string }{
		{"localhost:" + strconv.Itoa(free), "loopback"},
		{"127.0.0.1:22", "loopback"},
		{"127.0.0.2:" + f.httpPort, "loopback"},
		{"0.0.0.0:" + f.httpPort, "unspecified"},
		{"loop.test:" + f.httpPort, "loop.test resolves to 127.0.0.1, a loopback address"},
	}
	if a := ownAddress(t); a.IsValid() {
		refused = append(refused, struct{ target, want string }{netip.AddrPortFrom(a, uint16(httpPort)).String(), "this host"})
	}
	for _, tt := range refused {
		_, status := connect(t, f, tt.target)
		if !strings.Contains(status, "403") || !strings.Contains(status, tt.want) {
			t.Errorf("CONNECT %s: %s, want 403 and %q", tt.target, status, tt.want)
		}
	}
	if len(f.asked) != 0 {
		t.Errorf("asked about loopback: %v", f.asked)
	}
	for _, h := range f.lookedUp {
		if h == "localhost" {
			t.Errorf("localhost was looked up: %v", f.lookedUp)
		}
	}

	// Deny beats the list.
	f.proxy.Domains.Deny = domains(t, nil, []string{"127.0.0.1", "::1"}).Deny
	if _, status := connect(t, f, "127.0.0.1:"+f.httpPort); !strings.Contains(status, "403") {
		t.Errorf("CONNECT to a denied loopback address: %s, want 403", status)
	}
	if _, status := connect(t, f, "localhost:"+f.httpPort); !strings.Contains(status, "403") {
		t.Errorf("CONNECT localhost with both loopback addresses denied: %s, want 403", status)
	}
}

// freePort is a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// ownAddress is an address of one of this host's interfaces that is not
// a loopback one, or the zero Addr when there is none.
func ownAddress(t *testing.T) netip.Addr {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return netip.Addr{}
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap().Is4() && !ip.IsLoopback() {
				return ip.Unmap()
			}
		}
	}
	return netip.Addr{}
}
