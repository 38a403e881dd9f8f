//go:build linux

package integration

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// A hostile page on another port of 127.0.0.1 (a development server the
// agent runs, opened by the person in the same browser) gets the page's
// cookie, as browsers send 127.0.0.1's cookies to every port; it is
// handed even the request's id and the tab's key, which it could not
// read, so that each check is tried alone. Whatever it makes the browser
// do, no request is answered, and it reads nothing of the page.
func TestWebHostilePageOnAnotherPort(t *testing.T) {
	ww := startWeb(t, 1280, 800)
	a := ww.ask(t, "", "-c", "touch forged-from-hostile-page")
	id := ww.card(t, "touch forged-from-hostile-page")
	key := eval[string](t, ww.ctx, `sessionStorage.getItem('guardrun-key')`)
	if len(key) != 64 {
		t.Fatalf("the logged-in tab holds key %q", key)
	}

	var mu sync.Mutex
	var cookies []string
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cookies = append(cookies, r.Header.Get("Cookie"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>dev server</title><button id=b onclick="window.w = window.open('%s/', '_blank')">go</button>`, ww.base)
	}))
	defer hostile.Close()

	tab, cancel := chromedp.NewContext(ww.ctx)
	defer cancel()
	do(t, tab, chromedp.Navigate(hostile.URL+"/"))
	mu.Lock()
	got := strings.Join(cookies, "; ")
	mu.Unlock()
	t.Logf("the hostile server was sent the cookies %q", got)

	body := fmt.Sprintf("id=%s&choice=once&key=%s", id, key)
	rows := []struct {
		name, js string
	}{
		{"a form it posts", fmt.Sprintf(`(() => { const f = document.createElement('form'); f.method = 'POST'; f.action = %q;
			for (const [k, v] of new URLSearchParams(%q)) { const i = document.createElement('input'); i.name = k; i.value = v; f.appendChild(i); }
			const sink = document.createElement('iframe'); sink.name = 'sink'; document.body.appendChild(sink); f.target = 'sink';
			document.body.appendChild(f); f.submit(); return new Promise((ok) => setTimeout(() => ok('sent'), 1500)); })()`, ww.base+"/answer", body)},
		{"a fetch without CORS", fmt.Sprintf(`fetch(%q, {method: 'POST', mode: 'no-cors', credentials: 'include',
			headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: %q}).then(() => 'sent', (e) => 'failed: ' + e)`, ww.base+"/answer", body)},
		{"a fetch with the key's header", fmt.Sprintf(`fetch(%q, {method: 'POST', credentials: 'include',
			headers: {'Content-Type': 'application/x-www-form-urlencoded', 'X-Guardrun-Key': %q}, body: %q}).then((r) => 'read ' + r.status, (e) => 'failed: ' + e)`, ww.base+"/answer", key, body)},
		{"a beacon", fmt.Sprintf(`navigator.sendBeacon(%q, new Blob([%q], {type: 'application/x-www-form-urlencoded'})) ? 'sent' : 'refused'`, ww.base+"/answer", body)},
		{"reading the event stream", fmt.Sprintf(`new Promise((ok) => { const es = new EventSource(%q, {withCredentials: true});
			es.addEventListener('snapshot', (e) => ok('read: ' + e.data.slice(0, 40))); es.onerror = () => { es.close(); ok('failed'); };
			setTimeout(() => ok('nothing'), 3000); })`, ww.base+"/events?key="+key)},
		{"reading the panels", fmt.Sprintf(`fetch(%q, {credentials: 'include'}).then((r) => r.text()).then((s) => 'read: ' + s.slice(0, 40), (e) => 'failed: ' + e)`, ww.base+"/panels?key="+key)},
		{"a navigation to the answer", fmt.Sprintf(`(() => { const w = window.open(%q, 'sink2'); return 'opened ' + !!w; })()`, ww.base+"/answer?"+body)},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			res, err := chromedp.Run(tab, chromedp.Evaluate[string](row.js, chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("the hostile page: %s", res)
			if strings.HasPrefix(res, "read") && !strings.HasPrefix(res, "read 403") {
				t.Errorf("the hostile page read the answer: %s", res)
			}
			time.Sleep(300 * time.Millisecond)
			if n := eval[int](t, ww.ctx, `document.querySelectorAll('#req-`+id+`').length`); n != 1 {
				t.Fatal("the request is no longer waiting on the page")
			}
			if exists(filepath.Join(ww.work, "forged-from-hostile-page")) {
				t.Fatal("the forged answer ran the command")
			}
		})
	}

	t.Run("framing the page", func(t *testing.T) {
		do(t, tab, chromedp.Navigate(hostile.URL+"/frame"))
		eval[bool](t, tab, fmt.Sprintf(`(() => { const f = document.createElement('iframe'); f.src = %q; document.body.appendChild(f); return true; })()`, ww.base+"/"))
		time.Sleep(1500 * time.Millisecond)
		tree, err := chromedp.Run(tab, func(ctx context.Context, tg *chromedp.Target) (*page.FrameTree, error) {
			r, err := cdp.Call(ctx, tg, page.GetFrameTree, cdp.Empty{})
			return r.FrameTree, err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(tree.ChildFrames) != 1 {
			t.Fatalf("%d frames", len(tree.ChildFrames))
		}
		f := tree.ChildFrames[0].Frame
		t.Logf("the frame: url %q unreachable %q", f.URL, f.UnreachableURL)
		if strings.HasPrefix(f.URL, ww.base) && f.UnreachableURL == "" {
			t.Errorf("the page loaded in another site's frame: %+v", f)
		}
	})

	// The person opens the development server in the page's own tab:
	// a click there may open the page again (the new tab inherits the
	// tab's sessionStorage, key included), but the opener cannot script
	// it (Cross-Origin-Opener-Policy) or read what it shows.
	t.Run("a popup of the page from the page's own tab", func(t *testing.T) {
		do(t, ww.ctx, chromedp.Navigate(hostile.URL+"/"))
		popped := chromedp.WaitNewTarget(ww.ctx, func(*target.Info) bool { return true })
		do(t, ww.ctx, chromedp.Click(chromedp.CSS("#b")))
		select {
		case tid := <-popped:
			pop, cancel := chromedp.NewContext(ww.ctx, chromedp.WithTargetID(tid))
			defer cancel()
			do(t, pop, chromedp.WaitVisible(chromedp.CSS(`#status.live`)))
		case <-time.After(10 * time.Second):
			t.Fatal("no popup opened")
		}
		res := eval[string](t, ww.ctx, `(() => { try { return 'closed ' + window.w.closed + ', read ' + window.w.document.title; } catch (e) { return 'closed ' + window.w.closed + ', ' + e.name; } })()`)
		t.Logf("the opener: %s", res)
		if !strings.HasPrefix(res, "closed true") {
			t.Errorf("the opener keeps a handle on the page: %s", res)
		}
		do(t, ww.ctx, chromedp.NavigateBack(), chromedp.WaitVisible(chromedp.CSS(`#status.live`)), chromedp.WaitVisible(sel(id, "")))
	})

	if code := func() int {
		ww.press(t, id, "deny")
		return a.wait(t)
	}(); code != 77 {
		t.Errorf("exit %d after the person denied", code)
	}
}
