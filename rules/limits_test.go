package rules

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestConfigLimits(t *testing.T) {
	env := Env{Cwd: "/w", Home: "/h"}
	tests := []struct {
		name, text string
		want       []string // in the error text
		maxLen     int
	}{
		{"many errors", "sandbox:\n  deny: [" + strings.Repeat("1, ", 500) + "1]\n",
			[]string{"sandbox.deny[0]: want a string", "sandbox.deny[19]:", "and 481 more errors (only the first 20 are shown)"}, 4000},
		{"long value", "mode: \"" + strings.Repeat("é", 5000) + "\"\n",
			[]string{`got "` + strings.Repeat("é", 32) + `…"`}, 400},
		{"long key", "? " + strings.Repeat("k", 5000) + "\n: 1\n", []string{"unknown key"}, 1000},
		{"aliases", "a: &a \"" + strings.Repeat("x", 100_000) + "\"\nsandbox:\n  deny: [" + strings.Repeat("*a, ", 60) + "*a]\n",
			[]string{"with its aliases (*name) expanded the document is more than 4.0 MiB"}, 400},
		// Each level names the one before ten times: 10^12 nodes
		// expanded, from a few hundred bytes.
		{"nested aliases", "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n" + nestedAliases(12) + "sandbox:\n  deny: *l12\n",
			[]string{"with its aliases (*name) expanded the document is more than 4.0 MiB"}, 400},
		// Each item carries the file's name: in a deep directory these
		// few bytes each decoded to hundreds of megabytes.
		{"aliased examples", "shell:\n  examples:\n    allow: &l [&a a" + strings.Repeat(",*a", (MaxConfigBytes-100)/3) + "]\n    ask: *l\n",
			[]string{"c.yaml:3:", "more than 5000 rules, examples, zones and domain entries (aliases expanded)"}, 400},
		{"too large", "# " + strings.Repeat("x", MaxConfigBytes) + "\n",
			[]string{"c.yaml: the file is 131075 bytes; a config file may be at most 128 KiB"}, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(tt.text), "/w", env)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("missing %q in\n%.3000s", w, msg)
				}
			}
			if len(msg) > tt.maxLen {
				t.Errorf("error is %d bytes, want at most %d:\n%.3000s", len(msg), tt.maxLen, msg)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Errorf("not a *ConfigError: %T", err)
			}
		})
	}
	// Anchors used a few times stay fine.
	ok := "x: &paths [w]\nsandbox:\n  paths:\n    w: {root: /w, mode: rw}\nshell:\n  rules:\n    - {pattern: make, sandbox_paths: *paths}\n    - {pattern: go, sandbox_paths: *paths}\n"
	if _, err := Parse("c.yaml", []byte(ok), "/w", env); err != nil && strings.Contains(err.Error(), "aliases") {
		t.Errorf("a config with two aliases was refused: %v", err)
	}
}

// nestedAliases is levels 1 to n of a document where level i is a list
// of ten aliases of level i-1.
func nestedAliases(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [%s*l%d]\n", i, i, strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9), i-1)
	}
	return b.String()
}

func TestReadFileSizeChecked(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(p, make([]byte, MaxConfigBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(p)
	if err == nil || !strings.Contains(err.Error(), "a config file may be at most 128 KiB") {
		t.Fatalf("ReadFile of a large file: %v", err)
	}
	_, err = Load(p, Env{})
	if err == nil || !strings.Contains(err.Error(), "big.yaml: the file is 131073 bytes") {
		t.Fatalf("Load of a large file: %v", err)
	}
}

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
