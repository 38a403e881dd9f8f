package supervisor

// keyFilter drops terminal escape sequences from the keys typed at a
// prompt. A full-screen agent may have turned on mouse reporting,
// bracketed paste or focus events; what the terminal then sends must not
// answer a prompt: an X10 mouse report carries its coordinates as raw
// bytes (a click in column 89 is a 'y'), and a paste is not a keystroke.
// Alt+key and a lone Esc followed by a key are dropped too: when in doubt,
// the person presses the key again.
//
// Mouse reports come in four encodings: X10 (ESC [ M and three bytes),
// UTF-8 (mode 1005: the same three values as UTF-8 characters, two bytes
// each from 96 on), SGR (mode 1006: ESC [ < b ; x ; y M) and urxvt (mode
// 1015: ESC [ b ; x ; y M). The last two are control sequences with
// parameters and are dropped as such; the first two differ only in how
// many bytes a value takes, which the filter learns from the mode the
// agent left the terminal in (utf8Mouse).
type keyFilter struct {
	// utf8Mouse is set while the terminal reports the mouse in UTF-8
	// (mode 1005).
	utf8Mouse bool

	state int
	skip  int    // values of an X10 mouse report still to drop
	cont  int    // continuation bytes of the current UTF-8 value
	csi   []byte // parameter bytes of the control sequence being read
	paste bool   // inside a bracketed paste
}

const (
	kfText      = iota
	kfEsc       // after ESC
	kfCSI       // ESC [ ...
	kfSS3       // ESC O x
	kfMouse     // ESC [ M b x y
	kfString    // OSC, DCS, APC, PM, SOS: up to BEL or ESC \
	kfStringEsc // ESC inside a string
)

// filter appends the plain keys of p to out.
func (f *keyFilter) filter(p, out []byte) []byte {
	for _, c := range p {
		switch f.state {
		case kfText:
			if c == 0x1b {
				f.state = kfEsc
				continue
			}
			if !f.paste {
				out = append(out, c)
			}
		case kfEsc:
			switch c {
			case '[':
				f.state, f.csi = kfCSI, f.csi[:0]
			case 'O':
				f.state = kfSS3
			case ']', 'P', '_', '^', 'X':
				f.state = kfString
			default:
				f.state = kfText
			}
		case kfCSI:
			switch {
			case c >= 0x40 && c <= 0x7e: // final byte
				f.state = kfText
				switch {
				case c == 'M' && len(f.csi) == 0:
					f.state, f.skip, f.cont = kfMouse, 3, 0
				case c == '~' && string(f.csi) == "200":
					f.paste = true
				case c == '~' && string(f.csi) == "201":
					f.paste = false
				}
			case c >= 0x20 && c <= 0x3f:
				if len(f.csi) < 16 {
					f.csi = append(f.csi, c)
				}
			default:
				f.state = kfText // malformed: dropped
			}
		case kfSS3:
			f.state = kfText
		case kfMouse:
			switch {
			case f.cont > 0:
				f.cont--
			case f.utf8Mouse && c >= 0xe0:
				f.cont = 2
			case f.utf8Mouse && c >= 0xc0:
				f.cont = 1
			}
			if f.cont == 0 {
				if f.skip--; f.skip == 0 {
					f.state = kfText
				}
			}
		case kfString:
			switch c {
			case 0x07:
				f.state = kfText
			case 0x1b:
				f.state = kfStringEsc
			}
		case kfStringEsc:
			f.state = kfText
		}
	}
	return out
}
