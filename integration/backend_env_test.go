//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSuperviseBackendReachesAgent: `guardrun supervise --backend
// landlock` gives the agent GUARDRUN_BACKEND, so the guardrun the agent
// runs as $SHELL uses landlock too (the audit names it) where the
// config's auto would pick bwrap. A bad $GUARDRUN_BACKEND is a usage
// error, as a bad --backend is.
func TestSuperviseBackendReachesAgent(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, runConfig, "GUARDRUN_SESSION=backend-env")
	landlockWorks(t, w, w.work)
	tt := startOnTTY(t, w, guardrunBin, "supervise", "--backend", "landlock", "--",
		"sh", "-c", `echo "backend=$GUARDRUN_BACKEND"; "$SHELL" -c true; echo "status=$?"`)
	tt.waitFor(0, `status=\d+`)
	if st := tt.wait(); st != 0 {
		t.Fatalf("supervise: status %d; screen:\n%s", st, tt.screen())
	}
	if s := tt.screen(); !strings.Contains(s, "backend=landlock") || !strings.Contains(s, "status=0") {
		t.Fatalf("the agent saw:\n%s\nwant GUARDRUN_BACKEND=landlock and its guardrun -c true to succeed", s)
	}
	data, err := os.ReadFile(filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var ended []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r struct{ Script, Outcome, Sandbox string }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if r.Script == "true" && r.Outcome == "ran" {
			ended = append(ended, r.Sandbox)
		}
	}
	if len(ended) != 1 || ended[0] != "landlock" {
		t.Errorf("the agent's guardrun -c true ran under %v, want [landlock]; log:\n%s", ended, data)
	}

	cmd := exec.Command(guardrunBin, "-c", "true")
	cmd.Dir, cmd.Env = w.work, append(append([]string{}, w.env...), "GUARDRUN_BACKEND=chroot")
	out, _ := cmd.CombinedOutput()
	if st := cmd.ProcessState.ExitCode(); st != 2 || !strings.Contains(string(out), `$GUARDRUN_BACKEND wants auto, bwrap or landlock, got "chroot"`) {
		t.Errorf("GUARDRUN_BACKEND=chroot: status %d, output %s; want 2 naming the variable", st, out)
	}
}
