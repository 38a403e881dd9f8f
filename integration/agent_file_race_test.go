//go:build linux

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

// TestAgentsFileToolsRaceALinkSwap: the hook judges a file tool's path
// as it resolves when the hook runs. A command the model left running in
// the background (in the sandbox, where making links in the project is
// allowed) swaps a link on the path, atomically, between a directory of
// the project and one outside every zone, as fast as it can; the model
// meanwhile writes and edits files through the link. No write may land
// outside, and the audit log must hold a record of every one, made
// through the agent. Claude Code resolves the path again itself before
// it writes and refuses one that changed; Codex's patches guardrun
// applies itself, following no link. (Gemini CLI refuses a path that
// resolves outside its workspace before the hook runs, and follows none
// of these writes through the link there.)
func TestAgentsFileToolsRaceALinkSwap(t *testing.T) {
	const tries = 24
	tests := []struct {
		name  string
		agent fakemodel.Agent
		// background starts cmd and returns while it runs.
		background func(cmd string) fakemodel.Step
		// change is the steps of try i: a new file d/made-I, or an edit
		// of d/edit-I from "old" to "new".
		change func(r *rig, i int) []fakemodel.Step
		// into is where the link swaps to, in the project ("": a
		// directory outside every zone).
		into string
	}{
		{
			"claude-code Write of a new file", fakemodel.Claude, claudeBackground,
			func(r *rig, i int) []fakemodel.Step {
				return []fakemodel.Step{fakemodel.Call("Write", map[string]any{"file_path": filepath.Join(r.w.Project, "d", fmt.Sprintf("made-%d", i)), "content": "new\n"})}
			},
			"",
		},
		{
			"codex apply_patch adding a file", fakemodel.Codex, codexBackground,
			func(r *rig, i int) []fakemodel.Step {
				return []fakemodel.Step{fakemodel.Call("apply_patch", map[string]any{"input": fmt.Sprintf("*** Begin Patch\n*** Add File: d/made-%d\n+new\n*** End Patch\n", i)})}
			},
			"",
		},
		{
			"codex apply_patch updating a file", fakemodel.Codex, codexBackground,
			func(r *rig, i int) []fakemodel.Step {
				return []fakemodel.Step{fakemodel.Call("apply_patch", map[string]any{"input": fmt.Sprintf("*** Begin Patch\n*** Update File: d/edit-%d\n@@\n-old\n+new\n*** End Patch\n", i)})}
			},
			"",
		},
		{
			// .codex is in the project's rw zone, where a write asks
			// (protected) and the hook refuses it (Codex's settings).
			"codex apply_patch adding a file, the link swapped onto .codex", fakemodel.Codex, codexBackground,
			func(r *rig, i int) []fakemodel.Step {
				return []fakemodel.Step{fakemodel.Call("apply_patch", map[string]any{"input": fmt.Sprintf("*** Begin Patch\n*** Add File: d/made-%d\n+new\n*** End Patch\n", i)})}
			},
			".codex",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, real string
			r := newRigWith(t, tt.agent, openRules, func(r *rig) []fakemodel.Step {
				out = filepath.Join(filepath.Dir(r.w.Home), "outside")
				if tt.into != "" {
					out = filepath.Join(r.w.Project, tt.into)
				}
				real = filepath.Join(r.w.Project, "real")
				for i := range tries {
					fakemodel.WriteFile(t, filepath.Join(out, fmt.Sprintf("edit-%d", i)), "old\n")
					fakemodel.WriteFile(t, filepath.Join(real, fmt.Sprintf("edit-%d", i)), "old\n")
				}
				swap := "n=0; while [ ! -e stop ] && [ $SECONDS -lt 100 ]; do n=$((n+1)); echo $n $SECONDS > count; ln -sfn real d.new && mv -T d.new d; ln -sfn " + out + " d.new && mv -T d.new d; done"
				steps := []fakemodel.Step{
					tt.background(swap),
					tt.agent.Shell("for i in $(seq 200); do [ -L d ] && exit 0; sleep 0.05; done; exit 1"),
				}
				for i := range tries {
					steps = append(steps, tt.change(r, i)...)
				}
				return append(steps, tt.agent.Shell("touch stop"), fakemodel.Say("done"))
			})
			if o, code := r.guardrun("integrate", r.agentName()); code != 0 {
				t.Fatalf("integrate: %d %s", code, o)
			}
			r.run()

			// Outside every zone: the seeded files, unchanged, and nothing
			// else.
			var landed []string
			entries, err := os.ReadDir(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				b, _ := os.ReadFile(filepath.Join(out, e.Name()))
				if !strings.HasPrefix(e.Name(), "edit-") || string(b) != "old\n" {
					landed = append(landed, e.Name())
				}
			}
			inside := 0
			for i := range tries {
				for _, name := range []string{fmt.Sprintf("made-%d", i), fmt.Sprintf("edit-%d", i)} {
					if b, err := os.ReadFile(filepath.Join(real, name)); err == nil && string(b) == "new\n" {
						inside++
					}
				}
			}
			sort.Strings(landed)
			t.Logf("%d of %d changes made in %s, %d in %s", inside, tries, real, len(landed), out)
			if len(landed) > 0 {
				t.Errorf("changes the hook judged landed in %s, through a link swapped after the check: %v", out, landed)
			}
			// The race ran if something was let through at least once
			// while the link led into the project: made there, or
			// allowed by the hook (Claude Code then resolves the path
			// again itself and refuses most of these).
			recs := r.records()
			passed := 0
			for _, rec := range recs {
				if rec.Via == r.agentName() && rec.Op != "" && rec.Op != "read" && (rec.Outcome == "allowed" || rec.Outcome == "ran") {
					passed++
				}
			}
			if inside == 0 && passed == 0 {
				t.Errorf("no change was made inside the project, nor let through by the hook: the test raced nothing")
			}

			// Every change is in the audit log, made through the agent.
			var missing []string
			for i := range tries {
				found := false
				for _, rec := range recs {
					base := filepath.Base(rec.Path)
					found = found || rec.Via == r.agentName() && rec.Op != "" && rec.Op != "read" &&
						(base == fmt.Sprintf("made-%d", i) || base == fmt.Sprintf("edit-%d", i))
				}
				if !found {
					missing = append(missing, fmt.Sprint(i))
				}
			}
			if len(missing) > 0 {
				t.Errorf("the audit log has no record, via %s, of the changes of tries %s", r.agentName(), strings.Join(missing, ", "))
			}
		})
	}
}

func claudeBackground(cmd string) fakemodel.Step {
	return fakemodel.Call("Bash", map[string]any{"command": cmd, "description": "swap", "run_in_background": true})
}

// codexBackground returns after yield_time_ms while the command runs.
func codexBackground(cmd string) fakemodel.Step {
	return fakemodel.Call("exec_command", map[string]any{"cmd": cmd, "yield_time_ms": 250})
}
