//go:build linux

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAuditStartSurvivesKill: a guardrun killed with SIGKILL while its
// command runs has already logged the start (decision, who decided, the
// sandbox); `guardrun log` shows it as unfinished, and a run that ends
// shows once, joined.
func TestAuditStartSurvivesKill(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, runConfig, "GUARDRUN_SESSION=kill-test")
	auditPath := filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun", "audit.jsonl")

	if _, stderr, code := runPlain(t, w, "", nil, "-c", "true"); code != 0 {
		t.Fatalf("guardrun -c true: exit %d: %s", code, stderr)
	}

	// A marker in the sleep's argv finds the command among the host's
	// processes: guardrun is killed once it runs, past bwrap's set-up,
	// when the whole sandbox must go with it.
	marker := fmt.Sprintf("30.%d", 100000+os.Getpid()%900000)
	script := "sleep " + marker
	cmd, output := startKillable(t, w, "-c", script)
	// The started record is written before the command starts.
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, _ := os.ReadFile(auditPath)
		if bytes.Contains(data, []byte(`"script":"`+script+`"`)) && len(markerProcs(marker)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record of the start of %s, or it never ran, after 20s; output: %s\nlog:\n%s", script, output.String(), data)
		}
		time.Sleep(20 * time.Millisecond)
	}
	killGone(t, cmd, marker)

	out, errOut, code := runPlain(t, w, "", nil, "log", "--json")
	if code != 0 {
		t.Fatalf("guardrun log --json: exit %d: %s", code, errOut)
	}
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 2 {
		t.Fatalf("guardrun log --json shows %d records, want 2 (true, joined; sleep, started):\n%s", len(recs), out)
	}
	first, second := recs[0], recs[1]
	if first["script"] != "true" || first["outcome"] != "ran" || first["run"] == "" || first["zones"] == nil {
		t.Errorf("first record = %v, want the joined run of true (ran, with its run and zones)", first)
	}
	want := map[string]any{"script": script, "outcome": "started", "verdict": "allow", "decided_by": "rule", "sandbox": "bwrap"}
	for k, v := range want {
		if second[k] != v {
			t.Errorf("start record %s = %v, want %v (record %v)", k, second[k], v, second)
		}
	}
	if z, _ := second["zones"].(string); !strings.Contains(z, "workspace") || !strings.Contains(z, "network off") {
		t.Errorf("start record zones = %q, want the workspace zone and network off", z)
	}

	text, _, _ := runPlain(t, w, "", nil, "log")
	if !strings.Contains(text, "unfinished") || !strings.Contains(text, script) {
		t.Errorf("guardrun log does not show the killed run as unfinished:\n%s", text)
	}
	// The raw log holds both records of the finished run.
	data, _ := os.ReadFile(auditPath)
	if n := bytes.Count(data, []byte(`"script":"true"`)); n != 2 {
		t.Errorf("the log holds %d records of true, want 2 (started, ran):\n%s", n, data)
	}
}
