package shellparse

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

var (
	largeOnce     sync.Once
	largeSections []string
)

// largeScript returns a script of at least size bytes built from whole
// sections of testdata/large.sh, so it always parses.
func largeScript(size int) string {
	largeOnce.Do(func() {
		b, err := os.ReadFile("testdata/large.sh")
		if err != nil {
			panic(err)
		}
		largeSections = strings.SplitAfter(string(b), "\n}\n")
	})
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		sb.WriteString(largeSections[i%len(largeSections)])
	}
	return sb.String()
}

func BenchmarkParseTypical(b *testing.B) {
	const src = "cd src && go test ./... -run TestFoo 2>&1 | tail -n 50"
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(src, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseLarge(b *testing.B) {
	raw, err := os.ReadFile("testdata/large.sh")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("testdata", func(b *testing.B) {
		benchParse(b, string(raw))
	})
	for _, kb := range []int{5, 10, 20, 40} {
		src := largeScript(kb << 10)
		b.Run(fmt.Sprintf("%dKB", kb), func(b *testing.B) {
			benchParse(b, src)
		})
	}
}

func benchParse(b *testing.B, src string) {
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(src, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestLargeScriptParses(t *testing.T) {
	for _, kb := range []int{5, 10, 20, 40} {
		src := largeScript(kb << 10)
		s, err := Parse(src, Options{})
		if err != nil {
			t.Fatalf("%d KB: %v", kb, err)
		}
		if len(s.Commands) < kb*10 {
			t.Errorf("%d KB: only %d commands found", kb, len(s.Commands))
		}
	}
}
