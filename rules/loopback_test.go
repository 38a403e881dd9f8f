package rules

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// loopbackConfig pre-approves curl and wget on the loopback ports it
// lists, through the proxy.
const loopbackConfig = `
shell:
  rules:
    - {pattern: curl, approval: false, network: loopback}
    - {pattern: wget, approval: false, network: loopback}
sandbox:
  paths:
    ws: {root: /w, mode: rw}
  network: proxy
  domains:
    loopback: [8081, 3000, 443]
    deny: [127.0.0.2]
`

func TestLoopbackRequests(t *testing.T) {
	c, err := Parse("cfg.yaml", []byte(loopbackConfig), "/", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, script string
		want         Verdict
		why          string
	}{
		{"the project's server", "curl -s http://localhost:8081/health", Allow, ""},
		{"no scheme", "curl localhost:8081", Allow, ""},
		{"by address", "curl -sf 'http://127.0.0.1:3000/api?x=1'", Allow, ""},
		{"IPv6 loopback", "curl 'http://[::1]:8081/'", Allow, ""},
		{"https on a listed port", "curl -k https://localhost/", Allow, ""},
		{"a request with data", `curl -s -X POST "http://localhost:8081/profile" -H "Content-Type: application/json" -d '{"a": [1]}'`, Allow, ""},
		{"two listed URLs", "curl localhost:8081 localhost:3000", Allow, ""},
		{"--url", "curl --url http://localhost:8081/", Allow, ""},
		{"wget", "wget -qO- http://localhost:3000/", Allow, ""},
		{"the response written in the zone", "curl -o /w/out.json localhost:8081", Allow, ""},
		{"the response written outside", "curl -o /etc/out localhost:8081", Block, "outside every rw zone"},
		{"a port not listed", "curl localhost:22", Ask, "port 22 is not in sandbox.domains.loopback"},
		{"http's default port is not listed", "curl http://localhost/", Ask, "port 80"},
		{"another host", "curl https://example.com/", Ask, "is not a URL of the host's loopback"},
		{"one URL elsewhere", "curl localhost:8081 https://example.com/", Ask, "example.com"},
		{"another loopback address", "curl http://127.0.0.2:8081/", Ask, "not a URL of the host's loopback"},
		{"the host's own name", "curl http://0.0.0.0:8081/", Ask, "not a URL of the host's loopback"},
		{"user information", "curl http://localhost:8081@example.com/", Ask, "not a URL of the host's loopback"},
		{"user information before", "curl http://user@localhost:8081/", Ask, "not a URL of the host's loopback"},
		{"a glob", "curl 'http://localhost:808[0-9]/'", Ask, "not a URL of the host's loopback"},
		{"a brace glob", "curl 'http://{localhost:8081,example.com}/'", Ask, "not a URL of the host's loopback"},
		{"percent-encoding in the host", "curl http://local%68ost:8081/", Ask, "not a URL of the host's loopback"},
		{"another scheme", "curl ftp://localhost:8081/", Ask, "not a URL of the host's loopback"},
		{"telnet", "curl telnet://localhost:8081", Ask, "not a URL of the host's loopback"},
		{"a proxy named", "curl -x http://example.com:3128 localhost:8081", Ask, "names another host"},
		{"resolve", "curl --resolve localhost:8081:93.184.216.34 localhost:8081", Ask, "names another host"},
		{"DNS over HTTPS", "curl --doh-url https://dns.example/q localhost:8081", Ask, "names another host"},
		{"connect-to", "curl --connect-to localhost:8081:example.com:80 localhost:8081", Ask, "names another host"},
		{"a URL at run time", "curl $URL", Ask, ""},
		{"no URL", "curl -s", Ask, "names no URL"},
		{"a config file", "curl -K cfg localhost:8081", Ask, "reads options from the file"},
		{"URLs from a file", "wget -i urls.txt", Ask, "names another host"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := e.Script(tt.script, "/w")
			if d.Decision != tt.want {
				t.Fatalf("%q: %s (%s), want %s", tt.script, d.Decision, d.Reason, tt.want)
			}
			if tt.why != "" && !reasonSays(d, tt.why) {
				t.Errorf("%q: the reason does not say %q: %s", tt.script, tt.why, d.Reason)
			}
			if d.Network || !d.Proxy {
				t.Errorf("%q: network %v, proxy %v; want the proxy alone", tt.script, d.Network, d.Proxy)
			}
		})
	}
}

// TestLoopbackNeedsTheProxy: without network: proxy a rule with
// network: loopback never applies, and says why.
func TestLoopbackNeedsTheProxy(t *testing.T) {
	c, err := Parse("cfg.yaml", []byte("shell:\n  rules:\n    - {pattern: curl, approval: false, network: loopback}\n"), "/", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	d := e.Script("curl localhost:8081", "/")
	if d.Decision != Ask || !strings.Contains(d.Reason, "sandbox.network is not proxy") {
		t.Errorf("curl localhost:8081 without the proxy: %s (%s), want ask saying why", d.Decision, d.Reason)
	}
}

func TestLoopbackConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"a port out of range", "sandbox:\n  network: proxy\n  domains:\n    loopback: [8081, 70000]\n",
			"cfg.yaml:4:22: sandbox.domains.loopback[1]: port 70000 is not from 1 to 65535"},
		{"zero", "sandbox:\n  network: proxy\n  domains:\n    loopback: [0]\n",
			"cfg.yaml:4:16: sandbox.domains.loopback[0]: port 0 is not from 1 to 65535"},
		{"a host", "sandbox:\n  network: proxy\n  domains:\n    loopback: [localhost:8081]\n",
			`cfg.yaml:4:16: sandbox.domains.loopback[0]: want a port number (a server on 127.0.0.1 or ::1), got the string "localhost:8081"`},
		{"a quoted number", "sandbox:\n  network: proxy\n  domains:\n    loopback: [\"8081\"]\n",
			`cfg.yaml:4:16: sandbox.domains.loopback[0]: want a port number (a server on 127.0.0.1 or ::1), got the string "8081"`},
		{"twice", "sandbox:\n  network: proxy\n  domains:\n    loopback: [8081, 8081]\n",
			"cfg.yaml:4:22: sandbox.domains.loopback[1]: port 8081 listed twice"},
		{"not a list", "sandbox:\n  network: proxy\n  domains:\n    loopback: 8081\n",
			"cfg.yaml:4:15: sandbox.domains.loopback: want a list, got a number"},
		{"without the proxy", "sandbox:\n  network: false\n  domains:\n    loopback: [8081]\n",
			"cfg.yaml:4:15: sandbox.domains.loopback: has no effect unless sandbox.network is proxy"},
		{"a rule's network word", "shell:\n  rules:\n    - {pattern: curl, network: local}\n",
			`cfg.yaml:3:32: shell.rules[0].network: want true, false or loopback, got the string "local"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("cfg.yaml", []byte(tc.yaml), "/", testEnv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant it to contain %s", err, tc.want)
			}
		})
	}
	c, err := Parse("cfg.yaml", []byte("sandbox:\n  network: proxy\n  domains:\n    loopback: [8081, 3000]\n"), "/", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.Sandbox.Domains.Loopback, []int{8081, 3000}); diff != "" {
		t.Errorf("loopback (-got +want):\n%s", diff)
	}
}

// TestTightenLoopback: an untrusted config cannot open loopback ports.
func TestTightenLoopback(t *testing.T) {
	base, err := Parse("cfg.yaml", []byte("sandbox:\n  network: proxy\n  domains:\n    loopback: [8081]\n"), "/", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	project, err := Parse("p.yaml", []byte("sandbox:\n  network: proxy\n  domains:\n    loopback: [22, 8081]\n"), "/", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	out, ignored := Tighten(base, project)
	if diff := cmp.Diff(out.Sandbox.Domains.Loopback, []int{8081}); diff != "" {
		t.Errorf("loopback after an untrusted config (-got +want):\n%s", diff)
	}
	if !strings.Contains(strings.Join(ignored, "\n"), "sandbox.domains.loopback") {
		t.Errorf("the ignored parts do not name sandbox.domains.loopback: %q", ignored)
	}
}

// TestLoopbackURL: curl's and wget's reading of a URL, and the forms
// that could read as another host.
func TestLoopbackURL(t *testing.T) {
	for _, tt := range []struct {
		url  string
		host string
		port int
	}{
		{"localhost:8081", "localhost", 8081},
		{"http://localhost:8081/health", "localhost", 8081},
		{"HTTP://LOCALHOST:8081", "localhost", 8081},
		{"https://127.0.0.1/x", "127.0.0.1", 443},
		{"http://[::1]:3000/?q", "::1", 3000},
		{"localhost", "localhost", 80},
		{"http://localhost:8081#frag", "localhost", 8081},
		{"http://localhost:08081/", "localhost", 8081},
		{"http://localhost:/", "", 0},
		{"http://localhost:99999/", "", 0},
		{"http://localhost:+80/", "", 0},
		{"http://localhost.:8081/", "", 0},
		{"http://localhost.example.com:8081/", "", 0},
		{"http://127.0.0.1.nip.io:8081/", "", 0},
		{"http://[::ffff:127.0.0.1]:8081/", "", 0},
		{"http://[::1%25lo]:8081/", "", 0},
		{"http://2130706433:8081/", "", 0},
		{"http://localhost\\@example.com:8081/", "", 0},
		{"http://localhost:8081 /", "", 0},
		{"http://localhost:8081/a b", "", 0},
		{"http://localhost:8081/é", "", 0},
		{"file:///etc/passwd", "", 0},
		{"dict://localhost:8081/", "", 0},
		{"//localhost:8081/", "", 0},
	} {
		host, port, ok := loopbackURL(tt.url)
		if ok != (tt.host != "") || host != tt.host || port != tt.port {
			t.Errorf("loopbackURL(%q) = %q, %d, %v; want %q, %d", tt.url, host, port, ok, tt.host, tt.port)
		}
	}
}
