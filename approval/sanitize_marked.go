package approval

import "strings"

// Segment is a piece of sanitized text, marked or not.
type Segment struct {
	Text   string
	Marked bool
}

// SanitizeMarked is Sanitize of s cut into segments at the byte ranges
// marks ([start, end) pairs, in order, not overlapping): each character
// is shown exactly as Sanitize shows it within the whole of s (an
// escape decided by the character before it or by its token holds
// across a cut), so the segments joined are Sanitize(s).
func SanitizeMarked(s string, marks [][2]int) []Segment {
	rs := []rune(s)
	mixed := mixedTokens(rs)
	// The rune at each byte offset where one starts, as range and
	// []rune decode alike (an invalid byte is one U+FFFD).
	marked := make([]bool, len(rs))
	ri := 0
	for off := range s {
		for _, m := range marks {
			if off >= m[0] && off < m[1] {
				marked[ri] = true
				break
			}
		}
		ri++
	}
	var out []Segment
	var b strings.Builder
	cur := false
	for i := range rs {
		if i > 0 && marked[i] != cur {
			out = append(out, Segment{Text: b.String(), Marked: cur})
			b.Reset()
		}
		cur = marked[i]
		sanitizeRune(&b, rs, mixed, i)
	}
	if b.Len() > 0 {
		out = append(out, Segment{Text: b.String(), Marked: cur})
	}
	return out
}
