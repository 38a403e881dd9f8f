package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/broker"
	"github.com/guardrun/guardrun/rules"
)

type page struct {
	srv    *Server
	b      *broker.Broker
	base   string
	cookie *http.Cookie
	key    string
}

func startPage(t *testing.T) *page {
	t.Helper()
	b := broker.New()
	srv, err := New(Config{Broker: b})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Close(); b.Close() })
	p := &page{srv: srv, b: b, base: "http://" + srv.Addr()}
	p.cookie, p.key = login(t, srv.URL())
	return p
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// login opens the token URL as a browser would, without following the
// redirect: the cookie it sets and the key in the redirect's fragment.
func login(t *testing.T, u string) (*http.Cookie, string) {
	t.Helper()
	resp, err := noRedirect.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/#key=") || strings.Contains(loc, "token") {
		t.Fatalf("login: %d to %q", resp.StatusCode, loc)
	}
	cs := resp.Cookies()
	if len(cs) != 1 || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("login cookie: %+v", cs)
	}
	return cs[0], strings.TrimPrefix(loc, "/#key=")
}

// pend puts one request in the broker and returns its id and the
// channel its answer comes on.
func pend(t *testing.T, b *broker.Broker, script string) (string, chan broker.Reply) {
	t.Helper()
	_, sub := b.Subscribe("test")
	defer sub.Cancel()
	ch := make(chan broker.Reply, 1)
	go func() {
		r, err := b.Ask(context.Background(), broker.Request{Display: script, Cwd: "/w",
			Parts: []rules.Part{{Kind: "command", Text: script, Decision: rules.Ask, Pos: "1:1"}}}, "pid 1: test", 1)
		if err == nil {
			ch <- r
		}
	}()
	ev := <-sub.C
	return ev.Pending.ID, ch
}

// Forged changes are refused (403, or 405 for a GET) and approve
// nothing: each check alone stops them.
func TestForgedRequestsRefused(t *testing.T) {
	p := startPage(t)
	id, answered := pend(t, p.b, "touch x")
	origin := p.base
	form := url.Values{"id": {id}, "choice": {"once"}}.Encode()
	type req struct {
		method, path, host, origin, site, key, body string
		cookie                                      *http.Cookie
	}
	good := req{method: "POST", path: "/answer", origin: origin, key: p.key, body: form, cookie: p.cookie}
	rows := []struct {
		name   string
		change func(*req)
		want   int
	}{
		{"no cookie", func(r *req) { r.cookie = nil }, 403},
		{"a made-up cookie", func(r *req) { r.cookie = &http.Cookie{Name: p.cookie.Name, Value: strings.Repeat("0", 64)} }, 403},
		{"no key (CSRF token)", func(r *req) { r.key = "" }, 403},
		{"a wrong key", func(r *req) { r.key = strings.Repeat("a", 64) }, 403},
		{"no Origin", func(r *req) { r.origin = "" }, 403},
		{"another site's Origin", func(r *req) { r.origin = "http://evil.example" }, 403},
		{"another port's Origin", func(r *req) { r.origin = "http://127.0.0.1:1" }, 403},
		{"a cross-site fetch", func(r *req) { r.site = "cross-site" }, 403},
		{"a rebound name in Host", func(r *req) { r.host = "evil.example:" + p.srv.Addr()[strings.LastIndexByte(p.srv.Addr(), ':')+1:] }, 403},
		{"localhost in Host", func(r *req) { r.host = strings.Replace(p.srv.Addr(), "127.0.0.1", "localhost", 1) }, 403},
		{"an approval through a GET", func(r *req) { r.method, r.path, r.body = "GET", "/answer?"+form+"&key="+p.key, "" }, 405},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			q := good
			r.change(&q)
			hr, _ := http.NewRequest(q.method, p.base+q.path, strings.NewReader(q.body))
			if q.body != "" {
				hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			if q.host != "" {
				hr.Host = q.host
			}
			if q.origin != "" {
				hr.Header.Set("Origin", q.origin)
			}
			if q.site != "" {
				hr.Header.Set("Sec-Fetch-Site", q.site)
			}
			if q.key != "" {
				hr.Header.Set("X-Guardrun-Key", q.key)
			}
			if q.cookie != nil {
				hr.AddCookie(q.cookie)
			}
			resp, err := noRedirect.Do(hr)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != r.want {
				t.Errorf("status %d, want %d", resp.StatusCode, r.want)
			}
			select {
			case rep := <-answered:
				t.Fatalf("a forged request answered it: %+v", rep)
			default:
			}
		})
	}
	if len(p.b.Pending()) != 1 {
		t.Fatalf("pending after the forgeries: %d", len(p.b.Pending()))
	}
	// The real thing, once; a second answer is a conflict.
	for i, want := range []int{204, 409} {
		hr, _ := http.NewRequest("POST", p.base+"/answer", strings.NewReader(form))
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		hr.Header.Set("Origin", origin)
		hr.Header.Set("X-Guardrun-Key", p.key)
		hr.AddCookie(p.cookie)
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("answer %d: status %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	select {
	case rep := <-answered:
		if !rep.Approve || rep.Front != "web" {
			t.Errorf("the answer %+v", rep)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the real answer did not arrive")
	}
}

// Reading takes the cookie and the tab's key: a browser sends the
// cookie to every port of 127.0.0.1, so the cookie alone opens nothing
// but the empty page. A wrong token logs nothing in.
func TestReadsNeedCookieAndKey(t *testing.T) {
	p := startPage(t)
	get := func(path string, cookie *http.Cookie, host string) int {
		hr, _ := http.NewRequest("GET", p.base+path, nil)
		if cookie != nil {
			hr.AddCookie(cookie)
		}
		if host != "" {
			hr.Host = host
		}
		resp, err := noRedirect.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	rows := []struct {
		name   string
		path   string
		cookie *http.Cookie
		host   string
		want   int
	}{
		{"the page with the cookie", "/", p.cookie, "", 200},
		{"the page without it", "/", nil, "", 403},
		{"a wrong token", "/?token=" + strings.Repeat("0", 64), nil, "", 403},
		{"the events without the key", "/events", p.cookie, "", 403},
		{"the events with a wrong key", "/events?key=" + strings.Repeat("0", 64), p.cookie, "", 403},
		{"the events with the key and no cookie", "/events?key=" + p.key, nil, "", 403},
		{"the panels without the key", "/panels", p.cookie, "", 403},
		{"the panels with the key", "/panels?key=" + p.key, p.cookie, "", 200},
		{"the static files at another Host", "/static/app.js", nil, "example.com", 403},
		{"the static files", "/static/app.js", nil, "", 200},
	}
	for _, r := range rows {
		if got := get(r.path, r.cookie, r.host); got != r.want {
			t.Errorf("%s: status %d, want %d", r.name, got, r.want)
		}
	}
}

// The page listens on loopback only.
func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0"} {
		if s, err := New(Config{Broker: broker.New(), Listen: addr}); err == nil {
			s.Close()
			t.Errorf("listened on %s", addr)
		}
	}
}
