package approval

import (
	"context"
	"slices"
	"testing"

	"github.com/guardrun/guardrun/rules"
)

// TestSessionGrantCoversWhatWasApproved approves scripts "for the session"
// through the gate with a real policy and store, then runs others: only
// the identical script in the same directory is covered. The same argv
// with another here-document body, here-string or directory asks again.
func TestSessionGrantCoversWhatWasApproved(t *testing.T) {
	eng, store, decide := sessionGate(t, "")
	harmless := "python3 - <<'EOF'\nprint('hello')\nEOF\n"
	harmful := "python3 - <<'EOF'\nimport shutil; shutil.rmtree('/w')\nEOF\n"
	if a, b := eng.Script(harmless, "/w"), eng.Script(harmful, "/w"); !slices.EqualFunc(a.Parts, b.Parts, func(x, y rules.Part) bool {
		return slices.Equal(x.Argv, y.Argv) && x.Kind == y.Kind
	}) {
		t.Fatalf("the two scripts differ in argv already; the test needs the same argv:\n%+v\n%+v", a.Parts, b.Parts)
	}

	if !decide(harmless, "/w") {
		t.Fatal("first run did not ask")
	}
	if decide(harmless, "/w") {
		t.Error("the identical script asked again after a session grant")
	}
	if !decide(harmful, "/w") {
		t.Error("same argv with another heredoc body ran on the grant for the first")
	}
	if !decide("python3 - <<< 'print(1)'", "/w") || !decide("python3 - <<< 'print(2)'", "/w") {
		t.Error("a here-string body is not part of the grant")
	}
	if !decide(harmless, "/other-project") {
		t.Error("a grant in /w approved the same script in /other-project")
	}
	grants, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(grants) == 0 || grants[0].Where != "/w" {
		t.Errorf("grant does not say where it applies: %+v", grants)
	}
}

// TestSessionGrantFollowsTheDialect: with shell.program a zsh, the key
// holds what zsh feeds the commands, read as zsh reads the script (zsh
// syntax bash cannot parse included): the same script is covered by its
// grant, the same commands with another body are not.
func TestSessionGrantFollowsTheDialect(t *testing.T) {
	_, _, decide := sessionGate(t, "/bin/zsh")
	// An anonymous function, which only zsh has, around each script.
	script := func(body string) string { return "() {\npython3 - <<'EOF'\n" + body + "\nEOF\n}\n" }
	harmless, harmful := script("print('hello')"), script("import shutil; shutil.rmtree('/w')")
	if !decide(harmless, "/w") {
		t.Fatal("first run did not ask")
	}
	if decide(harmless, "/w") {
		t.Error("the identical zsh script asked again after a session grant")
	}
	if !decide(harmful, "/w") {
		t.Error("same argv with another heredoc body ran on the grant for the first")
	}
	str := func(code string) string { return "() { python3 - <<< " + code + " }" }
	if !decide(str("'print(1)'"), "/w") || !decide(str("'print(2)'"), "/w") {
		t.Error("a zsh here-string body is not part of the grant")
	}
}

// sessionGate is a gate with a real policy (shell.program program, or
// the default) and store that approves every request for the session;
// decide reports whether a request had to ask the person.
func sessionGate(t *testing.T, program string) (*rules.Engine, *Store, func(script, cwd string) (asked bool)) {
	t.Helper()
	cfg := rules.Default(rules.Env{Cwd: "/w", Home: "/home/u", StateDir: t.TempDir()})
	if program != "" {
		cfg.Shell.Program = program
	}
	eng, err := rules.New(cfg, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	store := openTestStore(t, t.TempDir(), "s1", 0, nil)
	person := &fakePrompter{answer: Answer{Approve: true, Session: true}}
	g := &Gate{Mode: rules.ModeInteractive, Prompter: person, Store: store}
	return eng, store, func(script, cwd string) (asked bool) {
		t.Helper()
		d := eng.Script(script, cwd)
		if d.Decision != rules.Ask {
			t.Fatalf("%q: verdict %s, want ask (the test needs a script that asks): %s", script, d.Decision, d.Reason)
		}
		r := &Request{Display: script, Decision: d, Cwd: cwd, Key: RequestKey(d, cwd), Summary: script}
		if r.Key == "" {
			t.Fatalf("%q cannot be remembered", script)
		}
		before := person.asked
		out, err := g.Decide(context.Background(), r)
		if err != nil || !out.Run {
			t.Fatalf("%q: %+v %v", script, out, err)
		}
		return person.asked > before
	}
}

// BenchmarkRequestKey is the cost of a session key for a typical agent
// script with a here-document, whose feeds the analysis already read.
func BenchmarkRequestKey(b *testing.B) {
	cfg := rules.Default(rules.Env{Cwd: "/w", Home: "/home/u", StateDir: b.TempDir()})
	eng, err := rules.New(cfg, "/home/u")
	if err != nil {
		b.Fatal(err)
	}
	script := "cd /w && python3 - <<'EOF'\nimport json\nprint(json.dumps({'a': 1}))\nEOF\ngo test ./... 2>&1 | tail -20\n"
	d := eng.Script(script, "/w")
	b.Run("decide", func(b *testing.B) {
		for b.Loop() {
			eng.Script(script, "/w")
		}
	})
	b.Run("key", func(b *testing.B) {
		for b.Loop() {
			RequestKey(d, "/w")
		}
	})
}
