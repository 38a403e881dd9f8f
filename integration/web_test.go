//go:build linux

package integration

// guardrun web in a real browser: Debian's chromium, headless, driven
// over the DevTools protocol (chromedp). The asking processes are real
// guardrun runs (or, for the hundred at once, the test binary asking the
// broker as internal/broker's Client does for any front).

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

const webConfig = `shell:
  default: {allowed: true, approval: true}
  rules:
    - {pattern: echo, approval: false}
    - {pattern: ls, approval: false}
sandbox:
  paths:
    workspace: {root: ., mode: rw}
    notes: {root: NOTES, mode: rw, write_approval: true}
`

// webWorld is a world with guardrun web running in it, and a browser
// tab logged in to its page.
type webWorld struct {
	*world
	url, base string
	ctx       context.Context
}

func startWeb(t *testing.T, width, height int64) *webWorld {
	t.Helper()
	requireSandbox(t)
	exe := chromiumPath(t)
	w := newWorld(t, webConfig)
	notes := filepath.Join(w.work, "notes")
	os.MkdirAll(notes, 0o755)
	cfg := filepath.Join(filepath.Dir(w.work), "guardrun.yaml")
	data, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.ReplaceAll(string(data), "NOTES", notes)), 0o644)

	p := startWebProc(t, w)
	ww := &webWorld{world: w, url: p.url, base: "http://" + p.addr}

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(int(width), int(height)),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	ww.ctx = ctx
	vp := []chromedp.EmulateViewportOption{}
	if width < 600 {
		vp = append(vp, chromedp.EmulateMobile, chromedp.EmulatePortrait)
	}
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(width, height, vp...),
		chromedp.Navigate(ww.url),
		chromedp.WaitVisible(chromedp.CSS(`#status.live`)),
	); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if loc != ww.base+"/" {
		t.Errorf("after login the page is at %q, want %q (no token, no key)", loc, ww.base+"/")
	}
	return ww
}

// chromiumPath is Debian's chromium, or the test is skipped naming it
// (a failure under GUARDRUN_REQUIRE_SANDBOX=1; make deps installs it).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Missing(t, "no chromium (Debian's chromium package; make deps installs it)")
	return ""
}

// asking is a guardrun run waiting for the page's answer.
type asking struct {
	cmd            *exec.Cmd
	stdout, stderr strings.Builder
}

func (ww *webWorld) ask(t *testing.T, stdin string, args ...string) *asking {
	t.Helper()
	a := &asking{cmd: exec.Command(guardrunBin, args...)}
	a.cmd.Dir, a.cmd.Env = ww.work, ww.env
	// No controlling terminal: the broker is the only one to ask.
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	a.cmd.Stdout, a.cmd.Stderr = &a.stdout, &a.stderr
	if stdin != "" {
		a.cmd.Stdin = strings.NewReader(stdin)
	}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.cmd.Process.Kill(); a.cmd.Wait() })
	return a
}

func (a *asking) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- a.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("guardrun %q did not end", a.cmd.Args)
	}
	return a.cmd.ProcessState.ExitCode()
}

// card waits for the card whose script holds text and returns its id.
func (ww *webWorld) card(t *testing.T, text string) string {
	t.Helper()
	id := ""
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		js := fmt.Sprintf(`(() => { for (const c of document.querySelectorAll('#pending article.card')) {
			if (c.querySelector('pre.script').textContent.includes(%q)) return c.dataset.id; } return ''; })()`, text)
		id = eval[string](t, ww.ctx, js)
		if id != "" {
			return id
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no card for %q appeared", text)
	return ""
}

// press clicks a card's button as a person does: once the card has
// stayed where it is past the page's settle time (a click on a card that
// has just appeared or moved answers nothing).
func (ww *webWorld) press(t *testing.T, id, choice string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !eval[bool](t, ww.ctx, `(() => { const c = document.getElementById('req-`+id+`');
		return !!c && performance.now() - Number(c.dataset.placed) >= 450; })()`) {
		if time.Now().After(deadline) {
			t.Fatalf("the card %s never settled", id)
		}
		time.Sleep(25 * time.Millisecond)
	}
	do(t, ww.ctx, chromedp.Click(sel(id, `button[data-choice="`+choice+`"]`)))
}

func sel(id, rest string) chromedp.CSS { return chromedp.CSS(`#req-` + id + ` ` + rest) }

// do runs browser steps, ending the test on an error.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// text is the visible text of the first element sel matches.
func text(t *testing.T, ctx context.Context, sel chromedp.CSS) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A held request appears without a reload; approving runs it; denying
// with a note hands the note back; a key answers only once the card has
// been there and the keyboard quiet; hostile text shows as text.
func TestWebPage(t *testing.T) {
	ww := startWeb(t, 1280, 800)
	ctx := ww.ctx

	t.Run("approve once runs the command", func(t *testing.T) {
		a := ww.ask(t, "", "-c", "touch approved-from-web")
		id := ww.card(t, "touch approved-from-web")
		asker := text(t, ctx, sel(id, ".asker"))
		if !strings.Contains(asker, "pid "+strconv.Itoa(a.cmd.Process.Pid)) {
			t.Errorf("the card names the asker as %q, want pid %d", asker, a.cmd.Process.Pid)
		}
		ww.press(t, id, "once")
		if code := a.wait(t); code != 0 {
			t.Fatalf("exit %d, stderr %s", code, a.stderr.String())
		}
		if !exists(filepath.Join(ww.work, "approved-from-web")) {
			t.Error("the approved command did not run")
		}
		do(t, ctx, chromedp.WaitNotPresent(chromedp.CSS(`#req-`+id)))
		rec := lastAudit(t, ww.world)
		if rec["decided_by"] != "person" || rec["front"] != "web" || rec["outcome"] != "ran" {
			t.Errorf("audit record %v", rec)
		}
	})

	t.Run("deny with a note hands the note back", func(t *testing.T) {
		a := ww.ask(t, "", "-c", "touch denied-from-web")
		id := ww.card(t, "touch denied-from-web")
		do(t, ctx, chromedp.SendKeys(sel(id, "input.note"), "use the Makefile target"))
		ww.press(t, id, "deny")
		if code := a.wait(t); code != 77 {
			t.Fatalf("exit %d, want 77", code)
		}
		if got := strings.TrimSpace(a.stderr.String()); got != "guardrun: denied by user: use the Makefile target" {
			t.Errorf("refusal line %q", got)
		}
		if exists(filepath.Join(ww.work, "denied-from-web")) {
			t.Error("the denied command ran")
		}
	})

	t.Run("the y key approves the first request", func(t *testing.T) {
		a := ww.ask(t, "", "-c", "touch by-key")
		ww.card(t, "touch by-key")
		time.Sleep(700 * time.Millisecond) // the card settles, the keyboard is quiet
		do(t, ctx, chromedp.KeyEvent("y"))
		if code := a.wait(t); code != 0 || !exists(filepath.Join(ww.work, "by-key")) {
			t.Fatalf("exit %d: %s", code, a.stderr.String())
		}
	})

	t.Run("a key typed as the card appears does not answer it", func(t *testing.T) {
		a := ww.ask(t, "", "-c", "touch too-early")
		id := ww.card(t, "touch too-early")
		do(t, ctx, chromedp.KeyEvent("y"))
		time.Sleep(300 * time.Millisecond)
		if n := eval[int](t, ctx, `document.querySelectorAll('#req-`+id+`:not(.sent)').length`); n != 1 {
			t.Fatal("a key typed before the card settled answered it")
		}
		ww.press(t, id, "deny")
		if code := a.wait(t); code != 77 {
			t.Errorf("exit %d", code)
		}
	})

	t.Run("hostile text renders escaped", func(t *testing.T) {
		hostile := "hostile-cmd 'A\x1b[31mB\u202eC\u200bD </script><img src=x onerror=window.pwned=1>'"
		a := ww.ask(t, "", "-c", hostile)
		id := ww.card(t, "hostile-cmd")
		script := text(t, ctx, sel(id, "pre.script"))
		parts := text(t, ctx, sel(id, ".needs"))
		imgs := eval[int](t, ctx, `document.querySelectorAll('#pending img, #pending script').length`)
		pwned := eval[bool](t, ctx, `!!window.pwned`)
		want := `$ hostile-cmd 'A\x1b[31mB\u202eC\u200bD </script><img src=x onerror=window.pwned=1>'`
		if script != want {
			t.Errorf("the script shows as\n%q, want\n%q", script, want)
		}
		if strings.ContainsAny(script+parts, "\x1b\u202e\u200b") {
			t.Errorf("raw control or invisible characters reached the page: %q", script+parts)
		}
		if imgs != 0 || pwned {
			t.Errorf("markup from the request became elements (%d) or ran (%v)", imgs, pwned)
		}
		ww.press(t, id, "deny")
		a.wait(t)
	})

	t.Run("a request arriving in a background tab raises a notification", func(t *testing.T) {
		// Headless chromium shows no notifications: the page's Notification
		// is replaced by one that records, with permission granted, and the
		// tab made hidden.
		eval[bool](t, ctx, `(() => {
			window.shown = [];
			window.Notification = class { constructor(title, opts) { window.shown.push(title + ': ' + opts.body); } };
			window.Notification.permission = 'granted';
			Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
			return true; })()`)
		a := ww.ask(t, "", "-c", "touch while-away")
		id := ww.card(t, "touch while-away")
		shown := eval[[]string](t, ctx, `window.shown`)
		if len(shown) != 1 || shown[0] != "guardrun: approval needed: touch while-away" {
			t.Errorf("notifications %q", shown)
		}
		eval[bool](t, ctx, `delete document.hidden`)
		ww.press(t, id, "deny")
		a.wait(t)
	})

	t.Run("forged answers are refused and the request stays", func(t *testing.T) {
		a := ww.ask(t, "", "-c", "touch forged")
		id := ww.card(t, "touch forged")
		cookie, key := webLogin(t, ww.url)
		form := url.Values{"id": {id}, "choice": {"once"}}.Encode()
		for _, row := range []struct{ name, origin, key, host string }{
			{"no key", ww.base, "", ""},
			{"another Origin", "http://evil.example", key, ""},
			{"another Host", ww.base, key, "evil.example"},
		} {
			hr, _ := http.NewRequest("POST", ww.base+"/answer", strings.NewReader(form))
			hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			hr.Header.Set("Origin", row.origin)
			if row.key != "" {
				hr.Header.Set("X-Guardrun-Key", row.key)
			}
			if row.host != "" {
				hr.Host = row.host
			}
			hr.AddCookie(cookie)
			resp, err := http.DefaultClient.Do(hr)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 403 {
				t.Errorf("%s: status %d, want 403", row.name, resp.StatusCode)
			}
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('#req-`+id+`').length`); n != 1 || exists(filepath.Join(ww.work, "forged")) {
			t.Fatal("a forged answer took the request")
		}
		ww.press(t, id, "deny")
		if code := a.wait(t); code != 77 {
			t.Errorf("exit %d", code)
		}
	})

	t.Run("always in this project from the page, listed and revoked there", func(t *testing.T) {
		a := ww.ask(t, "", "-c", "touch keep-me")
		id := ww.card(t, "touch keep-me")
		if p := text(t, ctx, sel(id, ".always code.pattern")); p != "touch keep-me" {
			t.Errorf("the card shows the rule as %q", p)
		}
		ww.press(t, id, "always")
		if code := a.wait(t); code != 0 {
			t.Fatalf("exit %d: %s", code, a.stderr.String())
		}
		revoke := chromedp.CSS(`#rules button.revoke[data-pattern="touch keep-me"]`)
		do(t, ctx, chromedp.WaitVisible(revoke))
		if _, _, code := runPlain(t, ww.world, "", nil, "-c", "touch keep-me"); code != 0 {
			t.Errorf("the kept rule did not pre-approve: exit %d", code)
		}
		do(t, ctx, chromedp.Click(revoke), chromedp.WaitNotPresent(revoke))
		out, _, _ := runPlain(t, ww.world, "", nil, "rules", "list", "--json")
		if strings.Contains(out, "keep-me") {
			t.Errorf("revoked on the page, still listed: %s", out)
		}
	})

	t.Run("the history shows what was answered here", func(t *testing.T) {
		do(t, ctx,
			chromedp.SetValue(chromedp.CSS(`#filters input[name="q"]`), "approved-from-web"),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('#filters').dispatchEvent(new Event('input'))`),
			chromedp.Sleep(800*time.Millisecond))
		h := text(t, ctx, chromedp.CSS(`#history`))
		if !strings.Contains(h, "touch approved-from-web") || !strings.Contains(h, "web") || strings.Contains(h, "denied-from-web") {
			t.Errorf("the filtered history: %q", h)
		}
	})
}

func webLogin(t *testing.T, u string) (*http.Cookie, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(resp.Cookies()) != 1 {
		t.Fatalf("login set %d cookies", len(resp.Cookies()))
	}
	return resp.Cookies()[0], strings.TrimPrefix(resp.Header.Get("Location"), "/#key=")
}

// lastAudit is the last record of the world's audit log.
func lastAudit(t *testing.T, w *world) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// 100 requests from 10 processes wait at once and are answered from the
// page in a random order: each process gets exactly its own answers.
func TestWebHundredRequests(t *testing.T) {
	ww := startWeb(t, 1280, 800)
	const procs, each = 10, 10
	outs := make([]*strings.Builder, procs)
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(append([]string{}, ww.env...), "GUARDRUN_IT_ROLE=broker-asker",
			"BROKER_IT_NAME=p"+strconv.Itoa(p), "BROKER_IT_COUNT="+strconv.Itoa(each))
		outs[p] = &strings.Builder{}
		cmd.Stdout, cmd.Stderr = outs[p], os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		cmds = append(cmds, cmd)
	}
	ctx := ww.ctx
	deadline := time.Now().Add(60 * time.Second)
	n := 0
	for n < procs*each && time.Now().Before(deadline) {
		n = eval[int](t, ctx, `document.querySelectorAll('#pending article.card').length`)
		time.Sleep(100 * time.Millisecond)
	}
	if n != procs*each {
		t.Fatalf("%d cards on the page, want %d", n, procs*each)
	}
	if count := text(t, ctx, chromedp.CSS(`#count`)); count != "100" {
		t.Errorf("the count shows %q", count)
	}
	for answered := 0; answered < procs*each; answered++ {
		ids := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#pending article.card:not(.sent)')).map(c => c.dataset.id)`)
		if len(ids) == 0 {
			t.Fatalf("no card left after %d answers", answered)
		}
		id := ids[rand.IntN(len(ids))]
		script := text(t, ctx, sel(id, "pre.script"))
		what := strings.TrimPrefix(script, "$ make ")
		i, _ := strconv.Atoi(what[strings.IndexByte(what, '-')+1:])
		if i%2 == 0 {
			ww.press(t, id, "once")
		} else {
			do(t, ctx, chromedp.SetValue(sel(id, "input.note"), "note "+what))
			ww.press(t, id, "deny")
		}
		// The card goes, and those below it move up.
		do(t, ctx, chromedp.WaitNotPresent(chromedp.CSS(`#req-`+id)))
	}
	type line struct {
		What    string `json:"what"`
		Approve bool   `json:"approve"`
		Note    string `json:"note"`
		Front   string `json:"front"`
		Error   string `json:"error"`
	}
	for p, cmd := range cmds {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("asker %d: %v\n%s", p, err, outs[p])
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("asker %d still waits", p)
		}
		var got, want []line
		dec := json.NewDecoder(strings.NewReader(outs[p].String()))
		for dec.More() {
			var l line
			if err := dec.Decode(&l); err != nil {
				t.Fatal(err)
			}
			got = append(got, l)
		}
		for i := range each {
			what := fmt.Sprintf("p%d-%d", p, i)
			l := line{What: what, Approve: i%2 == 0, Front: "web"}
			if i%2 == 1 {
				l.Note = "note " + what
			}
			want = append(want, l)
		}
		sort.Slice(got, func(i, j int) bool { return got[i].What < got[j].What })
		sort.Slice(want, func(i, j int) bool { return want[i].What < want[j].What })
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("process %d (-got +want):\n%s", p, diff)
		}
	}
}

// The page at desktop and phone width, with requests of each kind
// waiting. With GUARDRUN_SCREENSHOTS=DIR (make screenshots) the pictures
// are written there as web-desktop.png and web-phone.png.
func TestWebScreenshots(t *testing.T) {
	for _, size := range []struct {
		name          string
		width, height int64
	}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
		t.Run(size.name, func(t *testing.T) {
			ww := startWeb(t, size.width, size.height)
			// Some history first.
			runPlain(t, ww.world, "", nil, "-c", "echo built; ls")
			os.WriteFile(filepath.Join(ww.work, "notes", "todo.txt"), []byte("- write the docs\n- ship it\n"), 0o644)
			ww.ask(t, "", "-c", "npm run lint")
			ww.card(t, "npm run lint")
			ww.ask(t, "- write the docs\n- test on a phone\n- ship it\n", "fs", "write", "notes/todo.txt")
			ww.card(t, "todo.txt")
			ww.ask(t, "", "-c", "rm -rf build && make -j2 all")
			ww.card(t, "rm -rf build")
			do(t, ww.ctx, chromedp.Sleep(800*time.Millisecond))
			shot, err := chromedp.Run(ww.ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			dir := os.Getenv("GUARDRUN_SCREENSHOTS")
			if dir == "" {
				dir = t.TempDir()
			}
			if err := os.WriteFile(filepath.Join(dir, "web-"+size.name+".png"), shot, 0o644); err != nil {
				t.Fatal(err)
			}
			if eval[bool](t, ww.ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`) {
				t.Errorf("the page is wider than the %d-pixel screen", size.width)
			}
		})
	}
}
