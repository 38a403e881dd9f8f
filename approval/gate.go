package approval

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/guardrun/guardrun/rules"
)

// Request is one thing to decide: a script, an argv or a file operation,
// with policy's decision about it.
type Request struct {
	// Display is what will run, as the person should read it: the script,
	// or the quoted argv.
	Display  string
	Decision *rules.Decision
	Cwd      string
	// Sandbox is a one-line summary of the sandbox it will run in.
	Sandbox string
	// Detail is extra content to show (a diff for a file write); may be
	// empty. View opens it in full.
	Detail string
	// Key is the session-memory key of the request's payload; empty
	// means the request can't be remembered.
	Key string
	// Summary is how a session grant for it is listed.
	Summary string
	// Always is the rule pattern "always in this project" would add
	// (the asking command's words, rules.Engine.Propose); empty when the
	// key is not offered. Project is the project it would be kept for.
	Always  string
	Project string
}

// Answer is a person's reply to a prompt.
type Answer struct {
	Approve bool
	// Session remembers the approval for the rest of the session.
	Session bool
	// Note is passed back to the agent with a denial.
	Note string
	// By is "session" when the answer came from a supervisor's session
	// memory rather than from a person just now; empty otherwise.
	By string
	// DenyAll denies this request and every one waiting behind it, with
	// the same note.
	DenyAll bool
	// Always approves and keeps Request.Always as a rule of the
	// project ("always in this project").
	Always bool
	// Front is where the person answered, when a broker asked several
	// places: "web", "terminal", "supervisor"; empty for this terminal.
	Front string
}

// Prompter asks a person. ErrNoPerson means nobody can be asked.
type Prompter interface {
	Prompt(ctx context.Context, r *Request) (Answer, error)
}

// ErrNoPerson is returned by a Prompter that has no terminal to ask on.
var ErrNoPerson = errors.New("no terminal to ask on")

// NoPersonError is ErrNoPerson with the reason: a terminal that is a
// program's, a supervisor without one. Why completes "denied (WHY;
// interactive mode acts as strict)"; Hint, when set, says how a person
// could be asked instead.
type NoPersonError struct{ Why, Hint string }

func (e *NoPersonError) Error() string        { return e.Why }
func (e *NoPersonError) Is(target error) bool { return target == ErrNoPerson }

// Nobody is a Prompter that asks no one and fails with err, which is
// ErrNoPerson or a *NoPersonError saying why.
func Nobody(err error) Prompter { return nobody{err} }

type nobody struct{ err error }

func (n nobody) Prompt(context.Context, *Request) (Answer, error) { return Answer{}, n.err }

// Outcome is what the gate decided.
type Outcome struct {
	Run bool
	// By is who decided: rule, person, session, mode or policy.
	By   string
	Note string
	// Refusal is the one line printed on stderr when Run is false.
	Refusal string
	// Warning is something the person should know that did not stop the
	// run (a session grant that could not be stored).
	Warning string
	// Front is where the person answered (Answer.Front).
	Front string
	// Always is the project rule the person added with this answer.
	Always string
}

// Gate applies the verdict × mode table of the contract: allow runs,
// block refuses in every mode, ask prompts (interactive), runs
// (approve-all) or refuses (strict).
type Gate struct {
	Mode rules.Mode
	// Prompter asks the person; nil means there is nobody to ask, and
	// interactive mode acts as strict.
	Prompter Prompter
	// Store is session memory; nil means none.
	Store *Store
	// ConfigFile names the config in the hint of a strict refusal.
	ConfigFile string
	// Rules keeps "always in this project" answers; nil: an Always
	// answer approves once.
	Rules ProjectRules
}

// ProjectRules keeps the rules a person gave "always in this project",
// in their own state.
type ProjectRules interface {
	AddProjectRule(project, pattern, front string) error
}

// Decide resolves one request.
func (g *Gate) Decide(ctx context.Context, r *Request) (Outcome, error) {
	d := r.Decision
	switch d.Decision {
	case rules.Allow:
		return Outcome{Run: true, By: "rule"}, nil
	case rules.Block:
		return Outcome{By: "policy", Refusal: "guardrun: blocked: " + oneLine(d.Reason)}, nil
	}
	if g.Store != nil && r.Key != "" {
		if _, ok, err := g.Store.Has(r.Key); err == nil && ok {
			return Outcome{Run: true, By: "session"}, nil
		}
	}
	what := askSummary(r)
	switch g.Mode {
	case rules.ModeApproveAll:
		return Outcome{Run: true, By: "mode"}, nil
	case rules.ModeStrict:
		return Outcome{By: "mode", Refusal: fmt.Sprintf("guardrun: denied (strict mode): %s needs approval", what)}, nil
	}
	if g.Prompter == nil {
		return g.noPerson(what, ErrNoPerson), nil
	}
	a, err := g.Prompter.Prompt(ctx, r)
	if errors.Is(err, ErrNoPerson) {
		return g.noPerson(what, err), nil
	}
	var na *NoAnswerError
	if errors.As(err, &na) {
		return Outcome{By: na.By, Refusal: fmt.Sprintf("guardrun: refused: %s: %s needs approval", oneLine(na.Why), what)}, nil
	}
	if err != nil {
		return Outcome{}, fmt.Errorf("prompt: %w", err)
	}
	if !a.Approve {
		note := oneLine(a.Note)
		if note == "" {
			note = what + " was not approved"
		}
		return Outcome{By: "person", Note: a.Note, Front: a.Front, Refusal: "guardrun: denied by user: " + note}, nil
	}
	out := Outcome{Run: true, By: "person", Note: a.Note, Front: a.Front}
	if a.By == "session" {
		out.By = "session"
	}
	if a.Always && r.Always != "" && g.Rules != nil && out.By == "person" {
		if err := g.Rules.AddProjectRule(r.Project, r.Always, a.Front); err != nil {
			out.Warning = fmt.Sprintf("guardrun: warning: the rule for this project was not stored (%v); it will ask again", err)
		} else {
			out.Always = r.Always
		}
	}
	if a.Session && g.Store != nil && r.Key != "" {
		if err := g.Store.Add(Grant{Key: r.Key, Kind: grantKind(r), Summary: r.Summary, Rule: ruleOf(r), Where: r.Cwd}); err != nil {
			out.Warning = fmt.Sprintf("guardrun: warning: the approval for this session was not stored (%v); it will ask again", err)
		}
	}
	return out, nil
}

// noPerson is interactive mode acting as strict because nobody can be
// asked (err says why): decided by the mode, as in strict mode.
func (g *Gate) noPerson(what string, err error) Outcome {
	why, ask := "no terminal to ask", "run the agent under `guardrun supervise`"
	var np *NoPersonError
	if errors.As(err, &np) {
		why = oneLine(np.Why)
		if np.Hint != "" {
			ask = oneLine(np.Hint)
		}
	}
	hint := "add a rule with approval: false"
	if g.ConfigFile != "" {
		hint += " to " + g.ConfigFile
	}
	return Outcome{By: "mode", Refusal: fmt.Sprintf(
		"guardrun: denied (%s; interactive mode acts as strict): %s needs approval; %s, or %s", why, what, hint, ask)}
}

func grantKind(r *Request) string {
	for _, p := range r.Decision.Parts {
		if p.Kind == "command" || p.Kind == "network" {
			return p.Kind
		}
	}
	return "file"
}

func ruleOf(r *Request) string {
	var rs []string
	for _, p := range r.Decision.Asking() {
		if p.Rule != "" {
			rs = append(rs, p.Rule)
		}
	}
	return strings.Join(rs, ", ")
}

// askSummary names what needs approval in a refusal line: the asking
// parts' text, or the whole request when there are many.
func askSummary(r *Request) string {
	asking := r.Decision.Asking()
	var texts []string
	for _, p := range asking {
		t := p.Text
		if p.Kind == "finding" {
			t = p.Reason
		}
		texts = append(texts, oneLine(t))
	}
	s := strings.Join(texts, "; ")
	if s == "" {
		s = oneLine(r.Display)
	}
	// Long enough for a reason and the remedy it names (a zone that
	// cannot be checkpointed says what to put in .gitignore).
	if len(s) > 400 {
		s = s[:397] + "..."
	}
	return s
}

// oneLine makes text safe for a single stderr line an agent reads.
func oneLine(s string) string {
	s = Sanitize(s)
	s = strings.ReplaceAll(s, "\n", " ⏎ ")
	return strings.TrimSpace(s)
}

// RequestKey is the session key of a decided request: where it runs
// (the working directory, so that a grant in one project never approves
// the same text in another), the normalized argv and matched rule of
// every part, the zone and path of every file operation, never file
// contents, and what the script feeds the commands from its own text
// (d.Feeds: here-document and here-string bodies, as the analysis that
// decided read them: `python3 - <<'EOF'` with another body is another
// request). Parts that are allowed are included too, so that a grant for
// `ls` never covers `ls; rm x` or `ls > f`. A request whose verdict
// depends on run-time values gets no key: it may be approved once, never
// remembered.
func RequestKey(d *rules.Decision, where string) string {
	for _, p := range d.Parts {
		if p.Dynamic && p.Decision != rules.Allow {
			return ""
		}
	}
	argv := [][]string{{"where", where}}
	rule := []string{""}
	for _, p := range d.Parts {
		switch p.Kind {
		case "command":
			argv = append(argv, append([]string{"cmd"}, p.Argv...))
			rule = append(rule, p.Rule)
		case "file":
			argv = append(argv, []string{"file", p.Op, p.Zone, p.Path})
			rule = append(rule, "")
		case "finding":
			argv = append(argv, []string{"finding", p.Text, p.Reason})
			rule = append(rule, "")
		}
	}
	for _, f := range d.Feeds {
		argv = append(argv, []string{"feed", f})
		rule = append(rule, "")
	}
	return CommandKey(argv, rule)
}
