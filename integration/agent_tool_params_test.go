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

// paramRules let the model make files executable in its project (chmod
// is allowed there, as in most projects) and refuse everything that
// would need a person.
const paramRules = `mode: strict
shell:
  program: /bin/bash
  default: {allowed: true, approval: true}
  rules:
    - {pattern: echo, approval: false}
    - {pattern: cat, approval: false}
    - {pattern: chmod, approval: false}
    - {pattern: ls, approval: false}
    - {pattern: cd, approval: false}
    - {pattern: pwd, approval: false}
sandbox:
  paths:
    project: {root: PROJECT, mode: rw}
  system_read: default
  network: false
  require_os_sandbox: true
  os_sandbox_fallback: fail_fast
`

// TestAgentsCodexShellParameterCannotRunAProgramOfTheModels: Codex's
// exec_command takes the shell to run a command with from the model
// (its "shell" parameter, which the hook does not see). A program the
// model wrote in its project and named like a shell must not run
// outside guardrun's sandbox.
func TestAgentsCodexShellParameterCannotRunAProgramOfTheModels(t *testing.T) {
	a := fakemodel.Codex
	var marker string
	r := newRigWith(t, a, paramRules, func(r *rig) []fakemodel.Step {
		marker = filepath.Join(filepath.Dir(r.w.Home), "outside-by-shell")
		fake := "#!/bin/sh\necho ran > " + marker + "\necho FAKE-SHELL\n"
		return []fakemodel.Step{
			a.Write(r.w, "tools/bash", fake),
			a.Shell("chmod +x tools/bash"),
			fakemodel.Call("exec_command", map[string]any{"cmd": "echo hello", "shell": filepath.Join(r.w.Project, "tools", "bash")}),
			fakemodel.Call("exec_command", map[string]any{"cmd": "echo hello", "shell": filepath.Join(r.w.Project, "tools", "bash"), "login": false}),
			fakemodel.Say("done"),
		}
	})
	if out, code := r.guardrun("integrate", "codex"); code != 0 {
		t.Fatalf("integrate: %d %s", code, out)
	}
	out := r.run()
	for i := 0; i < 4; i++ {
		t.Logf("step %d: %q", i, r.result(i))
	}
	type outcome struct{ Made, Executable, RanOutside, ItsOutput bool }
	fi, err := os.Stat(filepath.Join(r.w.Project, "tools", "bash"))
	got := outcome{
		Made: err == nil, Executable: err == nil && fi.Mode()&0o111 != 0,
		RanOutside: fileExists(marker),
		ItsOutput:  strings.Contains(r.result(2)+r.result(3), "FAKE-SHELL"),
	}
	if diff := cmp.Diff(got, outcome{Made: true, Executable: true}); diff != "" {
		t.Errorf("a shell the model wrote (-got +want):\n%s\noutput:\n%s\nrequests:\n%s", diff, out, r.srv.Summary())
	}
}

// pwdRules are openRules with the project zone at $PWD: the zone is
// wherever guardrun takes the agent's project to be.
var pwdRules = strings.Replace(openRules, "project: {root: PROJECT, mode: rw}", "project: {root: $PWD, mode: rw}", 1)

// TestAgentsCodexCallsStayInTheZones: what the model chooses in a Codex
// call (the workdir, a pty, no login shell, the shell, apply_patch
// through exec_command, a patch's paths and moves, links a command made)
// never writes outside the zones. Every command is allowed; only the
// sandbox and the hook's file checks stand in the way.
func TestAgentsCodexCallsStayInTheZones(t *testing.T) {
	a := fakemodel.Codex
	patch := func(body string) string { return "*** Begin Patch\n" + body + "*** End Patch\n" }
	tests := []struct {
		name  string
		rules string
		// steps, given the project and a directory outside every zone
		// whose file "made" only an unsandboxed write creates.
		steps func(project, out string) []fakemodel.Step
	}{
		{"a workdir above the project with the zone at $PWD", pwdRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{fakemodel.Call("exec_command", map[string]any{"cmd": "echo x > " + filepath.Base(out) + "/made", "workdir": filepath.Dir(out)})}
		}},
		{"a workdir outside the project", openRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{fakemodel.Call("exec_command", map[string]any{"cmd": "echo x > made", "workdir": out})}
		}},
		{"a pty", openRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{fakemodel.Call("exec_command", map[string]any{"cmd": "echo x > " + out + "/made", "tty": true, "yield_time_ms": 5000})}
		}},
		{"no login shell", openRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{fakemodel.Call("exec_command", map[string]any{"cmd": "echo x > " + out + "/made", "login": false})}
		}},
		{"sh as the shell", openRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{fakemodel.Call("exec_command", map[string]any{"cmd": "echo x > " + out + "/made", "shell": "/bin/sh"})}
		}},
		{"zsh as the shell", openRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{fakemodel.Call("exec_command", map[string]any{"cmd": "echo x > " + out + "/made", "shell": "/usr/bin/zsh"})}
		}},
		{"apply_patch in exec_command as a here-document", openRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{fakemodel.Call("exec_command", map[string]any{"cmd": "apply_patch <<'EOF'\n" + patch("*** Add File: "+out+"/made\n+x\n") + "EOF\n"})}
		}},
		{"apply_patch in exec_command as an argument", openRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{fakemodel.Call("exec_command", map[string]any{"cmd": "apply_patch '" + patch("*** Add File: "+out+"/made\n+x\n") + "'"})}
		}},
		{"a patch moving a file out", openRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{fakemodel.Call("apply_patch", map[string]any{"input": patch("*** Update File: README.md\n*** Move to: " + out + "/made\n@@\n-# a project for the fake model\n+x\n")})}
		}},
		{"a patch adding a file through a link a command made", openRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{
				fakemodel.Call("exec_command", map[string]any{"cmd": "ln -s " + out + " link"}),
				fakemodel.Call("apply_patch", map[string]any{"input": patch("*** Add File: link/made\n+x\n")}),
			}
		}},
		{"a patch adding a file where a dangling link points", openRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{
				fakemodel.Call("exec_command", map[string]any{"cmd": "ln -s " + out + "/made dangling"}),
				fakemodel.Call("apply_patch", map[string]any{"input": patch("*** Add File: dangling\n+x\n")}),
			}
		}},
		{"a patch adding Codex's project config", openRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{
				fakemodel.Call("exec_command", map[string]any{"cmd": "ln -s " + out + " .codex"}),
				fakemodel.Call("apply_patch", map[string]any{"input": patch("*** Add File: .codex/made\n+x\n")}),
			}
		}},
		{"the shell_command tool", openRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{fakemodel.Call("shell_command", map[string]any{"command": "echo x > " + out + "/made"})}
		}},
		{"the shell tool", openRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{fakemodel.Call("shell", map[string]any{"command": []string{"bash", "-c", "echo x > " + out + "/made"}})}
		}},
		{"the local_shell tool", openRules, func(p, out string) []fakemodel.Step {
			return []fakemodel.Step{fakemodel.Call("local_shell", map[string]any{"command": []string{"bash", "-c", "echo x > " + out + "/made"}})}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out string
			var steps []fakemodel.Step
			r := newRigWith(t, a, tt.rules, func(r *rig) []fakemodel.Step {
				out = filepath.Join(filepath.Dir(r.w.Home), "outside")
				if err := os.Mkdir(out, 0o755); err != nil {
					t.Fatal(err)
				}
				steps = tt.steps(r.w.Project, out)
				return append(append([]fakemodel.Step{}, steps...), fakemodel.Say("done"))
			})
			if o, code := r.guardrun("integrate", "codex"); code != 0 {
				t.Fatalf("integrate: %d %s", code, o)
			}
			agentOut := r.run()
			for i := range steps {
				t.Logf("step %d: %q", i, r.result(i))
			}
			if fileExists(filepath.Join(out, "made")) {
				t.Errorf("%s: a file was made outside every zone\noutput:\n%s\nrequests:\n%s", tt.name, agentOut, r.srv.Summary())
			}
		})
	}
}
