//go:build linux

package integration

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A click lands where the person aimed only if the card under it has
// not just moved there: the request above it withdrawn the moment the
// person clicks its button (the agent can end its own request at any
// time) must not approve the request that slid up under the pointer.
func TestWebClickOnACardThatJustMoved(t *testing.T) {
	ww := startWeb(t, 1280, 800)
	first := ww.ask(t, "", "-c", "touch the-one-aimed-at")
	firstID := ww.card(t, "touch the-one-aimed-at")
	second := ww.ask(t, "", "-c", "touch slid-under-the-pointer")
	secondID := ww.card(t, "touch slid-under-the-pointer")
	time.Sleep(600 * time.Millisecond) // both have been there a while
	type point struct{ X, Y float64 }
	aim := eval[point](t, ww.ctx, `(() => { const r = document.querySelector('#req-`+firstID+` button[data-choice="once"]').getBoundingClientRect();
		return {X: r.x + r.width / 2, Y: r.y + r.height / 2}; })()`)
	first.cmd.Process.Kill()
	first.cmd.Wait()
	do(t, ww.ctx, chromedp.WaitNotPresent(chromedp.CSS(`#req-`+firstID)))
	under := eval[string](t, ww.ctx, `(() => { const b = document.elementFromPoint(`+ftoa(aim.X)+`, `+ftoa(aim.Y)+`); const c = b && b.closest('article.card'); return c ? c.dataset.id : ''; })()`)
	if under != secondID {
		t.Fatalf("the second card did not slide under the pointer (%q there)", under)
	}
	do(t, ww.ctx, chromedp.MouseClickXY(aim.X, aim.Y))
	time.Sleep(500 * time.Millisecond)
	if n := eval[int](t, ww.ctx, `document.querySelectorAll('#req-`+secondID+`:not(.sent)').length`); n != 1 || exists(filepath.Join(ww.work, "slid-under-the-pointer")) {
		t.Fatal("a click aimed at a withdrawn request approved the one that slid under it")
	}
	if hint := text(t, ww.ctx, sel(secondID, ".error")); hint != "This request has just moved here: click again if it is the one you mean." {
		t.Errorf("the card says %q", hint)
	}
	// Once it has stayed put, a click on it counts.
	ww.press(t, secondID, "deny")
	if code := second.wait(t); code != 77 {
		t.Errorf("exit %d after deny", code)
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
