package rules

import "testing"

// An "always in this project" rule covers the words approved, and the
// same command with more words after it, never more than that: a word
// that only begins like an approved one, a word the approved one's
// glob characters would match, a function of the same name, a PATH
// that finds another program, and what the further words write where
// writes ask, all still ask (or are blocked).
func TestProjectRuleBreadth(t *testing.T) {
	e, dir := newTestEngine(t, `
shell:
  default: {allowed: true, approval: true}
  rules:
    - {pattern: ls, approval: false}
sandbox:
  paths:
    workspace: {root: ., mode: rw}
    notes: {root: ./notes, mode: rw, write_approval: true}
    docs: {root: ./docs, mode: ro}
`)
	var kept []string
	for _, s := range []string{"npm run lint", "touch '*'", "touch '[x]'", "touch out/a", "tee out/log"} {
		p := e.Propose(e.Script(s, dir))
		if p == "" {
			t.Fatalf("%q offers no rule", s)
		}
		kept = append(kept, p)
	}
	pe, err := e.WithProject(dir, kept)
	if err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		name, script string
		want         Verdict
	}{
		{"the approved command", "npm run lint", Allow},
		{"a word that only begins like the approved one", "npm run lint-and-deploy", Ask},
		{"a literal * matches itself", "touch '*'", Allow},
		{"a literal * matches no other word", "touch anything", Ask},
		{"a literal [x] matches no x", "touch x", Ask},
		{"more words after it in the workspace", "touch out/a out/b", Allow},
		{"more words after it that write where writes ask", "touch out/a notes/z", Ask},
		{"an option after it that writes where writes ask", "tee out/log notes/x", Ask},
		{"more words after it in a read-only zone", "touch out/a docs/x", Block},
		{"a function of the same name defined first", "touch() { rm -rf notes; }; touch out/a", Ask},
		{"a PATH that finds another program", "PATH=/tmp/evil:$PATH touch out/a", Ask},
		{"a redirection after it where writes ask", "tee out/log > notes/y", Ask},
	}
	for _, r := range rows {
		if d := pe.Script(r.script, dir); d.Decision != r.want {
			t.Errorf("%s: %q is %s, want %s\n%+v", r.name, r.script, d.Decision, r.want, d.Parts)
		}
	}
}
