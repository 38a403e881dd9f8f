package rules

import "testing"

// TestQuotedGlobsInRules: a quoted glob character in a pattern is a
// literal, an unquoted one globs, as the README says; a block rule written
// with quotes must still block.
func TestQuotedGlobsInRules(t *testing.T) {
	e, dir := newTestEngine(t, `
shell:
  rules:
    - {pattern: "foo '*'", allowed: false}
    - {pattern: "'a*b'", allowed: false}
    - {pattern: "bar 'x?'", allowed: false}
    - {pattern: "baz \"@(p|q)\"", allowed: false}
    - {pattern: "qux @(p|q)", allowed: false}
    - {pattern: "g*b", approval: false}
    - {pattern: "'['", allowed: false}
sandbox:
  paths:
    workspace: {root: ., mode: rw}
`)
	for _, tc := range []struct {
		script string
		want   Verdict
	}{
		{`foo '*'`, Block},
		{`foo \*`, Block},
		{`foo bar`, Ask},
		{`'a*b'`, Block},
		{`axb`, Ask},
		{`bar 'x?'`, Block},
		{`bar xy`, Ask},
		{`baz '@(p|q)'`, Block},
		{`baz p`, Ask},
		{`qux p`, Block},
		{`qux q`, Block},
		{`qux '@(p|q)'`, Ask},
		{`gob`, Allow},
		{`'g*b'`, Allow},
		{`'[' x`, Block},
	} {
		if d := e.Script(tc.script, dir); d.Decision != tc.want {
			t.Errorf("Script(%q) = %s (%s), want %s", tc.script, d.Decision, d.Reason, tc.want)
		}
	}
}
