//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The prompt integrity tests play a prompt-injected agent under
// `guardrun supervise` in a real terminal emulator (tmux, 120x30). `touch
// DANGEROUS` stands for something harmful. Each checks what a person
// would see while the prompt waits (the dangerous request, in readable
// characters) and that the approval goes to the request that was shown.

func integrityWorld(t *testing.T) *world {
	t.Helper()
	requireSandbox(t)
	needTmux(t)
	return newWorld(t, superviseConfig)
}

// visibleLine is the screen line holding s, or "".
func visibleLine(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// Row 1: a fake prompt painted by the agent and a scroll region pinned to
// the last two rows. The real prompt takes the whole screen; the fake is
// gone, and the prompt names the process that asked.
func TestIntegrityFakePromptAndScrollRegion(t *testing.T) {
	w := integrityWorld(t)
	m := attackAgent(t, w, nil,
		`printf '\e[2J\e[H── guardrun: approval needed ──\r\n$ touch notes.txt\r\n[y] approve once  [s] approve for session  [n] deny  [v] view > '
printf '\e[29;30r\e[30;1H'`, "touch DANGEROUS")
	s := m.waitPrompt(`\$ touch DANGEROUS`)
	if strings.Contains(s, "notes.txt") {
		t.Errorf("the agent's fake prompt is on screen with the real one:\n%s", s)
	}
	if !regexp.MustCompile(`asked by pid \d+: .*guardrun.*-c '?touch DANGEROUS`).MatchString(s) {
		t.Errorf("the prompt does not name the process that asked:\n%s", s)
	}
	lines := strings.Split(s, "\n")
	if !strings.Contains(strings.Join(lines[:10], "\n"), "approval needed") {
		t.Errorf("the prompt is not drawn from the top:\n%s", s)
	}
	settled()
	m.keys("y")
	m.waitScreen(`agent: status 0`)
	if !fileIn(t, w, "DANGEROUS") {
		t.Error("the approved request did not run")
	}
}

// Row 2: request A, then B behind it; while A shows, the agent's held
// output sets a scroll region and the agent kills A. B is visibly a new
// prompt ("request 2 of 2"), not a silent swap, and y approves B.
func TestIntegrityWithdrawnPromptReplaced(t *testing.T) {
	w := integrityWorld(t)
	m := attackAgent(t, w, nil, `"$SHELL" -c 'touch A-request' & a=$!
sleep 2
"$SHELL" -c 'touch DANGEROUS' & b=$!
sleep 1
printf '\e[5;10r'
kill $a
wait $b
echo "agent: B status $?"`, "echo end")
	sa := m.waitPrompt(`touch A-request`)
	sb := m.waitPrompt(`\$ touch DANGEROUS`)
	if sa == sb {
		t.Fatal("the replacing prompt looks exactly like the one it replaced")
	}
	if !strings.Contains(sb, "request 2 of 2") {
		t.Errorf("the replacing prompt does not say it is a new request:\n%s", sb)
	}
	if strings.Contains(sb, "A-request") {
		t.Errorf("the withdrawn request is still on screen:\n%s", sb)
	}
	settled()
	m.keys("y")
	m.waitScreen(`agent: B status 0`)
	if !fileIn(t, w, "DANGEROUS") || fileIn(t, w, "A-request") {
		t.Error("the approval did not go to the visible request alone")
	}
}

// sgrParams lists the SGR parameters in an attribute capture of a line.
func sgrParams(line string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`\x1b\[([0-9;:]*)m`).FindAllStringSubmatch(line, -1) {
		out = append(out, strings.Split(m[1], ";")...)
	}
	return out
}

// Row 3: concealed text and black on black (NO_COLOR), and black default
// colours (colour on). The prompt is drawn in default, visible colours.
func TestIntegrityInvisibleColours(t *testing.T) {
	t.Run("conceal", func(t *testing.T) {
		w := integrityWorld(t)
		m := attackAgent(t, w, nil, `printf '\e[8m\e[30;40mShall I reformat README.md? [y/n] '`, "touch DANGEROUS")
		m.waitPrompt(`\$ touch DANGEROUS`)
		line := visibleLine(m.screen(true), "touch DANGEROUS")
		for _, p := range sgrParams(line) {
			if p == "8" || p == "30" || p == "40" {
				t.Errorf("the prompt line is drawn with SGR %s: %q", p, line)
			}
		}
		settled()
		m.keys("y")
		m.waitScreen(`agent: status 0`)
	})
	t.Run("default colours", func(t *testing.T) {
		w := integrityWorld(t)
		m := attackAgent(t, w, []string{"NO_COLOR="}, `printf '\e]10;rgb:00/00/00\a\e]11;rgb:00/00/00\a'`, "touch DANGEROUS")
		m.waitPrompt(`\$ touch DANGEROUS`)
		if fg, bg := m.format("#{pane_fg}"), m.format("#{pane_bg}"); fg == bg && fg != "" && fg != "default" {
			t.Errorf("the prompt is drawn in foreground %s on background %s", fg, bg)
		}
		settled()
		m.keys("y")
		m.waitScreen(`agent: status 0`)
		if fg := m.format("#{pane_fg}"); fg != "#000000" {
			t.Errorf("the agent's colours were not given back after the prompt: fg %q", fg)
		}
	})
}

// Row 4: autowrap off, then a long command ending in DANGEROUS: the end
// of the line is on screen.
func TestIntegrityAutowrapOff(t *testing.T) {
	w := integrityWorld(t)
	long := strings.Repeat("a", 150)
	m := attackAgent(t, w, nil, `printf '\e[?7l'`, "touch "+long+" DANGEROUS")
	s := m.waitPrompt(`a DANGEROUS`)
	if !strings.Contains(strings.ReplaceAll(s, "\n", ""), "$ touch "+long+" DANGEROUS") {
		t.Errorf("the whole command is not on screen:\n%s", s)
	}
	settled()
	m.keys("y")
	m.waitScreen(`agent: status 0`)
	if !fileIn(t, w, "DANGEROUS") {
		t.Error("the approved request did not run")
	}
}

// Row 5: the agent asks the person to type "yes" and fires its request on
// the first byte. The person goes on typing (the rest of "yes", and more)
// while the prompt appears and after: none of it answers, because the
// keyboard was never quiet after the prompt was drawn.
func TestIntegrityTypingThrough(t *testing.T) {
	w := integrityWorld(t)
	m := attackAgent(t, w, nil, `echo 'Type yes to continue:'; read -r -n 1 c`, "touch DANGEROUS")
	m.waitScreen(`Type yes to continue:`)
	var shown atomic.Int64 // when the prompt was first seen, in UnixNano
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			out, err := exec.Command("tmux", "-L", m.sock, "capture-pane", "-p", "-t", "main").Output()
			if err == nil && regexp.MustCompile(promptKeyLine).Match(out) {
				shown.Store(time.Now().UnixNano())
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	// Type "y", "e", "s", "s"... 40 ms apart until the prompt has been
	// on screen for a second, recording the longest possible gap between
	// two keys (from starting one send to finishing the next).
	var maxGap time.Duration
	var prevStart time.Time
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		if at := shown.Load(); at != 0 && time.Since(time.Unix(0, at)) > time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no prompt")
		}
		start := time.Now()
		m.keys(string("yes"[min(i, 2)]))
		if !prevStart.IsZero() {
			maxGap = max(maxGap, time.Since(prevStart))
		}
		prevStart = start
		time.Sleep(40 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	s := m.screen(false)
	answered := !regexp.MustCompile(promptKeyLine).MatchString(s) || fileIn(t, w, "DANGEROUS")
	if answered && maxGap >= 280*time.Millisecond {
		t.Skipf("this machine is too loaded to type keys less than 300 ms apart (a gap of %v): the attack could not be played", maxGap)
	}
	if answered {
		t.Fatalf("keys typed at the agent answered the prompt (longest gap between keys %v):\n%s", maxGap, s)
	}
	settled()
	m.keys("n")
	m.waitScreen(`note for the agent`)
	m.enter()
	m.waitScreen(`agent: status 77`)
	if fileIn(t, w, "DANGEROUS") {
		t.Error("denied request ran")
	}
}

// Row 6: UTF-8 mouse reports on, the mouse moved to column 100, row 83:
// the report ends in 's' and must not answer.
func TestIntegrityUTF8Mouse(t *testing.T) {
	w := integrityWorld(t)
	m := attackAgent(t, w, nil, `printf '\e[?1003h\e[?1005h'`, "touch DANGEROUS")
	m.waitPrompt(`\$ touch DANGEROUS`)
	settled()
	for x := 96; x <= 120; x++ {
		m.keys("\x1b[MC" + string(rune(x+32)) + string(rune(83+32))) // motion, UTF-8 encoded
	}
	time.Sleep(500 * time.Millisecond)
	if s := m.screen(false); !regexp.MustCompile(promptKeyLine).MatchString(s) {
		t.Fatalf("a mouse report answered the prompt:\n%s", s)
	}
	settled()
	m.keys("n")
	m.waitScreen(`note for the agent`)
	m.enter()
	m.waitScreen(`agent: status 77`)
	if fileIn(t, w, "DANGEROUS") {
		t.Error("a mouse report approved the request")
	}
}

// Row 7: a heredoc approved for the session, then the same argv with a
// harmful body: asked again, with the harmful body on screen.
func TestIntegrityHeredocGrant(t *testing.T) {
	w := integrityWorld(t)
	harmless := "python3 - <<'EOF'\nprint('harmless')\nEOF"
	harmful := "python3 - <<'EOF'\nopen('DANGEROUS', 'w').close()\nEOF"
	m := attackAgent(t, w, nil, `"$SHELL" -c `+shq(harmless)+`; echo "agent: first $?"`, harmful)
	m.waitPrompt(`print\('harmless'\)`)
	settled()
	m.keys("s")
	// The same argv with the harmful body asks again, and shows it.
	m.waitPrompt(`open\('DANGEROUS'`)
	settled()
	m.keys("y")
	m.waitScreen(`(?s)agent: first 0.*agent: status 0`)
	if !fileIn(t, w, "DANGEROUS") {
		t.Error("the approved heredoc did not run")
	}
}

// Row 8: 25 asking lines, `touch DANGEROUS5`, then a 3,500-character
// line. The main prompt says how many asking parts it cannot show; the
// viewer's pages count wrapped rows, the dangerous line is on one of
// them, and the last page waits for a key.
func TestIntegrityViewerPages(t *testing.T) {
	w := integrityWorld(t)
	var script strings.Builder
	for i := 1; i <= 25; i++ {
		fmt.Fprintf(&script, "touch f%d\n", i)
	}
	script.WriteString("touch DANGEROUS5\n")
	script.WriteString("echo " + strings.Repeat("x", 3500) + " >/dev/null\n")
	m := attackAgent(t, w, nil, "", script.String())
	s := m.waitPrompt(`more parts that need approval`)
	if !regexp.MustCompile(`… \d+ more parts that need approval`).MatchString(s) {
		t.Errorf("the main prompt does not count the asking parts it hides:\n%s", s)
	}
	settled()
	m.keys("v")
	seen := false
	for page := 0; ; page++ {
		if page > 20 {
			t.Fatal("more than 20 pages")
		}
		s := m.waitScreen(`-- (rows|end)`)
		if strings.Contains(s, "touch DANGEROUS5") {
			seen = true
		}
		if strings.Contains(s, "-- end") {
			time.Sleep(300 * time.Millisecond)
			if !strings.Contains(m.screen(false), "-- end") {
				t.Fatal("the last page was drawn over without a key")
			}
			break
		}
		before := s
		m.keys(" ")
		deadline := time.Now().Add(30 * time.Second)
		for m.screen(false) == before {
			if time.Now().After(deadline) {
				t.Fatal("the page did not turn")
			}
			time.Sleep(30 * time.Millisecond)
		}
	}
	if !seen {
		t.Error("the dangerous line was on no page")
	}
	m.keys("q")
	m.waitPrompt(`touch f1`)
	settled()
	m.keys("y")
	m.waitScreen(`agent: status 0`)
	if !fileIn(t, w, "DANGEROUS5") {
		t.Error("the approved script did not run")
	}
}

// Row 9: the line-drawing character set shifted in: the prompt reads as
// letters.
func TestIntegrityCharset(t *testing.T) {
	w := integrityWorld(t)
	m := attackAgent(t, w, nil, `printf '\e)0\x0e'`, "touch DANGEROUS")
	s := m.waitPrompt(`\$ touch DANGEROUS`)
	if strings.ContainsAny(s, "±┤▒⎼␍┼") {
		t.Errorf("line-drawing glyphs on the prompt:\n%s", s)
	}
	m.approveVisible(`touch DANGEROUS`)
	if !fileIn(t, w, "DANGEROUS") {
		t.Error("the approved request did not run")
	}
}

// Row 10: insert mode on and lines pre-painted: the prompt's command line
// reads exactly, with nothing of the agent's text appended.
func TestIntegrityInsertMode(t *testing.T) {
	w := integrityWorld(t)
	var paint strings.Builder
	for i := 1; i <= 29; i++ {
		fmt.Fprintf(&paint, `printf '\e[%d;1Hxline-%c'; `, i, 'A'+i%26)
	}
	m := attackAgent(t, w, nil, paint.String()+`printf '\e[4h\e[1;1H'`, "touch DANGEROUS")
	s := m.waitPrompt(`\$ touch DANGEROUS`)
	if l := visibleLine(s, "$ touch DANGEROUS"); strings.TrimRight(l, " ") != "$ touch DANGEROUS" {
		t.Errorf("the command line reads %q", l)
	}
	if strings.Contains(s, "xline-") {
		t.Errorf("the agent's text shows through the prompt:\n%s", s)
	}
	m.keys("") // nothing
	settled()
	m.keys("y")
	m.waitScreen(`agent: status 0`)
}

// Row 11: a flood of requests: the first prompt shows its place and a
// live count, and N denies them all with a note.
func TestIntegrityFlood(t *testing.T) {
	w := integrityWorld(t)
	const n = 40 // within the supervisor's 64 connections
	m := attackAgent(t, w, nil, fmt.Sprintf(`for i in $(seq %d); do "$SHELL" -c "touch flood-$i" >/dev/null 2>&1 & done
wait; echo "agent: flood done"`, n), "echo pre-approved") // no prompt after the flood to cover the line
	m.waitPrompt(`touch flood-`)
	s := m.waitScreen(fmt.Sprintf(`request 1 of %d \(%d more waiting; \[N\] denies all\)`, n, n-1))
	_ = s
	settled()
	m.keys("N")
	m.waitScreen(`note for the agent`)
	m.keys("flood")
	m.enter()
	m.waitScreen(`agent: flood done`)
	if left, _ := filepath.Glob(filepath.Join(w.work, "flood-*")); len(left) > 0 {
		t.Errorf("denied requests ran: %v", left)
	}
}

// Row 12: invisible and look-alike characters in arguments are shown as
// escapes.
func TestIntegrityInvisibleCharacters(t *testing.T) {
	w := integrityWorld(t)
	m := attackAgent(t, w, nil, "", "touch DANGEROUS a\u3164b c\u2028d e\ufe0ff g\u0336h")
	s := m.waitPrompt(`\$ touch DANGEROUS`)
	for _, esc := range []string{`a\u3164b`, `c\u2028d`, `e\ufe0ff`, `g\u0336h`} {
		if !strings.Contains(s, esc) {
			t.Errorf("%s is not shown escaped:\n%s", esc, s)
		}
	}
	settled()
	m.keys("y")
	m.waitScreen(`agent: status 0`)
}

// Row 13: a misleading title and a hidden cursor: while the prompt waits
// the title is guardrun's and the cursor shows; afterwards the agent's
// come back.
func TestIntegrityTitleAndCursor(t *testing.T) {
	w := integrityWorld(t)
	m := attackAgent(t, w, nil, `printf '\e]0;guardrun: all commands pre-approved\a\e[?25l'`, "touch DANGEROUS")
	m.waitPrompt(`\$ touch DANGEROUS`)
	if title := m.format("#{pane_title}"); title != "guardrun: approval needed" {
		t.Errorf("title during the prompt: %q", title)
	}
	if c := m.format("#{cursor_flag}"); c != "1" {
		t.Errorf("cursor hidden during the prompt (cursor_flag %s)", c)
	}
	settled()
	m.keys("y")
	m.waitScreen(`agent: status 0`)
	if c := m.format("#{cursor_flag}"); c != "0" {
		t.Errorf("the agent's hidden cursor was not given back (cursor_flag %s)", c)
	}
	if !fileIn(t, w, "DANGEROUS") {
		t.Error("the approved request did not run")
	}
	_ = os.Getpid
}

// Row 14: terminal states the stage reset may not cover, each left by
// the agent's last output before its request: saved cursor and
// attributes, margins, line sizes, rectangle fills, repeats, tab stops,
// palette, hyperlinks, strings and sequences left open (which would
// swallow the prompt's bytes), shifted character sets and 8-bit
// controls. The dangerous request reads on one screen line, and y
// approves it.
func TestIntegrityLeftoverStates(t *testing.T) {
	rows := []struct{ name, attack, request, want string }{
		{"saved cursor and conceal", `printf '\e[8;30;40m\e[30;1H\e7\e[0m'`, "touch DANGEROUS", ""},
		{"origin mode then region", `printf '\e[?6h\e[20;21r\e[2;1H'`, "touch DANGEROUS", ""},
		{"left and right margins", `printf '\e[?69h\e[100;110s\e[1;1H'`, "touch DANGEROUS", ""},
		{"double-width and height lines", `printf '\e#6\e[2;1H\e#3\e[3;1H\e#4\e[1;1H'`, "touch DANGEROUS", ""},
		{"reverse screen", `printf '\e[?5h'`, "touch DANGEROUS", ""},
		{"rectangle fill and erase", `printf '\e[35;1;1;30;120$x\e[1;1;30;120$z'`, "touch DANGEROUS", ""},
		{"repeat", `printf 'X\e[500b\r\n'`, "touch DANGEROUS", ""},
		{"tab stops cleared", `printf '\e[3g'`, "touch\tDANGEROUS", `touch\s+DANGEROUS`},
		{"palette", `for i in $(seq 0 15); do printf '\e]4;%d;rgb:00/00/00\a' $i; done`, "touch 'DANGEROUS'", ""},
		{"hyperlink", `printf '\e]8;;https://example.com/\a'`, "touch DANGEROUS", ""},
		{"unterminated DCS", `printf '\eP1$r'`, "touch DANGEROUS", ""},
		{"unterminated DCS ending in ESC", `printf '\ePq\e'`, "touch DANGEROUS", ""},
		{"unterminated DCS passthrough", `printf '\ePtmux;'`, "touch DANGEROUS", ""},
		{"unterminated APC", `printf '\e_x'`, "touch DANGEROUS", ""},
		{"unterminated PM", `printf '\e^x'`, "touch DANGEROUS", ""},
		{"unterminated SOS", `printf '\eXx'`, "touch DANGEROUS", ""},
		{"unterminated window name", `printf '\ekx\e'`, "touch DANGEROUS", ""},
		{"unterminated OSC ending in ESC", `printf '\e]2;x\e'`, "touch DANGEROUS", ""},
		{"unterminated OSC", `printf '\e]2;x'`, "touch DANGEROUS", ""},
		{"partial CSI", `printf '\e[1;3'`, "touch DANGEROUS", ""},
		{"partial UTF-8", `printf '\xe2\x80'`, "touch DANGEROUS", ""},
		{"G2 locked shift", `printf '\e*0\en\e+0\eo'`, "touch DANGEROUS", ""},
		{"8-bit CSI", `printf '\x9b8m\x9b?5h'`, "touch DANGEROUS", ""},
		{"key encodings", `printf '\e[>4;2m\e[>15u\e[?1h\e=\e[?66h'`, "touch DANGEROUS", ""},
	}
	requireSandbox(t) // probed once, before the rows run in parallel
	needTmux(t)
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			w := integrityWorld(t)
			m := attackAgent(t, w, nil, r.attack, r.request)
			want := r.want
			if want == "" {
				want = regexp.QuoteMeta(strings.TrimPrefix(r.request, ""))
				want = strings.ReplaceAll(want, "'", "'?")
			}
			rx := regexp.MustCompile(`(?m)^\$ ` + want + `\s*$`)
			var s string
			deadline := time.Now().Add(20 * time.Second)
			for {
				s = m.screen(false)
				if rx.MatchString(s) && regexp.MustCompile(promptKeyLine).MatchString(s) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the request does not read on one line of the prompt:\n%s", s)
				}
				time.Sleep(50 * time.Millisecond)
			}
			line := visibleLine(m.screen(true), "DANGEROUS")
			for _, p := range sgrParams(line) {
				if p == "7" || p == "8" || p == "30" || p == "40" {
					t.Errorf("the command line is drawn with SGR %s: %q", p, line)
				}
			}
			settled()
			m.keys("y")
			if st := m.waitStatus(); st != "0" {
				t.Errorf("the approved request exited %s", st)
			}
			if !fileIn(t, w, "DANGEROUS") {
				t.Error("the approved request did not run")
			}
		})
	}
}

// Row 15: a mode change inside a DCS string, which tmux takes as the
// string's payload: the supervisor must not count it, or it draws the
// prompt over the agent's own screen and does not give it back.
func TestIntegrityModeInsideString(t *testing.T) {
	w := integrityWorld(t)
	m := attackAgent(t, w, nil, `echo agent-screen-marker; printf '\ePq\e[?1049h\e\\'`, "touch DANGEROUS")
	m.approveVisible(`\$ touch DANGEROUS`)
	m.waitScreen(`agent-screen-marker`)
}

// Row 16: the alternate screen entered by a sequence with a backspace
// inside it, which the terminal acts on and goes on: the agent is still
// on its alternate screen after the prompt.
func TestIntegrityControlInsideSequence(t *testing.T) {
	w := integrityWorld(t)
	m := attackAgent(t, w, nil, `printf '\e[?10\b49h'`, "touch DANGEROUS")
	m.approveVisible(`\$ touch DANGEROUS`)
	// The agent's sequence can reach the terminal just after the prompt
	// (its output and its request are two channels): give it a moment.
	a := m.format("#{alternate_on}")
	for deadline := time.Now().Add(2 * time.Second); a != "1" && time.Now().Before(deadline); a = m.format("#{alternate_on}") {
		time.Sleep(50 * time.Millisecond)
	}
	if a != "1" {
		t.Errorf("the agent was taken off its alternate screen (alternate_on %s)", a)
	}
}
