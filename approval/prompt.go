package approval

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/term"
)

// Style is how a prompt is drawn.
type Style struct {
	Color bool
	// MaxLines truncates long content; 0 means 20.
	MaxLines int
	// Rows and Cols, when set, fit the prompt to a screen of that many
	// rows for its body and that many columns: wrapped lines count for
	// the rows they take, no line takes more than three rows, and what
	// does not fit is cut with a count of what was left out.
	Rows, Cols int
}

// ColorWanted reports whether colour should be used on a terminal, obeying
// NO_COLOR and TERM=dumb.
func ColorWanted(getenv func(string) string) bool {
	return getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

func (s Style) paint(code, text string) string {
	if !s.Color {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// maxRowsPerLine is how many screen rows one line of a fitted prompt may
// take before it is cut.
const maxRowsPerLine = 3

// Render draws the prompt body for a request: the working directory,
// each asking part with its rule and reason, what will run with a `$ `
// prefix, extra detail (a diff), and the sandbox summary. The asking
// parts come first, so that when the prompt is cut to fit, what asks is
// what stays; whatever is cut is counted, and [v] shows it all.
// Everything from the request passes through Sanitize.
func Render(r *Request, st Style) string {
	return strings.Join(renderLines(r, st), "\n") + "\n"
}

// renderLines is Render as lines, without line ends.
func renderLines(r *Request, st Style) []string {
	maxLines := st.MaxLines
	if maxLines <= 0 {
		maxLines = 20
	}
	fit := func(s string) string { return clip(s, st.Cols) }
	rows := func(s string) int { return screenRows(s, st.Cols) }

	bar := strings.Repeat("─", 60)
	head := []string{
		st.paint("1;33", "── guardrun: approval needed "+bar[:33]), // whole runes: "─" is 3 bytes
		fit(st.paint("2", "in") + " " + Sanitize(oneLineOf(r.Cwd))),
	}
	var tail []string
	if r.Sandbox != "" {
		tail = append(tail, fit(st.paint("2", "sandbox:")+" "+Sanitize(oneLineOf(r.Sandbox))))
	}

	// The asking parts: text (with rule) and reason.
	asking := r.Decision.Asking()
	type part struct{ text, reason string }
	parts := make([]part, len(asking))
	for i, p := range asking {
		rule := ""
		if p.Rule != "" {
			rule = fmt.Sprintf(" [rule %q]", p.Rule)
		}
		parts[i] = part{
			text:   fit("  • " + Sanitize(oneLineOf(p.Text)) + Sanitize(rule)),
			reason: fit("    " + Sanitize(oneLineOf(p.Reason))),
		}
	}
	script := strings.Split(strings.TrimRight(Sanitize(r.Display), "\n"), "\n")
	for i, l := range script {
		prefix := "$ "
		if i > 0 {
			prefix = "  "
		}
		script[i] = fit(st.paint("1", prefix) + l)
	}
	var detail []string
	if r.Detail != "" {
		// Detail is rendered (and sanitized) by its producer.
		for _, l := range strings.Split(strings.TrimRight(r.Detail, "\n"), "\n") {
			detail = append(detail, fit(l))
		}
	}

	budget := -1 // rows left; negative: no screen to fit
	if st.Rows > 0 {
		budget = st.Rows
		for _, l := range append(append([]string{}, head...), tail...) {
			budget -= rows(l)
		}
	}
	take := func(l string) bool {
		if budget < 0 && st.Rows <= 0 {
			return true
		}
		if rows(l) > budget {
			return false
		}
		budget -= rows(l)
		return true
	}
	reserve := func(n int) { // rows kept for a later "… more" line
		if st.Rows > 0 {
			budget -= n
		}
	}
	unreserve := func(n int) {
		if st.Rows > 0 {
			budget += n
		}
	}

	out := append([]string{}, head...)
	// The script and the detail keep a row each for at least their
	// "… more" line.
	later := 0
	for _, sec := range [][]string{script, detail} {
		if len(sec) > 0 {
			later++
		}
	}
	if len(parts) > 0 {
		out = append(out, st.paint("2", "needs approval:"))
		if st.Rows > 0 {
			budget--
		}
		reserve(1 + later)
		// Every part's text first; reasons only when all texts fit.
		shown := 0
		for _, p := range parts {
			if shown == maxLines || !take(p.text) {
				break
			}
			shown++
		}
		withReasons := shown == len(parts)
		if withReasons {
			for _, p := range parts {
				if !take(p.reason) {
					withReasons = false
					break
				}
			}
		}
		unreserve(1 + later)
		for i := 0; i < shown; i++ {
			out = append(out, parts[i].text)
			if withReasons {
				out = append(out, parts[i].reason)
			}
		}
		if shown < len(parts) {
			out = append(out, fmt.Sprintf("  … %d more parts that need approval ([v] to view all)", len(parts)-shown))
			budget--
		}
	}
	section := func(lines []string, what string) {
		if len(lines) == 0 {
			return
		}
		reserve(1)
		shown := 0
		for _, l := range lines {
			if shown == maxLines || !take(l) {
				break
			}
			shown++
		}
		unreserve(1)
		out = append(out, lines[:shown]...)
		if shown < len(lines) {
			out = append(out, fmt.Sprintf("  … %d more %s ([v] to view all)", len(lines)-shown, what))
			budget--
		}
	}
	section(script, "lines")
	section(detail, "lines")
	return append(out, tail...)
}

// oneLineOf puts a line break of a one-line field on view.
func oneLineOf(s string) string { return strings.ReplaceAll(s, "\n", " ⏎ ") }

// clip cuts a line that would take more than maxRowsPerLine rows of cols
// columns, saying how much was cut. cols 0 means no limit.
func clip(s string, cols int) string {
	if cols <= 0 {
		return s
	}
	limit := cols * maxRowsPerLine
	if displayWidth(s) <= limit {
		return s
	}
	runes := []rune(s)
	marker := func(n int) string { return fmt.Sprintf(" … (%d more characters, [v] to view all)", n) }
	keep := limit - len(marker(len(runes)))
	if keep < 1 {
		keep = 1
	}
	// Cut by width, never inside an escape sequence of our own painting.
	w, i := 0, 0
	for i < len(runes) && w < keep {
		if runes[i] == 0x1b {
			for i < len(runes) && runes[i] != 'm' {
				i++
			}
			i++
			continue
		}
		w += RuneWidth(runes[i])
		i++
	}
	return string(runes[:i]) + "\x1b[0m" + marker(len(runes)-i)
}

// screenRows is how many rows s takes on a screen cols wide.
func screenRows(s string, cols int) int {
	if cols <= 0 {
		return 1
	}
	w := displayWidth(s)
	if w == 0 {
		return 1
	}
	return (w + cols - 1) / cols
}

// displayWidth is how many columns s takes, not counting SGR sequences.
func displayWidth(s string) int {
	w := 0
	esc := false
	for _, r := range s {
		switch {
		case esc:
			if r == 'm' {
				esc = false
			}
		case r == 0x1b:
			esc = true
		default:
			w += RuneWidth(r)
		}
	}
	return w
}

// RuneWidth is 2 for East Asian wide characters, else 1 (Sanitize has
// already escaped what takes no room).
func RuneWidth(r rune) int {
	switch {
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf && r != 0x303f,
		r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1faff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

// keysFor is the key line of a prompt for r.
func keysFor(r *Request) string {
	switch {
	case r.Always != "" && r.Key != "":
		return "[y] approve once  [s] approve for session  [a] always in this project  [n] deny  [v] view > "
	case r.Always != "":
		return "[y] approve once  [a] always in this project  [n] deny  [v] view > "
	}
	return Keys(r.Key != "")
}

// Keys is the key line of a prompt.
func Keys(canRemember bool) string {
	if canRemember {
		return "[y] approve once  [s] approve for session  [n] deny  [v] view > "
	}
	return "[y] approve once  [n] deny  [v] view  (no session approval: parts are only known at run time) > "
}

// DefaultSettle is how long the keyboard must have been quiet, after a
// prompt is drawn, before a key answers it.
const DefaultSettle = 300 * time.Millisecond

// TTYPrompter asks on a terminal: /dev/tty, not the command's stdin, so a
// piped agent cannot answer its own prompt.
//
// Without a supervisor the agent shares this terminal, so the prompt
// protects itself as far as one process can: it is drawn on the
// alternate screen with the terminal's state reset; guardrun becomes the
// terminal's foreground process group with TOSTOP set, so the agent is
// stopped if it writes or reads meanwhile; keys typed before the prompt
// was drawn, or until the keyboard has been quiet for Settle, are
// discarded; and where a program can push bytes into the terminal's input
// (TIOCSTI), approving takes a random code shown only on screen.
type TTYPrompter struct {
	TTY   *os.File
	Style Style
	// Pager views the full request; empty means $PAGER, else less.
	Pager string
	// Settle is the quiet time before keys count; 0 means DefaultSettle.
	Settle time.Duration
	// Confirm is the length of the approval code (see Dialog.Confirm);
	// 0: none.
	Confirm int
}

// OpenTTY opens the controlling terminal when it is a person's
// (TerminalOwnerOf); otherwise it returns ErrNoPerson, or a
// *NoPersonError saying whose the terminal is and how to be asked.
func OpenTTY() (*os.File, error) {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, ErrNoPerson
	}
	if !term.IsTerminal(int(f.Fd())) {
		f.Close()
		return nil, ErrNoPerson
	}
	if o := TerminalOwnerOf(f); !o.Person {
		f.Close()
		return nil, &NoPersonError{Why: o.Why, Hint: superviseHint}
	}
	return f, nil
}

// Prompt draws the request and reads the answer.
func (p *TTYPrompter) Prompt(ctx context.Context, r *Request) (Answer, error) {
	fd := int(p.TTY.Fd())
	release := takeForeground(p.TTY)
	defer release()
	old, err := term.MakeRaw(fd)
	if err != nil {
		return Answer{}, err
	}
	defer term.Restore(fd, old)
	io.WriteString(p.TTY, ttyStageOpen)
	defer io.WriteString(p.TTY, ttyStageClose)

	st := p.Style
	var heading []string
	if p.Confirm > 0 {
		heading = append(heading, st.paint("2", "(programs can type into this terminal: approving takes a code shown here)"))
	}
	if cols, rows, err := term.GetSize(fd); err == nil && rows > 3 && cols > 10 {
		st.Rows, st.Cols = rows-len(heading)-3, cols
	}
	settle := p.Settle
	if settle <= 0 {
		settle = DefaultSettle
	}
	drawn := false
	d := &Dialog{
		In: p.TTY, Out: p.TTY, Style: st, Heading: heading, Confirm: p.Confirm,
		View: func(text string) error {
			err := p.view(text)
			// The pager may leave the terminal as it likes.
			term.MakeRaw(fd)
			io.WriteString(p.TTY, StageReset)
			return err
		},
		Draw: func(lines []string) error {
			var b strings.Builder
			b.WriteString("\x1b[H\x1b[2J")
			for i, l := range lines {
				b.WriteString("\x1b[2K" + l)
				if i < len(lines)-1 {
					b.WriteString("\r\n")
				}
			}
			_, err := io.WriteString(p.TTY, b.String())
			if !drawn {
				drawn = true
				waitQuiet(p.TTY, settle)
			}
			return err
		},
	}
	return d.Run(ctx, r)
}

func (p *TTYPrompter) view(text string) error {
	f, err := os.CreateTemp("", "guardrun-view-*.txt")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	f.Close()
	pager := p.Pager
	if pager == "" {
		pager = os.Getenv("PAGER")
	}
	if pager == "" {
		pager = "less"
	}
	// The pager is the person's own program, run on their terminal
	// outside the sandbox, like git runs it.
	cmd := exec.Command("/bin/sh", "-c", pager+` "$1"`, "pager", f.Name())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.TTY, p.TTY, p.TTY
	return cmd.Run()
}

// FullText is what [v] shows: the whole request, unabridged.
func FullText(r *Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# in %s\n", Sanitize(r.Cwd))
	b.WriteString(Sanitize(r.Display))
	b.WriteString("\n")
	for _, p := range r.Decision.Parts {
		fmt.Fprintf(&b, "# %s %s: %s\n", p.Decision, Sanitize(p.Text), Sanitize(p.Reason))
	}
	if r.Detail != "" {
		b.WriteString("\n")
		b.WriteString(stripANSI(r.Detail))
		b.WriteString("\n")
	}
	return b.String()
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func readKey(br *bufio.Reader, raw func() (func(), error)) (byte, error) {
	if raw != nil {
		restore, err := raw()
		if err == nil {
			defer restore()
		}
	}
	for {
		c, err := br.ReadByte()
		if err != nil {
			if err == io.EOF {
				return 0x04, nil
			}
			return 0, err
		}
		if c == '\r' || c == '\n' {
			continue
		}
		return c, nil
	}
}

// readLine reads a note in raw mode with simple editing (backspace), so
// the same code works on a supervisor's pty.
func readLine(br *bufio.Reader, out io.Writer, raw func() (func(), error)) (string, error) {
	if raw != nil {
		restore, err := raw()
		if err == nil {
			defer restore()
		}
	}
	var line []rune
	for {
		r, _, err := br.ReadRune()
		if err != nil {
			if err == io.EOF {
				return string(line), nil
			}
			return "", err
		}
		switch {
		case r == '\r' || r == '\n':
			io.WriteString(out, "\r\n")
			return string(line), nil
		case r == 0x7f || r == 0x08:
			if len(line) > 0 {
				line = line[:len(line)-1]
				io.WriteString(out, "\b \b")
			}
		case r == 0x03:
			io.WriteString(out, "\r\n")
			return "", nil
		case r == 0x15: // ^U
			for range line {
				io.WriteString(out, "\b \b")
			}
			line = line[:0]
		case r < 0x20:
		default:
			line = append(line, r)
			io.WriteString(out, string(r))
		}
	}
}
