package approval

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/rules"
)

type fakePrompter struct {
	answer Answer
	err    error
	asked  int
}

func (f *fakePrompter) Prompt(ctx context.Context, r *Request) (Answer, error) {
	f.asked++
	return f.answer, f.err
}

func decision(v rules.Verdict, text, reason string) *rules.Decision {
	return &rules.Decision{Decision: v, Reason: reason, Parts: []rules.Part{{Kind: "command", Text: text, Argv: strings.Fields(text), Decision: v, Reason: reason}}}
}

func TestVerdictModeTable(t *testing.T) {
	type row struct {
		verdict rules.Verdict
		mode    rules.Mode
		run     bool
		by      string
		refusal string
	}
	rows := []row{
		{rules.Allow, rules.ModeInteractive, true, "rule", ""},
		{rules.Allow, rules.ModeApproveAll, true, "rule", ""},
		{rules.Allow, rules.ModeStrict, true, "rule", ""},
		{rules.Ask, rules.ModeInteractive, true, "person", ""},
		{rules.Ask, rules.ModeApproveAll, true, "mode", ""},
		{rules.Ask, rules.ModeStrict, false, "mode", "guardrun: denied (strict mode): curl example.com needs approval"},
		{rules.Block, rules.ModeInteractive, false, "policy", "guardrun: blocked: rm -rf / matches rule \"rm\" (never allowed)"},
		{rules.Block, rules.ModeApproveAll, false, "policy", "guardrun: blocked: rm -rf / matches rule \"rm\" (never allowed)"},
		{rules.Block, rules.ModeStrict, false, "policy", "guardrun: blocked: rm -rf / matches rule \"rm\" (never allowed)"},
	}
	for _, r := range rows {
		t.Run(r.verdict.String()+"/"+string(r.mode), func(t *testing.T) {
			text, reason := "curl example.com", "curl example.com matches no rule"
			if r.verdict == rules.Block {
				text, reason = "rm -rf /", `rm -rf / matches rule "rm" (never allowed)`
			}
			p := &fakePrompter{answer: Answer{Approve: true}}
			g := &Gate{Mode: r.mode, Prompter: p}
			out, err := g.Decide(context.Background(), &Request{Display: text, Decision: decision(r.verdict, text, reason)})
			if err != nil {
				t.Fatal(err)
			}
			got := row{r.verdict, r.mode, out.Run, out.By, out.Refusal}
			if d := cmp.Diff(got, r, cmp.AllowUnexported(row{})); d != "" {
				t.Errorf("(-got +want):\n%s", d)
			}
			wantAsked := 0
			if r.verdict == rules.Ask && r.mode == rules.ModeInteractive {
				wantAsked = 1
			}
			if p.asked != wantAsked {
				t.Errorf("prompted %d times, want %d", p.asked, wantAsked)
			}
		})
	}
}

func TestDenyWithNote(t *testing.T) {
	g := &Gate{Mode: rules.ModeInteractive, Prompter: &fakePrompter{answer: Answer{Note: "don't touch .env"}}}
	out, _ := g.Decide(context.Background(), &Request{Decision: decision(rules.Ask, "cat .env", "x")})
	if out.Run || out.Refusal != "guardrun: denied by user: don't touch .env" {
		t.Errorf("got %+v", out)
	}
}

func TestNoPersonActsAsStrict(t *testing.T) {
	for _, p := range []Prompter{nil, &fakePrompter{err: ErrNoPerson}} {
		g := &Gate{Mode: rules.ModeInteractive, Prompter: p, ConfigFile: "/c.yaml"}
		out, _ := g.Decide(context.Background(), &Request{Decision: decision(rules.Ask, "make", "x")})
		if out.Run || !strings.Contains(out.Refusal, "interactive mode acts as strict") || !strings.Contains(out.Refusal, "/c.yaml") {
			t.Errorf("got %+v", out)
		}
	}
}

// TestNoPersonSaysWhy: nobody can be asked for a reason (a program's
// terminal, a supervisor without one): the refusal is the mode's, says
// why and how a person could be asked.
func TestNoPersonSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"no terminal", ErrNoPerson, "guardrun: denied (no terminal to ask; interactive mode acts as strict): make needs approval; add a rule with approval: false to /c.yaml, or run the agent under `guardrun supervise`"},
		{"a program's terminal", &NoPersonError{Why: "the terminal /dev/pts/3 is a program's", Hint: "run the agent under `guardrun supervise` to be asked"},
			"guardrun: denied (the terminal /dev/pts/3 is a program's; interactive mode acts as strict): make needs approval; add a rule with approval: false to /c.yaml, or run the agent under `guardrun supervise` to be asked"},
		{"a reason only", &NoPersonError{Why: "the supervisor has no terminal\nto ask on"},
			"guardrun: denied (the supervisor has no terminal ⏎ to ask on; interactive mode acts as strict): make needs approval; add a rule with approval: false to /c.yaml, or run the agent under `guardrun supervise`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &Gate{Mode: rules.ModeInteractive, Prompter: Nobody(tc.err), ConfigFile: "/c.yaml"}
			out, err := g.Decide(context.Background(), &Request{Decision: decision(rules.Ask, "make", "x")})
			if err != nil || out.Run || out.By != "mode" || out.Refusal != tc.want {
				t.Errorf("got %+v, %v\nwant the refusal %q by the mode", out, err, tc.want)
			}
		})
	}
}

func TestRequestKeyCoversEveryPart(t *testing.T) {
	ls := &rules.Decision{Parts: []rules.Part{{Kind: "command", Argv: []string{"ls"}}}}
	lsRm := &rules.Decision{Parts: []rules.Part{{Kind: "command", Argv: []string{"ls"}}, {Kind: "command", Argv: []string{"rm", "x"}}}}
	lsRedir := &rules.Decision{Parts: []rules.Part{{Kind: "command", Argv: []string{"ls"}}, {Kind: "file", Op: "write", Path: "/w/f", Zone: "workspace"}}}
	k := RequestKey(ls, "/w")
	if k == "" || k == RequestKey(lsRm, "/w") || k == RequestKey(lsRedir, "/w") {
		t.Error("a grant for ls would cover ls; rm x or ls > f")
	}
	if RequestKey(ls, "/w") != k {
		t.Error("key not stable")
	}
	dyn := &rules.Decision{Parts: []rules.Part{{Kind: "finding", Decision: rules.Ask, Dynamic: true}}}
	if RequestKey(dyn, "/w") != "" {
		t.Error("a request with run-time parts can be remembered")
	}
}

func TestSanitize(t *testing.T) {
	tests := map[string]string{
		"echo ok\rrm -rf /":        `echo ok\x0drm -rf /`,
		"ls\x1b[2Kcurl":            `ls\x1b[2Kcurl`,
		"echo \u202egnp.exe":       `echo \u202egnp.exe`,
		"a\u200bb":                 `a\u200bb`,
		"multi\nline\tok":          "multi\nline\tok",
		"caf\u00e9 \u2713 unicode": "caf\u00e9 \u2713 unicode",
		"bell\a":                   `bell\x07`,
		"\u2066hidden\u2069":       `\u2066hidden\u2069`,
	}
	for in, want := range tests {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRenderShowsPartsAndTruncates(t *testing.T) {
	d := &rules.Decision{Decision: rules.Ask, Parts: []rules.Part{
		{Kind: "command", Text: "git commit -m x", Decision: rules.Ask, Rule: "git commit", Reason: `git commit -m x matches rule "git commit", which needs approval`},
		{Kind: "command", Text: "ls", Decision: rules.Allow},
	}}
	var script strings.Builder
	for i := 0; i < 30; i++ {
		script.WriteString("echo line\n")
	}
	out := Render(&Request{Display: "git commit -m x\x1b[2K\n" + script.String(), Decision: d, Cwd: "/w", Sandbox: "workspace /w (rw); network off"}, Style{})
	for _, want := range []string{"$ git commit -m x\\x1b[2K", "in /w", `[rule "git commit"]`, "… 11 more lines ([v] to view all)", "sandbox: workspace /w (rw); network off"} {
		if !strings.Contains(out, want) {
			t.Errorf("prompt lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Error("an escape sequence from the request reached the terminal")
	}
}

func TestConverseKeys(t *testing.T) {
	d := decision(rules.Ask, "make", "needs approval")
	tests := []struct {
		input string
		key   string
		want  Answer
		views int
	}{
		{"y", "k", Answer{Approve: true}, 0},
		{"s", "k", Answer{Approve: true, Session: true}, 0},
		{"s", "", Answer{Note: "no"}, 0}, // s refused without a key, then n
		{"nuse the Makefile target\r", "k", Answer{Note: "use the Makefile target"}, 0},
		{"n\r", "k", Answer{}, 0},
		{"vy", "k", Answer{Approve: true}, 1},
		{"xq\x04", "k", Answer{}, 0}, // unknown keys, then ^D denies
	}
	for _, tt := range tests {
		in := tt.input
		if tt.key == "" {
			in += "nno\r"
		}
		var out bytes.Buffer
		views := 0
		dlg := &Dialog{In: strings.NewReader(in), Out: &out, View: func(string) error { views++; return nil }}
		a, err := dlg.Run(context.Background(), &Request{Display: "make", Decision: d, Key: tt.key})
		if err != nil {
			t.Fatal(err)
		}
		if a != tt.want || views != tt.views {
			t.Errorf("input %q: got %+v views %d, want %+v views %d", tt.input, a, views, tt.want, tt.views)
		}
	}
}
