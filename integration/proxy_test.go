//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/testing/testtls"
)

// proxyWorld is a world whose config sends the network through guardrun's
// proxy, with a TLS server on 127.0.0.1 under made-up names (the test
// build's resolver maps them; nothing outside this machine is asked).
type proxyWorld struct {
	*world
	port string // the TLS server's port
}

const proxyConfigFmt = `
mode: interactive
shell:
  default: {allowed: true, approval: false}
  rules:
    # What the tests run: programs that run code are pre-approved only
    # as far as a rule's own words name them.
    - {pattern: "python3 -c", approval: false}
    - {pattern: "python3 tunnel.py", approval: false}
    - {pattern: "python3 escape.py", approval: false}
    - {pattern: "/usr/bin/python3 -c", approval: false}
    - {pattern: "/usr/bin/python3 -m pip install", approval: false}
    - {pattern: "npm ci", approval: false}
    - {pattern: "node -e", approval: false}
sandbox:
  network: proxy
  domains:
    allow: [%s]
    deny: [denied.test]
  paths:
    work: {root: ., mode: rw}
`

func newProxyWorld(t *testing.T, allow string, extraEnv ...string) *proxyWorld {
	t.Helper()
	requireSandbox(t)
	for _, tool := range []string{"curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (apt install %s)", tool, tool)
		}
	}
	ca := testtls.New(t, "allowed.test", "unlisted.test", "denied.test", "other.test", "loop.test")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "page for %s\n", strings.Split(r.Host, ":")[0])
	}))
	srv.TLS = ca.ServerConfig()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	env := append([]string{"GUARDRUN_TEST_RESOLVE=allowed.test=127.0.0.1,unlisted.test=127.0.0.1,denied.test=127.0.0.1,other.test=127.0.0.1,loop.test=127.0.0.1"}, extraEnv...)
	w := runWorld(t, fmt.Sprintf(proxyConfigFmt, allow), env...)
	ca2, err := os.ReadFile(ca.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	// The sandbox sees the work zone, not the test's temporary files.
	if err := os.WriteFile(filepath.Join(w.work, "ca.pem"), ca2, 0o644); err != nil {
		t.Fatal(err)
	}
	return &proxyWorld{world: w, port: port}
}

func (w *proxyWorld) curl(host string) string {
	return fmt.Sprintf("curl -sS --max-time 20 --cacert ca.pem https://%s:%s/", host, w.port)
}

func (w *proxyWorld) urllib(host string) string {
	return fmt.Sprintf(`python3 -c 'import ssl, urllib.request as u; print(u.urlopen("https://%s:%s/", context=ssl.create_default_context(cafile="ca.pem"), timeout=20).read().decode(), end="")'`, host, w.port)
}

// connects reads the audit log's connection records.
func (w *proxyWorld) connects(t *testing.T) []map[string]any {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun", "audit.jsonl"))
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["op"] == "connect" {
			out = append(out, m)
		}
	}
	return out
}

// TestProxyAllowedHost: curl and python's urllib find the proxy through
// the variables guardrun sets and get the page from an allowed host;
// each connection is an audit line.
func TestProxyAllowedHost(t *testing.T) {
	w := newProxyWorld(t, "allowed.test, 127.0.0.1")
	out, stderr, code := runPlain(t, w.world, "", nil, "-c", w.curl("allowed.test")+" && "+w.urllib("allowed.test"))
	if code != 0 || out != "page for allowed.test\npage for allowed.test\n" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	recs := w.connects(t)
	if len(recs) != 2 {
		t.Fatalf("want 2 connection records, got %v", recs)
	}
	for _, r := range recs {
		if r["host"] != "allowed.test" || r["verdict"] != "allow" || r["outcome"] != "connected" ||
			r["bytes_in"] == nil || r["duration_ms"] == nil || r["port"] == nil {
			t.Errorf("record %v", r)
		}
	}
}

// TestProxyDeniedHost: a denied host is refused with a line naming the
// entry, curl and urllib fail, nobody is asked.
func TestProxyDeniedHost(t *testing.T) {
	w := newProxyWorld(t, `"*.test", 127.0.0.1`)
	_, stderr, code := runPlain(t, w.world, "", nil, "-c", w.curl("denied.test"))
	if code == 0 {
		t.Fatal("curl to a denied host succeeded")
	}
	want := fmt.Sprintf(`guardrun: blocked: denied.test:%s: denied.test matches sandbox.domains.deny "denied.test"`, w.port)
	// guardrun's line and curl's share stderr and may interleave (curl
	// writes its message in pieces): look for curl's by its code.
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, "(56) CONNECT tunnel failed") {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	_, stderr, code = runPlain(t, w.world, "", nil, "-c", w.urllib("denied.test"))
	if code == 0 || !strings.Contains(stderr, "Tunnel connection failed: 403 guardrun: blocked: denied.test") {
		t.Errorf("urllib: exit %d, stderr:\n%s", code, stderr)
	}
	for _, r := range w.connects(t) {
		if r["verdict"] != "block" || r["outcome"] != "refused" || r["decided_by"] != "policy" {
			t.Errorf("record %v", r)
		}
	}
}

// TestProxyAskYes: an unlisted host asks on the terminal, naming the
// command, the host and the port; y lets it through (and holds for the
// rest of the command: the second request does not ask again).
func TestProxyAskYes(t *testing.T) {
	w := newProxyWorld(t, "127.0.0.1")
	r := startPrompt(t, w.world, nil, "-c", w.curl("unlisted.test")+" && "+w.curl("unlisted.test"))
	r.waitFor(keyLine, 1)
	s := r.screen()
	for _, want := range []string{"$ curl -sS", "connect to unlisted.test:" + w.port, "unlisted.test is not listed in sandbox.domains"} {
		if !strings.Contains(s, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, s)
		}
	}
	r.send("y")
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d after y; stderr: %s", code, r.stderr.String())
	}
	if got := r.stdout.String(); got != "page for unlisted.test\npage for unlisted.test\n" {
		t.Errorf("stdout %q", got)
	}
	if n := strings.Count(r.screen(), keyLine); n != 1 {
		t.Errorf("asked %d times, want once", n)
	}
}

// TestProxyAskSession: s remembers the host for the session: a later
// command in the same session, without a terminal to ask on, gets
// through.
func TestProxyAskSession(t *testing.T) {
	w := newProxyWorld(t, "127.0.0.1", "GUARDRUN_SESSION=proxy-s")
	r := startPrompt(t, w.world, nil, "-c", w.curl("unlisted.test"))
	r.waitFor(keyLine, 1)
	r.send("s")
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d after s; stderr: %s", code, r.stderr.String())
	}
	out, stderr, code := runPlain(t, w.world, "", nil, "-c", w.curl("unlisted.test"))
	if code != 0 || out != "page for unlisted.test\n" {
		t.Fatalf("second command in the session: exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	recs := w.connects(t)
	if len(recs) != 2 || recs[1]["decided_by"] != "session" {
		t.Errorf("want the second connection decided by session memory: %v", recs)
	}
	// Another session knows nothing of it (no terminal: refused).
	_, stderr, code = runPlain(t, w.world, "", []string{"GUARDRUN_SESSION=proxy-other"}, "-c", w.curl("unlisted.test"))
	if code == 0 || !strings.Contains(stderr, "needs approval") {
		t.Errorf("another session got through: exit %d, stderr %s", code, stderr)
	}
}

// TestProxyAskNo: n with a note refuses the connection, passes the note
// back and audits it.
func TestProxyAskNo(t *testing.T) {
	w := newProxyWorld(t, "127.0.0.1")
	r := startPrompt(t, w.world, nil, "-c", w.curl("unlisted.test"))
	r.waitFor(keyLine, 1)
	r.send("n")
	r.waitFor("note for the agent", 1)
	r.send("no uploads\r")
	if code := r.wait(); code == 0 {
		t.Fatal("the refused connection succeeded")
	}
	if got := r.stderr.String(); !strings.Contains(got, "guardrun: denied by user: no uploads") {
		t.Errorf("stderr lacks the refusal with the note:\n%s", got)
	}
	recs := w.connects(t)
	if len(recs) != 1 || recs[0]["verdict"] != "ask" || recs[0]["outcome"] != "refused" ||
		recs[0]["decided_by"] != "person" || recs[0]["note"] != "no uploads" {
		t.Errorf("records %v", recs)
	}
}

// TestProxyStrict: strict mode refuses an unlisted host without asking.
func TestProxyStrict(t *testing.T) {
	w := newProxyWorld(t, "127.0.0.1")
	_, stderr, code := runPlain(t, w.world, "", nil, "--strict", "-c", w.curl("unlisted.test"))
	if code == 0 || !strings.Contains(stderr, "guardrun: denied (strict mode): connect to unlisted.test:"+w.port+" needs approval") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}

// tunnelPy opens a tunnel through the proxy by hand and prints the
// status line, then (for a 200) starts TLS with the given server name.
const tunnelPy = `
import os, socket, ssl, sys
target, sni = sys.argv[1], sys.argv[2]
p = socket.create_connection(("127.0.0.1", 3128), timeout=10)
p.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
resp = b""
while b"\r\n\r\n" not in resp:
    b = p.recv(1)
    if not b: break
    resp += b
status = resp.split(b"\r\n")[0].decode()
print("status:", status)
if " 200 " in status:
    ctx = ssl.create_default_context(cafile="ca.pem")
    ctx.check_hostname = False
    try:
        t = ctx.wrap_socket(p, server_hostname=sni or None)
        t.sendall(b"GET / HTTP/1.0\r\n\r\n")
        print("tls:", t.recv(1000).decode(errors="replace").split("\r\n")[0])
    except Exception as e:
        print("tls failed:", type(e).__name__, e)
`

// TestProxyRefusals: a TLS server name that is not the CONNECT host, no
// server name, a private address, and a name that resolves to loopback
// are all refused.
func TestProxyRefusals(t *testing.T) {
	w := newProxyWorld(t, "allowed.test, loop.test, 127.0.0.1")
	if err := os.WriteFile(filepath.Join(w.work, "tunnel.py"), []byte(tunnelPy), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(target, sni string) string {
		out, stderr, _ := runPlain(t, w.world, "", nil, "--", "python3", "tunnel.py", target, sni)
		return out + stderr
	}
	if got := run("allowed.test:"+w.port, "allowed.test"); !strings.Contains(got, "tls: HTTP/1.0 200") {
		t.Fatalf("the control case failed (matching server name):\n%s", got)
	}
	if got := run("allowed.test:"+w.port, "other.test"); !strings.Contains(got, "tls failed") ||
		!strings.Contains(got, `TLS server name "other.test" does not match the CONNECT host allowed.test:`+w.port) {
		t.Errorf("SNI mismatch:\n%s", got)
	}
	if got := run("allowed.test:"+w.port, ""); !strings.Contains(got, "tls failed") || !strings.Contains(got, "without a server name") {
		t.Errorf("no SNI:\n%s", got)
	}
	if got := run("10.1.2.3:443", ""); !strings.Contains(got, "status: HTTP/1.1 403 guardrun: blocked: 10.1.2.3 is a private address") {
		t.Errorf("private address:\n%s", got)
	}

	// Without 127.0.0.1 in allow, a name that resolves to loopback is
	// refused even though the name is allowed.
	w2 := newProxyWorld(t, "loop.test")
	os.WriteFile(filepath.Join(w2.work, "tunnel.py"), []byte(tunnelPy), 0o644)
	out, stderr, _ := runPlain(t, w2.world, "", nil, "--", "python3", "tunnel.py", "loop.test:"+w2.port, "loop.test")
	if !strings.Contains(out, "403 guardrun: blocked: loop.test resolves to 127.0.0.1, a loopback address") {
		t.Errorf("name resolving to loopback:\n%s%s", out, stderr)
	}
}

// escapePy tries every other way out of a sandbox with the proxy; each
// success prints ESCAPED. It first proves it runs inside: one network
// interface (lo), the proxy variables set, a seccomp filter on.
const escapePy = `
import os, socket, sys
host_ip, host_port, srv_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ifaces = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else [l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]]
print("inside:", ifaces, os.environ.get("HTTPS_PROXY"), [l for l in open("/proc/self/status") if l.startswith("Seccomp:")][0].strip())
def attempt(name, f):
    try:
        r = f()
        print("ESCAPED", name, r)
    except Exception as e:
        print("refused", name, type(e).__name__, e)
def tcp(addr):
    s = socket.create_connection(addr, timeout=3); s.close(); return "connected"
attempt("unix socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
attempt("unix datagram socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))
attempt("proxy's unix socket", lambda: socket.socket(socket.AF_UNIX).connect("/.guardrun/proxy.sock"))
attempt("abstract socket", lambda: socket.socket(socket.AF_UNIX).connect("\0guardrun-test"))
def pair_connect(kind):
    a, b = socket.socketpair(socket.AF_UNIX, kind); a.connect("/.guardrun/proxy.sock"); return "connected"
attempt("stream socketpair to the proxy's socket", lambda: pair_connect(socket.SOCK_STREAM))
attempt("datagram socketpair to the proxy's socket", lambda: pair_connect(socket.SOCK_DGRAM))
attempt("direct TCP to the host's loopback server", lambda: tcp(("127.0.0.1", srv_port)))
attempt("direct TCP to the host's address", lambda: tcp((host_ip, host_port)))
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", (host_ip, host_port)); return "sent"
attempt("UDP to the host", udp)
attempt("raw socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
def ping():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
    s.sendto(b"\x08\x00\xf7\xff\x00\x00\x00\x00", (host_ip, 0)); return "sent"
attempt("ICMP echo", ping)
attempt("packet socket", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))
a, b = socket.socketpair()
a.sendall(b"ok"); print("socketpair:", b.recv(2).decode())
`

// TestProxyEscape runs, inside a sandbox with network: proxy, every other
// way out that a command might try: its own unix sockets (the proxy's
// among them), abstract sockets, TCP to the host directly, UDP, raw
// sockets, ICMP. None reaches the host; the proxy is the only way out.
func TestProxyEscape(t *testing.T) {
	w := newProxyWorld(t, "allowed.test, 127.0.0.1")
	if err := os.WriteFile(filepath.Join(w.work, "escape.py"), []byte(escapePy), 0o644); err != nil {
		t.Fatal(err)
	}
	hostIP := ""
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() {
			hostIP = ipn.IP.String()
			break
		}
	}
	if hostIP == "" {
		t.Skip("the host has no non-loopback IPv4 address to aim at")
	}
	l, reached := hostTarget(t, hostIP)
	srvPort := w.port
	out, stderr, code := runPlain(t, w.world, "", nil, "-c",
		"python3 escape.py "+hostIP+" "+portOf(l.Addr())+" "+srvPort+" && "+w.curl("allowed.test"))
	if !strings.Contains(out, "inside: ['lo'] http://127.0.0.1:3128 Seccomp:\t2") {
		t.Fatalf("the sandbox did not come up as expected (exit %d):\n%s\n%s", code, out, stderr)
	}
	t.Logf("inside the sandbox:\n%s", out)
	if strings.Contains(out, "ESCAPED") {
		t.Errorf("a way out:\n%s", out)
	}
	if !strings.Contains(out, "socketpair: ok") || !strings.Contains(out, "page for allowed.test") {
		t.Errorf("socketpair or the proxy itself did not work (exit %d):\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"unix socket", "proxy's unix socket", "abstract socket",
		"stream socketpair to the proxy's socket", "datagram socketpair to the proxy's socket", "direct TCP to the host's loopback server",
		"direct TCP to the host's address", "UDP to the host", "raw socket", "ICMP echo", "packet socket"} {
		if !strings.Contains(out, "refused "+want+" ") {
			t.Errorf("no refusal line for %s:\n%s", want, out)
		}
	}
	select {
	case from := <-reached:
		t.Errorf("the host's listener was reached from %s", from)
	default:
	}
}

func portOf(a net.Addr) string {
	_, p, _ := net.SplitHostPort(a.String())
	return p
}

// BenchmarkProxyStartup times, alternating within one loop, `guardrun -c
// true` without network, with network: proxy and a proxy of its own (the
// proxy started for the command, the bridge run as the sandbox's first
// process, the listener handed over, the command's filter applied), and
// with the supervisor's shared proxy ($GUARDRUN_PROXY: registration
// instead of a proxy start). extra-ms and shared-extra-ms are what the
// proxy adds per command with bwrap.
//
//	go test -run '^$' -bench ProxyStartup -benchtime 50x ./integration
func BenchmarkProxyStartup(b *testing.B) {
	requireSandbox(b)
	plain := runWorld(b, runConfig, "GUARDRUN_SESSION=bench")
	proxied := runWorld(b, runConfig+"  network: proxy\n", "GUARDRUN_SESSION=bench")
	shared := sharedProxyWorld(b, nil, runConfig+"  network: proxy\n", "")
	benchStartup(b, nil, plain, proxied, shared, "")
}

// BenchmarkProxyStartupLandlock is BenchmarkProxyStartup under the
// landlock backend (where user namespaces are unavailable): the proxy
// is a loopback TCP port, the command connects to it directly. With the
// shared proxy a command pays for the registration and the variables.
//
//	go test -run '^$' -bench ProxyStartupLandlock -benchtime 50x ./integration
func BenchmarkProxyStartupLandlock(b *testing.B) {
	pre := noNamespaces(b)
	plain := runWorld(b, runConfig, "GUARDRUN_SESSION=bench")
	landlockWorks(b, plain, plain.work)
	proxied := runWorld(b, runConfig+"  network: proxy\n", "GUARDRUN_SESSION=bench")
	shared := sharedProxyWorld(b, pre, runConfig+"  network: proxy\n", "landlock")
	benchStartup(b, pre, plain, proxied, shared, "landlock")
}

// sharedProxyWorld is a world whose commands find a supervisor's shared
// proxy in $GUARDRUN_PROXY (a `guardrun supervise` kept running on a pty
// for the benchmark's duration).
func sharedProxyWorld(b *testing.B, pre []string, config, backend string, extraEnv ...string) *world {
	w := runWorld(b, config, append([]string{"GUARDRUN_SESSION=bench"}, extraEnv...)...)
	argv := append(append([]string{}, pre...), guardrunBin)
	if backend != "" {
		argv = append(argv, "--backend", backend)
	}
	argv = append(argv, "supervise", "--", "sh", "-c", `echo "proxy=$GUARDRUN_PROXY=$GUARDRUN_PROXY_ADDR="; exec sleep 600`)
	tt := startOnTTY(b, w, argv...)
	end := tt.waitFor(0, `proxy=\S+=\S*=`)
	m := regexp.MustCompile(`proxy=(\S+?)=(\S*)=`).FindStringSubmatch(tt.screen()[:end])
	w.env = append(w.env, "GUARDRUN_PROXY="+m[1], "GUARDRUN_PROXY_ADDR="+m[2])
	return w
}

// benchStartup runs the startup comparison; backend, when set, is
// passed as --backend.
func benchStartup(b *testing.B, pre []string, plain, proxied, shared *world, backend string) {
	// Wall time, and CPU time of guardrun and everything it waited for
	// (bwrap, the bridge, the command): on a busy machine the second
	// says more about the cost than the first.
	// The shared world's commands trace their phases: "proxy" is the
	// registration with the supervisor's proxy, measured inside.
	shared.env = append(shared.env, "GUARDRUN_TRACE=1")
	traceProxy := regexp.MustCompile(`guardrun: trace: proxy +\+ *[0-9.]+ms +([0-9.]+)ms`)
	var register float64
	run := func(w *world) (wall, cpu time.Duration) {
		args := []string{"--approve-all", "-c", "true"}
		if backend != "" {
			args = append([]string{"--backend", backend}, args...)
		}
		argv := append(append(append([]string{}, pre...), guardrunBin), args...)
		c := exec.Command(argv[0], argv[1:]...)
		c.Dir, c.Env = w.work, w.env
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		t0 := time.Now()
		out, err := c.CombinedOutput()
		if err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		wall = time.Since(t0)
		if w == shared {
			m := traceProxy.FindSubmatch(out)
			if m == nil {
				b.Fatalf("no proxy phase in the trace:\n%s", out)
			}
			v, _ := strconv.ParseFloat(string(m[1]), 64)
			register += v
		}
		return wall, c.ProcessState.UserTime() + c.ProcessState.SystemTime()
	}
	run(plain)
	run(proxied)
	run(shared)
	var tp, tx, ts, cp, cx, cs time.Duration
	register = 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, c := run(plain)
		tp, cp = tp+w, cp+c
		w, c = run(proxied)
		tx, cx = tx+w, cx+c
		w, c = run(shared)
		ts, cs = ts+w, cs+c
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(tp), "plain-ms")
	b.ReportMetric(ms(tx), "proxy-ms")
	b.ReportMetric(ms(ts), "shared-ms")
	b.ReportMetric(ms(tx)-ms(tp), "extra-ms")
	b.ReportMetric(ms(ts)-ms(tp), "shared-extra-ms")
	b.ReportMetric(ms(cx)-ms(cp), "extra-cpu-ms")
	b.ReportMetric(ms(cs)-ms(cp), "shared-extra-cpu-ms")
	b.ReportMetric(register/float64(b.N), "register-ms")
}

// TestProxyConnectHelper: `guardrun connect HOST PORT`, run inside the
// sandbox (the bound-in binary), tunnels stdin and stdout through the
// proxy, as ssh's ProxyCommand wants for git over ssh; a denied host is
// refused.
func TestProxyConnectHelper(t *testing.T) {
	w := newProxyWorld(t, "allowed.test, 127.0.0.1")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 100)
				n, _ := c.Read(buf)
				fmt.Fprintf(c, "SSH-2.0-echo %s", buf[:n])
			}()
		}
	}()
	port := portOf(l.Addr())
	out, stderr, code := runPlain(t, w.world, "", nil, "-c", "printf hello | /.guardrun/guardrun connect allowed.test "+port)
	if code != 0 || out != "SSH-2.0-echo hello" {
		t.Errorf("exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	_, stderr, code = runPlain(t, w.world, "", nil, "-c", "/.guardrun/guardrun connect denied.test "+port+" </dev/null")
	if code != 77 || !strings.Contains(stderr, "guardrun: connect denied.test:"+port+": guardrun: blocked: denied.test") {
		t.Errorf("denied host: exit %d, stderr %s", code, stderr)
	}
}

// TestProxyUnderSupervisor: a command the agent runs under `guardrun
// supervise` asks about an unlisted host on the supervisor's terminal; y
// holds for that command only, s for the supervisor's session.
func TestProxyUnderSupervisor(t *testing.T) {
	w := newProxyWorld(t, "127.0.0.1")
	tt := startOnTTY(t, w.world, guardrunBin, "supervise", "--", "sh", fakeAgent(t))
	at := tt.waitFor(0, "fakeagent: ready")
	curl := w.curl("unlisted.test") + "\n"

	// The session's one proxy: its control socket is the agent's, and
	// out of the commands' sight.
	at = tt.socketHidden(at, "proxy", "GUARDRUN_PROXY")

	tt.typ(curl)
	at = tt.answer(at, "y")
	at = tt.waitFor(at, `page for unlisted.test[\s\S]*>>> end \d+: status 0`)
	if s := tt.screen(); !strings.Contains(s, "connect to unlisted.test:"+w.port) {
		t.Errorf("the supervisor's prompt does not name the host:\n%s", s)
	}

	tt.typ(curl) // a new command: y was for the last one only
	at = tt.answer(at, "s")
	at = tt.waitFor(at, `page for unlisted.test[\s\S]*>>> end \d+: status 0`)
	asked := prompts(tt.screen())

	tt.typ(curl) // remembered for the session
	tt.waitFor(at, `page for unlisted.test[\s\S]*>>> end \d+: status 0`)
	if n := prompts(tt.screen()); n != asked || asked != 2 {
		t.Errorf("prompts: %d then %d, want 2 and no more:\n%s", asked, n, tt.screen())
	}
	tt.typ("quit\n")
	tt.wait()
}

// hostTarget listens on TCP and UDP at hostIP (the same port) for the
// whole test and reports on reached every peer that got through.
func hostTarget(t *testing.T, hostIP string) (l net.Listener, reached chan string) {
	t.Helper()
	l, err := net.Listen("tcp", hostIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	reached = make(chan string, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			reached <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	u, err := net.ListenPacket("udp", hostIP+":"+portOf(l.Addr()))
	if err == nil {
		t.Cleanup(func() { u.Close() })
		go func() {
			buf := make([]byte, 10)
			if _, from, err := u.ReadFrom(buf); err == nil {
				reached <- "udp " + from.String()
			}
		}()
	}
	return l, reached
}
