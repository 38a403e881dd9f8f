package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hostService is a service of the host's own (an ssh, a database) on one
// of its addresses: it answers plain HTTP and counts whom it accepted.
type hostService struct {
	l    net.Listener
	port string
	hits atomic.Int32
}

func startHostService(t *testing.T, addr string) *hostService {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s := &hostService{l: l}
	_, s.port, _ = net.SplitHostPort(l.Addr().String())
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.hits.Add(1)
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				bufio.NewReader(c).ReadString('\n')
				fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: close\r\n\r\nhost service")
			}()
		}
	}()
	return s
}

// yesProxy is a proxy whose person says yes to every host that asks, with
// allow as sandbox.domains.allow and names as its resolver: what stands
// between a command and the host's services is the address check alone.
func yesProxy(t *testing.T, allow []string, names map[string]string) string {
	t.Helper()
	p := &Proxy{
		Domains: domains(t, allow, nil),
		Ask:     func(context.Context, Query) Answer { return Answer{Allow: true, By: "person"} },
		LookupNetIP: func(_ context.Context, host string) ([]netip.Addr, error) {
			if a, ok := names[host]; ok {
				return []netip.Addr{netip.MustParseAddr(a)}, nil
			}
			return nil, fmt.Errorf("no such host %s (tests never resolve real names)", host)
		},
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(l)
	t.Cleanup(func() { p.Close() })
	return l.Addr().String()
}

// viaProxy sends one request line (CONNECT target, or GET of an absolute
// URL) to the proxy at proxy and returns the status line and, for a
// refusal, the body's first line.
func viaProxy(t *testing.T, proxy, method, target string) string {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	host := target
	if method == http.MethodGet {
		host = strings.SplitN(strings.TrimPrefix(target, "http://"), "/", 2)[0]
	}
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\n\r\n", method, target, host)
	br := bufio.NewReader(c)
	status, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	if strings.Contains(status, " 200 ") {
		return strings.TrimSpace(status)
	}
	for {
		l, err := br.ReadString('\n')
		if err != nil || l == "\r\n" {
			break
		}
	}
	body, _ := br.ReadString('\n')
	return strings.TrimSpace(status) + " " + strings.TrimSpace(body)
}

// v6Forms are the IPv6 spellings that lead to the IPv4 address a: mapped
// (which the proxy dials as a itself), NAT64 and 6to4.
func v6Forms(a netip.Addr) []string {
	b := a.As4()
	return []string{
		fmt.Sprintf("::ffff:%s", a),
		fmt.Sprintf("64:ff9b::%02x%02x:%02x%02x", b[0], b[1], b[2], b[3]),
		fmt.Sprintf("2002:%02x%02x:%02x%02x::1", b[0], b[1], b[2], b[3]),
	}
}

// hostRow is one way to name a service of the host through the proxy.
type hostRow struct {
	name, method, target string
}

// hostRows are the ways to the service at ip:port: CONNECT and plain GET
// to the address, its IPv6 forms, and a name that resolves to it.
func hostRows(ip netip.Addr, port string) []hostRow {
	rows := []hostRow{
		{"CONNECT to the address", "CONNECT", net.JoinHostPort(ip.String(), port)},
		{"plain GET of the address", http.MethodGet, "http://" + net.JoinHostPort(ip.String(), port) + "/"},
		{"CONNECT to an allowed name that resolves to it", "CONNECT", "hostsvc.test:" + port},
		{"plain GET of an allowed name that resolves to it", http.MethodGet, "http://hostsvc.test:" + port + "/"},
	}
	for _, f := range v6Forms(ip) {
		rows = append(rows, hostRow{"CONNECT to " + f, "CONNECT", net.JoinHostPort(f, port)})
	}
	return rows
}

// checkRefused makes each row through a proxy that says yes to everything
// and checks it is refused as one of the host's own addresses, and that
// the service was never reached.
func checkRefused(t *testing.T, proxy string, svc *hostService, rows []hostRow) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			before := svc.hits.Load()
			got := viaProxy(t, proxy, r.method, r.target)
			if !strings.Contains(got, " 403 ") || !strings.Contains(got, "an address of this host") {
				t.Errorf("%s %s: %s, want 403 naming an address of this host", r.method, r.target, got)
			}
			if n := svc.hits.Load() - before; n != 0 {
				t.Errorf("the host's service was reached %d times", n)
			}
		})
	}
}

// hostAddress is an IPv4 address of one of this host's interfaces that is
// not loopback, private, link-local or otherwise refused by its range
// alone, or the zero Addr.
func hostAddress(t *testing.T) netip.Addr {
	t.Helper()
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ifs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		if ip, ok := netip.AddrFromSlice(ipn.IP); ok && ip.Unmap().Is4() && specialKind(ip.Unmap()) == "" {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}

// TestHostAddressesRefused: the proxy dials from the host, so a command
// that names the host's own interface address (or its IPv4-mapped, NAT64
// or 6to4 form, or a name that resolves to it) would reach the host's
// services as if from the host. Each is refused, even when a person says
// yes, unless sandbox.domains.allow lists the address.
func TestHostAddressesRefused(t *testing.T) {
	ip := hostAddress(t)
	if !ip.IsValid() {
		t.Skip("this host has no interface address outside the ranges refused already (private, link-local ...); TestHostAddressesNetns covers the check in a network namespace of its own")
	}
	svc := startHostService(t, net.JoinHostPort(ip.String(), "0"))
	names := map[string]string{"hostsvc.test": ip.String()}
	checkRefused(t, yesProxy(t, []string{"hostsvc.test"}, names), svc, hostRows(ip, svc.port))

	t.Run("listed by address in allow", func(t *testing.T) {
		before := svc.hits.Load()
		got := viaProxy(t, yesProxy(t, []string{ip.String()}, names), http.MethodGet, "http://"+net.JoinHostPort(ip.String(), svc.port)+"/")
		if !strings.Contains(got, " 200 ") || svc.hits.Load() == before {
			t.Errorf("allowed by address: %s, and the service was reached %d times", got, svc.hits.Load()-before)
		}
	})
}

// TestHostAddressesNetns runs the check in a network namespace of its
// own (a re-executed copy of this test under unshare) where the host's
// addresses are known: 198.51.100.7/24 on lo (which makes the whole /24
// local, as the kernel does for a loopback device) and an AnyIP route,
// `local 203.0.113.0/24`. A service listening on every address is reached
// through any of them on the host; through the proxy, none is, nor the
// subnet's broadcast address. A local route in a table only a firewall
// mark selects (table 100) does not count.
func TestHostAddressesNetns(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("network namespaces are Linux's")
	}
	if os.Getenv("GUARDRUN_TEST_NETNS") != "1" {
		for _, tool := range []string{"unshare", "ip"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("needs %s (util-linux, iproute2)", tool)
			}
		}
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("unshare", "--map-root-user", "--net", self, "-test.run=^TestHostAddressesNetns$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "GUARDRUN_TEST_NETNS=1")
		out, err := cmd.CombinedOutput()
		if err != nil && strings.Contains(string(out), "unshare failed") {
			t.Skipf("no network namespace of its own here: %s", out)
		}
		if err != nil || !strings.Contains(string(out), "--- PASS: TestHostAddressesNetns") {
			t.Fatalf("in a network namespace of its own: %v\n%s", err, out)
		}
		return
	}
	for _, c := range [][]string{
		{"link", "set", "lo", "up"},
		{"addr", "add", "198.51.100.7/24", "dev", "lo"},
		{"route", "add", "local", "203.0.113.0/24", "dev", "lo"},
		{"route", "add", "local", "192.0.2.0/24", "dev", "lo", "table", "100"},
	} {
		if out, err := exec.Command("ip", c...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	svc := startHostService(t, "0.0.0.0:0")
	names := map[string]string{"hostsvc.test": "198.51.100.7"}
	proxy := yesProxy(t, []string{"hostsvc.test"}, names)
	rows := hostRows(netip.MustParseAddr("198.51.100.7"), svc.port)
	for _, a := range []string{"198.51.100.9", "198.51.100.255", "203.0.113.5"} {
		rows = append(rows, hostRow{"CONNECT to " + a + " (a local route)", "CONNECT", net.JoinHostPort(a, svc.port)})
	}
	checkRefused(t, proxy, svc, rows)

	t.Run("a local route in a table no default rule consults", func(t *testing.T) {
		got := viaProxy(t, proxy, "CONNECT", net.JoinHostPort("192.0.2.9", svc.port))
		if strings.Contains(got, "an address of this host") {
			t.Errorf("CONNECT 192.0.2.9: %s: table 100 taken for the host's", got)
		}
	})
}

// BenchmarkHostLocal is the cost of the check on every connection:
// listing the interfaces' addresses and dumping the routing tables.
func BenchmarkHostLocal(b *testing.B) {
	a := netip.MustParseAddr("93.184.215.14")
	for b.Loop() {
		h, err := hostLocalNow()
		if err != nil {
			b.Fatal(err)
		}
		if h.ownAddress(a) != "" {
			b.Fatal("a public address taken for the host's")
		}
	}
}
