//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

// TestAgentsRunTheHookIntegrateWrote: guardrun integrate writes its hook
// into the person's settings file as it finds it (comments, trailing
// white space, an empty file); the agent then runs the hook, and a
// command goes into the sandbox. A file the agent itself cannot read is
// one integrate refuses: otherwise --status would call guardrun wired
// where the agent reads no hook at all.
func TestAgentsRunTheHookIntegrateWrote(t *testing.T) {
	tests := []struct {
		name  string
		agent fakemodel.Agent
		file  string // in the home
		text  string
	}{
		{"claude-code settings with a comment", fakemodel.Claude, ".claude/settings.json", "{\n  // mine\n  \"model\": \"opus\"\n}\n"},
		{"claude-code settings with a block comment", fakemodel.Claude, ".claude/settings.json", "/* mine */ {\"model\": \"opus\"}\n"},
		{"claude-code empty settings", fakemodel.Claude, ".claude/settings.json", ""},
		{"claude-code settings with a key of the wrong type", fakemodel.Claude, ".claude/settings.json", `{"model": 5}`},
		{"claude-code settings with a bad permission mode", fakemodel.Claude, ".claude/settings.json", `{"permissions": {"defaultMode": "bogus"}}`},
		{"claude-code settings with an unknown key", fakemodel.Claude, ".claude/settings.json", `{"guardrunTestUnknown": {"x": 1}}`},
		{"claude-code settings with a bad hook elsewhere", fakemodel.Claude, ".claude/settings.json", `{"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "bogus"}]}]}}`},
		// Before the settings the rig wrote (Gemini CLI's key and all).
		{"gemini settings with a comment", fakemodel.Gemini, ".gemini/settings.json", "// mine\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var marker string
			r := newRigWith(t, tt.agent, openRules, func(r *rig) []fakemodel.Step {
				marker = filepath.Join(filepath.Dir(r.w.Home), "ran-outside")
				return []fakemodel.Step{tt.agent.Shell("echo ran > " + marker), fakemodel.Say("done")}
			})
			path := filepath.Join(r.w.Home, tt.file)
			text := tt.text
			if tt.agent.Name == "gemini" {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				text += string(b)
			}
			fakemodel.WriteFile(t, path, text)
			out, code := r.guardrun("integrate", r.agentName())
			status, _ := r.guardrun("integrate", "--status")
			t.Logf("integrate: exit %d: %s\nstatus:\n%s", code, out, status)
			if code != 0 {
				return // refused: nothing claims to be wired
			}
			r.run()
			t.Logf("step 0: %q", r.result(0))
			type outcome struct{ RanOutside bool }
			if diff := cmp.Diff(outcome{fileExists(marker)}, outcome{}); diff != "" {
				t.Errorf("integrate wired guardrun in %s, but the agent ran the command without it (-got +want):\n%s", tt.file, diff)
			}
		})
	}
}
