//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

// fileRules are openRules that also deny a file of the project.
var fileRules = strings.Replace(openRules, "  network: false\n", "  network: false\n  deny: [PROJECT/secret.txt]\n", 1)

// TestAgentsClaudeFileToolsStayInTheZones: Claude Code's own file tools,
// which write unsandboxed once the hook allows, reach nothing the zones
// refuse, whatever path the model gives them: through links a command
// made (dangling ones too), /proc/self, .. into the agent's settings.
func TestAgentsClaudeFileToolsStayInTheZones(t *testing.T) {
	a := fakemodel.Claude
	var out, project string
	r := newRigWith(t, a, fileRules, func(r *rig) []fakemodel.Step {
		project = r.w.Project
		out = filepath.Join(filepath.Dir(r.w.Home), "outside")
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		fakemodel.WriteFile(t, filepath.Join(out, "kept.txt"), "the person's\n")
		fakemodel.WriteFile(t, filepath.Join(project, "secret.txt"), "s3cret\n")
		write := func(p string) fakemodel.Step {
			return fakemodel.Call("Write", map[string]any{"file_path": p, "content": "x\n"})
		}
		return []fakemodel.Step{
			a.Shell("ln -s " + out + "/made-by-dangling dangling; ln -s " + out + " dirlink; ln -s " + out + "/kept.txt kept; ln -s secret.txt secretlink"),
			write(filepath.Join(project, "dangling")),
			write(filepath.Join(project, "dirlink", "made-by-dirlink")),
			write(filepath.Join(project, "sub", "..", ".claude", "settings.local.json")),
			write("/proc/self/cwd/.claude/settings.local.json"),
			write("/proc/self/root" + out + "/made-by-proc"),
			fakemodel.Call("Edit", map[string]any{"file_path": filepath.Join(project, "kept"), "old_string": "the person's", "new_string": "the model's"}),
			fakemodel.Call("Read", map[string]any{"file_path": filepath.Join(project, "secretlink")}),
			fakemodel.Call("Read", map[string]any{"file_path": "/proc/self/cwd/secret.txt"}),
			fakemodel.Call("Read", map[string]any{"file_path": filepath.Join(r.w.Home, ".local", "state", "guardrun", "audit.jsonl")}),
			a.Shell("ln -s /proc/self/cwd/secret.txt proclink"),
			fakemodel.Call("Read", map[string]any{"file_path": filepath.Join(project, "proclink")}),
			fakemodel.Say("done"),
		}
	})
	r.argv = append(r.argv, "Edit", "Read")
	if o, code := r.guardrun("integrate", "claude-code"); code != 0 {
		t.Fatalf("integrate: %d %s", code, o)
	}
	agentOut := r.run()
	for i := 0; i < 12; i++ {
		t.Logf("step %d: %.200q", i, r.result(i))
	}
	kept, _ := os.ReadFile(filepath.Join(out, "kept.txt"))
	type outcome struct {
		Made     []string
		Kept     string
		Settings bool
		Read     []int
	}
	got := outcome{Kept: string(kept), Settings: fileExists(filepath.Join(project, ".claude", "settings.local.json"))}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if e.Name() != "kept.txt" {
			got.Made = append(got.Made, e.Name())
		}
	}
	for _, i := range []int{7, 8, 9, 11} {
		if res := r.result(i); strings.Contains(res, "s3cret") || strings.Contains(res, `"outcome"`) {
			got.Read = append(got.Read, i)
		}
	}
	if diff := cmp.Diff(got, outcome{Kept: "the person's\n"}); diff != "" {
		t.Errorf("Claude Code's file tools (-got +want):\n%s\noutput:\n%s", diff, agentOut)
	}
}

// TestAgentsClaudeRelativePathsFollowTheShell: Claude Code takes a
// relative file_path from its shell's directory, which a cd moved, and
// the hook judges it from the same directory (the cwd of its input): a
// ../.. that leaves the project is refused, one that stays is allowed.
func TestAgentsClaudeRelativePathsFollowTheShell(t *testing.T) {
	a := fakemodel.Claude
	r := newRigWith(t, a, openRules, func(r *rig) []fakemodel.Step {
		return []fakemodel.Step{
			a.Shell("cd sub"),
			fakemodel.Call("Write", map[string]any{"file_path": "../../escaped.txt", "content": "x\n"}),
			fakemodel.Call("Write", map[string]any{"file_path": "../stayed.txt", "content": "x\n"}),
			fakemodel.Say("done"),
		}
	})
	if o, code := r.guardrun("integrate", "claude-code"); code != 0 {
		t.Fatalf("integrate: %d %s", code, o)
	}
	r.run()
	type outcome struct{ Escaped, Stayed bool }
	got := outcome{fileExists(filepath.Join(filepath.Dir(r.w.Project), "escaped.txt")), r.exists("stayed.txt")}
	if diff := cmp.Diff(got, outcome{Stayed: true}); diff != "" {
		t.Errorf("relative paths after cd sub (-got +want):\n%s\nresults: %q %q", diff, r.result(1), r.result(2))
	}
}

// TestAgentsGlobListsNothingOutsideTheZones: a glob tool's pattern that
// leads out of the zones (absolute, with .., or through a link a
// wildcard matches) lists no name there.
func TestAgentsGlobListsNothingOutsideTheZones(t *testing.T) {
	for _, a := range []fakemodel.Agent{fakemodel.Claude, fakemodel.Gemini} {
		t.Run(a.Name, func(t *testing.T) {
			var out string
			const name = "a-name-outside-every-zone.txt"
			r := newRigWith(t, a, openRules, func(r *rig) []fakemodel.Step {
				out = filepath.Join(filepath.Dir(r.w.Home), "outside")
				fakemodel.WriteFile(t, filepath.Join(out, name), "x\n")
				if err := os.Symlink(out, filepath.Join(r.w.Project, "link")); err != nil {
					t.Fatal(err)
				}
				tool := map[string]string{"claude": "Glob", "gemini": "glob"}[a.Name]
				return []fakemodel.Step{
					fakemodel.Call(tool, map[string]any{"pattern": "../outside/*"}),
					fakemodel.Call(tool, map[string]any{"pattern": out + "/*"}),
					fakemodel.Call(tool, map[string]any{"pattern": "*/../../outside/*"}),
					// A link out of the zone that a wildcard matches.
					fakemodel.Call(tool, map[string]any{"pattern": "*/*"}),
					fakemodel.Call(tool, map[string]any{"pattern": "l*/*"}),
					fakemodel.Call(tool, map[string]any{"pattern": "**/*"}),
					fakemodel.Say("done"),
				}
			})
			if a.Name == "claude" {
				r.argv = append(r.argv, "Glob")
			}
			if o, code := r.guardrun("integrate", r.agentName()); code != 0 {
				t.Fatalf("integrate: %d %s", code, o)
			}
			r.run()
			for i := 0; i < 6; i++ {
				if res := r.result(i); strings.Contains(res, name) {
					t.Errorf("step %d listed a name outside every zone: %.300q", i, res)
				}
			}
		})
	}
}
