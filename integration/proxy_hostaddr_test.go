//go:build linux

package integration

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostAddrPy asks guardrun's proxy ($HTTP_PROXY, with the command's
// token where the URL carries one) from inside the sandbox for each
// target it is given and prints `VIA name <status line>`, and for a
// plain GET the first line of the body (where a refusal says why).
const hostAddrPy = `import base64, os, socket, sys, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
auth = ""
if u.username:
    auth = "Proxy-Authorization: Basic " + base64.b64encode(("%s:%s" % (u.username, u.password)).encode()).decode() + "\r\n"
for spec in sys.argv[1:]:
    name, method, target = spec.split("|")
    host = target.split("//")[-1].split("/")[0]
    s = socket.create_connection((u.hostname, u.port), timeout=20)
    s.sendall(("%s %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (method, target, host, auth)).encode())
    f = s.makefile("rb")
    status = f.readline().decode(errors="replace").strip()
    body = ""
    if method == "GET":
        while f.readline() not in (b"\r\n", b""):
            pass
        body = " " + f.readline().decode(errors="replace").strip()
    print("VIA", name, status + body, flush=True)
    s.close()
`

// TestProxyHostAddress: the proxy dials from the host, so a command
// that names one of the host's own addresses through it would reach the
// host's services (here a listener on the host's interface address):
// CONNECT to the address, to its IPv4-mapped form, a plain GET, and an
// allowed name that resolves to it. From inside the sandbox, under each
// backend (landlock where user namespaces are unavailable), each is
// refused and the listener is never reached.
func TestProxyHostAddress(t *testing.T) {
	hostIP := hostIPv4(t)
	ip := netip.MustParseAddr(hostIP)
	// An address in a range refused already says so instead.
	want := "an address of this host"
	switch {
	case ip.IsPrivate():
		want = "a private address"
	case ip.IsLinkLocalUnicast():
		want = "a link-local address"
	}
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			l, reached := hostTarget(t, hostIP)
			port := portOf(l.Addr())
			w := newProxyWorld(t, "allowed.test, hostsvc.test, 127.0.0.1",
				"GUARDRUN_TEST_RESOLVE=allowed.test=127.0.0.1,hostsvc.test="+hostIP)
			if err := os.WriteFile(filepath.Join(w.work, "hostaddr.py"), []byte(hostAddrPy), 0o644); err != nil {
				t.Fatal(err)
			}
			hp := hostIP + ":" + port
			rows := map[string]string{
				"connect-address": "CONNECT|" + hp,
				"connect-mapped":  "CONNECT|[::ffff:" + hostIP + "]:" + port,
				"get-address":     "GET|http://" + hp + "/",
				"connect-name":    "CONNECT|hostsvc.test:" + port,
				"get-name":        "GET|http://hostsvc.test:" + port + "/",
			}
			// Every question answered yes: only the address check stands
			// between the command and the host.
			args := []string{"--approve-all", "--", "/usr/bin/python3", "hostaddr.py"}
			for name, spec := range rows {
				args = append(args, name+"|"+spec)
			}
			var out, stderr string
			if backend == "landlock" {
				pre := noNamespaces(t)
				landlockWorks(t, w.world, w.work)
				out, stderr, _ = runLandlock(t, pre, w.world, args...)
			} else {
				out, stderr, _ = runPlain(t, w.world, "", nil, append([]string{"--backend", "bwrap"}, args...)...)
			}
			for name := range rows {
				line := ""
				for _, l := range strings.Split(out, "\n") {
					if strings.HasPrefix(l, "VIA "+name+" ") {
						line = l
					}
				}
				switch {
				case line == "":
					t.Errorf("%s: no answer from the proxy:\n%s\n%s", name, out, stderr)
				case !strings.Contains(line, " 403 ") || !strings.Contains(line, "guardrun: blocked: ") || !strings.Contains(line, want):
					t.Errorf("%s: %s, want 403 naming %s", name, line, want)
				}
			}
			select {
			case from := <-reached:
				t.Errorf("the host's listener was reached from %s", from)
			default:
			}
		})
	}
}
