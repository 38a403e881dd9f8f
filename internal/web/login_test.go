package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/broker"
)

// A one-time URL (what --open hands the browser) logs in once, within
// its time; used, expired or made up, it opens nothing, and the
// printed URL goes on working.
func TestOneTimeURL(t *testing.T) {
	p := startPage(t)
	status := func(u string) int {
		t.Helper()
		resp, err := noRedirect.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	once, err := p.srv.OneTimeURL()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(once, p.srv.Token()) {
		t.Fatalf("the one-time URL %q carries the page's token", once)
	}
	cookie, key := login(t, once)
	if cookie.Value == p.cookie.Value || key == p.key {
		t.Error("the one-time login shares another tab's cookie or key")
	}
	if got := status(once); got != http.StatusForbidden {
		t.Errorf("the one-time URL opened twice: status %d, want 403", got)
	}
	defer func(ttl time.Duration) { oneTimeTTL = ttl }(oneTimeTTL)
	oneTimeTTL = time.Millisecond
	late, _ := p.srv.OneTimeURL()
	time.Sleep(10 * time.Millisecond)
	for name, u := range map[string]string{
		"an expired one-time URL":           late,
		"a made-up one-time token":          p.base + "/?once=" + strings.Repeat("0", 64),
		"the page's token as one-time":      p.base + "/?once=" + p.srv.Token(),
		"a one-time token with a wrong one": strings.Replace(once, "?once=", "?token="+strings.Repeat("1", 64)+"&once=", 1),
	} {
		if got := status(u); got != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", name, got)
		}
	}
	if got := status(p.srv.URL()); got != http.StatusSeeOther {
		t.Errorf("the printed URL after them: status %d, want 303", got)
	}
}

// A page started again on the same address has new secrets: the old
// URL, and the old tab's cookie and key, read and change nothing.
func TestRestartedPageForgetsOldLogins(t *testing.T) {
	b := broker.New()
	defer b.Close()
	first, err := New(Config{Broker: b})
	if err != nil {
		t.Fatal(err)
	}
	go first.Serve()
	cookie, key := login(t, first.URL())
	addr := first.Addr()
	first.Close()
	again, err := New(Config{Broker: b, Listen: addr})
	if err != nil {
		t.Fatal(err)
	}
	go again.Serve()
	defer again.Close()
	id, answered := pend(t, b, "touch x")
	for _, r := range []struct{ method, path string }{{"GET", "/"}, {"GET", "/events?key=" + key}, {"GET", "/panels?key=" + key}, {"POST", "/answer"}} {
		hr, _ := http.NewRequest(r.method, "http://"+addr+r.path, strings.NewReader("id="+id+"&choice=once"))
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		hr.Header.Set("Origin", "http://"+addr)
		hr.Header.Set("X-Guardrun-Key", key)
		hr.AddCookie(cookie)
		resp, err := noRedirect.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s %s with the old login: status %d, want 403", r.method, r.path, resp.StatusCode)
		}
	}
	select {
	case rep := <-answered:
		t.Fatalf("the old login answered: %+v", rep)
	default:
	}
	resp, err := noRedirect.Get(first.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("the old URL on the restarted page: status %d, want 403", resp.StatusCode)
	}
}
