package request

import (
	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/rules"
)

// The person's "always in this project" rules (SPEC §4): kept in their
// own state (approval.RuleStore, in the state directory, which sandboxes
// hide and config.Load refuses inside an rw zone), keyed by the
// project's resolved root (rules.Engine.ProjectRoot), applied by the
// rules engine below every block rule and every rule of an untrusted
// project file (rules.Engine.WithProject).

// openRules is the person's project-rule store; nil without a state
// directory (then [a] is not offered).
func openRules(e *config.Env) *approval.RuleStore {
	if e.StateDir == "" {
		return nil
	}
	st, err := approval.OpenRuleStore(e.StateDir)
	if err != nil {
		return nil
	}
	return st
}

// ProjectEngine is l's engine with the person's rules for the project
// that cwd belongs to; l's engine itself when there are none, or the
// store cannot be read (a damaged store grants nothing).
func ProjectEngine(l *config.Loaded, e *config.Env, cwd string) *rules.Engine {
	st := openRules(e)
	if st == nil {
		return l.Engine
	}
	return projectEngine(l.Engine, st, cwd)
}

func projectEngine(eng *rules.Engine, st *approval.RuleStore, cwd string) *rules.Engine {
	all, err := st.List()
	if err != nil || len(all) == 0 {
		return eng
	}
	root := eng.ProjectRoot(cwd)
	var pats []string
	for _, r := range all {
		if r.Project == root {
			pats = append(pats, r.Pattern)
		}
	}
	pe, err := eng.WithProject(root, pats)
	if err != nil {
		return eng
	}
	return pe
}

// withProjectRules decides j again with the project's rules when d, the
// config's decision, asks: only a request that asks can be changed by
// them, and most requests do not ask.
func (s *Session) withProjectRules(j *Job, d *rules.Decision) *rules.Decision {
	if d.Decision != rules.Ask || s.Rules == nil {
		return d
	}
	eng := projectEngine(s.Loaded.Engine, s.Rules, s.Dir(j))
	if eng == s.Loaded.Engine {
		return d
	}
	if j.Argv != nil {
		return eng.Argv(j.Argv, s.Dir(j))
	}
	return eng.Script(j.Script, s.Dir(j))
}

// offerAlways sets what [a] would keep for req, when the store is there
// and the request has a rule to offer.
func (s *Session) offerAlways(req *approval.Request, cwd string) {
	if s.Rules == nil {
		return
	}
	if pat := s.Loaded.Engine.Propose(req.Decision); pat != "" {
		req.Always, req.Project = pat, s.Loaded.Engine.ProjectRoot(cwd)
	}
}

// recordAlways fills the audit record with the project rule the person
// added, or the one that pre-approved the request.
func recordAlways(rec *approval.Record, d *rules.Decision, req *approval.Request, out approval.Outcome) {
	rec.Front = out.Front
	if out.Always != "" {
		rec.ProjectRule, rec.Project = out.Always, req.Project
		return
	}
	if out.By != "rule" {
		return
	}
	for _, p := range d.Parts {
		if p.Project != "" {
			rec.DecidedBy, rec.ProjectRule, rec.Project = "project-rule", p.Rule, p.Project
			return
		}
	}
}
