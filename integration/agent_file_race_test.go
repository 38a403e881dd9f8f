//go:build linux

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

// TestAgentsClaudeWriteRacesALinkSwap: the hook judges a file tool's
// path as it resolves when the hook runs; Claude Code then opens it
// itself. A command the model left running in the background (in the
// sandbox, where making links in the project is allowed) swaps a link
// on the path between a directory of the project and one outside every
// zone; a Write the hook allowed must not land outside. docs/agents.md
// ("What is not checked") says why it can: guardrun does not perform
// the write, so it cannot hold the path as guardrun fs does.
func TestAgentsClaudeWriteRacesALinkSwap(t *testing.T) {
	a := fakemodel.Claude
	var out string
	const tries = 30
	r := newRigWith(t, a, openRules, func(r *rig) []fakemodel.Step {
		out = filepath.Join(filepath.Dir(r.w.Home), "outside")
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		steps := []fakemodel.Step{
			fakemodel.Call("Bash", map[string]any{
				"command":           "mkdir -p real && for i in $(seq 1500); do ln -sfn real d; ln -sfn " + out + " d; done",
				"description":       "swap",
				"run_in_background": true,
			}),
		}
		for i := range tries {
			steps = append(steps, fakemodel.Call("Write", map[string]any{"file_path": filepath.Join(r.w.Project, "d", fmt.Sprintf("made-%d", i)), "content": "x\n"}))
		}
		return append(steps, fakemodel.Say("done"))
	})
	if o, code := r.guardrun("integrate", "claude-code"); code != 0 {
		t.Fatalf("integrate: %d %s", code, o)
	}
	r.run()
	allowed := 0
	for i := 1; i <= tries; i++ {
		if res := r.result(i); len(res) > 4 && res[:4] == "File" {
			allowed++
		}
	}
	entries, _ := os.ReadDir(out)
	t.Logf("%d of %d writes allowed; outside every zone now: %d files", allowed, tries, len(entries))
	if len(entries) > 0 {
		t.Errorf("a Write the hook allowed landed outside every zone, through a link swapped after the check (%d of %d)", len(entries), tries)
	}
}

// TestAgentsCodexPatchRacesALinkSwap is the same for Codex's apply_patch,
// which Codex applies itself, with no check of its own in
// danger-full-access.
func TestAgentsCodexPatchRacesALinkSwap(t *testing.T) {
	a := fakemodel.Codex
	var out string
	const tries = 30
	r := newRigWith(t, a, openRules, func(r *rig) []fakemodel.Step {
		out = filepath.Join(filepath.Dir(r.w.Home), "outside")
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		steps := []fakemodel.Step{
			fakemodel.Call("exec_command", map[string]any{
				"cmd":           "mkdir -p real && for i in $(seq 4000); do ln -sfn real d; ln -sfn " + out + " d; done",
				"yield_time_ms": 250,
			}),
		}
		for i := range tries {
			steps = append(steps, fakemodel.Call("apply_patch", map[string]any{"input": fmt.Sprintf("*** Begin Patch\n*** Add File: d/made-%d\n+x\n*** End Patch\n", i)}))
		}
		return append(steps, fakemodel.Say("done"))
	})
	if o, code := r.guardrun("integrate", "codex"); code != 0 {
		t.Fatalf("integrate: %d %s", code, o)
	}
	r.run()
	allowed := 0
	for i := 1; i <= tries; i++ {
		if res := r.result(i); strings.Contains(res, "Success") {
			allowed++
		}
	}
	entries, _ := os.ReadDir(out)
	t.Logf("%d of %d patches allowed; outside every zone now: %d files", allowed, tries, len(entries))
	if len(entries) > 0 {
		t.Errorf("a patch the hook allowed landed outside every zone, through a link swapped after the check (%d of %d)", len(entries), tries)
	}
}
