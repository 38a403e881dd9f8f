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
