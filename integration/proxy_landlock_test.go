//go:build linux

package integration

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runLandlock runs guardrun --backend landlock ARGS where user namespaces
// are unavailable (noNamespaces), in w's work directory.
func runLandlock(t testing.TB, pre []string, w *world, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	argv := append(append(append([]string{}, pre...), guardrunBin, "--backend", "landlock"), args...)
	r := proc{dir: w.work, env: w.env}.run(argv...)
	if r.err != nil {
		t.Fatalf("guardrun %q: %v", args, r.err)
	}
	return r.stdout, r.stderr, r.code
}

// landlockEscapePy tries every other way out of a landlock sandbox with
// the proxy; each success prints ESCAPED. Refusals by guardrun's connect
// handler or by Landlock are PermissionError (EACCES), told apart from a
// port where nothing listens (ConnectionRefusedError). It first proves
// it runs inside: a seccomp filter on and the proxy variables set.
const landlockEscapePy = `
import os, socket, sys
srv_port, host_ip, host_port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
proxy = os.environ["HTTPS_PROXY"]
pport = int(proxy.rsplit(":", 1)[1])
print("inside:", [l for l in open("/proc/self/status") if l.startswith("Seccomp:")][0].strip(), "proxy", proxy.split("@")[0].rsplit(":", 1)[0], proxy.split("@")[1].split(":")[0])
def attempt(name, f):
    try:
        r = f()
        print("ESCAPED", name, r)
    except Exception as e:
        print("refused", name, type(e).__name__, e)
def tcp(addr, family=socket.AF_INET):
    s = socket.socket(family, socket.SOCK_STREAM); s.settimeout(3); s.connect(addr); s.close(); return "connected"
def tcp_nb(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.setblocking(False)
    try:
        s.connect(addr)
    except BlockingIOError:
        pass
    import select
    select.select([], [s], [], 3)
    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if err: raise OSError(err, os.strerror(err))
    return "connected"
attempt("direct TCP to the loopback server", lambda: tcp(("127.0.0.1", srv_port)))
attempt("non-blocking TCP to the loopback server", lambda: tcp_nb(("127.0.0.1", srv_port)))
attempt("the proxy's port on 127.0.0.2", lambda: tcp(("127.0.0.2", pport)))
attempt("the proxy's port on ::1", lambda: tcp(("::1", pport), socket.AF_INET6))
attempt("the proxy's port on the host's address", lambda: tcp((host_ip, pport)))
attempt("direct TCP to the host's address", lambda: tcp((host_ip, host_port)))
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", (host_ip, host_port)); return "sent"
attempt("UDP to the host", udp)
attempt("UDP over IPv6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))
attempt("raw socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt("ICMP echo", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP))
attempt("SCTP", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132))
attempt("packet socket", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))
attempt("netlink socket", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
attempt("unix socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
attempt("abstract socket", lambda: socket.socket(socket.AF_UNIX).connect("\0guardrun-test"))
def listen():
    s = socket.socket(); s.listen(1); return s.getsockname()
attempt("listen (autobind)", listen)
def bind():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); return s.getsockname()
attempt("bind", bind)
def fastopen():
    s = socket.socket(); s.sendto(b"GET / HTTP/1.0\r\n\r\n", 0x20000000, (host_ip, host_port)); return "sent"
attempt("TCP fast open", fastopen)
def unspec():
    s = socket.create_connection(("127.0.0.1", pport), timeout=3)
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    sa = (ctypes.c_ubyte * 16)()
    if libc.connect(s.fileno(), sa, 16) != 0:
        e = ctypes.get_errno(); raise OSError(e, os.strerror(e))
    return "disconnected"
attempt("AF_UNSPEC connect", unspec)
def notoken():
    s = socket.create_connection(("127.0.0.1", pport), timeout=3)
    s.sendall(("CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: x\r\n\r\n" % srv_port).encode())
    return s.recv(200).split(b"\r\n")[0].decode()
print("without the token:", notoken())
def mapped():
    s = socket.socket(socket.AF_INET6); s.settimeout(3); s.connect(("::ffff:127.0.0.1", pport)); s.close(); return "ok"
print("mapped:", mapped())
a, b = socket.socketpair()
a.sendall(b"ok"); print("socketpair:", b.recv(2).decode())
`

// sysPython runs the system's python3: under landlock a python3 found
// first on PATH outside the visible system directories (pyenv's shims
// in a home directory) is there but not executable.
func sysPython(cmd string) string {
	return strings.Replace(cmd, "python3 -c", "/usr/bin/python3 -c", 1)
}

func hostIPv4(t *testing.T) string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() {
			return ipn.IP.String()
		}
	}
	t.Skip("the host has no non-loopback IPv4 address to aim at")
	return ""
}

// TestProxyLandlock: where user namespaces are unavailable, the landlock
// backend routes a command with network: proxy to guardrun's proxy on a
// host loopback port, with its token in the proxy URL: curl and urllib
// get an allowed host's page, a denied host is refused, and every other
// way out (direct TCP, the proxy's port on another address, UDP, raw,
// ICMP, unix and abstract sockets, listen, bind, fast open) is refused.
func TestProxyLandlock(t *testing.T) {
	pre := noNamespaces(t)
	w := newProxyWorld(t, "allowed.test, 127.0.0.1")
	landlockWorks(t, w.world, w.work)
	if err := os.WriteFile(filepath.Join(w.work, "escape.py"), []byte(landlockEscapePy), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runLandlock(t, pre, w.world, "-c", w.curl("allowed.test")+" && "+sysPython(w.urllib("allowed.test")))
	if code != 0 || strings.Count(out, "page for allowed.test") != 2 {
		t.Fatalf("allowed host: exit %d\n%s\n%s", code, out, stderr)
	}
	_, stderr, code = runLandlock(t, pre, w.world, "-c", w.curl("denied.test"))
	if code == 0 || !strings.Contains(stderr, "guardrun: blocked: denied.test:"+w.port) {
		t.Errorf("denied host: exit %d\n%s", code, stderr)
	}

	hostIP := hostIPv4(t)
	l, reached := hostTarget(t, hostIP)
	out, stderr, code = runLandlock(t, pre, w.world, "-c",
		"/usr/bin/python3 escape.py "+w.port+" "+hostIP+" "+portOf(l.Addr()))
	if !strings.Contains(out, "inside: Seccomp:\t2 proxy http://guardrun 127.0.0.1") {
		t.Fatalf("the sandbox did not come up as expected (exit %d):\n%s\n%s", code, out, stderr)
	}
	t.Logf("inside the sandbox:\n%s", out)
	if strings.Contains(out, "ESCAPED") {
		t.Errorf("a way out:\n%s", out)
	}
	for _, want := range []string{
		"direct TCP to the loopback server PermissionError",
		"non-blocking TCP to the loopback server PermissionError",
		"the proxy's port on 127.0.0.2 PermissionError",
		"the proxy's port on ::1 PermissionError",
		"the proxy's port on the host's address PermissionError",
		"direct TCP to the host's address PermissionError",
		"UDP to the host PermissionError", "UDP over IPv6 PermissionError",
		"raw socket ", "ICMP echo ", "SCTP ", "packet socket ", "netlink socket ",
		"unix socket PermissionError", "abstract socket PermissionError",
		"listen (autobind) PermissionError", "bind PermissionError", "TCP fast open PermissionError",
		"AF_UNSPEC connect PermissionError",
	} {
		if !strings.Contains(out, "refused "+want) {
			t.Errorf("no refusal line %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"without the token: HTTP/1.1 407 guardrun: refused: a connection to the proxy without its token", "mapped: ok", "socketpair: ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q:\n%s\n%s", want, out, stderr)
		}
	}
	select {
	case from := <-reached:
		t.Errorf("the host's listener was reached from %s", from)
	default:
	}
	var refused407 bool
	for _, r := range w.connects(t) {
		if r["outcome"] == "refused" && strings.Contains(r["reason"].(string), "without its token") {
			refused407 = true
		}
	}
	if !refused407 {
		t.Errorf("no audit line for the connection without the token: %v", w.connects(t))
	}
}

// TestProxyLandlockSupervisor: under the landlock backend the agent's
// commands share the supervisor's proxy (one TCP port, each command's
// own token); an unlisted host asks on the supervisor's terminal, and a
// y holds for that command only.
func TestProxyLandlockSupervisor(t *testing.T) {
	pre := noNamespaces(t)
	w := newProxyWorld(t, "127.0.0.1")
	landlockWorks(t, w.world, w.work)
	argv := append(append([]string{}, pre...), guardrunBin, "--backend", "landlock", "supervise", "--", "sh", fakeAgent(t))
	tt := startOnTTY(t, w.world, argv...)
	at := tt.waitFor(0, "fakeagent: ready")
	curl := w.curl("unlisted.test") + "\n"
	tt.typ(curl)
	at = tt.answer(at, "y")
	at = tt.waitFor(at, `page for unlisted.test[\s\S]*>>> end \d+: status 0`)
	tt.typ(curl) // a new command, a new token: asks again
	at = tt.answer(at, "n")
	at = tt.waitFor(at, "note for the agent")
	tt.typ("not that host\r")
	tt.waitFor(at, `not that host[\s\S]*>>> end \d+: status [1-9]`)
	if n := prompts(tt.screen()); n != 2 {
		t.Errorf("prompts: %d, want 2:\n%s", n, tt.screen())
	}
	tt.typ("quit\n")
	tt.wait()
	pids := map[any]bool{}
	for _, r := range w.connects(t) {
		if r["host"] == "unlisted.test" {
			pids[r["pid"]] = true
		}
	}
	if len(pids) != 2 {
		t.Errorf("want the connections of two commands in the audit log, each with its own command's pid: %v", w.connects(t))
	}
}
