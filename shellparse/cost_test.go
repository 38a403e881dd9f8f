package shellparse

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// deepNesting is $($($(...))) nested n levels: 3 bytes a level.
func deepNesting(n int) string {
	return strings.Repeat("$(", n) + "rm" + strings.Repeat(")", n)
}

// TestDeepNestingBlocked: the 20,000-level nesting (60 KB) is blocked
// with a reason naming the limit, and its analysis stays small. Its
// time is measured by BenchmarkDeepNesting.
func TestDeepNestingBlocked(t *testing.T) {
	for _, src := range []string{
		deepNesting(20000),
		strings.Repeat("$( ", 20000) + "rm" + strings.Repeat(" )", 20000),
		strings.Repeat("echo \"$(", 5000) + "rm" + strings.Repeat(")\"", 5000),
		// case patterns close parentheses the lexical count opened, so
		// only the walker's own count catches this one.
		strings.Repeat("$(case x in x) ", 300) + "rm" + strings.Repeat(";; esac)", 300),
	} {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		s, err := Parse(src, Options{})
		runtime.ReadMemStats(&m1)
		if err != nil {
			t.Fatalf("%.40q: %v", src, err)
		}
		if !hasFinding(s, Block, fmt.Sprintf("constructs nested more than %d levels deep", MaxNesting)) {
			t.Errorf("%.40q: not blocked for nesting: %v", src, viewOf(s).Findings)
		}
		if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 50<<20 {
			t.Errorf("%.40q: analysis allocated %d MB, want at most 50", src, alloc>>20)
		}
		out := 0
		for _, c := range s.Commands {
			out += len(c.Text)
		}
		for _, f := range s.Findings {
			out += len(f.Text) + len(f.Reason)
		}
		if out > outputBudget(len(src))+len(src) {
			t.Errorf("%.40q: %d bytes of text reported for a %d-byte script", src, out, len(src))
		}
	}
}

func hasFinding(s *Script, sev Severity, reason string) bool {
	for _, f := range s.Findings {
		if f.Severity == sev && strings.Contains(f.Reason, reason) {
			return true
		}
	}
	return false
}

// TestLimitsBlock: each limit blocks with a reason that names it.
func TestLimitsBlock(t *testing.T) {
	tests := []struct {
		name, src, reason string
	}{
		{"script size", strings.Repeat("true\n", MaxScriptBytes/5+1), "bytes, more than the limit of"},
		{"parts", strings.Repeat("true;", MaxParts+1), fmt.Sprintf("more than %d commands", MaxParts)},
		{"nesting", strings.Repeat("(", MaxNesting+1) + "true" + strings.Repeat(")", MaxNesting+1), fmt.Sprintf("nested more than %d levels", MaxNesting)},
		{"nested braces", strings.Repeat("{ ", MaxNesting+1) + "true" + strings.Repeat(";}", MaxNesting+1), fmt.Sprintf("nested more than %d levels", MaxNesting)},
		// Each command's text holds all the ones nested in it; 90
		// levels of a 100 KB word would report ~9 MB.
		{"output", strings.Repeat("echo $(", 90) + "echo " + strings.Repeat("x", 100<<10) + strings.Repeat(")", 90), "bytes of text (nested constructs repeat their text)"},
		{"output relative to the script", strings.Repeat("$(case x in x) ", 300) + "rm" + strings.Repeat(";; esac)", 300), "bytes of text (nested constructs repeat their text)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !hasFinding(s, Block, tc.reason) {
				t.Errorf("no block finding %q: %v", tc.reason, viewOf(s).Findings)
			}
		})
	}
	// Just under the limits, nothing is blocked.
	for _, src := range []string{
		strings.Repeat("( ", MaxNesting-2) + "true" + strings.Repeat(")", MaxNesting-2),
		strings.Repeat("true;", MaxParts-1),
	} {
		s, err := Parse(src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range s.Findings {
			t.Errorf("%.30q: unexpected finding %v", src, f)
		}
	}
}

func BenchmarkDeepNesting(b *testing.B) {
	src := deepNesting(20000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(src, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseScaling shows the cost per byte staying flat from 1 KB to
// 1 MB of script (compare the MB/s column).
func BenchmarkParseScaling(b *testing.B) {
	for _, kb := range []int{1, 10, 100, 1000} {
		src := largeScript(kb << 10)
		if len(src) > MaxScriptBytes {
			src = src[:strings.LastIndex(src[:MaxScriptBytes], "\n}\n")+3]
		}
		b.Run(fmt.Sprintf("%dKB", kb), func(b *testing.B) {
			benchParse(b, src)
		})
	}
}
