package shellparse

import (
	"strings"
	"testing"
)

// TestAdversarialInputsStayBounded feeds inputs that once made analysis
// exponential or quadratic and checks the bounds that now hold.
func TestAdversarialInputsStayBounded(t *testing.T) {
	nest := func(n int, pre, post string) string {
		s := "rm x"
		for range n {
			s = pre + s + post
		}
		return s
	}
	tests := []struct {
		name      string
		src       string
		maxCmds   int
		maxWords  int
		wantBlock bool
		wantAsk   bool
	}{
		// Dynamic code re-read on a best-effort basis must not walk the
		// substitutions again at every level.
		{"nested eval of substitutions", nest(30, `eval "$(`, `)"`), 61, 200, false, true},
		{"nested bash -c of substitutions", nest(30, `bash -c "$(`, `)"`), 61, 200, false, true},
		// Each wrapper is reported with the rest of the argv.
		{"long wrapper chain", strings.Repeat("env ", 5000) + "x", maxWrapped + 1, (maxWrapped + 1) * 5001, true, false},
		// Brace expansion has a per-analysis budget.
		{"many large brace expansions", strings.Repeat("{1..1000} ", 200), 1, maxBraceTotal + 400, false, true},
		{"combinatorial braces", "echo " + strings.Repeat("{a,b}", 40), 1, maxBraceWords + 1, false, true},
		{"eval chain", strings.Repeat("eval ", 2000) + "x", defaultMaxDepth + 1, 20000, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			words := 0
			for _, c := range s.Commands {
				words += len(c.Argv)
			}
			if len(s.Commands) > tc.maxCmds {
				t.Errorf("%d commands, want at most %d", len(s.Commands), tc.maxCmds)
			}
			if words > tc.maxWords {
				t.Errorf("%d words, want at most %d", words, tc.maxWords)
			}
			var ask, block bool
			for _, f := range s.Findings {
				ask = ask || f.Severity == Ask
				block = block || f.Severity == Block
			}
			if block != tc.wantBlock || ask != tc.wantAsk {
				t.Errorf("ask=%v block=%v, want ask=%v block=%v (%v)", ask, block, tc.wantAsk, tc.wantBlock, viewOf(s).Findings)
			}
		})
	}
}
