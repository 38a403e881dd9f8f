package approval

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/term"
)

// Style is how a prompt is drawn.
type Style struct {
	Color bool
	// MaxLines truncates long content; 0 means 20.
	MaxLines int
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

// Render draws the prompt body for a request: what will run with a `$ `
// prefix and the working directory, each asking part with its rule and
// reason, extra detail (a diff), and the sandbox summary. Long content is
// truncated with a line count. Everything from the request passes through
// Sanitize.
func Render(r *Request, st Style) string {
	maxLines := st.MaxLines
	if maxLines <= 0 {
		maxLines = 20
	}
	var b strings.Builder
	bar := strings.Repeat("─", 60)
	fmt.Fprintf(&b, "%s\n", st.paint("1;33", "── guardrun: approval needed "+bar[:33])) // whole runes: "─" is 3 bytes
	fmt.Fprintf(&b, "%s %s\n", st.paint("2", "in"), Sanitize(r.Cwd))
	truncated := false
	lines := strings.Split(strings.TrimRight(Sanitize(r.Display), "\n"), "\n")
	for i, l := range lines {
		if i == maxLines {
			fmt.Fprintf(&b, "  … %d more lines ([v] to view all)\n", len(lines)-maxLines)
			truncated = true
			break
		}
		prefix := "$ "
		if i > 0 {
			prefix = "  "
		}
		fmt.Fprintf(&b, "%s%s\n", st.paint("1", prefix), l)
	}
	asking := r.Decision.Asking()
	if len(asking) > 0 {
		fmt.Fprintf(&b, "%s\n", st.paint("2", "needs approval:"))
	}
	for i, p := range asking {
		if i == maxLines {
			fmt.Fprintf(&b, "  … %d more parts ([v] to view all)\n", len(asking)-maxLines)
			truncated = true
			break
		}
		rule := ""
		if p.Rule != "" {
			rule = fmt.Sprintf(" [rule %q]", p.Rule)
		}
		fmt.Fprintf(&b, "  • %s%s\n    %s\n", Sanitize(p.Text), Sanitize(rule), Sanitize(p.Reason))
	}
	if r.Detail != "" {
		dl := strings.Split(strings.TrimRight(r.Detail, "\n"), "\n")
		for i, l := range dl {
			if i == maxLines {
				fmt.Fprintf(&b, "  … %d more lines ([v] to view all)\n", len(dl)-maxLines)
				truncated = true
				break
			}
			fmt.Fprintf(&b, "%s\n", l) // detail is rendered (and sanitized) by its producer
		}
	}
	if r.Sandbox != "" {
		fmt.Fprintf(&b, "%s %s\n", st.paint("2", "sandbox:"), Sanitize(r.Sandbox))
	}
	_ = truncated
	return b.String()
}

// Keys is the key line of a prompt.
func Keys(canRemember bool) string {
	if canRemember {
		return "[y] approve once  [s] approve for session  [n] deny  [v] view > "
	}
	return "[y] approve once  [n] deny  [v] view  (no session approval: parts are only known at run time) > "
}

// TTYPrompter asks on a terminal: /dev/tty, not the command's stdin, so a
// piped agent cannot answer its own prompt.
type TTYPrompter struct {
	TTY   *os.File
	Style Style
	// Pager views the full request; empty means $PAGER, else less.
	Pager string
}

// OpenTTY opens the controlling terminal, or returns ErrNoPerson.
func OpenTTY() (*os.File, error) {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, ErrNoPerson
	}
	if !term.IsTerminal(int(f.Fd())) {
		f.Close()
		return nil, ErrNoPerson
	}
	return f, nil
}

// Prompt draws the request and reads one key.
func (p *TTYPrompter) Prompt(ctx context.Context, r *Request) (Answer, error) {
	return Converse(ctx, p.TTY, p.TTY, r, p.Style, func(text string) error {
		return p.view(text)
	}, func() (restore func(), err error) {
		fd := int(p.TTY.Fd())
		old, err := term.MakeRaw(fd)
		if err != nil {
			return nil, err
		}
		return func() { term.Restore(fd, old) }, nil
	})
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

// Converse runs the prompt dialogue over any terminal-like pair: draw,
// read a key in raw mode, handle v (view) and n (note). It is shared by
// the terminal prompter and the supervisor.
func Converse(ctx context.Context, in io.Reader, out io.Writer, r *Request, st Style,
	view func(string) error, raw func() (func(), error)) (Answer, error) {
	canRemember := r.Key != ""
	body := strings.ReplaceAll(Render(r, st), "\n", "\r\n")
	br := bufio.NewReader(in)
	for {
		if _, err := io.WriteString(out, "\r\n"+body+Keys(canRemember)); err != nil {
			return Answer{}, err
		}
		key, err := readKey(br, raw)
		if err != nil {
			return Answer{}, err
		}
		switch key {
		case 'y', 'Y':
			io.WriteString(out, "y\r\n")
			return Answer{Approve: true}, nil
		case 's', 'S':
			if !canRemember {
				io.WriteString(out, "s: not available for this request\r\n")
				continue
			}
			io.WriteString(out, "s\r\n")
			return Answer{Approve: true, Session: true}, nil
		case 'n', 'N', 0x03, 0x04: // ^C and ^D deny
			io.WriteString(out, "n\r\nnote for the agent (optional, Enter to skip): ")
			note, err := readLine(br, out, raw)
			if err != nil {
				return Answer{}, err
			}
			return Answer{Note: strings.TrimSpace(note)}, nil
		case 'v', 'V':
			io.WriteString(out, "v\r\n")
			if view != nil {
				if err := view(FullText(r)); err != nil {
					fmt.Fprintf(out, "view: %v\r\n", err)
				}
			}
		default:
			io.WriteString(out, "\r\n")
		}
		if err := ctx.Err(); err != nil {
			return Answer{}, err
		}
	}
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
