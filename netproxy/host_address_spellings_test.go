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
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestHostAddressSpellings runs, in a network and mount namespace of its
// own (a re-executed copy under unshare), every spelling of the host's
// own addresses a command could hand the proxy: 198.51.100.7 on lo (and
// so its /24), 2001:db8::7 and its subnet's anycast address, loopback,
// the unspecified addresses, as numbers inet_aton reads, in IPv6's
// mapped, compatible, NAT64, 6to4 and Teredo forms, with zones, and as
// names /etc/hosts (bind-mounted over for the copy) gives those
// addresses, alone or next to a public one. The proxy says yes to every
// host that asks and resolves with the system's resolver; a service
// listening on every address counts whom it accepted. None may reach
// it. Then an allowed address whose answer redirects to the host's own:
// the proxy passes the redirect on and never follows it.
func TestHostAddressSpellings(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("network namespaces are Linux's")
	}
	if os.Getenv("GUARDRUN_TEST_NETNS") != "spellings" {
		for _, tool := range []string{"unshare", "ip", "mount"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("needs %s (util-linux, iproute2)", tool)
			}
		}
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("unshare", "--map-root-user", "--net", "--mount", self, "-test.run=^TestHostAddressSpellings$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "GUARDRUN_TEST_NETNS=spellings")
		out, err := cmd.CombinedOutput()
		if err != nil && strings.Contains(string(out), "unshare failed") {
			t.Skipf("no network namespace of its own here: %s", out)
		}
		if err != nil || !strings.Contains(string(out), "--- PASS: TestHostAddressSpellings") {
			t.Fatalf("in a network namespace of its own: %v\n%s", err, out)
		}
		return
	}
	for _, c := range [][]string{
		{"link", "set", "lo", "up"},
		{"addr", "add", "198.51.100.7/24", "dev", "lo"},
		{"-6", "addr", "add", "2001:db8::7/64", "dev", "lo"},
	} {
		if out, err := exec.Command("ip", c...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	// An interface of another kind (a container bridge's end), with
	// forwarding on as on a router: its IPv6 subnet's anycast address is
	// the host's too.
	veth := true
	for _, c := range [][]string{
		{"link", "add", "gr0", "type", "veth", "peer", "name", "gr1"},
		{"link", "set", "gr0", "up"},
		{"link", "set", "gr1", "up"},
		{"addr", "add", "192.0.2.7/24", "dev", "gr0"},
		{"-6", "addr", "add", "2001:db8:1::7/64", "dev", "gr0", "nodad"},
	} {
		if out, err := exec.Command("ip", c...).CombinedOutput(); err != nil {
			t.Logf("no veth here, its rows are left out: ip %s: %v\n%s", strings.Join(c, " "), err, out)
			veth = false
			break
		}
	}
	if veth {
		if err := os.WriteFile("/proc/sys/net/ipv6/conf/all/forwarding", []byte("1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hostsFile := t.TempDir() + "/hosts"
	if err := os.WriteFile(hostsFile, []byte(strings.Join([]string{
		"127.0.0.1 localhost",
		"198.51.100.7 hostsvc.test",
		"93.184.215.14 dual.test",
		"198.51.100.7 dual.test",
		"2001:db8::7 v6.test",
		"::ffff:198.51.100.7 mapped.test",
		"0.0.0.0 zero.test",
		":: zero6.test",
		"198.51.100.200 subnet.test",
		"",
	}, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", hostsFile, "/etc/hosts").CombinedOutput(); err != nil {
		t.Fatalf("mount --bind %s /etc/hosts: %v\n%s", hostsFile, err, out)
	}

	// The host's service, on every address, both families; it counts
	// the connections per local address, and answers the redirector's
	// address with a redirect to the host's own.
	l, err := net.Listen("tcp", "[::]:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	_, port, _ := net.SplitHostPort(l.Addr().String())
	var mu sync.Mutex
	hits := map[string]int{}
	var total atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			total.Add(1)
			local, _, _ := net.SplitHostPort(c.LocalAddr().String())
			mu.Lock()
			hits[local]++
			mu.Unlock()
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				bufio.NewReader(c).ReadString('\n')
				if a, err := netip.ParseAddr(local); err == nil && a.Unmap().String() == "198.51.100.8" {
					fmt.Fprintf(c, "HTTP/1.1 302 Found\r\nLocation: http://198.51.100.7:%s/\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", port)
					return
				}
				fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: close\r\n\r\nhost service")
			}()
		}
	}()
	p := &Proxy{
		// 198.51.100.8 is listed by address: the redirector.
		Domains: domains(t, []string{"198.51.100.8"}, nil),
		Ask:     func(context.Context, Query) Answer { return Answer{Allow: true, By: "person"} },
	}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(pl)
	t.Cleanup(func() { p.Close() })
	proxy := pl.Addr().String()

	hp := func(h string) string { return net.JoinHostPort(h, port) }
	var rows []hostRow
	hosts := []string{
		"198.51.100.7", "198.51.100.9", "198.51.100.0", "198.51.100.255",
		"3325256711", "0xc6336407", "0306.0063.0144.07", "198.051.100.7", "198.51.25607", "0xc6.0x33.0x64.0x7",
		"127.0.0.1", "127.1", "127.255.255.254", "2130706433", "0x7f000001", "0177.0.0.1", "0.0.0.0", "0", "0x0",
		"::1", "::", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "::ffff:7f00:1", "::127.0.0.1",
		"::ffff:198.51.100.7", "::FFFF:C633:6407", "0:0:0:0:0:ffff:198.51.100.7", "::198.51.100.7", "::ffff:0.0.0.0",
		"64:ff9b::198.51.100.7", "64:ff9b::7f00:1", "64:ff9b:1::c633:6407", "2002:c633:6407::1", "2002:7f00:1::1",
		"2001:0:c633:6407::1", "2001:0:4136:e378:8000:63bf:39cc:9bf8", "2001:0:4136:e378:8000:63bf:80ff:fffe",
		"2001:db8::7", "2001:db8::", "2001:DB8:0:0:0:0:0:7",
		"fe80::1", "fe80::1%lo", "fe80::1%1", "::1%lo", "198.51.100.7%lo", "2001:db8::7%lo",
		"hostsvc.test", "HOSTSVC.TEST.", "dual.test", "v6.test", "mapped.test", "zero.test", "zero6.test", "subnet.test", "localhost",
	}
	if veth {
		hosts = append(hosts, "192.0.2.7", "192.0.2.255", "::ffff:192.0.2.7", "64:ff9b::c000:207", "2001:db8:1::7", "2001:db8:1::")
	}
	for _, h := range hosts {
		rows = append(rows,
			hostRow{"CONNECT " + h, "CONNECT", hp(h)},
			hostRow{"GET " + h, http.MethodGet, "http://" + hp(h) + "/"})
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			before := total.Load()
			got := viaProxy(t, proxy, r.method, r.target)
			refused := strings.Contains(got, " 403 ") || strings.Contains(got, " 400 ")
			// dual.test is dialed at its public address, which this
			// namespace cannot reach; lo's 2001:db8:: is no address
			// of the host's (no anycast on lo), so it is dialed and
			// not reached either.
			dialedElsewhere := strings.Contains(r.target, "dual.test") || strings.Contains(r.target, "[2001:db8::]")
			if !refused && !(dialedElsewhere && strings.Contains(got, " 502 ")) {
				t.Errorf("%s %s: %s, want a refusal", r.method, r.target, got)
			}
			if n := total.Load() - before; n != 0 {
				t.Errorf("%s %s: the host's service was reached %d times (%s)", r.method, r.target, n, got)
			}
		})
	}

	t.Run("a redirect from an allowed address to the host's own is passed on, not followed", func(t *testing.T) {
		mu.Lock()
		before := hits["::ffff:198.51.100.7"] + hits["198.51.100.7"]
		mu.Unlock()
		got := viaProxy(t, proxy, http.MethodGet, "http://"+hp("198.51.100.8")+"/")
		if !strings.Contains(got, " 302 ") {
			t.Errorf("GET of the redirector: %s, want its 302", got)
		}
		mu.Lock()
		after := hits["::ffff:198.51.100.7"] + hits["198.51.100.7"]
		mu.Unlock()
		if after != before {
			t.Errorf("the host's own address was reached %d times after the redirect", after-before)
		}
		// The client that follows it asks the proxy anew, and is refused.
		if got := viaProxy(t, proxy, http.MethodGet, "http://"+hp("198.51.100.7")+"/"); !strings.Contains(got, " 403 ") {
			t.Errorf("GET of the redirect's target: %s, want 403", got)
		}
	})
}
