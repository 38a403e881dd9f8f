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
