//go:build linux

package integration

import (
	"bufio"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/broker"
	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// webProc is guardrun web started in w, with its URL, page address and
// broker socket.
type webProc struct {
	cmd          *exec.Cmd
	url, addr    string
	token        string
	socket, port string
}

func startWebProc(t *testing.T, w *world) *webProc {
	t.Helper()
	cmd := exec.Command(guardrunBin, "web")
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
	t.Cleanup(func() {
		// SIGTERM lets it remove its socket directory; a web that does
		// not end on it is killed.
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
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

// A command in the sandbox reaches neither the page's port nor the
// broker's socket, and finds neither in its environment: without
// network there is no route (bwrap) or no socket but AF_UNIX (landlock),
// through the proxy loopback is refused, and the socket's directory
// cannot be read (hidden under bwrap, closed under landlock; AF_UNIX
// sockets are refused anyway).
func TestSandboxCannotReachBroker(t *testing.T) {
	requireSandbox(t)
	testenvPython(t)
	probe := `
import os, socket, sys
print("inside")
env = "\n".join(k + "=" + v for k, v in os.environ.items())
for s in (sys.argv[1], sys.argv[2], os.path.dirname(sys.argv[2])):
    if s in env: print("LEAK env holds", s)
try:
    c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3); print("LEAK tcp connected")
except Exception as e: print("tcp refused:", type(e).__name__)
try:
    u = socket.socket(socket.AF_UNIX); u.connect(sys.argv[2]); print("LEAK unix connected")
except Exception as e: print("unix refused:", type(e).__name__)
try:
    print("LEAK dir lists", os.listdir(os.path.dirname(sys.argv[2])))
except Exception as e: print("dir closed:", type(e).__name__)
`
	for _, row := range []struct {
		name, config string
		extra        []string
	}{
		{"network off", "shell:\n  default: {allowed: true, approval: false}\nsandbox:\n  paths:\n    work: {root: ., mode: rw}\n", nil},
		{"network through the proxy", "shell:\n  default: {allowed: true, approval: false}\nsandbox:\n  network: proxy\n  domains: {allow: [example.test]}\n  paths:\n    work: {root: ., mode: rw}\n", nil},
		{"network off under landlock", "shell:\n  default: {allowed: true, approval: false}\nsandbox:\n  paths:\n    work: {root: ., mode: rw}\n", []string{"GUARDRUN_BACKEND=landlock"}},
	} {
		t.Run(row.name, func(t *testing.T) {
			w := runWorld(t, row.config, row.extra...)
			web := startWebProc(t, w)
			os.WriteFile(filepath.Join(w.work, "probe.py"), []byte(probe), 0o644)
			// The person, on the broker, approves whatever asks (the
			// probe runs a script; the proxy asks about a host).
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
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
			stdout, stderr, code := runPlain(t, w, "", nil, "-c", "/usr/bin/python3 probe.py "+web.port+" "+web.socket)
			if !strings.HasPrefix(stdout, "inside\n") {
				t.Fatalf("the probe did not run in the sandbox (exit %d): %s%s", code, stdout, stderr)
			}
			t.Logf("from the sandbox:\n%s", stdout)
			if strings.Contains(stdout, "LEAK") || !strings.Contains(stdout, "tcp refused") || !strings.Contains(stdout, "unix refused") || !strings.Contains(stdout, "dir closed") {
				t.Errorf("from the sandbox:\n%s%s", stdout, stderr)
			}
			if row.name == "network through the proxy" {
				// The proxy asks about the host, here through the broker;
				// approved, it still refuses a loopback address.
				out, errOut, _ := runPlain(t, w, "", nil, "-c", "echo inside; curl -s --max-time 20 http://127.0.0.1:"+web.port+"/static/app.js")
				if !strings.HasPrefix(out, "inside\n") {
					t.Fatalf("curl did not run in the sandbox: %s%s", out, errOut)
				}
				t.Logf("curl through the proxy: %q", out)
				if strings.Contains(out, "sessionStorage") {
					t.Errorf("through the proxy the page's script was fetched:\n%.200s", out)
				}
			}
		})
	}
}

func testenvPython(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		testenv.Missing(t, "no /usr/bin/python3 (make deps installs it)")
	}
}

// guardrun web killed while a command waits for it: the command is
// refused (77) with a line saying the broker went away, never run.
func TestBrokerKilledRefuses(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, "shell:\n  default: {allowed: true, approval: true}\nsandbox:\n  paths:\n    work: {root: ., mode: rw}\n")
	web := startWebProc(t, w)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	front, err := broker.Attach(ctx, web.socket, "test", web.token)
	if err != nil {
		t.Fatal(err)
	}
	defer front.Close()
	ask := exec.Command(guardrunBin, "-c", "touch never-made")
	ask.Dir, ask.Env = w.work, w.env
	ask.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var stderr strings.Builder
	ask.Stderr = &stderr
	if err := ask.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-front.Events:
		if ev.Pending == nil || ev.Pending.Display != "touch never-made" {
			t.Fatalf("the front saw %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("the request never reached the broker")
	}
	web.cmd.Process.Signal(syscall.SIGKILL)
	err = ask.Wait()
	if code := ask.ProcessState.ExitCode(); code != 77 {
		t.Fatalf("exit %d (%v), want 77: %s", code, err, stderr.String())
	}
	want := "guardrun: refused: the approval broker went away before anyone answered: touch never-made needs approval\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if exists(filepath.Join(w.work, "never-made")) {
		t.Error("the command ran")
	}
	if rec := lastAudit(t, w); rec["decided_by"] != "broker" || rec["outcome"] != "refused" {
		t.Errorf("audit %v", rec)
	}
}
