package netproxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/sys/ipc"
)

// TestSharedProxy: commands join a shared proxy over its control
// socket; a host that asks is put to the command's own guardrun, each
// connection is audited with the command that registered (and the pid
// the kernel gives), a request without a valid token with none, and a
// command's token ends with its registration.
func TestSharedProxy(t *testing.T) {
	old := TokenWait
	TokenWait = time.Second
	defer func() { TokenWait = old }()
	f := newFixture(t, domains(t, nil, nil), false)
	var mu sync.Mutex
	var audited []string
	sp, err := StartShared(SharedOptions{
		Domains: domains(t, loopback, nil),
		LookupNetIP: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
		TCP:  true,
		Base: t.TempDir(),
		Audit: func(cmd *Command, r Record) {
			who := "no command"
			if cmd != nil {
				who = fmt.Sprintf("%s (pid %d, session %s)", cmd.Script, cmd.PID, cmd.Session)
			}
			mu.Lock()
			audited = append(audited, fmt.Sprintf("%s %s: %s", r.Host, r.Outcome, who))
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	env := map[string]string{}
	for _, kv := range sp.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	getenv := func(k string) string { return env[k] }

	join := func(script string, allow bool) (*Member, *[]string) {
		var logs []string
		m, ok, err := Join(getenv, JoinOptions{
			Command: Command{Script: script, Cwd: "/w", Session: "s1", Backend: "landlock"},
			TCP:     true,
			Ask: func(ctx context.Context, q Query) Answer {
				if allow {
					return Answer{Allow: true, By: "person"}
				}
				return Answer{By: "person", Refusal: "guardrun: denied: " + q.Host + " for " + script}
			},
			Log: func(line string) { mu.Lock(); logs = append(logs, line); mu.Unlock() },
		})
		if !ok || err != nil {
			t.Fatalf("join: %v, %v", ok, err)
		}
		return m, &logs
	}
	yes, _ := join("curl yes", true)
	no, noLogs := join("curl no", false)

	get := func(tok string) (int, string) {
		pu := &url.URL{Scheme: "http", Host: yes.Addr.String()}
		if tok != "" {
			pu.User = url.UserPassword(ProxyUser, tok)
		}
		hc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: f.ca.Pool}}, Timeout: 10 * time.Second}
		resp, err := hc.Get("http://unlisted.test:" + f.httpPort + "/")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(yes.Token); code != 200 || !strings.Contains(body, "page for unlisted.test") {
		t.Errorf("the command whose guardrun says yes: %d %q", code, body)
	}
	if code, _ := get(no.Token); code == 200 {
		t.Errorf("the command whose guardrun says no got through")
	}
	if code, _ := get(""); code != http.StatusProxyAuthRequired {
		t.Errorf("no token: %d, want 407", code)
	}
	yes.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _ := get(yes.Token)
		if code == http.StatusProxyAuthRequired {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the token of an ended registration still gets %d", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
	no.Close()

	sp.Close() // waits for the records
	mu.Lock()
	defer mu.Unlock()
	pid := os.Getpid()
	want := []string{
		fmt.Sprintf("unlisted.test connected: curl yes (pid %d, session s1)", pid),
		fmt.Sprintf("unlisted.test refused: curl no (pid %d, session s1)", pid),
		"unlisted.test refused: no command",
		"unlisted.test refused: no command",
	}
	if d := cmp.Diff(audited, want); d != "" {
		t.Errorf("audit (-got +want):\n%s", d)
	}
	if d := cmp.Diff(*noLogs, []string{"guardrun: denied: unlisted.test for curl no"}); d != "" {
		t.Errorf("the refused command's stderr (-got +want):\n%s", d)
	}
}

// TestSharedProxyRefuses: a registration the proxy cannot take is
// refused with the reason, and a guardrun of another version is told so;
// a stale variable leaves the command to a proxy of its own.
func TestSharedProxyRefuses(t *testing.T) {
	sp, err := StartShared(SharedOptions{TCP: true, Base: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	path := strings.TrimPrefix(sp.Env()[0], SharedEnvVar+"=")
	for _, r := range []struct {
		name  string
		proto ipc.Protocol
		reg   any
		want  string
	}{
		{"a malformed token", shareProtocol, registration{Token: "not a token"}, "the other end ended the connection: proxy: malformed token"},
		{"an unknown field", shareProtocol, map[string]any{"token": "x", "approve": true}, `the other end ended the connection: register: malformed message: json: unknown field "approve"`},
		{"another version", ipc.Protocol{Name: shareProtocol.Name, Version: shareProtocol.Version + 1}, registration{}, "the other end speaks guardrun-proxy version 2, this guardrun version 3: both must be the same guardrun"},
	} {
		t.Run(r.name, func(t *testing.T) {
			c, err := ipc.Dial(context.Background(), path, r.proto, ipc.Handler{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Send("register", r.reg)
			select {
			case <-c.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("the proxy kept the registration")
			}
			if got := c.Err(); got == nil || got.Error() != r.want {
				t.Errorf("got %v, want %s", got, r.want)
			}
		})
	}
	stale := func(k string) string {
		if k == SharedEnvVar {
			return path + ".gone"
		}
		return ""
	}
	if m, ok, err := Join(stale, JoinOptions{TCP: true}); ok || err != nil || m != nil {
		t.Errorf("a stale $%s: %v, %v, %v; want a proxy of the command's own", SharedEnvVar, m, ok, err)
	}
	bad := func(k string) string {
		switch k {
		case SharedEnvVar:
			return path
		case SharedAddrEnvVar:
			return "192.0.2.1:80"
		}
		return ""
	}
	if _, ok, err := Join(bad, JoinOptions{TCP: true}); !ok || err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("a $%s that is not loopback: %v, %v", SharedAddrEnvVar, ok, err)
	}
}
