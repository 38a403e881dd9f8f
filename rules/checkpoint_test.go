package rules

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkpointConfig pre-approves project code that relies on undo
// (make, python3 gen.py), inspection that writes nothing (ls, git
// status), and cat, cp and cd with nothing said of checkpoints (cd, a
// builtin, writes nothing; cat, bounded by the analysis, is predicted to
// write nothing).
const checkpointConfig = `
shell:
  rules:
    - {pattern: make, approval: false, checkpoint: required}
    - {pattern: python3 gen.py, approval: false, checkpoint: required}
    - {pattern: cd, approval: false}
    - {pattern: ls, approval: false, checkpoint: none}
    - {pattern: "git status", approval: false, checkpoint: none}
    - {pattern: cat, approval: false}
    - {pattern: cp, approval: false}
    - {pattern: curl, approval: true}
sandbox:
  paths:
    workspace: {root: ., mode: rw}
`

// TestDecisionCheckpoint: what a request needs of a checkpoint follows
// from its parts: required where a pre-approval relies on undo, none
// where nothing can write (a rule says so, or the part is bounded and
// predicted to write nothing outside .git), best effort otherwise.
func TestDecisionCheckpoint(t *testing.T) {
	e, dir := newTestEngine(t, checkpointConfig)
	tests := []struct {
		script  string
		verdict Verdict
		need    Checkpoint
	}{
		{"make test", Allow, CheckpointRequired},
		{"python3 gen.py", Allow, CheckpointRequired},
		{"python3 other.py", Ask, CheckpointBestEffort},
		{"ls -la", Allow, CheckpointNone},
		{"ls; git status", Allow, CheckpointNone},
		{"cd src && ls", Allow, CheckpointNone},
		{"ls > listing.txt", Allow, CheckpointBestEffort},
		{"cat README", Allow, CheckpointNone},
		{"cp README copy", Allow, CheckpointBestEffort},
		{"cat README > copy", Allow, CheckpointBestEffort},
		{"ls; make", Allow, CheckpointRequired},
		{"curl example.com", Ask, CheckpointBestEffort},
		{"unknown-tool x", Ask, CheckpointBestEffort},
		{"$CMD x", Ask, CheckpointBestEffort},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			d := e.Script(tt.script, dir)
			got := struct {
				Verdict Verdict
				Need    Checkpoint
			}{d.Decision, d.Checkpoint}
			want := struct {
				Verdict Verdict
				Need    Checkpoint
			}{tt.verdict, tt.need}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("(-got +want):\n%s\nparts: %+v", diff, d.Parts)
			}
		})
	}
}

// TestTightenCheckpoint: an untrusted project file cannot change what
// is said of checkpoints: its section, its rules' and its default's
// checkpoint keys are ignored, and a project rule that makes a
// pre-approved command ask takes the best-effort checkpoint.
func TestTightenCheckpoint(t *testing.T) {
	env := Env{Cwd: "/w", Home: "/home/u", StateDir: "/s"}
	base, err := Parse("/c/g.yaml", []byte(strings.ReplaceAll(checkpointConfig, "root: .", "root: /w")), "/c", env)
	if err != nil {
		t.Fatal(err)
	}
	project, err := Parse("/w/.guardrun.yaml", []byte(`
shell:
  default: {allowed: true, approval: true, checkpoint: none}
  rules:
    - {pattern: make, approval: true, checkpoint: none}
checkpoints:
  enabled: false
  max_files: 1
`), "/w", env)
	if err != nil {
		t.Fatal(err)
	}
	merged, ignored := Tighten(base, project)
	if merged.Checkpoints != base.Checkpoints {
		t.Errorf("checkpoints: %+v, want the base's %+v", merged.Checkpoints, base.Checkpoints)
	}
	all := strings.Join(ignored, "\n")
	for _, w := range []string{"shell.default.checkpoint: none", `rule "make" at /w/.guardrun.yaml:5:7: checkpoint: none`, "checkpoints (an untrusted config"} {
		if !strings.Contains(all, w) {
			t.Errorf("ignored list does not name %q:\n%s", w, all)
		}
	}
	e, err := New(merged, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	d := e.Script("make", "/w")
	if d.Decision != Ask || d.Checkpoint != CheckpointBestEffort {
		t.Errorf("make under the project's rule: %s, checkpoint %q; want ask, best effort", d.Decision, d.Checkpoint)
	}
	if d := e.Script("unknown-tool", "/w"); d.Checkpoint != CheckpointBestEffort {
		t.Errorf("an unknown command under the project's default: checkpoint %q, want best effort", d.Checkpoint)
	}
}
