package rules

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestAliasedListsBounded: configs that use aliases to make items
// without a position of their own (a rule's sandbox_paths, example
// lists) or located ones (rules, zones) decode within a bound, or are
// refused with an error saying why; a config at the limits is read.
func TestAliasedListsBounded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d/", 200))
	aliasedPaths := func(items, rules int) string {
		var b strings.Builder
		b.WriteString("sandbox:\n  paths:\n    a: {root: ./a, mode: rw}\nshell:\n  rules:\n    - {pattern: c, sandbox_paths: &p [&a a")
		for range items - 1 {
			b.WriteString(",*a")
		}
		b.WriteString("]}\n")
		for i := range rules - 1 {
			fmt.Fprintf(&b, "    - {pattern: c%d, sandbox_paths: *p}\n", i)
		}
		return b.String()
	}
	rulesN := func(n int) string {
		var b strings.Builder
		b.WriteString("shell:\n  rules:\n")
		for i := range n {
			fmt.Fprintf(&b, "    - {pattern: c%d}\n", i)
		}
		return b.String()
	}
	aliasedRules := func(n int) string {
		var b strings.Builder
		b.WriteString("shell:\n  rules: &r [&x {pattern: c}")
		for range n - 1 {
			b.WriteString(",*x")
		}
		b.WriteString("]\n")
		return b.String()
	}
	rows := []struct {
		name, yaml, want string // want: "" read, else part of the error
	}{
		{"sandbox_paths aliased over 1000 rules", aliasedPaths(20000, 1000), "expanded"},
		{"sandbox_paths aliased over 100 rules", aliasedPaths(1000, 100), ""},
		{"5000 rules", rulesN(maxLocated), ""},
		{"5001 rules", rulesN(maxLocated + 1), "more than 5000"},
		{"5001 aliased rules", aliasedRules(maxLocated + 1), "more than 5000"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if len(r.yaml) > MaxConfigBytes {
				t.Fatalf("the row's config is %d bytes, over MaxConfigBytes", len(r.yaml))
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			env := Env{Cwd: dir, Home: dir, StateDir: dir}
			_, err := Parse(filepath.Join(dir, ProjectFileForTest), []byte(r.yaml), dir, env)
			runtime.ReadMemStats(&after)
			if r.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if r.want != "" && (err == nil || !strings.Contains(err.Error(), r.want)) {
				t.Fatalf("got %v; want an error saying %q", err, r.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
				t.Errorf("decoding allocated %d MiB", alloc>>20)
			}
		})
	}
}
