package rules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const projectConfig = `
shell:
  rules:
    - {pattern: rm, allowed: false}
    - {pattern: ls, approval: false}
    - {pattern: cd, approval: false}
    - {pattern: "git commit", approval: true}
    - {pattern: sort, approval: false}
sandbox:
  paths:
    workspace: {root: ., mode: rw}
`

// A project rule pre-approves what its pattern matches inside the
// project, with a config rule's semantics, and never more: block rules,
// an untrusted project file's rules, run-time words, dangerous options
// and the zones still have their say.
func TestProjectRules(t *testing.T) {
	e, dir := newTestEngine(t, projectConfig)
	other := hostDir(t)
	pe, err := e.WithProject(dir, []string{"npm run lint", "rm build", "git commit", "sort data"})
	if err != nil {
		t.Fatal(err)
	}
	project, err := Parse(filepath.Join(dir, ".guardrun.yaml"), []byte(`
shell:
  rules:
    - {pattern: "npm run lint --fix", approval: true}
`), dir, Env{Cwd: dir, Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	merged, _ := Tighten(e.cfg, project)
	me, err := New(merged, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	if me, err = me.WithProject(dir, []string{"npm run lint"}); err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		name    string
		engine  *Engine
		script  string
		cwd     string
		want    Verdict
		project bool // a part was pre-approved by the project rule
	}{
		{"the command it names runs without asking", pe, "npm run lint", dir, Allow, true},
		{"and with more words after it", pe, "npm run lint src", dir, Allow, true},
		{"a config rule that asks gives way to it", pe, "git commit -m x", dir, Allow, true},
		{"another command still asks", pe, "npm run build", dir, Ask, false},
		{"a shorter command still asks", pe, "npm run", dir, Ask, false},
		{"outside the project it still asks", pe, "npm run lint", other, Ask, false},
		{"after a cd out of the project it still asks", pe, "cd " + other + " && npm run lint", dir, Ask, false},
		{"in a subdirectory of the project it applies", pe, "cd src && npm run lint", dir, Allow, true},
		{"a block rule stays a block", pe, "rm build", dir, Block, false},
		{"a word known only at run time still asks", pe, "npm run $TARGET", dir, Ask, false},
		{"an option that runs a program still asks", pe, "sort data --compress-program=sh", dir, Ask, false},
		{"a write outside every zone is blocked", pe, "npm run lint > /etc/x", dir, Block, true},
		{"a compound is judged part by part", pe, "npm run lint; npm test", dir, Ask, true},
		{"an untrusted project file's rule still asks", me, "npm run lint --fix", dir, Ask, false},
		{"and the rest of the project rule holds", me, "npm run lint", dir, Allow, true},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			d := r.engine.Script(r.script, r.cwd)
			project := false
			for _, p := range d.Parts {
				if p.Project != "" {
					project = true
					if p.Project != dir || p.Decision != Allow {
						t.Errorf("part %q: project %q decision %s", p.Text, p.Project, p.Decision)
					}
				}
			}
			if d.Decision != r.want || project != r.project {
				t.Errorf("%q: %s (project rule used: %v), want %s (%v)\n%+v", r.script, d.Decision, project, r.want, r.project, d.Parts)
			}
			if d.Network {
				t.Errorf("%q: a project rule gave the network", r.script)
			}
		})
	}
	// The engine without project rules is untouched.
	if d := e.Script("npm run lint", dir); d.Decision != Ask {
		t.Errorf("the engine WithProject copied from changed: %s", d.Decision)
	}
}

// What "always in this project" offers: one asking simple command's
// words, each quoted to match only itself; nothing for a compound that
// asks twice, a finding, a file operation or run-time words.
func TestPropose(t *testing.T) {
	e, dir := newTestEngine(t, projectConfig)
	rows := []struct{ name, script, want string }{
		{"a simple command", "npm run lint", "npm run lint"},
		{"glob and quote characters are literal", `touch 'a b*' "[x]"`, `touch 'a b*' '[x]'`},
		{"an allowed part beside it is not in the pattern", "ls; npm run lint", "npm run lint"},
		{"a redirection is not in the pattern", "npm run lint > out.txt", "npm run lint"},
		{"two parts that ask offer nothing", "npm run lint && npm test", ""},
		{"run-time words offer nothing", "npm run $X", ""},
		{"a dynamic command name offers nothing", "$CMD x", ""},
		{"an option that runs a program offers nothing", "sort --compress-program=sh x", ""},
		{"an allowed request offers nothing", "ls", ""},
		{"a blocked request offers nothing", "rm -rf x", ""},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			d := e.Script(r.script, dir)
			got := e.Propose(d)
			if diff := cmp.Diff(got, r.want); diff != "" {
				t.Errorf("Propose(%q) (-got +want):\n%s\nparts %+v", r.script, diff, d.Parts)
			}
			if got == "" {
				return
			}
			// What is offered, once kept, pre-approves the request.
			pe, err := e.WithProject(dir, []string{got})
			if err != nil {
				t.Fatal(err)
			}
			if d := pe.Script(r.script, dir); d.Decision != Allow {
				t.Errorf("with the offered rule %q kept, %q is %s: %+v", got, r.script, d.Decision, d.Parts)
			}
		})
	}
}

// The project is the repository that holds the directory, inside its
// zone; else the zone's root.
func TestProjectRoot(t *testing.T) {
	e, dir := newTestEngine(t, projectConfig)
	repo := filepath.Join(dir, "src", "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(repo, "pkg"), 0o755)
	rows := []struct{ name, cwd, want string }{
		{"the zone's root when no repository holds it", filepath.Join(dir, "src"), dir},
		{"the repository's root", filepath.Join(repo, "pkg"), repo},
		{"the repository's root itself", repo, repo},
	}
	for _, r := range rows {
		if got := e.ProjectRoot(r.cwd); got != r.want {
			t.Errorf("%s: ProjectRoot(%s) = %s, want %s", r.name, r.cwd, got, r.want)
		}
	}
}
