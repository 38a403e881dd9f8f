package cmdsem

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScan reads argv with the option notation the table and shellparse
// share, and checks what Scan reports: each option with its value and
// where it stands, what it cannot read, and where the operands start.
func TestScan(t *testing.T) {
	gnuLike := &Options{Short: "vo:x::", Long: "output= verbose color[=] colour[=]", AllShort: true, Abbrev: true, StrictLong: true, Permute: true}
	wrapper := &Options{Short: "n:ab", Long: "adjustment= help", AllShort: true, ReadOnAfterUnknown: true, StrictLong: true, Abbrev: true, SkipRunTimeOptions: true, Numeric: true}
	shell := &Options{Short: "o:", Long: "rcfile=", Plus: true, Dash: DashEnds, Abbrev: true, SkipRunTimeOptions: true}
	env := &Options{Short: "S:i", Long: "split-string=", AllShort: true, StrictLong: true, Abbrev: true, Dash: DashOption, StopAfter: "S split-string"}
	goTool := &Options{Long: "o= x", GoFlags: true, StrictLong: true}
	opt := func(name string, word int) Token {
		return Token{Kind: TokOption, Name: name, Listed: true, Word: word}
	}
	attached := func(name, val string, word int, mode ArgMode) Token {
		return Token{Kind: TokOption, Name: name, Listed: true, Mode: mode, Word: word, Value: val, HasVal: true, Attached: true, ValWord: word}
	}
	separate := func(name, val string, word int) Token {
		return Token{Kind: TokOption, Name: name, Listed: true, Mode: RequiredArg, Word: word, Value: val, HasVal: true, ValWord: word + 1}
	}
	long := func(t Token) Token { t.Long = true; return t }
	tests := []struct {
		name string
		opts *Options
		argv string // words; one with a $ is known only at run time
		want Scanned
	}{
		{"a cluster ends at a letter that takes the rest as its value", gnuLike, "-vofile in",
			Scanned{Tokens: []Token{opt("v", 0), attached("o", "file", 0, RequiredArg)}, Operands: []int{1}, Next: 2}},
		{"a letter at the end of its word takes the next word", gnuLike, "-vo file in",
			Scanned{Tokens: []Token{opt("v", 0), separate("o", "file", 0)}, Operands: []int{2}, Next: 3}},
		{"an optional value is only ever attached", gnuLike, "-x file -xval",
			Scanned{Tokens: []Token{{Kind: TokOption, Name: "x", Listed: true, Mode: OptionalArg}, attached("x", "val", 2, OptionalArg)}, Operands: []int{1}, Next: 3}},
		{"a long option takes = or the next word", gnuLike, "--output=a --output b",
			Scanned{Tokens: []Token{long(attached("output", "a", 0, RequiredArg)), long(separate("output", "b", 1))}, Next: 3}},
		{"an unambiguous prefix names its option", gnuLike, "--out f --verb",
			Scanned{Tokens: []Token{long(separate("output", "f", 0)), long(opt("verbose", 2))}, Next: 3}},
		{"an ambiguous prefix cannot be read", gnuLike, "--col=x",
			Scanned{Tokens: []Token{{Kind: TokUnknown, Name: "col", Long: true, Value: "x", HasVal: true, Attached: true, Why: "ambiguous"}}, Next: 1}},
		{"a long option not listed cannot be read", gnuLike, "--nope f",
			Scanned{Tokens: []Token{{Kind: TokUnknown, Name: "nope", Long: true, Why: "unknown"}}, Operands: []int{1}, Next: 2}},
		{"three dashes are no option a program is known to read", shell, "---rcfile=x",
			Scanned{Tokens: []Token{{Kind: TokUnknown, Name: "-rcfile", Long: true, Value: "x", HasVal: true, Attached: true, Why: "unknown"}}, Next: 1}},
		{"an unknown letter leaves the rest of its word unread", gnuLike, "-Qofile",
			Scanned{Tokens: []Token{{Kind: TokUnknown, Name: "Q"}}, Next: 1}},
		{"an unknown letter is read past where the program reads on", wrapper, "-Qa cmd",
			Scanned{Tokens: []Token{{Kind: TokUnknown, Name: "Q"}, opt("a", 0)}, Next: 1}},
		{"letters a shell does not list are flags", shell, "-ec code",
			Scanned{Tokens: []Token{{Kind: TokOption, Name: "e"}, {Kind: TokOption, Name: "c"}}, Next: 1}},
		{"options after operands are read where the program permutes", gnuLike, "a -v b",
			Scanned{Tokens: []Token{opt("v", 1)}, Operands: []int{0, 2}, Next: 3}},
		{"the first operand ends the options otherwise", wrapper, "cmd -a",
			Scanned{Next: 0}},
		{"-- ends the options", gnuLike, "-v -- -o x",
			Scanned{Tokens: []Token{opt("v", 0)}, Next: 2, Ended: true}},
		{"a run-time word is an operand where the program permutes", gnuLike, "$x -v",
			Scanned{Tokens: []Token{{Kind: TokRunTime}, opt("v", 1)}, Operands: []int{0}, Next: 2}},
		{"a run-time word that starts with - is read past by a wrapper", wrapper, "-$x -a cmd",
			Scanned{Tokens: []Token{{Kind: TokRunTime}, opt("a", 1)}, Next: 2}},
		{"any other run-time word is a wrapper's command", wrapper, "$x -a",
			Scanned{Next: 0}},
		{"-N is an option with its digits as value", wrapper, "-10 cmd",
			Scanned{Tokens: []Token{{Kind: TokOption, Name: "N", Value: "10", HasVal: true, Attached: true}}, Next: 1}},
		{"+o is an option of a shell", shell, "+o posix -c",
			Scanned{Tokens: []Token{separate("o", "posix", 0), {Kind: TokOption, Name: "c", Word: 2}}, Next: 3}},
		{"a lone - ends a shell's options", shell, "- -c",
			Scanned{Next: 1, Ended: true}},
		{"a lone - is an option of env", env, "- cmd",
			Scanned{Tokens: []Token{{Kind: TokOption, Name: "-"}}, Next: 1}},
		{"a lone - is an operand otherwise", gnuLike, "- -v",
			Scanned{Tokens: []Token{opt("v", 1)}, Operands: []int{0}, Next: 2}},
		{"env -S stops the scan after its value", env, "-i -S x -i",
			Scanned{Tokens: []Token{opt("i", 0), separate("S", "x", 1)}, Next: 3}},
		{"a Go flag takes one dash or two", goTool, "-x --o=bin -o out",
			Scanned{Tokens: []Token{long(opt("x", 0)), long(attached("o", "bin", 1, RequiredArg)), long(separate("o", "out", 2))}, Next: 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var argv []Arg
			for _, w := range strings.Fields(tc.argv) {
				if k := strings.IndexByte(w, '$'); k >= 0 {
					argv = append(argv, Arg{Value: w[:k]})
					continue
				}
				argv = append(argv, Arg{Value: w, Static: true})
			}
			got := tc.opts.Scan(argv, 0)
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("Scan(%q) (-got +want):\n%s", tc.argv, diff)
			}
		})
	}
}
