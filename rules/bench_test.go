package rules

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// config200 is a config with 200 rules, the typical command's rule near
// the end, so matching walks most of the list.
func config200() string {
	var b strings.Builder
	b.WriteString("shell:\n  rules:\n")
	tools := []string{"git", "npm", "cargo", "docker", "kubectl", "make", "go", "python3", "pip", "terraform"}
	for i := 0; i < 196; i++ {
		fmt.Fprintf(&b, "    - {pattern: \"%s sub%d *\", approval: %v}\n", tools[i%len(tools)], i, i%2 == 0)
	}
	b.WriteString("    - {pattern: rm, allowed: false}\n")
	b.WriteString("    - {pattern: cd, approval: false}\n")
	b.WriteString("    - {pattern: \"go test\", approval: false}\n")
	b.WriteString("    - {pattern: tail, approval: false}\n")
	b.WriteString("sandbox:\n  paths:\n    w: {root: ., mode: rw}\n")
	return b.String()
}

const typicalCommand = `cd src && go test ./... -run TestFoo 2>&1 | tail -n 50`

func BenchmarkDecideTypical(b *testing.B) {
	e, dir := newTestEngine(b, config200())
	if d := e.Script(typicalCommand, dir); d.Decision != Allow {
		b.Fatalf("typical command: %s (%s)", d.Decision, d.Reason)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e.Script(typicalCommand, dir)
	}
}

// BenchmarkDecideScript runs parse + decide over a 19 KB real-world-style
// script and over 2, 4 and 8 copies of it; time per byte should stay flat.
func BenchmarkDecideScript(b *testing.B) {
	src, err := os.ReadFile("../shellparse/testdata/large.sh")
	if err != nil {
		b.Fatal(err)
	}
	e, dir := newTestEngine(b, config200())
	for _, copies := range []int{1, 2, 4, 8} {
		script := strings.Repeat(string(src)+"\n", copies)
		if d := e.Script(script, dir); d.ParseError != "" {
			b.Fatalf("%d copies: %s", copies, d.ParseError)
		}
		b.Run(fmt.Sprintf("%dKB", len(script)/1024), func(b *testing.B) {
			b.SetBytes(int64(len(script)))
			b.ReportAllocs()
			for b.Loop() {
				e.Script(script, dir)
			}
		})
	}
}
