//go:build linux

package integration

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

// TestAgentsSubagentsGoThroughGuardrun: a command the model has a
// subagent run (Claude Code's Agent tool, Gemini CLI's invoke_agent) goes
// through guardrun's hook as the model's own would: into the sandbox,
// audited, never onto the host.
func TestAgentsSubagentsGoThroughGuardrun(t *testing.T) {
	tests := []struct {
		name  string
		agent fakemodel.Agent
		// steps: the call that starts the subagent, the subagent's
		// command, its end, and the parent's end.
		steps func(command string) []fakemodel.Step
	}{
		{"claude-code Agent general-purpose", fakemodel.Claude, func(c string) []fakemodel.Step {
			return []fakemodel.Step{
				fakemodel.Call("Agent", map[string]any{"description": "run it", "prompt": "run it", "subagent_type": "general-purpose", "run_in_background": false}),
				fakemodel.Call("Bash", map[string]any{"command": c, "description": "run"}),
				fakemodel.Say("sub done"),
				fakemodel.Say("done"),
			}
		}},
		{"gemini invoke_agent generalist", fakemodel.Gemini, func(c string) []fakemodel.Step {
			return []fakemodel.Step{
				fakemodel.Call("invoke_agent", map[string]any{"agent_name": "generalist", "prompt": "run it"}),
				fakemodel.Call("run_shell_command", map[string]any{"command": c}),
				fakemodel.Call("complete_task", map[string]any{"result": map[string]any{"response": "sub done"}}),
				fakemodel.Say("done"),
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var marker, command string
			r := newRigWith(t, tt.agent, openRules, func(r *rig) []fakemodel.Step {
				// Outside every zone: only a command run outside the sandbox
				// makes it.
				marker = filepath.Join(filepath.Dir(r.w.Home), "by-subagent")
				command = "echo ran > " + marker
				return tt.steps(command)
			})
			if tt.agent.Name == "claude" {
				r.argv = append(r.argv, "--allowedTools", "Agent")
			}
			if out, code := r.guardrun("integrate", r.agentName()); code != 0 {
				t.Fatalf("integrate: %d %s", code, out)
			}
			out := r.run()
			for i := 0; i < 4; i++ {
				t.Logf("step %d: %q", i, r.result(i))
			}
			audited := false
			for _, rec := range r.records() {
				audited = audited || rec.Script == command && rec.Via == r.agentName()
			}
			type outcome struct{ Audited, RanOutside bool }
			if diff := cmp.Diff(outcome{audited, fileExists(marker)}, outcome{Audited: true}); diff != "" {
				t.Errorf("a subagent's command (-got +want):\n%s\noutput:\n%s\nrequests:\n%s", diff, out, r.srv.Summary())
			}
		})
	}
}
