package supervisor

import (
	"strings"
	"syscall"
	"testing"

	"github.com/guardrun/guardrun/approval"
)

// A request's detail comes from whatever process reached the socket, not
// only from guardrun's own diff renderer: its SGR colours are drawn, and
// every other escape or control character shows as text. A forged
// detail cannot clear the screen, move the cursor over the prompt, set
// the clipboard or the title, or make a link.
func TestForgedDetailShowsAsText(t *testing.T) {
	rows := []struct {
		name, detail string
		raw          []string // must not reach the terminal as is (the stage's own escapes aside)
		shown        string   // what the person reads instead
	}{
		{"clear the screen and home the cursor", "+ok\x1b[2J\x1b[Hfake prompt\n", []string{"ok\x1b[2J", "\x1b[Hfake"}, `\x1b[2J\x1b[Hfake prompt`},
		{"set the clipboard", "+x\x1b]52;c;cm0gLXJmIH4K\x07\n", []string{"\x1b]52"}, `\x1b]52;c;cm0gLXJmIH4K\x07`},
		{"set the window title", "+x\x1b]0;owned\x1b\\\n", []string{"\x1b]0;owned"}, `\x1b]0;owned\x1b\`},
		{"a hyperlink", "+\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\\n", []string{"\x1b]8;;http"}, `\x1b]8;;http://evil.example/`},
		{"carriage return over the line", "+safe change\rrm -rf ~    \n", []string{"\rrm"}, `safe change\x0drm -rf ~`},
		{"a device status report back into the keyboard", "+x\x1b[6n\x1b[21t\n", []string{"\x1b[6n", "\x1b[21t"}, `\x1b[6n\x1b[21t`},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			p := newPerson(t)
			r := supervise(t, p, &Supervisor{}, "sleep", "30")
			req := request("touch x", testKey)
			req.Detail = "\x1b[1mf.txt\x1b[0m\n\x1b[32m" + row.detail + "\x1b[0m"
			ans := clientAsk(t, r.socket, req)
			p.waitFor(0, `\[n\] deny.*> `)
			screen := p.screen()
			for _, bad := range row.raw {
				if strings.Contains(screen, bad) {
					t.Errorf("the terminal received %q raw; the screen:\n%q", bad, screen)
				}
			}
			if !strings.Contains(screen, row.shown) {
				t.Errorf("the screen does not show %q; it shows:\n%q", row.shown, screen)
			}
			if !strings.Contains(screen, "\x1b[32m+") {
				t.Errorf("the detail's own colour is gone:\n%q", screen)
			}
			p.typ("n\r")
			if a := answer(t, ans); a.Approve {
				t.Fatalf("answer %+v", a)
			}
			syscall.Kill(r.pid, syscall.SIGKILL)
			r.wait(t)
		})
	}
}

// The viewer ([v]) gets the detail without any escape at all.
func TestForgedDetailFullText(t *testing.T) {
	req := request("touch x", testKey)
	req.Detail = "\x1b[32m+x\x1b]52;c;cm0K\x07\x1b[2J\rover\x1b[0m\n"
	got := approval.FullText(req)
	if strings.ContainsAny(got, "\x1b\x07\r") {
		t.Errorf("the full text holds raw control characters: %q", got)
	}
	if !strings.Contains(got, `+x\x1b]52;c;cm0K\x07\x1b[2J\x0dover`) {
		t.Errorf("the full text %q does not show the forged escapes as text", got)
	}
}
