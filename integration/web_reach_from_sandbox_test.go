//go:build linux

package integration

import (
	"bufio"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/broker"
)

// stealProbe runs inside the sandbox: it looks for the page's URL in
// every process's command line it can read, logs in with it and
// approves whatever waits. Each step that works prints LEAK.
const stealProbe = `
import os, re, sys, http.client
print("inside")
found = []
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            args = f.read().decode(errors="replace").split("\0")
    except Exception:
        continue
    for a in args:
        m = re.match(r"http://(127\.0\.0\.1:\d+)/\?(\w+=[0-9a-f]{64})$", a)
        if m:
            found.append(m)
if not found:
    print("no token in any command line")
for m in found:
    host, query = m.group(1), m.group(2)
    print("a token in a command line:", query.split("=")[0])
    try:
        c = http.client.HTTPConnection(host, timeout=5)
        c.request("GET", "/?" + query)
        r = c.getresponse(); r.read()
    except Exception as e:
        print("page unreachable:", type(e).__name__)
        continue
    print("login:", r.status)
    if r.status != 303:
        continue
    print("LEAK logged in")
    cookie = r.getheader("Set-Cookie").split(";")[0]
    key = r.getheader("Location").split("#key=")[1]
    c = http.client.HTTPConnection(host, timeout=5)
    c.request("GET", "/events?key=" + key, headers={"Cookie": cookie})
    r = c.getresponse()
    buf = b""
    while b"\n\n" not in buf:
        buf += r.read1(65536)
    for i in re.findall(r'data-id=\\"([^\\"]+)\\"', buf.decode()):
        c = http.client.HTTPConnection(host, timeout=5)
        c.request("POST", "/answer", body="id=%s&choice=once" % i, headers={
            "Cookie": cookie, "X-Guardrun-Key": key, "Origin": "http://" + host,
            "Content-Type": "application/x-www-form-urlencoded"})
        print("LEAK answered:", c.getresponse().status)
`

// A command with open network (a rule's network: true) shares the
// host's loopback, so it can reach the page's port; it must not find
// the page's secret either. guardrun web --open hands the browser a URL
// on its command line, where it stays as long as a browser started by
// it runs, and under landlock (no namespaces) the sandbox reads every
// process's command line: that URL must log nothing in by then.
func TestOpenNetworkFindsNoLogin(t *testing.T) {
	requireSandbox(t)
	testenvPython(t)
	const config = `shell:
  default: {allowed: true, approval: true}
  rules:
    - {pattern: "/usr/bin/python3 steal.py", approval: false, network: true}
sandbox:
  paths:
    work: {root: ., mode: rw}
`
	for _, row := range []struct {
		name  string
		extra []string
	}{
		{"bwrap", nil},
		{"landlock", []string{"GUARDRUN_BACKEND=landlock"}},
	} {
		t.Run(row.name, func(t *testing.T) {
			bin := t.TempDir()
			os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(fakeBrowser), 0o755)
			w := runWorld(t, config, row.extra...)
			w.env = append(w.env, "PATH="+bin+":"+w.getenv("PATH"))
			if row.name == "landlock" {
				landlockWorks(t, w, w.work)
			}
			web := startWebOpen(t, w)
			deadline := time.Now().Add(20 * time.Second)
			for browserPID(web.addr) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the browser xdg-open started is not running")
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Cleanup(func() { syscall.Kill(browserPID(web.addr), syscall.SIGKILL) })
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			front, err := broker.Attach(ctx, web.socket, "test", web.token)
			if err != nil {
				t.Fatal(err)
			}
			defer front.Close()
			ask := exec.Command(guardrunBin, "-c", "touch approved-by-nobody")
			ask.Dir, ask.Env = w.work, w.env
			ask.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := ask.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { ask.Process.Kill(); ask.Wait() }()
			if ev := <-front.Events; ev.Pending == nil {
				t.Fatalf("the front saw %+v", ev)
			}
			os.WriteFile(filepath.Join(w.work, "steal.py"), []byte(stealProbe), 0o644)
			stdout, stderr, code := runPlain(t, w, "", nil, "-c", "/usr/bin/python3 steal.py")
			if !strings.HasPrefix(stdout, "inside\n") {
				t.Fatalf("the probe did not run in the sandbox (exit %d): %s%s", code, stdout, stderr)
			}
			t.Logf("from the sandbox:\n%s", stdout)
			if strings.Contains(stdout, "LEAK logged in") || strings.Contains(stdout, "LEAK answered") {
				t.Errorf("a sandboxed command logged in to the page:\n%s", stdout)
			}
			time.Sleep(200 * time.Millisecond)
			if exists(filepath.Join(w.work, "approved-by-nobody")) || ask.ProcessState != nil {
				t.Error("the waiting request was answered by no person")
			}
		})
	}
}

// fakeBrowser is xdg-open starting a browser: it opens the URL, then
// runs on with the URL in its command line.
const fakeBrowser = `#!/bin/sh
curl -s -o /dev/null "$1"
exec /usr/bin/python3 -c 'import time; time.sleep(300)' "$1"
`

// browserPID is the fake browser's pid for the page at addr (its
// command line names the page), or 0.
func browserPID(addr string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), "time.sleep(300)\x00http://"+addr+"/") {
			pid, _ := strconv.Atoi(e.Name())
			return pid
		}
	}
	return 0
}

// startWebOpen is startWebProc for guardrun web --open.
func startWebOpen(t *testing.T, w *world) *webProc {
	t.Helper()
	cmd := exec.Command(guardrunBin, "web", "--open")
	cmd.Dir, cmd.Env = w.work, w.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	p := &webProc{cmd: cmd}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "http://") {
			p.url = l
		}
		if s, ok := strings.CutPrefix(l, "(broker socket "); ok {
			p.socket = strings.TrimSuffix(s, "; stop with ^C)")
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	u, err := url.Parse(p.url)
	if err != nil || p.socket == "" {
		t.Fatalf("guardrun web printed %q and socket %q", p.url, p.socket)
	}
	p.addr, p.port, p.token = u.Host, u.Port(), u.Query().Get("token")
	return p
}

// reachProbe runs inside the sandbox and tries every way to the page's
// port and the broker's socket it can think of; each that works prints
// LEAK.
const reachProbe = `
import ctypes, os, socket, sys
port, sock = int(sys.argv[1]), sys.argv[2]
print("inside")
for host in ("127.0.0.1", "127.0.0.2", "127.1", "0.0.0.0", "localhost", "::1", "::ffff:127.0.0.1", "0", "2130706433"):
    try:
        c = socket.create_connection((host, port), timeout=2)
        c.sendall(b"GET /static/app.js HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n\r\n" % port)
        print("LEAK tcp", host, c.recv(64))
    except Exception as e:
        print("tcp", host, "refused:", type(e).__name__)
for name in (sock, "\0" + sock, "\0guardrun-broker", os.path.dirname(sock) + "/lock"):
    try:
        u = socket.socket(socket.AF_UNIX); u.connect(name); print("LEAK unix connected", repr(name))
    except Exception as e:
        print("unix", repr(name)[:40], "refused:", type(e).__name__)
for fd in range(3, 256):
    try:
        if os.readlink("/proc/self/fd/%d" % fd).startswith("socket:"):
            print("LEAK an inherited socket, fd", fd)
    except OSError:
        pass
libc = ctypes.CDLL(None, use_errno=True)
opened = taken = 0
errs = set()
for pid in [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:
    pidfd = libc.syscall(434, int(pid), 0)  # pidfd_open
    if pidfd < 0:
        errs.add("pidfd_open " + os.strerror(ctypes.get_errno()))
        continue
    opened += 1
    for fd in range(0, 64):
        got = libc.syscall(438, pidfd, fd, 0)  # pidfd_getfd
        if got < 0:
            errs.add("pidfd_getfd " + os.strerror(ctypes.get_errno()))
        else:
            taken += 1
            try:
                if os.readlink("/proc/self/fd/%d" % got).startswith("socket:"):
                    print("LEAK took a socket from pid", pid, "fd", fd)
            finally:
                os.close(got)
    os.close(pidfd)
    if libc.ptrace(16, int(pid), 0, 0) == 0:  # PTRACE_ATTACH
        print("LEAK attached to pid", pid)
        libc.ptrace(17, int(pid), 0, 0)
    else:
        errs.add("ptrace " + os.strerror(ctypes.get_errno()))
print("other processes: %d pidfds, %d descriptors taken; %s" % (opened, taken, ", ".join(sorted(errs))))
try:
    with open("/proc/net/tcp") as f:
        listening = [l for l in f if ":%04X " % port in l]
    print("the port is", "listed" if listening else "not listed", "in /proc/net/tcp")
except Exception as e:
    print("/proc/net/tcp closed:", type(e).__name__)
`

// A command in the sandbox reaches neither the page's port, by any
// spelling of loopback, nor the broker's socket, by its path, as an
// abstract name or through a descriptor it inherits or takes from
// another process; through the proxy, no spelling of loopback is
// forwarded.
func TestSandboxReachesNoApprovalSurface(t *testing.T) {
	requireSandbox(t)
	testenvPython(t)
	const off = "shell:\n  default: {allowed: true, approval: false}\nsandbox:\n  paths:\n    work: {root: ., mode: rw}\n"
	const proxy = "shell:\n  default: {allowed: true, approval: false}\nsandbox:\n  network: proxy\n  domains: {allow: [example.test]}\n  paths:\n    work: {root: ., mode: rw}\n"
	for _, row := range []struct {
		name, config string
		extra        []string
	}{
		{"network off", off, nil},
		{"network off under landlock", off, []string{"GUARDRUN_BACKEND=landlock"}},
		{"network through the proxy", proxy, nil},
		{"network through the proxy under landlock", proxy, []string{"GUARDRUN_BACKEND=landlock"}},
	} {
		t.Run(row.name, func(t *testing.T) {
			w := runWorld(t, row.config, row.extra...)
			if len(row.extra) > 0 {
				landlockWorks(t, w, w.work)
			}
			web := startWebProc(t, w)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The person approves whatever asks (the proxy asks about
			// each host).
			front, err := broker.Attach(ctx, web.socket, "test", web.token)
			if err != nil {
				t.Fatal(err)
			}
			defer front.Close()
			go func() {
				for ev := range front.Events {
					if ev.Pending != nil {
						front.Answer(ctx, ev.Pending.ID, broker.Answer{Approve: true})
					}
				}
			}()
			os.WriteFile(filepath.Join(w.work, "probe.py"), []byte(reachProbe), 0o644)
			stdout, stderr, code := runPlain(t, w, "", nil, "-c", "/usr/bin/python3 probe.py "+web.port+" "+web.socket)
			if !strings.HasPrefix(stdout, "inside\n") {
				t.Fatalf("the probe did not run in the sandbox (exit %d): %s%s", code, stdout, stderr)
			}
			t.Logf("from the sandbox:\n%s", stdout)
			if strings.Contains(stdout, "LEAK") {
				t.Errorf("from the sandbox:\n%s%s", stdout, stderr)
			}
			if !strings.Contains(row.name, "proxy") {
				return
			}
			for _, host := range []string{"127.0.0.1", "127.1", "0.0.0.0", "0", "localhost", "[::1]", "[::ffff:127.0.0.1]", "2130706433", "0x7f000001", "localhost."} {
				u := "http://" + host + ":" + web.port + "/static/app.js"
				out, errOut, _ := runPlain(t, w, "", nil, "-c", "echo inside; curl -s --max-time 20 '"+u+"'; curl -s --max-time 20 -p -x \"$HTTPS_PROXY\" '"+u+"'")
				if !strings.HasPrefix(out, "inside\n") {
					t.Fatalf("curl did not run in the sandbox: %s%s", out, errOut)
				}
				if strings.Contains(out, "sessionStorage") {
					t.Errorf("through the proxy %s reached the page:\n%.300s", u, out)
				}
			}
		})
	}
}
