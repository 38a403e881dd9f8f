package supervisor

import (
	"strconv"
	"strings"
	"sync"
)

// vtState follows the agent's output to know the terminal state it left:
// what a prompt must undo to be readable, what the person's keys will
// look like (mouse encoding), and what to put back after the prompt so a
// well-behaved agent finds its terminal as it left it. It reads only what
// reached the screen, so held output counts once it is released.
type vtState struct {
	alt     bool // alternate screen (47, 1047, 1049)
	noWrap  bool // autowrap off (?7l)
	hidden  bool // cursor hidden (?25l)
	insert  bool // insert mode (4h)
	origin  bool // origin mode (?6h)
	reverse bool // reverse video screen (?5h)
	region  string
	// modes are the private input modes on: mouse reporting (9, 1000,
	// 1002, 1003), encodings (1005, 1006, 1015), focus (1004), bracketed
	// paste (2004).
	modes    map[int]bool
	title    string            // payload of the last OSC 0 or 2
	titleSet bool              // the agent set a title
	osc      map[string]string // last OSC 10, 11, 12 (colours)
	palette  []string          // OSC 4 payloads since the last OSC 104

	st  int
	buf []byte
}

// inputModes are the private modes that change what the keyboard sends.
var inputModes = []int{9, 1000, 1002, 1003, 1004, 1005, 1006, 1015, 2004}

const (
	vtText = iota
	vtEsc
	vtCSI
	vtOSC
	vtOSCEsc
	vtSkip      // the byte after ESC ( and friends
	vtDCSEnter  // DCS parameters, up to its final byte
	vtDCS       // DCS payload: an ESC not followed by \ stays in it (tmux)
	vtDCSEsc    // ESC in a DCS payload
	vtString    // SOS, PM, APC payload, ended by ESC
	vtStringEsc // ESC in one of those
)

// maxPalette bounds the palette changes kept to put back after a prompt.
const maxPalette = 256

// maxSeq bounds a sequence kept for parsing; longer ones are not tracked.
const maxSeq = 512

func (v *vtState) feed(p []byte) {
	for _, c := range p {
		switch v.st {
		case vtText:
			if c == 0x1b {
				v.st = vtEsc
			}
		case vtEsc:
			switch c {
			case '[':
				v.st, v.buf = vtCSI, v.buf[:0]
			case ']':
				v.st, v.buf = vtOSC, v.buf[:0]
			case '(', ')', '*', '+', '-', '.', '/', '#', '%', ' ':
				v.st = vtSkip
			case 'P':
				v.st = vtDCSEnter
			case 'X', '^', '_':
				v.st = vtString
			case 'c': // RIS: full reset
				*v = vtState{st: vtText}
			default:
				v.st = vtText
			}
		case vtSkip:
			v.st = vtText
		// What a string carries is not the terminal's state: a mode
		// change inside a DCS is its payload, not a mode change.
		case vtDCSEnter:
			switch {
			case c >= 0x40 && c <= 0x7e:
				v.st = vtDCS
			case c == 0x1b:
				v.st = vtEsc
			case c == 0x18 || c == 0x1a:
				v.st = vtText
			}
		case vtDCS:
			if c == 0x1b {
				v.st = vtDCSEsc
			}
		case vtDCSEsc:
			if c == '\\' {
				v.st = vtText
			} else {
				v.st = vtDCS
			}
		case vtString:
			if c == 0x1b {
				v.st = vtStringEsc
			}
		case vtStringEsc:
			v.st = vtText
			if c != '\\' {
				v.st = vtEsc
				v.feed([]byte{c})
			}
		case vtCSI:
			switch {
			case c >= 0x40 && c <= 0x7e:
				v.csi(string(v.buf), c)
				v.st = vtText
			case c == 0x1b:
				v.st = vtEsc
			case c == 0x18 || c == 0x1a: // CAN, SUB: the sequence is dropped
				v.st = vtText
			case c < 0x20: // other controls act, and the sequence goes on
			case len(v.buf) < maxSeq:
				v.buf = append(v.buf, c)
			}
		case vtOSC:
			switch c {
			case 0x07:
				v.oscDone()
			case 0x1b:
				v.st = vtOSCEsc
			default:
				if len(v.buf) < maxSeq {
					v.buf = append(v.buf, c)
				}
			}
		case vtOSCEsc:
			v.oscDone()
			if c != '\\' {
				v.st = vtEsc
				v.feed([]byte{c})
			}
		}
	}
}

func (v *vtState) csi(params string, final byte) {
	switch final {
	case 'h', 'l':
		on := final == 'h'
		if private, ok := strings.CutPrefix(params, "?"); ok {
			for _, f := range strings.Split(private, ";") {
				n, err := strconv.Atoi(f)
				if err != nil {
					continue
				}
				switch n {
				case 47, 1047, 1049:
					v.alt = on
				case 7:
					v.noWrap = !on
				case 25:
					v.hidden = !on
				case 6:
					v.origin = on
				case 5:
					v.reverse = on
				default:
					for _, m := range inputModes {
						if m == n {
							if v.modes == nil {
								v.modes = map[int]bool{}
							}
							v.modes[n] = on
						}
					}
				}
			}
			return
		}
		for _, f := range strings.Split(params, ";") {
			if f == "4" {
				v.insert = on
			}
		}
	case 'r':
		if !strings.ContainsAny(params, "?>") {
			v.region = params
		}
	case 'p':
		if params == "!" { // DECSTR soft reset
			v.insert, v.origin, v.region, v.hidden = false, false, "", false
		}
	}
}

func (v *vtState) oscDone() {
	v.st = vtText
	s := string(v.buf)
	num, rest, _ := strings.Cut(s, ";")
	switch num {
	case "0", "2":
		v.title, v.titleSet = rest, true
	case "10", "11", "12":
		if v.osc == nil {
			v.osc = map[string]string{}
		}
		v.osc[num] = s
	case "110", "111", "112":
		delete(v.osc, num[1:])
	case "4":
		if len(v.palette) < maxPalette {
			v.palette = append(v.palette, s)
		}
	case "104":
		v.palette = nil
	}
}

// utf8Mouse reports whether mouse reports come UTF-8 encoded: mode 1005
// on, and neither SGR nor urxvt encoding, which take precedence.
func (v *vtState) utf8Mouse() bool {
	return v.modes[1005] && !v.modes[1006] && !v.modes[1015]
}

// tabStops (built on first use) clears the tab stops and sets one every 8 columns, as a
// terminal starts, up to column 512 (a column past the screen's edge
// lands on the last one): an agent that cleared or moved them would
// otherwise push a tab in the request off to the edge.
var tabStops = sync.OnceValue(func() string {
	var b strings.Builder
	b.WriteString("\x1b[3g")
	for c := 9; c <= 512; c += 8 {
		b.WriteString("\x1b[" + strconv.Itoa(c) + "G\x1bH")
	}
	return b.String()
})

// stageOpen is what a prompt writes before drawing: away from the
// agent's screen (the alternate screen, unless the agent is there
// already), every mode and attribute the agent can leave behind reset,
// input reports off, a title of its own, and a clear screen. Each line
// of the prompt is then erased before it is written.
func (v *vtState) stageOpen() string {
	var b strings.Builder
	// A string (DCS, OSC, APC, PM, SOS) the agent left open would take
	// every byte of the prompt as its payload: ST ends it first, twice,
	// as a DCS left just after an ESC takes the first ESC as payload.
	b.WriteString("\x1b\\\x1b\\")
	b.WriteString("\x1b[?2026l") // end a synchronized update the agent left open
	if !v.alt {
		b.WriteString("\x1b[?1049h")
	}
	b.WriteString("\x1b[r\x1b[?6l\x1b[?7h\x1b[4l\x1b[20l\x1b[?5l\x1b[?69l") // margins, origin, wrap, insert, newline, reverse video
	b.WriteString("\x1b(B\x1b)B\x1b*B\x1b+B\x0f")                           // every charset ASCII, shifted in
	b.WriteString("\x1b[0m\x1b]110\x07\x1b]111\x07\x1b]112\x07\x1b[?25h")   // attributes, colours, cursor
	b.WriteString("\x1b]104\x07\x1b]8;;\x07")                               // the palette (OSC 4), a hyperlink left open
	for _, m := range inputModes {
		b.WriteString("\x1b[?" + strconv.Itoa(m) + "l")
	}
	b.WriteString("\x1b[22;0t") // the title as it was, onto the terminal's title stack
	b.WriteString("\x1b]0;guardrun: approval needed\x07")
	b.WriteString(tabStops())
	b.WriteString("\x1b[H\x1b[2J")
	return b.String()
}

// stageClose puts back what the agent had: its screen (leaving the
// alternate screen restores it and the cursor; an agent that was on the
// alternate screen itself is cleared and repaints on the resize nudge),
// then its modes, input reports, colours and title.
func (v *vtState) stageClose() string {
	var b strings.Builder
	b.WriteString("\x1b[H\x1b[2J")
	if !v.alt {
		b.WriteString("\x1b[?1049l")
	}
	if v.region != "" {
		b.WriteString("\x1b7\x1b[" + v.region + "r\x1b8")
	}
	flags := []struct {
		on  bool
		seq string
	}{
		{v.origin, "\x1b[?6h"}, {v.noWrap, "\x1b[?7l"}, {v.insert, "\x1b[4h"},
		{v.reverse, "\x1b[?5h"}, {v.hidden, "\x1b[?25l"},
	}
	for _, f := range flags {
		if f.on {
			b.WriteString(f.seq)
		}
	}
	for _, m := range inputModes {
		if v.modes[m] {
			b.WriteString("\x1b[?" + strconv.Itoa(m) + "h")
		}
	}
	for _, p := range v.palette {
		b.WriteString("\x1b]" + p + "\x07")
	}
	for _, k := range []string{"10", "11", "12"} {
		if s, ok := v.osc[k]; ok {
			b.WriteString("\x1b]" + s + "\x07")
		}
	}
	// The title: the agent's own where the terminal keeps no title
	// stack, then the stack's, which is the same where it does.
	if v.titleSet {
		b.WriteString("\x1b]0;" + v.title + "\x07")
	}
	b.WriteString("\x1b[23;0t")
	return b.String()
}
