package request

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/rules"
)

const filesConfig = `shell:
  program: /bin/sh
sandbox:
  paths:
    workspace: {root: WORK, mode: rw}
    review: {root: WORK/review, mode: rw, read_approval: true, write_approval: true}
`

// TestDecideFile: file operations guardrun performs itself are judged by
// the zones, and guardrun's own config cannot be written through them
// even inside an rw zone (reading it is allowed).
func TestDecideFile(t *testing.T) {
	w := newWorld(t, filesConfig)
	if err := os.Mkdir(filepath.Join(w.work, "review"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A project file guardrun protects (this session's config is the
	// --config one; the project file is protected all the same).
	if err := os.WriteFile(filepath.Join(w.work, ".guardrun.yaml"), []byte("mode: strict\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	io, _, _ := testIO()
	s, err := OpenForFiles(Options{Config: w.config}, io)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		op     rules.Op
		path   string
		want   rules.Verdict
		reason string
	}{
		{rules.OpWrite, "notes.txt", rules.Allow, ""},
		{rules.OpWrite, "review/a.txt", rules.Ask, ""},
		{rules.OpRead, "review/a.txt", rules.Ask, ""},
		{rules.OpWrite, w.home + "/x", rules.Block, ""},
		{rules.OpWrite, ".guardrun.yaml", rules.Block, "guardrun's own config and state"},
		{rules.OpDelete, ".guardrun.yaml", rules.Block, "guardrun's own config and state"},
		{rules.OpRead, ".guardrun.yaml", rules.Allow, ""},
	} {
		p := s.DecideFile(tc.op, tc.path)
		if p.Decision != tc.want || !strings.Contains(p.Reason, tc.reason) {
			t.Errorf("%s %s: %s (%s), want %s with %q", tc.op, tc.path, p.Decision, p.Reason, tc.want, tc.reason)
		}
		if want := filepath.Join(w.work, tc.path); !filepath.IsAbs(tc.path) && p.Path != want {
			t.Errorf("%s %s: path %s, want it resolved to %s", tc.op, tc.path, p.Path, want)
		}
	}

	// An edit that asks for its read and its write has one grant key,
	// which a grant for the write alone does not share; what is allowed
	// has none.
	edit := Combine(s.DecideFile(rules.OpRead, "review/a.txt"), s.DecideFile(rules.OpWrite, "review/a.txt"))
	write := Combine(s.DecideFile(rules.OpWrite, "review/a.txt"))
	if edit.Decision != rules.Ask || FileGrantKey(edit) == "" || FileGrantKey(edit) == FileGrantKey(write) {
		t.Errorf("edit %s key %q, write key %q: want an asking edit with its own key", edit.Decision, FileGrantKey(edit), FileGrantKey(write))
	}
	// Writes of two files (a patch) share a key only with writes of the
	// same two files: not with the first beside another file.
	two := FileGrantKey(Combine(s.DecideFile(rules.OpWrite, "review/a.txt"), s.DecideFile(rules.OpWrite, "review/b.txt")))
	other := FileGrantKey(Combine(s.DecideFile(rules.OpWrite, "review/a.txt"), s.DecideFile(rules.OpWrite, "review/c.txt")))
	again := FileGrantKey(Combine(s.DecideFile(rules.OpWrite, "review/a.txt"), s.DecideFile(rules.OpWrite, "review/b.txt")))
	if two == other || two != again {
		t.Errorf("writes of a and b key %q, of a and c %q, of a and b again %q: want a key per pair of files", two, other, again)
	}
	if k := FileGrantKey(Combine(s.DecideFile(rules.OpWrite, "notes.txt"))); k != "" {
		t.Errorf("an allowed write has the grant key %q", k)
	}
	blocked := Combine(s.DecideFile(rules.OpRead, "review/a.txt"), s.DecideFile(rules.OpWrite, ".guardrun.yaml"))
	if blocked.Decision != rules.Block || !strings.Contains(blocked.Reason, "own config") {
		t.Errorf("combined %s (%s), want block with the blocking part's reason", blocked.Decision, blocked.Reason)
	}
}
