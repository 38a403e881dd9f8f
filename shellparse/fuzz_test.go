package shellparse

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzParse checks that analysis never panics, stays deterministic and
// keeps every position inside the analysed text, and that no script can
// hide a command written after it (see checkAppended). The seed corpus
// is in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse(src, Options{Home: "/home/u", MaxDepth: 4})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is %T, want *ParseError", err, err)
			}
			checkPos(t, src, "parse error", pe.Pos)
			return
		}
		again, err := Parse(src, Options{Home: "/home/u", MaxDepth: 4})
		if err != nil || !reflect.DeepEqual(s, again) {
			t.Fatalf("Parse is not deterministic")
		}
		for _, c := range s.Commands {
			if len(c.Argv) == 0 {
				t.Fatalf("command %q has an empty argv", c.Text)
			}
			checkPos(t, src, "command "+c.Text, c.Pos)
			for _, w := range c.Argv {
				checkPos(t, src, "word "+w.Source, w.Pos)
			}
			for _, a := range c.Assigns {
				checkPos(t, src, "assignment "+a.Name, a.Pos)
			}
			// A $(( or (( that bash reads as a subshell is parsed with a
			// space after its first parenthesis (parseBash): the text
			// shown is the source with that space.
			if len(c.Via) == 0 && !strings.Contains(src, c.Text) &&
				!(strings.Contains(src, "((") && strings.Contains(src, strings.ReplaceAll(c.Text, "( (", "(("))) {
				t.Fatalf("top-level command text %q is not in the source", c.Text)
			}
		}
		for _, fo := range s.Files {
			checkPos(t, src, "file "+fo.Text, fo.Pos)
			if fo.Op != OpRead && fo.Op != OpWrite {
				t.Fatalf("file op %q", fo.Op)
			}
		}
		for _, fi := range s.Findings {
			checkPos(t, src, "finding "+fi.Reason, fi.Pos)
			if fi.Severity != Ask && fi.Severity != Block || fi.Reason == "" {
				t.Fatalf("bad finding %+v", fi)
			}
		}
		checkAppended(t, src)
	})
}

// checkAppended is the security property: whatever a script S that
// parses contains, `rm x` written after it as a command of its own is
// seen — S followed by `rm x` has a command whose argv is exactly
// [rm x], or the analysis blocks it (a Block finding, or a parse error:
// what does not parse does not run).
//
// The joinings are chosen so that bash runs `rm x` as a command for every
// S the parser accepts: S plus "; rm x" and " && rm x" where S's last line
// cannot swallow them, else S plus an empty line plus "rm x", and
// "{ S<empty line>} && rm x". The empty line ends a trailing comment and
// a line continuation (a trailing backslash joins only the next line,
// which is empty); the parser refuses an unclosed here-document, so no
// heredoc body is open at the end of S. "; rm x" is appended only when
// S's last line has no comment and no here-document, and S does not end
// in a backslash (which would escape the ';') or in a separator (which
// would make "; rm x" a syntax error, and so prove nothing), ignoring
// NUL bytes.
func checkAppended(t *testing.T, src string) {
	t.Helper()
	var joined []string
	// NUL bytes are dropped by the parser (as by bash reading a script),
	// so they do not separate a backslash from the ';' after it.
	bare := strings.ReplaceAll(src, "\x00", "")
	last := bare[strings.LastIndexByte(bare, '\n')+1:]
	tail := strings.TrimRight(bare, " \t")
	if !strings.ContainsAny(last, "#") && !strings.Contains(src, "<<") &&
		tail != "" && !strings.ContainsAny(tail[len(tail)-1:], "\\&;|") {
		joined = append(joined, src+"; rm x", src+" && rm x")
	}
	joined = append(joined, src+"\n\nrm x", "{ "+src+"\n\n} && rm x")
	for _, j := range joined {
		s, err := Parse(j, Options{Home: "/home/u", MaxDepth: 4})
		if err != nil {
			continue // refused: nothing runs
		}
		if hasRmX(s) {
			continue
		}
		blocked := false
		for _, fi := range s.Findings {
			blocked = blocked || fi.Severity == Block
		}
		if !blocked {
			var seen [][]string
			for _, c := range s.Commands {
				var argv []string
				for _, w := range c.Argv {
					argv = append(argv, w.Value)
				}
				seen = append(seen, argv)
			}
			t.Fatalf("%q hides the `rm x` after it: commands %q, findings %+v", j, seen, s.Findings)
		}
	}
}

func hasRmX(s *Script) bool {
	for _, c := range s.Commands {
		if len(c.Argv) == 2 && c.Argv[0].Value == "rm" && c.Argv[1].Value == "x" &&
			c.Argv[0].Static() && c.Argv[1].Static() {
			return true
		}
	}
	return false
}

func checkPos(t *testing.T, src, what string, p Pos) {
	t.Helper()
	if p.Offset > uint(len(src)) {
		t.Fatalf("%s: offset %d beyond the source (%d bytes)", what, p.Offset, len(src))
	}
	if p.Line > 0 && (p.Col == 0 || p.Line > uint(strings.Count(src, "\n")+1)) {
		t.Fatalf("%s: position %v outside the source", what, p)
	}
}

// FuzzSplitPattern checks that pattern splitting never panics, that a
// simple command's words taken from its parse are the ones read again
// as plain words, that its
// words compile with the matcher rules use (CompileWord), and that quoting
// any literal text yields one word that this matcher matches against
// exactly that text and nothing longer.
func FuzzSplitPattern(f *testing.F) {
	for _, s := range []string{"git commit", `"a b" *`, "rm -rf", `'*'`, `\*`, "$x", "a; b", "[ab]", "@(a|b)", "$'\\x41'", "", "~/x", "a\nb", "x #c", `'a*b'`, `"@(a|b)"`, `'[x]'`, `+(a)`, `\@(a)`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		samePatternWords(t, s)
		words, err := SplitPattern(s, syntax.LangBash)
		if err == nil {
			if len(words) == 0 {
				t.Fatalf("SplitPattern(%q) = no words and no error", s)
			}
			for _, w := range words {
				if _, err := CompileWord(w); err != nil {
					t.Fatalf("SplitPattern(%q) word %q: %v", s, w, err)
				}
			}
		}
		if !utf8.ValidString(s) {
			return
		}
		q, err := syntax.Quote(s, syntax.LangBash)
		if err != nil {
			return
		}
		words, err = SplitPattern(q, syntax.LangBash)
		if err != nil {
			t.Fatalf("SplitPattern(Quote(%q) = %q): %v", s, q, err)
		}
		if len(words) != 1 {
			t.Fatalf("SplitPattern(%q) = %q, want one word", q, words)
		}
		m, err := CompileWord(words[0])
		if err != nil {
			t.Fatalf("pattern %q: %v", words[0], err)
		}
		if !m.MatchString(s) {
			t.Fatalf("quoted %q became pattern %q, which does not match the text itself", s, words[0])
		}
		if m.MatchString(s+"x") || s != "" && m.MatchString(s[:len(s)-1]) {
			t.Fatalf("quoted %q became pattern %q, which matches more than the text itself", s, words[0])
		}
	})
}
