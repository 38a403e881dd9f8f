package shellparse

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// samePatternWords fails when SplitPattern, which takes a simple
// command's words from its parse, and the same split reading them again
// as plain words (as it did before, and still does for the other shapes)
// disagree on s: the same words, or both an error with the same text.
func samePatternWords(t *testing.T, s string) (accepted bool) {
	t.Helper()
	for _, lang := range []syntax.LangVariant{syntax.LangBash, syntax.LangPOSIX} {
		got, gerr := splitPattern(s, lang, false)
		want, werr := splitPattern(s, lang, true)
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() || !slices.Equal(got, want) {
			t.Fatalf("pattern %q (%v): words from the parse %q, %v; read again %q, %v", s, lang, got, gerr, want, werr)
		}
		accepted = accepted || gerr == nil
	}
	return accepted
}

// TestPatternWordsFromParse compares both ways on the patterns of the
// default config, the fuzz corpus, and every line and word run of the
// shell corpus taken as a pattern.
func TestPatternWordsFromParse(t *testing.T) {
	var cands []string
	def, err := os.ReadFile("../rules/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`pattern: *("(?:[^"\\]|\\.)*"|'[^']*'|[^,}\n]+)`).FindAllStringSubmatch(string(def), -1) {
		v := strings.TrimSpace(m[1])
		if strings.HasPrefix(v, `"`) {
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			}
		} else if strings.HasPrefix(v, `'`) {
			v = strings.ReplaceAll(strings.Trim(v, `'`), `''`, `'`)
		}
		cands = append(cands, v)
	}
	if len(cands) < 10 {
		t.Fatalf("found only %d patterns in the default config", len(cands))
	}
	fuzzDir := filepath.Join("testdata", "fuzz", "FuzzSplitPattern")
	entries, _ := os.ReadDir(fuzzDir)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(fuzzDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "string("); ok {
				if u, err := strconv.Unquote(strings.TrimSuffix(v, ")")); err == nil {
					cands = append(cands, u)
				}
			}
		}
	}
	scripts, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*"))
	for _, f := range scripts {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			cands = append(cands, l)
			fs := strings.Fields(l)
			for i := range fs {
				cands = append(cands, strings.Join(fs[i:], " "), strings.Join(fs[:i+1], " "))
			}
		}
	}
	cands = append(cands, "export A=1", "declare -x a", "let a=1", "local x", "readonly y=2", "x=1", "a b=c", "a '$x' \"b\" \\c",
		"git commit -m *", "a {b,c}", "a ~/x", "a #c", "{ a; }", "a\\\nb", "a 'b\nc'", "! a", "time a", "a &", "[[ a ]]", "a=(1 2)", "b a=(1)")
	n := 0
	for _, c := range cands {
		if samePatternWords(t, c) {
			n++
		}
	}
	if n < 50 {
		t.Fatalf("only %d of %d candidates are patterns; the comparison saw too few", n, len(cands))
	}
	t.Logf("%d candidates, %d accepted", len(cands), n)
}
