//go:build linux

package integration

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// loopbackConfigFmt sends the network through the proxy and lists one
// loopback port, the project's server's; curl is pre-approved on it
// alone, as the embedded default's rule does.
const loopbackConfigFmt = `shell:
  program: /bin/bash
  default: {allowed: true, approval: true}
  rules:
    - {pattern: curl, approval: false, network: loopback}
sandbox:
  paths:
    work: {root: %s, mode: rw}
  network: proxy
  domains:
    loopback: [%s]
`

// TestProxyLoopback: with network: proxy and the project's server's port
// in sandbox.domains.loopback, curl reaches that server on 127.0.0.1 and
// as localhost without a question, under both backends, as root and as
// an unprivileged user; each connection is an audit line allowed by the
// rule. Another loopback port, and the same port on the host's own
// address, stay refused by the proxy even when the command runs.
func TestProxyLoopback(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("needs curl (apt install curl)")
	}
	serve := func(body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s\n", body, r.URL.Path)
		}))
		t.Cleanup(srv.Close)
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		return port
	}
	dev, other := serve("the project's server:"), serve("another server:")
	hostIP := hostIPv4(t)

	type runner struct {
		name string
		// setup returns the world and how to run guardrun in it.
		setup func(t *testing.T) (*world, func(args ...string) (string, string, int))
	}
	runners := []runner{
		{"root/bwrap", func(t *testing.T) (*world, func(...string) (string, string, int)) {
			w := loopbackWorld(t, dev, "")
			return w, func(args ...string) (string, string, int) {
				return runPlain(t, w, "", nil, append([]string{"--backend", "bwrap"}, args...)...)
			}
		}},
		{"root/landlock", func(t *testing.T) (*world, func(...string) (string, string, int)) {
			pre := noNamespaces(t)
			w := loopbackWorld(t, dev, "")
			landlockWorks(t, w, w.work)
			return w, func(args ...string) (string, string, int) { return runLandlock(t, pre, w, args...) }
		}},
	}
	for _, backend := range []string{"bwrap", "landlock"} {
		runners = append(runners, runner{"unprivileged/" + backend, func(t *testing.T) (*world, func(...string) (string, string, int)) {
			if os.Geteuid() != 0 {
				t.Skip("needs root, to run guardrun as an unprivileged user")
			}
			if _, err := exec.LookPath("runuser"); err != nil {
				t.Skip("needs runuser")
			}
			const user = "guardrun-test"
			testenv.User(t, user)
			w := loopbackWorld(t, dev, user)
			var pre []string
			if backend == "landlock" {
				pre = noNamespaces(t)
			}
			return w, func(args ...string) (string, string, int) {
				argv := append([]string{"runuser", "-u", user, "--", "env", "-i"}, w.env...)
				argv = append(append(append(argv, pre...), guardrunBin, "--backend", backend), args...)
				r := proc{dir: w.work, env: w.env}.run(argv...)
				if r.err != nil {
					t.Fatalf("guardrun %q: %v", args, r.err)
				}
				return r.stdout, r.stderr, r.code
			}
		}})
	}
	for _, rn := range runners {
		t.Run(rn.name, func(t *testing.T) {
			w, run := rn.setup(t)
			for _, host := range []string{"127.0.0.1", "localhost"} {
				script := "curl -sS --max-time 20 http://" + host + ":" + dev + "/health"
				out, stderr, code := run("-c", script)
				if code != 0 || out != "the project's server: /health\n" {
					t.Fatalf("%s: exit %d, stdout %q, stderr %s", script, code, out, stderr)
				}
			}
			var ran, connected int
			for _, r := range auditRecords(t, w) {
				switch {
				case r["op"] == "connect" && r["port"] == float64(atoi(t, dev)):
					connected++
					if r["verdict"] != "allow" || r["decided_by"] != "rule" || r["outcome"] != "connected" || !strings.Contains(fmt.Sprint(r["reason"]), "sandbox.domains.loopback") {
						t.Errorf("connection record %v", r)
					}
				case r["outcome"] == "ran":
					ran++
					if r["decided_by"] != "rule" || r["rule"] != "curl" {
						t.Errorf("the command's record %v: want decided by rule curl", r)
					}
				}
			}
			if ran != 2 || connected != 2 {
				t.Errorf("%d commands ran and %d connections audited, want 2 and 2", ran, connected)
			}

			// Another loopback port asks as any unknown command does; run
			// anyway (approve-all), the proxy refuses it, and the same
			// port on the host's own address too.
			for _, target := range []string{"localhost:" + other, hostIP + ":" + dev} {
				script := "curl -s --max-time 20 -o /dev/null -w '%{http_code}' http://" + target + "/"
				if _, stderr, code := run("--strict", "-c", script); code != 77 {
					t.Errorf("%s in strict mode: exit %d, want 77 (it asks): %s", target, code, stderr)
				}
				out, stderr, _ := run("--approve-all", "-c", script)
				if out != "403" {
					t.Errorf("%s through the proxy: status %q, want 403 from the proxy\n%s", target, out, stderr)
				}
			}
			refused := 0
			for _, r := range auditRecords(t, w) {
				if r["op"] == "connect" && r["outcome"] == "refused" {
					refused++
				}
			}
			if refused != 2 {
				t.Errorf("%d refused connections audited, want 2", refused)
			}
		})
	}
}

// loopbackWorld is a world with loopbackConfigFmt listing port; with
// user set, its directories belong to that user, under /var/tmp, and
// its environment is complete for running guardrun as them.
func loopbackWorld(t *testing.T, port, user string) *world {
	t.Helper()
	if user == "" {
		return runWorld(t, fmt.Sprintf(loopbackConfigFmt, ".", port))
	}
	root, err := os.MkdirTemp("/var/tmp", "guardrun-loopback-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	w := &world{work: filepath.Join(root, "work"), tmp: filepath.Join(root, "tmp")}
	home, run := filepath.Join(root, "home"), filepath.Join(root, "run")
	for _, d := range []string{w.work, w.tmp, home, run} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(root, "guardrun.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(loopbackConfigFmt, w.work, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("chown", "-R", user, root).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v\n%s", err, out)
	}
	os.Chmod(root, 0o755)
	w.env = []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home,
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_RUNTIME_DIR=" + run,
		"TMPDIR=" + w.tmp,
		"GUARDRUN_CONFIG=" + cfg,
		"NO_COLOR=1",
	}
	return w
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
