package approval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A detail keeps guardrun's own colours and shows every other escape as
// text; a colour never splits a word to hide a look-alike letter, and
// none carries past its line.
func TestSanitizeSGR(t *testing.T) {
	rows := []struct{ name, in, want string }{
		{"a diff as DiffDetail draws it", "\x1b[1mchange\x1b[0m f\n\x1b[31m-a\x1b[0m\n\x1b[32m+b\x1b[0m\n", "\x1b[1mchange\x1b[0m f\n\x1b[31m-a\x1b[0m\n\x1b[32m+b\x1b[0m\n"},
		{"a highlighted keyword", "\x1b[34;1mfunc\x1b[0m main", "\x1b[34;1mfunc\x1b[0m main"},
		{"clearing the screen", "ok\x1b[2J\x1b[H", `ok\x1b[2J\x1b[H`},
		{"the clipboard", "\x1b]52;c;eA==\x07", `\x1b]52;c;eA==\x07`},
		{"concealed text", "\x1b[8mhidden\x1b[0m", `\x1b[8mhidden` + "\x1b[0m"},
		{"black text", "\x1b[30;40mhidden", `\x1b[30;40mhidden`},
		{"a colour left open ends with its line", "\x1b[31mred\nnext", "\x1b[31mred\x1b[0m\nnext"},
		{"a colour open at the end is closed", "\x1b[32m+x", "\x1b[32m+x\x1b[0m"},
		{"a look-alike letter split off by a colour", "p\x1b[32m\u0430ypal.com", "p\x1b[32m\\u0430ypal.com\x1b[0m"},
		{"a mark split off its letter", "rm\x1b[1m\u0336 x", "rm\x1b[1m\\u0336 x\x1b[0m"},
		{"a carriage return", "+safe\rrm -rf ~", `+safe\x0drm -rf ~`},
	}
	for _, r := range rows {
		if diff := cmp.Diff(SanitizeSGR(r.in), r.want); diff != "" {
			t.Errorf("%s (-got +want):\n%s", r.name, diff)
		}
	}
}
