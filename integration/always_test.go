//go:build linux

package integration

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/broker"
)

// "Always in this project" at the terminal prompt: a shows the exact
// rule, keeps it in the person's state (not in the repository), the
// same command then runs without asking, audited as the project rule's,
// and guardrun rules lists and revokes it.
func TestAlwaysInThisProject(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, superviseConfig)
	r := startPrompt(t, w, nil, "-c", "touch made-a")
	r.waitFor("[a] always in this project", 1)
	if s := r.screen(); !strings.Contains(s, "[a] keeps the rule touch made-a for "+w.work) {
		t.Errorf("the prompt does not show the rule [a] keeps:\n%s", s)
	}
	r.send("a")
	if code := r.wait(); code != 0 || !exists(filepath.Join(w.work, "made-a")) {
		t.Fatalf("exit %d after a; stderr: %s", code, r.stderr.String())
	}
	rec := lastAudit(t, w)
	if rec["decided_by"] != "person" || rec["project_rule"] != "touch made-a" || rec["project"] != w.work {
		t.Errorf("the answer's audit record: %v", rec)
	}
	if exists(filepath.Join(w.work, ".guardrun.yaml")) {
		t.Error("the rule was written into the project")
	}

	// Without a terminal: no one to ask, yet it runs.
	_, stderr, code := runPlain(t, w, "", nil, "-c", "touch made-a")
	if code != 0 {
		t.Fatalf("the kept rule did not pre-approve: exit %d: %s", code, stderr)
	}
	rec = lastAudit(t, w)
	if rec["decided_by"] != "project-rule" || rec["project_rule"] != "touch made-a" {
		t.Errorf("the rule's use in the audit: %v", rec)
	}
	// Anything else still asks (and without a terminal, is refused).
	if _, _, code := runPlain(t, w, "", nil, "-c", "touch made-b"); code != 77 {
		t.Errorf("another command: exit %d, want 77", code)
	}

	out, _, code := runPlain(t, w, "", nil, "rules", "list", "--json")
	var list struct {
		Project string `json:"project"`
		Rules   []struct{ Project, Pattern string }
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != 0 {
		t.Fatalf("rules list --json: %v (exit %d): %s", err, code, out)
	}
	if list.Project != w.work || len(list.Rules) != 1 || list.Rules[0].Pattern != "touch made-a" || list.Rules[0].Project != w.work {
		t.Errorf("rules list: %+v", list)
	}
	if _, stderr, code := runPlain(t, w, "", nil, "rules", "revoke", "touch made-a"); code != 0 {
		t.Fatalf("rules revoke: exit %d: %s", code, stderr)
	}
	if _, _, code := runPlain(t, w, "", nil, "-c", "touch made-a"); code != 77 {
		t.Errorf("after revoke: exit %d, want 77 (it asks again)", code)
	}
}

// The same through the broker: a front's always answer keeps the rule
// and the audit names the front.
func TestAlwaysThroughBroker(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, superviseConfig)
	web := startWebProc(t, w)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	front, err := broker.Attach(ctx, web.socket, "test-front", web.token)
	if err != nil {
		t.Fatal(err)
	}
	defer front.Close()
	done := make(chan int, 1)
	go func() {
		_, _, code := runPlain(t, w, "", nil, "-c", "touch via-broker")
		done <- code
	}()
	ev := <-front.Events
	if ev.Pending == nil || ev.Pending.Always != "touch via-broker" || ev.Pending.Project != w.work {
		t.Fatalf("the front saw %+v", ev.Pending)
	}
	if err := front.Answer(ctx, ev.Pending.ID, broker.Answer{Approve: true, Always: true}); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
	rec := lastAudit(t, w)
	if rec["front"] != "test-front" || rec["project_rule"] != "touch via-broker" {
		t.Errorf("audit %v", rec)
	}
	if _, _, code := runPlain(t, w, "", nil, "-c", "touch via-broker"); code != 0 {
		t.Errorf("the kept rule: exit %d", code)
	}
}
