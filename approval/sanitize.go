package approval

import (
	"fmt"
	"strings"
	"unicode"
)

// Sanitize makes text safe to show a person who must judge it: every
// character that a terminal would not show as itself is shown as a
// visible escape, so a command cannot disguise what it does. That is
// control characters (carriage return, escape sequences, backspace...),
// format and direction-changing characters (bidi overrides, zero-width
// characters, the rest of Unicode's Default_Ignorable_Code_Point set,
// which includes the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0 and
// the variation selectors), line and paragraph separators (Zl, Zp),
// spaces other than U+0020, private-use and unassigned code points, and a
// combining mark written onto an ASCII character (a strike-through
// U+0336 on `rm` would otherwise read as a decoration), and a Cyrillic,
// Greek, Armenian or Cherokee letter beside ASCII word or path characters
// (a look-alike of a Latin letter: see lookalike). Newlines and tabs are
// kept.
//
// Escapes are \xNN for C0 controls and DEL, \uNNNN in the Basic
// Multilingual Plane and \UNNNNNNNN above it.
func Sanitize(s string) string {
	var b strings.Builder
	rs := []rune(s) // invalid UTF-8 decodes to U+FFFD, as with range
	mixed := mixedTokens(rs)
	for i := range rs {
		sanitizeRune(&b, rs, mixed, i)
	}
	return b.String()
}

// sanitizeRune writes rs[i] as Sanitize shows it, in its context (the
// rune before it, the token it is in).
func sanitizeRune(b *strings.Builder, rs []rune, mixed []bool, i int) {
	r := rs[i]
	prev := rune(-1)
	if i > 0 {
		prev = rs[i-1]
	}
	switch {
	case r == '\n' || r == '\t':
		b.WriteRune(r)
	case r < 0x20 || r == 0x7f:
		fmt.Fprintf(b, `\x%02x`, r)
	case escaped(r, prev), mixed[i] && lookalikeScript(r):
		writeEscape(b, r)
	default:
		b.WriteRune(r)
	}
}

// lookalikeScript reports a letter of a script with letters that look
// like Latin ones: Cyrillic, Greek, Armenian, Cherokee.
func lookalikeScript(r rune) bool {
	return unicode.IsLetter(r) && unicode.In(r, unicode.Cyrillic, unicode.Greek, unicode.Armenian, unicode.Cherokee)
}

// mixedTokens marks the runes of every token (a run between spaces and
// quotes) that holds both ASCII letters, digits or path characters
// (. / : @ - _) and a lookalikeScript letter: the Cyrillic "і" in
// "gіthub.com" or the "са" of "саt" read as Latin, so those letters are
// escaped. Words wholly in such a script are shown as they are.
func mixedTokens(rs []rune) []bool {
	out := make([]bool, len(rs))
	start := 0
	for i := 0; i <= len(rs); i++ {
		if i < len(rs) && !unicode.IsSpace(rs[i]) && !strings.ContainsRune("'\"`", rs[i]) {
			continue
		}
		ascii, other := false, false
		for _, r := range rs[start:i] {
			ascii = ascii || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("./:@-_", r)
			other = other || lookalikeScript(r)
		}
		for j := start; j < i && ascii && other; j++ {
			out[j] = true
		}
		start = i + 1
	}
	return out
}

func writeEscape(b *strings.Builder, r rune) {
	if r > 0xffff {
		fmt.Fprintf(b, `\U%08x`, r)
		return
	}
	fmt.Fprintf(b, `\u%04x`, r)
}

// escaped reports whether r, following prev, must be shown as an escape.
func escaped(r, prev rune) bool {
	switch {
	case r == ' ':
		return false
	case r == unicode.ReplacementChar:
		return true // invalid UTF-8 decodes to it: the bytes were something else
	case r >= 0x80 && r < 0xa0: // C1 controls
		return true
	case !unicode.IsGraphic(r):
		// Cc, Cf (bidi, zero-width...), Co, Cs, Cn, Zl, Zp.
		return true
	case unicode.Is(unicode.Zs, r):
		return true // a space that is not U+0020
	case isInvisible(r):
		return true
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc):
		// A mark on ASCII text changes how the text reads (a
		// strike-through, an underline, a dot) without being text.
		return prev >= 0 && prev < 0x80
	}
	return false
}

// isInvisible covers what renders as nothing (or as blank) although it is
// graphic by category: Default_Ignorable_Code_Point (Other_Default_Ignorable
// holds the Hangul fillers and U+034F; the variation selectors are their own
// property) and the braille blank.
func isInvisible(r rune) bool {
	switch {
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f,
		r == 0x061c, r >= 0x200b && r <= 0x200d, r == 0x2060, r == 0xfeff,
		r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0, r == 0x2800,
		r == 0x034f, r == 0x17b4, r == 0x17b5, r >= 0x180b && r <= 0x180f:
		return true
	}
	return unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// OneLine is s as one line of a message: sanitized, its newlines shown
// as ⏎, trimmed.
func OneLine(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(Sanitize(s), "\n", " ⏎ "))
}

// Plural is one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
