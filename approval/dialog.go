package approval

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
)

// Dialog is one prompt's conversation over a terminal-like pair: draw the
// request, read keys, handle v (view), n (deny with a note) and N (deny
// this and every request waiting behind it). It is shared by the terminal
// prompter and the supervisor, which differ in how they draw and where
// keys come from.
type Dialog struct {
	In    io.Reader
	Out   io.Writer
	Style Style
	// View shows the full request ([v]); nil: nothing to view with.
	View func(text string) error
	// Raw puts the terminal in raw mode while a key is read; nil when it
	// already is.
	Raw func() (restore func(), err error)
	// Draw draws the prompt, given as lines without line ends, on a
	// clean stage; nil writes it inline after a line break.
	Draw func(lines []string) error
	// Heading lines go above the request: who asked, "request 2 of 5".
	Heading []string
	// Waiting is how many requests wait behind this one, asked live;
	// nil or 0 means none, and N is then plain n.
	Waiting func() int
	// Confirm is how many letters of a random code the person must type
	// after y or s; anything else denies. 0: no code. A process that
	// can push bytes into the terminal's input but cannot read its
	// screen cannot type it.
	Confirm int
}

// keyLine is the key line of a prompt: k, and N when requests wait
// behind it.
func keyLine(k string, waiting int) string {
	if waiting > 0 {
		k = strings.TrimSuffix(k, " > ") + fmt.Sprintf("  [N] deny all %d > ", waiting+1)
	}
	return k
}

// Lines is the whole prompt as drawn: heading, body, key line.
func (d *Dialog) Lines(r *Request) []string {
	lines := append([]string{}, d.Heading...)
	lines = append(lines, renderLines(r, d.Style)...)
	if r.Always != "" {
		lines = append(lines, clip(AlwaysLine(r), d.Style.Cols))
	}
	return append(lines, keyLine(keysFor(r), d.waiting()))
}

// AlwaysLine says what [a] keeps: the exact pattern, and where.
func AlwaysLine(r *Request) string {
	return fmt.Sprintf("[a] keeps the rule %s for %s (that command, also with more words after it, runs without asking there)",
		Sanitize(oneLineOf(r.Always)), Sanitize(oneLineOf(r.Project)))
}

func (d *Dialog) waiting() int {
	if d.Waiting == nil {
		return 0
	}
	return d.Waiting()
}

func (d *Dialog) draw(r *Request) error {
	lines := d.Lines(r)
	if d.Draw != nil {
		return d.Draw(lines)
	}
	_, err := io.WriteString(d.Out, "\r\n"+strings.Join(lines, "\r\n"))
	return err
}

// Run draws the request and reads the answer.
func (d *Dialog) Run(ctx context.Context, r *Request) (Answer, error) {
	canRemember := r.Key != ""
	out := d.Out
	br := bufio.NewReader(d.In)
	redraw := true
	for {
		if redraw {
			if err := d.draw(r); err != nil {
				return Answer{}, err
			}
		}
		redraw = true
		key, err := readKey(br, d.Raw)
		if err != nil {
			return Answer{}, err
		}
		switch key {
		case 'y', 'Y', 's', 'S', 'a', 'A':
			session := key == 's' || key == 'S'
			always := key == 'a' || key == 'A'
			if session && !canRemember {
				io.WriteString(out, "s: not available for this request\r\n")
				redraw = d.Draw == nil
				continue
			}
			if always && r.Always == "" {
				io.WriteString(out, "a: not available for this request\r\n")
				redraw = d.Draw == nil
				continue
			}
			io.WriteString(out, string(key)+"\r\n")
			if d.Confirm > 0 {
				ok, err := d.confirm(br)
				if err != nil {
					return Answer{}, err
				}
				if !ok {
					return Answer{Note: "the approval code was not typed"}, nil
				}
			}
			return Answer{Approve: true, Session: session, Always: always}, nil
		case 'N':
			if n := d.waiting(); n > 0 {
				fmt.Fprintf(out, "N: deny this and the %d waiting\r\nnote for the agent (optional, Enter to skip): ", n)
				note, err := readLine(br, out, d.Raw)
				if err != nil {
					return Answer{}, err
				}
				return Answer{Note: strings.TrimSpace(note), DenyAll: true}, nil
			}
			fallthrough
		case 'n', 0x03, 0x04: // ^C and ^D deny
			io.WriteString(out, "n\r\nnote for the agent (optional, Enter to skip): ")
			note, err := readLine(br, out, d.Raw)
			if err != nil {
				return Answer{}, err
			}
			return Answer{Note: strings.TrimSpace(note)}, nil
		case 0x0c: // ^L: draw again (the terminal was given away and back)
			if d.Draw == nil {
				io.WriteString(out, "\r\n")
			}
		case 'v', 'V':
			io.WriteString(out, "v\r\n")
			if d.View != nil {
				if err := d.View(FullText(r)); err != nil {
					fmt.Fprintf(out, "view: %v\r\n", err)
				}
			}
		default:
			// Not an answer: keep the prompt as it is.
			if d.Draw != nil {
				redraw = false
			} else {
				io.WriteString(out, "\r\n")
			}
		}
		if err := ctx.Err(); err != nil {
			return Answer{}, err
		}
	}
}

// codeLetters are what approval codes are made of: no y, s, a, n or v,
// so a key pressed twice is never part of a code, and no letters that
// look alike.
const codeLetters = "cdefghjkmpqrtuwxz"

// confirm asks for a fresh random code and reads it back.
func (d *Dialog) confirm(br *bufio.Reader) (bool, error) {
	code := make([]byte, d.Confirm)
	var rnd [1]byte
	for i := range code {
		for {
			if _, err := rand.Read(rnd[:]); err != nil {
				return false, err
			}
			if int(rnd[0]) < 256/len(codeLetters)*len(codeLetters) {
				code[i] = codeLetters[int(rnd[0])%len(codeLetters)]
				break
			}
		}
	}
	fmt.Fprintf(d.Out, "to confirm, type %s (anything else denies) > ", d.Style.paint("1", string(code)))
	for i := range code {
		c, err := readKey(br, d.Raw)
		if err != nil {
			return false, err
		}
		if c != code[i] {
			io.WriteString(d.Out, "\r\n")
			return false, nil
		}
		io.WriteString(d.Out, string(c))
	}
	io.WriteString(d.Out, "\r\n")
	return true, nil
}
