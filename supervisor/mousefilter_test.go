package supervisor

import (
	"fmt"
	"testing"
	"unicode/utf8"
)

// mouseReport encodes a report of button b at column x, row y (1-based) as
// a terminal does in each mouse encoding.
func mouseReport(enc string, b, x, y int) string {
	switch enc {
	case "x10":
		v := func(n int) byte {
			if n+32 > 255 {
				return 0 // xterm cannot say more; it sends a NUL
			}
			return byte(n + 32)
		}
		return string([]byte{0x1b, '[', 'M', v(b), v(x), v(y)})
	case "utf8":
		s := "\x1b[M"
		for _, n := range []int{b, x, y} {
			s += string(utf8.AppendRune(nil, rune(n+32)))
		}
		return s
	case "sgr":
		return fmt.Sprintf("\x1b[<%d;%d;%dM", b, x, y)
	case "urxvt":
		return fmt.Sprintf("\x1b[%d;%d;%dM", b+32, x, y)
	}
	panic(enc)
}

// TestKeyFilterMouseEveryEncoding sends mouse reports (press, release,
// motion, wheel) at every coordinate from 1 to 300, in every encoding,
// between two keys: only the keys come through, whole and in order, both
// in one read and split byte by byte.
func TestKeyFilterMouseEveryEncoding(t *testing.T) {
	for _, enc := range []string{"x10", "utf8", "sgr", "urxvt"} {
		for _, b := range []int{0, 1, 2, 3, 32, 35, 64, 65} {
			for c := 1; c <= 300; c++ {
				for _, xy := range [][2]int{{c, c}, {c, 301 - c}, {c, 1}, {1, c}} {
					in := "n" + mouseReport(enc, b, xy[0], xy[1]) + mouseReport(enc, b, xy[1], xy[0]) + "v"
					f := keyFilter{utf8Mouse: enc == "utf8"}
					if got := string(f.filter([]byte(in), nil)); got != "nv" {
						t.Fatalf("%s button %d at %v: got %q, want \"nv\" (input %q)", enc, b, xy, got, in)
					}
					f = keyFilter{utf8Mouse: enc == "utf8"}
					var got []byte
					for i := 0; i < len(in); i++ {
						got = f.filter([]byte{in[i]}, got)
					}
					if string(got) != "nv" {
						t.Fatalf("%s button %d at %v byte by byte: got %q", enc, b, xy, got)
					}
				}
			}
		}
	}
}

// TestKeyFilterUTF8MouseAnswersNothing is the attack: with UTF-8 mouse
// reports on, a position from column 96 on takes two bytes per value; a
// filter that skips three bytes would let the last one through as a key
// (column 100, row 83 ends in 's').
func TestKeyFilterUTF8MouseAnswersNothing(t *testing.T) {
	in := mouseReport("utf8", 35, 100, 83)
	if in[len(in)-1] != 's' {
		t.Fatalf("the report %q does not end in 's'; the attack changed", in)
	}
	f := keyFilter{utf8Mouse: true}
	if got := f.filter([]byte(in), nil); len(got) != 0 {
		t.Errorf("a mouse motion answered %q", got)
	}
}
