package request

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/checkpoint"
	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/rules"
)

// TestCheckpointZones: the zones checkpointed are the rw zones that are
// directories, each without the zones inside it and the paths deny
// hides, with deny's names left out everywhere.
func TestCheckpointZones(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{"w/notes", "w/docs", "w/private", "other"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	yaml := `
sandbox:
  paths:
    workspace: {root: ./w, mode: rw}
    notes: {root: ./w/notes, mode: rw}
    docs: {root: ./w/docs, mode: ro}
    other: {root: ./other, mode: ro}
    missing: {root: ./nothing-here, mode: rw}
    afile: {root: ./file, mode: rw}
  deny: [.env, ./w/private, ./elsewhere]
`
	cfg, err := rules.Parse(filepath.Join(dir, "g.yaml"), []byte(yaml), dir, rules.Env{Cwd: dir, Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	got := CheckpointZones(&config.Loaded{Cfg: cfg})
	w := filepath.Join(dir, "w")
	want := []checkpoint.Zone{
		{Name: "workspace", Root: w, Exclude: []string{filepath.Join(w, "notes"), filepath.Join(w, "docs"), filepath.Join(w, "private")}, ExcludeNames: []string{".env"}},
		{Name: "notes", Root: filepath.Join(w, "notes"), ExcludeNames: []string{".env"}},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("zones (-got +want):\n%s", diff)
	}
}
