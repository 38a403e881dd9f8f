package rules

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/cmdsem"
)

// optionForms writes option o with value v in every form the program
// accepts: -o V, -oV, clustered -no V, --output=V, --output V, an
// abbreviation, Go's -name V / -name=V / --name=V.
func optionForms(o cmdsem.Option, v string) map[string][]string {
	forms := map[string][]string{}
	if o.GoStyle {
		forms["-name=V"] = []string{"-" + o.Long + "=" + v}
		forms["--name=V"] = []string{"--" + o.Long + "=" + v}
		if o.TakesValue {
			forms["-name V"] = []string{"-" + o.Long, v}
			forms["--name V"] = []string{"--" + o.Long, v}
		}
		return forms
	}
	s := string(o.Short)
	switch {
	case o.Short != 0 && o.TakesValue:
		forms["-o V"] = []string{"-" + s, v}
		forms["-oV"] = []string{"-" + s + v}
		if o.Cluster != 0 {
			forms["-no V"] = []string{"-" + string(o.Cluster) + s, v}
			forms["-noV"] = []string{"-" + string(o.Cluster) + s + v}
		}
	case o.Short != 0 && o.OptionalValue:
		forms["-oV"] = []string{"-" + s + v}
	case o.Short != 0:
		forms["-o"] = []string{"-" + s}
		if o.Cluster != 0 {
			forms["-no"] = []string{"-" + string(o.Cluster) + s}
		}
	}
	if o.Long != "" {
		switch {
		case o.TakesValue:
			forms["--output=V"] = []string{"--" + o.Long + "=" + v}
			forms["--output V"] = []string{"--" + o.Long, v}
			if o.Prefix != "" {
				forms["--out=V"] = []string{"--" + o.Prefix + "=" + v}
				forms["--out V"] = []string{"--" + o.Prefix, v}
			}
		case o.OptionalValue:
			forms["--output=V"] = []string{"--" + o.Long + "=" + v}
		default:
			forms["--output"] = []string{"--" + o.Long}
			if o.Prefix != "" {
				forms["--out"] = []string{"--" + o.Prefix}
			}
		}
	}
	return forms
}

// TestEveryTableOption runs every option of the semantics table that
// writes, reads or runs something, in every form, under a config that
// pre-approves every command: writes into the read-only zone are blocked
// with the path judged, reads of a denied path are blocked, programs
// ask. After --, the same words are operands.
func TestEveryTableOption(t *testing.T) {
	var cfg strings.Builder
	cfg.WriteString("shell:\n  rules:\n    - {pattern: cd, approval: false}\n")
	for _, c := range cmdsem.Commands() {
		fmt.Fprintf(&cfg, "    - {pattern: %q, approval: false}\n", c)
	}
	cfg.WriteString("sandbox:\n  paths:\n    ws: {root: ./ws, mode: rw}\n    ro: {root: ./ro, mode: ro}\n  deny: [ws/secret]\n")
	base, ws := issueEngine(t)
	c, err := Parse(filepath.Join(base.cfg.Dir, "all.yaml"), []byte(cfg.String()), base.cfg.Dir, Env{Cwd: ws, Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(ws)
	rows := 0
	for _, o := range cmdsem.Catalog() {
		var val, prefix string
		var want Verdict
		var wantPath, wantReason string
		switch o.Kind {
		case cmdsem.Write:
			val, want, wantPath, wantReason = "../ro/pwn", Block, filepath.Join(root, "ro/pwn"), `zone "ro" is read-only`
			if !o.TakesValue && !o.OptionalValue {
				prefix, wantPath = "cd ../ro && ", filepath.Join(root, "ro")
			}
		case cmdsem.Read:
			val, want, wantPath, wantReason = "secret/key", Block, filepath.Join(ws, "secret/key"), "denied"
		case cmdsem.Exec:
			val, want, wantReason = "sh", Ask, o.Why
		default:
			continue
		}
		for form, words := range optionForms(o, val) {
			script := prefix + o.Command + " " + strings.Join(words, " ")
			rows++
			t.Run(o.String()+"/"+form, func(t *testing.T) {
				d := e.Script(script, ws)
				if d.Decision != want {
					t.Fatalf("Script(%q) = %s (%s), want %s\nparts: %+v", script, d.Decision, d.Reason, want, d.Parts)
				}
				if !reasonSays(d, wantReason) || !reasonSays(d, o.Why) {
					t.Errorf("Script(%q): reason %q does not say %q and %q; parts %+v", script, d.Reason, wantReason, o.Why, d.Parts)
				}
				if wantPath != "" {
					found := false
					for _, p := range d.Parts {
						found = found || p.Kind == "file" && p.Path == wantPath && p.Decision == want
					}
					if !found {
						t.Errorf("Script(%q): no file part judged %s; parts %+v", script, wantPath, d.Parts)
					}
				}
			})
		}
		// After --, an option is an operand (for commands that take
		// operands as files, it may be a file to read; never this
		// option's effect).
		if !o.GoStyle && (o.Short != 0 || o.Long != "") && !strings.Contains(o.Command, " ") && o.Kind == cmdsem.Exec {
			words := optionForms(o, val)
			for form, w := range words {
				script := o.Command + " -- " + strings.Join(w, " ")
				t.Run(o.String()+"/after --/"+form, func(t *testing.T) {
					d := e.Script(script, ws)
					for _, p := range d.Parts {
						if p.Kind == "finding" && strings.Contains(p.Reason, o.Why) {
							t.Errorf("Script(%q): %s after -- still read as the option: %s", script, w[0], p.Reason)
						}
					}
				})
				break
			}
		}
	}
	if rows < 200 {
		t.Errorf("only %d option forms checked; the table lost entries", rows)
	}
	t.Logf("%d option forms checked", rows)
}
