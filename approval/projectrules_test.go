package approval

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/rules"
)

// The a key: offered only with a proposed rule, it approves and says so;
// where nothing is proposed it is refused like s without a key.
func TestConverseAlways(t *testing.T) {
	d := decision(rules.Ask, "npm run lint", "needs approval")
	rows := []struct {
		name   string
		input  string
		always string
		want   Answer
	}{
		{"a approves and keeps the rule", "a", "npm run lint", Answer{Approve: true, Always: true}},
		{"A is a too", "A", "npm run lint", Answer{Approve: true, Always: true}},
		{"without a proposal a is refused", "anno\r", "", Answer{Note: "no"}},
		{"y stays once", "y", "npm run lint", Answer{Approve: true}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var out bytes.Buffer
			req := &Request{Display: "npm run lint", Decision: d, Key: "k", Always: r.always, Project: "/p"}
			a, err := (&Dialog{In: strings.NewReader(r.input), Out: &out}).Run(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(a, r.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
			shown := out.String()
			if r.always != "" && (!strings.Contains(shown, "[a] always in this project") || !strings.Contains(shown, "[a] keeps the rule npm run lint for /p")) {
				t.Errorf("the prompt does not show the pattern [a] keeps:\n%s", shown)
			}
			if r.always == "" && strings.Contains(shown, "[a] always") {
				t.Errorf("[a] offered without a proposal:\n%s", shown)
			}
		})
	}
}

// An always answer keeps the rule in the person's store and says which;
// without a store or a proposal it approves once; a store that cannot be
// written approves with a warning.
func TestGateAlways(t *testing.T) {
	dir := t.TempDir()
	store, err := OpenRuleStore(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	blocked := filepath.Join(dir, "file")
	os.WriteFile(blocked, nil, 0o600)
	broken, _ := OpenRuleStore(blocked)
	rows := []struct {
		name        string
		store       ProjectRules
		always      string
		wantAlways  string
		wantWarning bool
		wantRules   []string
	}{
		{"the rule is kept", store, "npm run lint", "npm run lint", false, []string{"npm run lint"}},
		{"nothing proposed: approved once", store, "", "", false, []string{"npm run lint"}},
		{"no store: approved once", nil, "npm test", "", false, []string{"npm run lint"}},
		{"a store that cannot be written warns", broken, "npm test", "", true, []string{"npm run lint"}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			g := &Gate{Mode: rules.ModeInteractive, Rules: r.store,
				Prompter: &fakePrompter{answer: Answer{Approve: true, Always: true, Front: "web"}}}
			out, err := g.Decide(context.Background(), &Request{Display: "x", Decision: decision(rules.Ask, "x", "r"), Always: r.always, Project: "/p"})
			if err != nil {
				t.Fatal(err)
			}
			if !out.Run || out.By != "person" || out.Front != "web" || out.Always != r.wantAlways || (out.Warning != "") != r.wantWarning {
				t.Errorf("outcome %+v", out)
			}
			list, err := store.Rules("/p")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, pr := range list {
				got = append(got, pr.Pattern)
				if pr.Front != "web" {
					t.Errorf("rule %q: front %q", pr.Pattern, pr.Front)
				}
			}
			if diff := cmp.Diff(got, r.wantRules); diff != "" {
				t.Errorf("rules kept (-got +want):\n%s", diff)
			}
		})
	}
}

// A broker that went away is a refusal naming it, never a run and never
// guardrun's own failure.
func TestGateNoAnswer(t *testing.T) {
	g := &Gate{Mode: rules.ModeInteractive, Prompter: &fakePrompter{err: &NoAnswerError{By: "broker", Why: "the approval broker went away before anyone answered"}}}
	out, err := g.Decide(context.Background(), &Request{Display: "make", Decision: decision(rules.Ask, "make", "r")})
	if err != nil {
		t.Fatal(err)
	}
	want := Outcome{By: "broker", Refusal: "guardrun: refused: the approval broker went away before anyone answered: make needs approval"}
	if diff := cmp.Diff(out, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

// The store: revoking one pattern, a project's rules, concurrent writers
// losing nothing, and files someone else could have written refused.
func TestRuleStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, _ := OpenRuleStore(dir)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.AddProjectRule(fmt.Sprintf("/p%d", i%2), fmt.Sprintf("cmd%d", i), ""); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	all, err := s.List()
	if err != nil || len(all) != 20 {
		t.Fatalf("%d rules after 20 concurrent adds (%v)", len(all), err)
	}
	if n, err := s.Revoke("/p0", "cmd0"); n != 1 || err != nil {
		t.Errorf("revoke one: %d, %v", n, err)
	}
	if n, err := s.Revoke("/p0", "cmd0"); n != 0 || err != nil {
		t.Errorf("revoke it again: %d, %v", n, err)
	}
	if n, err := s.Revoke("/p1", ""); n != 10 || err != nil {
		t.Errorf("revoke a project's: %d, %v", n, err)
	}
	if rs, _ := s.Rules("/p0"); len(rs) != 9 {
		t.Errorf("/p0 keeps %d rules, want 9", len(rs))
	}
	if err := s.AddProjectRule("relative", "x", ""); err == nil {
		t.Error("a relative project was kept")
	}
	if fi, err := os.Stat(s.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the store's mode: %v %v", fi.Mode(), err)
	}

	os.Chmod(s.Path(), 0o622)
	if _, err := s.List(); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("a group-writable store: %v", err)
	}
	os.Chmod(s.Path(), 0o600)
	other := filepath.Join(t.TempDir(), "rules.json")
	os.Rename(s.Path(), other)
	os.Symlink(other, s.Path())
	if _, err := s.List(); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a store that is a symlink: %v", err)
	}
	os.Remove(s.Path())
	os.WriteFile(s.Path(), []byte("{not json"), 0o600)
	if rs, err := s.Rules("/p0"); err == nil || rs != nil {
		t.Errorf("a damaged store granted %v (%v)", rs, err)
	}
}
