//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

// copyRules allow cp, mv and sh, as many a project's rules do, and
// refuse what needs a person.
var copyRules = strings.Replace(paramRules, "    - {pattern: chmod, approval: false}\n",
	"    - {pattern: chmod, approval: false}\n    - {pattern: cp, approval: false}\n    - {pattern: mv, approval: false}\n    - {pattern: sh, approval: false}\n", 1)

// openRules allow every command without asking: only the sandbox keeps
// a command to its zones.
var openRules = strings.Replace(paramRules, "default: {allowed: true, approval: true}", "default: {allowed: true, approval: false}", 1)

// nextSession starts the agent again in the rig's home and project, as
// the person would start it the next day, against a new fake model
// playing steps.
func (r *rig) nextSession(steps ...fakemodel.Step) {
	r.t.Helper()
	r.srv = fakemodel.Start(r.t, steps...)
	for i, kv := range r.env {
		for _, k := range []string{"ANTHROPIC_BASE_URL=", "GOOGLE_GEMINI_BASE_URL="} {
			if strings.HasPrefix(kv, k) {
				r.env[i] = k + r.srv.URL
			}
		}
	}
}

// TestAgentsNextSessionRunsNothingTheModelLeft: what a model writes in
// its project with the tools guardrun allows must not make the agent's
// next session run anything outside guardrun's sandbox.
func TestAgentsNextSessionRunsNothingTheModelLeft(t *testing.T) {
	type leave struct {
		name  string
		agent fakemodel.Agent
		rules string // "" for agentRules
		// steps of the first session, given the marker an unsandboxed
		// program would make; they leave files in the project.
		steps func(r *rig, marker string) []fakemodel.Step
	}
	script := func(marker string) string { return "echo ran > " + marker + "\n" }
	tests := []leave{
		{"a .env that Gemini CLI loads into its environment: BASH_ENV by the file tool", fakemodel.Gemini, "", func(r *rig, marker string) []fakemodel.Step {
			return []fakemodel.Step{
				fakemodel.Call("write_file", map[string]any{"file_path": "startup.sh", "content": script(marker)}),
				fakemodel.Call("write_file", map[string]any{"file_path": ".env", "content": "BASH_ENV=" + filepath.Join(r.w.Project, "startup.sh") + "\n"}),
			}
		}},
		{"a .env that Gemini CLI loads into its environment: BASH_ENV by a command", fakemodel.Gemini, "", func(r *rig, marker string) []fakemodel.Step {
			return []fakemodel.Step{
				fakemodel.Call("write_file", map[string]any{"file_path": "startup.sh", "content": script(marker)}),
				fakemodel.Call("run_shell_command", map[string]any{"command": "echo BASH_ENV=" + filepath.Join(r.w.Project, "startup.sh") + " > .env"}),
			}
		}},
		{"a .env that Gemini CLI loads into its environment: copied by an allowed program", fakemodel.Gemini, copyRules, func(r *rig, marker string) []fakemodel.Step {
			return []fakemodel.Step{
				fakemodel.Call("write_file", map[string]any{"file_path": "startup.sh", "content": script(marker)}),
				fakemodel.Call("write_file", map[string]any{"file_path": "env.txt", "content": "BASH_ENV=" + filepath.Join(r.w.Project, "startup.sh") + "\n"}),
				fakemodel.Call("run_shell_command", map[string]any{"command": "cp env.txt .env"}),
			}
		}},
		{"a .env that Gemini CLI loads into its environment: made by git apply, every command allowed", fakemodel.Gemini, openRules, func(r *rig, marker string) []fakemodel.Step {
			line := "BASH_ENV=" + filepath.Join(r.w.Project, "startup.sh")
			patch := "diff --git a/.env b/.env\nnew file mode 100644\n--- /dev/null\n+++ b/.env\n@@ -0,0 +1 @@\n+" + line + "\n"
			return []fakemodel.Step{
				fakemodel.Call("write_file", map[string]any{"file_path": "startup.sh", "content": script(marker)}),
				fakemodel.Call("write_file", map[string]any{"file_path": "env.patch", "content": patch}),
				fakemodel.Call("run_shell_command", map[string]any{"command": "git apply env.patch"}),
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var marker string
			var first []fakemodel.Step
			rules := tt.rules
			if rules == "" {
				rules = agentRules
			}
			r := newRigWith(t, tt.agent, rules, func(r *rig) []fakemodel.Step {
				marker = filepath.Join(filepath.Dir(r.w.Home), "ran-outside")
				first = tt.steps(r, marker)
				return append(append([]fakemodel.Step{}, first...), fakemodel.Say("done"))
			})
			if tt.agent.Name != "claude" {
				if out, code := r.guardrun("integrate", r.agentName()); code != 0 {
					t.Fatalf("integrate: %d %s", code, out)
				}
			}
			r.run()
			for i := range first {
				t.Logf("first session, step %d: %q", i, r.result(i))
			}
			r.nextSession(tt.agent.Shell("echo next"), fakemodel.Say("done"))
			out := r.run()
			t.Logf("next session: %q", r.result(0))
			if fileExists(marker) {
				b, _ := os.ReadFile(marker)
				t.Errorf("the next session ran a program the model left, outside the sandbox (it wrote %q)\noutput:\n%s", b, out)
			}
		})
	}
}
