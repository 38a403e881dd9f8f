package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/guardrun/guardrun/shellparse"
)

// Project rules are what a person answered "always in this project"
// with: rule patterns kept in their own state, for one project. They
// are not config: no file of a repository can name one.
//
// A project rule pre-approves, as a config rule with approval: false
// would (first match wins, words glob-matched as an argv prefix), a
// command part that asks, whose every possible working directory lies
// in the project, and nothing else:
//   - a part the config blocks (a rule, or shell.default) stays blocked;
//   - an untrusted project file's rules are applied after it and can
//     only make the part stricter, as always;
//   - a part that asks because its words are only known at run time
//     (Dynamic) still asks;
//   - what the command's options and operands do is judged as before
//     against the config rule that matched (cmdsem): an option that runs
//     a program, a file it writes, still ask or are judged by the zones;
//   - it has no sandbox_paths and never gives the network.

// WithProject is a copy of e that applies the project rules patterns to
// commands run inside the project rooted at root (resolved). An empty
// list is e itself. A pattern that does not compile is an error.
func (e *Engine) WithProject(root string, patterns []string) (*Engine, error) {
	if len(patterns) == 0 {
		return e, nil
	}
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("project rules: project %q is not an absolute path", root)
	}
	rs := make([]Rule, 0, len(patterns))
	for _, p := range patterns {
		words, err := splitPattern(p, e.dialect)
		if err != nil {
			return nil, fmt.Errorf("project rule %q of %s: %v", p, root, err)
		}
		rs = append(rs, Rule{Pattern: p, Action: Action{Allowed: true}, Words: words, At: "always in this project " + root})
	}
	compiled, err := compileRules(rs)
	if err != nil {
		return nil, err
	}
	c := *e
	c.project, c.projectRoot = compiled, root
	c.projectIx = indexRules(c.project)
	return &c, nil
}

// projectRule lets a project rule pre-approve p (see WithProject), and
// returns the rule that did: what the command's options do is then
// judged against its words, as against a config rule's.
func (e *Engine) projectRule(p *Part, c shellparse.Command, cwd, display string) *compiledRule {
	if len(e.project) == 0 || p.Decision != Ask || p.Dynamic {
		return nil
	}
	dirs, why := e.dirs(c.Dir, cwd)
	if why != "" {
		return nil
	}
	for _, d := range dirs {
		if !Within(Resolve(d, "/"), e.projectRoot) {
			return nil
		}
	}
	r, maybe, _ := e.firstRule(e.project, &e.projectIx, c, cwd)
	if r == nil || maybe {
		return nil
	}
	p.Decision = Allow
	p.Rule, p.RuleAt, p.Description = r.Pattern, r.At, ""
	p.Project = e.projectRoot
	p.Reason = fmt.Sprintf("%s matches %q, which you approved always in this project (%s)", display, r.Pattern, e.projectRoot)
	return r
}

// Propose is the project rule "always in this project" offers for d, or
// "" when it offers none: d must have exactly one part that asks, a
// simple command whose words are all known before it runs, judged by a
// rule or shell.default, with at most what its own words do asking
// beside it (`npm run` runs the package's scripts: a rule whose words
// name `run` covers that, as a config rule's would); no other command,
// no file operation, nothing known only at run time. The pattern is the
// command's words, each quoted to match itself only; as a rule it
// matches the command, and the command with more words after it. It is
// never a compound or a redirection: those are other parts, judged on
// their own each time.
func (e *Engine) Propose(d *Decision) string {
	if d == nil || d.Decision != Ask {
		return ""
	}
	var p *Part
	for i := range d.Parts {
		if q := &d.Parts[i]; q.Decision == Ask && q.Kind == "command" {
			if p != nil {
				return ""
			}
			p = q
		}
	}
	if p == nil || p.Dynamic || p.Wrapper || len(p.Argv) == 0 {
		return ""
	}
	for _, q := range d.Asking() {
		if q.Kind == "command" {
			continue
		}
		if q.Kind != "finding" || q.Dynamic || q.Text != p.Text || q.Rule != p.Rule {
			return ""
		}
	}
	// Its words must all be known now: the part's text, read again,
	// is that one command with those words, none of them expanded at
	// run time.
	s, err := shellparse.Parse(p.Text, e.parseOptions())
	if err != nil || len(s.Commands) != 1 || len(s.Findings) != 0 || !slices.Equal(argvValues(s.Commands[0].Argv), p.Argv) {
		return ""
	}
	for _, w := range s.Commands[0].Argv {
		if !w.Static() {
			return ""
		}
	}
	pat := shellparse.QuoteArgv(p.Argv, e.dialect)
	// The pattern must read back as exactly these words, each literal.
	words, err := splitPattern(pat, e.dialect)
	if err != nil || len(words) != len(p.Argv) {
		return ""
	}
	for i, w := range words {
		m, err := compileWord(w)
		if err != nil {
			return ""
		}
		if lit, ok := m.Literal(); !ok || lit != p.Argv[i] {
			return ""
		}
	}
	return pat
}

// ProjectRoot is the project a request run in cwd belongs to, for its
// project rules: the nearest directory at or above cwd (resolved) that
// holds .git, inside the innermost zone that holds cwd; else that zone's
// root; else cwd itself.
func (e *Engine) ProjectRoot(cwd string) string {
	dir := Resolve(cwd, "/")
	top := "/"
	if z := e.zoneFor(dir); z != nil {
		top = z.root
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == top || d == "/" || !Within(d, top) {
			break
		}
	}
	if top != "/" {
		return top
	}
	return dir
}
