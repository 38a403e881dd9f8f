package cmdsem

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
)

// forget drops every spec looked up so far, as in a new process.
func forget() {
	built.mu.Lock()
	built.specs = nil
	built.mu.Unlock()
}

// TestEntriesSorted: lookups search entries by halves, so a name out of
// order or twice would make a known command unknown.
func TestEntriesSorted(t *testing.T) {
	for _, es := range [][]entry{entries[:], projectEntries[:]} {
		for i := 1; i < len(es); i++ {
			if es[i-1].name >= es[i].name {
				t.Errorf("entries: %q before %q", es[i-1].name, es[i].name)
			}
		}
		for _, e := range es {
			if findEntry(e.name) == nil || !Known(e.name) {
				t.Errorf("%s: not found", e.name)
			}
		}
	}
	// A name in both lists would be found in the first alone.
	for _, e := range projectEntries {
		if i := sort.Search(len(entries), func(i int) bool { return entries[i].name >= e.name }); i < len(entries) && entries[i].name == e.name {
			t.Errorf("%s is in entries and projectEntries", e.name)
		}
	}
	for _, name := range []string{"", "a", "aw", "awkk", "zz", "Cat", "cat ", "/bin/cat", "sh", "bash", "rm", "env"} {
		if Known(name) || Risky(name) || lookup(name) != nil {
			t.Errorf("%q: known, but the table does not describe it", name)
		}
	}
}

// TestLookupAlone: a command looked up first and alone, as in a
// guardrun run that meets only it, answers every vector of its corpus
// (each option, subcommand and operand position the table knows) exactly
// as it does once the whole table is built.
func TestLookupAlone(t *testing.T) {
	forget()
	defer forget()
	names := Commands()
	if len(names) != len(entries)+len(projectEntries) {
		t.Fatalf("Commands lists %d names, entries %d", len(names), len(entries)+len(projectEntries))
	}
	full := specs()
	want := map[string][]string{}
	for _, name := range names {
		want[name] = answers(name, corpus(name, full[name]))
	}
	for _, name := range names {
		forget()
		vecs := corpus(name, full[name]) // the vectors only: full[name] is not used below
		got := answers(name, vecs)
		if built.specs[name] == nil || len(built.specs) != 1 {
			t.Errorf("%s: looking it up built %d specs", name, len(built.specs))
		}
		if built.specs[name] == full[name] {
			t.Fatalf("%s: forget kept the spec", name)
		}
		if !slices.Equal(got, want[name]) {
			for i := range min(len(got), len(want[name])) {
				if got[i] != want[name][i] {
					t.Errorf("%s alone:\n got %s\nwant %s", name, got[i], want[name][i])
					break
				}
			}
			t.Errorf("%s: %d answers alone, %d with the table", name, len(got), len(want[name]))
		}
	}
}

// TestLookupConcurrent: lookups from many goroutines at once (the
// supervisor and the proxy decide concurrently) build each spec once
// and answer alike; run with -race.
func TestLookupConcurrent(t *testing.T) {
	forget()
	defer forget()
	names := []string{"git", "sort", "sed", "awk", "gawk", "npm", "pip", "less", "more", "tar"}
	want := map[string]string{}
	for _, n := range names {
		want[n] = fmt.Sprint(Analyze(argv(n, "-o", "x", "--output=y", "in"), []string{"TMPDIR"}))
	}
	forget()
	var wg sync.WaitGroup
	got := make([]map[string]string, 8)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[g] = map[string]string{}
			for i := range names {
				n := names[(i+g)%len(names)]
				got[g][n] = fmt.Sprint(Analyze(argv(n, "-o", "x", "--output=y", "in"), []string{"TMPDIR"}))
			}
		}()
	}
	wg.Wait()
	for g := range got {
		for _, n := range names {
			if got[g][n] != want[n] {
				t.Errorf("goroutine %d, %s: %s, want %s", g, n, got[g][n], want[n])
			}
		}
	}
	if len(built.specs) != len(names) {
		t.Errorf("%d specs built for %d commands", len(built.specs), len(names))
	}
}
