package approval

import (
	"fmt"
	"strings"
	"unicode"
)

// Sanitize makes text safe to show a person who must judge it: control
// characters (carriage return, escape sequences, backspace...) and
// invisible or direction-changing Unicode (bidi overrides, zero-width
// characters) are shown as visible escapes, so a command cannot disguise
// what it does. Newlines and tabs are kept.
func Sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == unicode.ReplacementChar:
			b.WriteString(`\ufffd`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		case isInvisible(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isInvisible covers bidi controls (the "Trojan Source" set), zero-width
// characters and other format characters a terminal would not show.
func isInvisible(r rune) bool {
	switch {
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f,
		r == 0x061c, r >= 0x200b && r <= 0x200d, r == 0x2060, r == 0xfeff:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}
