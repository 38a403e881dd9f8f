package rules

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/shellparse"
)

// Part is one command or file operation found in a request, with its own
// verdict.
type Part struct {
	// Kind is "command", "file" or "finding" (something no rule can
	// pre-approve: a dynamic command name, unparseable nested code, an
	// option that runs a program, a variable that redirects a program).
	Kind     string  `json:"kind"`
	Text     string  `json:"text"`
	Decision Verdict `json:"decision"`
	Reason   string  `json:"reason"`
	// Rule is the matched rule's pattern, if any.
	Rule   string `json:"rule,omitempty"`
	RuleAt string `json:"rule_at,omitempty"`
	// Description is the matched rule's description.
	Description string `json:"description,omitempty"`
	// Pos is the part's line:col in the script (argv index for argv).
	Pos string `json:"pos"`
	// Argv is the command's argv after quote removal (commands only).
	Argv []string `json:"argv,omitempty"`
	// Op, Path and Zone describe a file operation.
	Op      string   `json:"op,omitempty"`
	Path    string   `json:"path,omitempty"`
	Zone    string   `json:"zone,omitempty"`
	Via     []string `json:"via,omitempty"`
	Wrapper bool     `json:"wrapper,omitempty"`
	// Network is set when the matched rule lets the command use the
	// network.
	Network bool `json:"network,omitempty"`
	// Dynamic is set when the verdict depends on values only known at
	// run time; such a part can be approved once but never remembered.
	Dynamic bool `json:"dynamic,omitempty"`
	// MayExec and MayWrite are what the part may execute and write
	// (predict.go); Unbounded says why the analysis could not bound it.
	MayExec   []sandbox.Exec        `json:"may_exec,omitempty"`
	MayWrite  []sandbox.PathPattern `json:"may_write,omitempty"`
	Unbounded string                `json:"unbounded,omitempty"`
	// Checkpoint is what the matched rule (or shell.default) says of
	// the checkpoint taken before the command runs.
	Checkpoint Checkpoint `json:"checkpoint,omitempty"`
	// Project is set when a project rule the person gave ("always in
	// this project") pre-approved the part: the project's root.
	Project string `json:"project,omitempty"`
}

// Decision is the verdict for a whole request.
type Decision struct {
	Decision Verdict `json:"decision"`
	Reason   string  `json:"reason"`
	Parts    []Part  `json:"parts"`
	// ParseError is "line:col: message" when the script does not parse.
	ParseError string `json:"parse_error,omitempty"`
	// Network is whether the sandbox for this request gets the network:
	// the config allows it, or every command in it matched a rule that
	// does.
	Network bool `json:"network"`
	// Proxy is set when the sandbox reaches the network only through
	// guardrun's proxy (sandbox.network: proxy); Network is then false.
	Proxy bool `json:"proxy,omitempty"`
	// Hosts says which hosts the command may reach through the proxy
	// (set with Proxy).
	Hosts string `json:"hosts,omitempty"`
	// Feeds is what the script feeds its commands from its own text
	// (here-documents, here-strings), as the analysis in the dialect of
	// shell.program read it (shellparse.Script.Feeds). A session grant
	// covers it.
	Feeds []string `json:"-"`
	// Bounded is set when the analysis bounded every part (predict.go);
	// Unbounded says why not. Verified: the request is allowed because
	// of that prediction, so it runs under the filter that holds what
	// lies outside MayExec and MayWrite (Prediction).
	Bounded   bool                  `json:"bounded"`
	Unbounded string                `json:"unbounded,omitempty"`
	Verified  bool                  `json:"verified"`
	MayExec   []sandbox.Exec        `json:"may_exec"`
	MayWrite  []sandbox.PathPattern `json:"may_write"`
	// Checkpoint is what the request needs of a checkpoint of the
	// writable zones before it runs: required when a part is
	// pre-approved by a rule with checkpoint: required (the pre-approval
	// relies on undo), none when no part can write (every command's
	// rule says checkpoint: none and no file operation writes), else
	// best effort.
	Checkpoint Checkpoint `json:"checkpoint,omitempty"`
}

// checkpointNeed sums what the parts need of a checkpoint.
func (d *Decision) checkpointNeed() Checkpoint {
	need := CheckpointNone
	for _, p := range d.Parts {
		switch {
		case p.Decision == Allow && p.Checkpoint == CheckpointRequired:
			return CheckpointRequired
		case p.Kind == "command" && p.Checkpoint == CheckpointNone:
		case p.Kind == "command" && p.Decision == Allow && p.Unbounded == "" && !writesWork(p.MayWrite):
			// Bounded, and predicted to write nothing a checkpoint
			// holds (a read, or only git's own files such as
			// .git/index.lock): nothing to undo. A request that is
			// verified at run time has any other write held.
		case p.Kind == "command" && len(p.Argv) > 0 && isBuiltin(p.Argv[0]):
			// Writes only through redirections, which are parts of
			// their own.
		case p.Kind == "file" && p.Op == string(OpRead):
		default:
			need = CheckpointBestEffort
		}
	}
	return need
}

// writesWork reports whether ws names a write a checkpoint would hold:
// anything but the files of a .git directory, which checkpoints leave
// out.
func writesWork(ws []sandbox.PathPattern) bool {
	for _, w := range ws {
		if !strings.Contains(w.Path+"/", "/.git/") {
			return true
		}
	}
	return false
}

// Asking returns the parts whose verdict is ask.
func (d *Decision) Asking() []Part {
	var out []Part
	for _, p := range d.Parts {
		if p.Decision == Ask {
			out = append(out, p)
		}
	}
	return out
}

// Engine decides verdicts for one config. It is safe for concurrent use.
type Engine struct {
	cfg        *Config
	rules      []compiledRule
	tightening []compiledRule
	ruleIx     ruleIndex
	tightIx    ruleIndex
	dialect    syntax.LangVariant
	home       string
	zones      []resolvedZone
	deny       []string // absolute, resolved and as written
	names      []string // bare deny names
	system     []string
	// protect are the protected names (sandbox.DefaultProtect and the
	// config's relative entries), each split into components;
	// protectPaths the config's absolute entries, as written and resolved.
	protect      [][]string
	protectPaths []string
	// run is the environment commands run with (SetCommandEnv).
	run commandEnv
	// project are the person's rules for the project at projectRoot
	// (WithProject).
	project     []compiledRule
	projectIx   ruleIndex
	projectRoot string
}

type compiledRule struct {
	*Rule
	index int
	words []wordMatcher
	// pathName is set when the first word names a path (holds a /), so
	// it is matched against argv[0] as written instead of its base name.
	pathName bool
}

type resolvedZone struct {
	*Zone
	root string // resolved
}

// New compiles a config's rules. home expands ~ in scripts.
func New(cfg *Config, home string) (*Engine, error) {
	e := &Engine{cfg: cfg, dialect: shellparse.DialectFor(cfg.Shell.Program), home: home,
		run: newCommandEnv(func(string) string { return "" })}
	var err error
	if e.rules, err = compileRules(cfg.Shell.Rules); err != nil {
		return nil, err
	}
	if e.tightening, err = compileRules(cfg.Shell.Tightening); err != nil {
		return nil, err
	}
	e.ruleIx, e.tightIx = indexRules(e.rules), indexRules(e.tightening)
	for i := range cfg.Sandbox.Zones {
		z := &cfg.Sandbox.Zones[i]
		e.zones = append(e.zones, resolvedZone{Zone: z, root: Resolve(z.Root, "/")})
	}
	for _, d := range cfg.Sandbox.Deny {
		if !strings.Contains(d, "/") {
			e.names = append(e.names, d)
			continue
		}
		e.deny = append(e.deny, d)
		if r := Resolve(d, "/"); r != d {
			e.deny = append(e.deny, r)
		}
	}
	for _, n := range sandbox.DefaultProtect {
		e.protect = append(e.protect, strings.Split(n, "/"))
	}
	for _, p := range cfg.Sandbox.Protect {
		if filepath.IsAbs(p) {
			e.protectPaths = append(e.protectPaths, p, Resolve(p, "/"))
		} else {
			e.protect = append(e.protect, strings.Split(p, "/"))
		}
	}
	if cfg.Sandbox.SystemRead.Default {
		e.system = sandbox.DefaultSystemPaths
	} else {
		e.system = cfg.Sandbox.SystemRead.Paths
	}
	return e, nil
}

// wordMatcher matches one pattern word (quoted glob characters are
// literal).
type wordMatcher = shellparse.WordMatcher

func compileWord(w string) (wordMatcher, error) { return shellparse.CompileWord(w) }

// ruleIndex finds the rules that can match a command with a static name
// without walking the whole list: rules whose first word is a plain word
// are filed under it; the rest (globs) are always candidates.
type ruleIndex struct {
	byName map[string][]int
	globs  []int
}

func indexRules(rs []compiledRule) ruleIndex {
	ix := ruleIndex{byName: map[string][]int{}}
	for i, r := range rs {
		if lit, ok := r.words[0].Literal(); ok {
			ix.byName[lit] = append(ix.byName[lit], i)
		} else {
			ix.globs = append(ix.globs, i)
		}
	}
	return ix
}

// candidates returns, in rule order, the rules that may match a command
// whose argv[0] is the static word arg0 with base name name.
func (ix *ruleIndex) candidates(name, arg0 string) []int {
	named := ix.byName[name]
	if arg0 == name || len(ix.byName[arg0]) == 0 {
		switch {
		case len(ix.globs) == 0:
			return named
		case len(named) == 0:
			return ix.globs
		}
	}
	lists := [][]int{named, ix.globs, nil}
	if arg0 != name {
		lists[2] = ix.byName[arg0]
	}
	var out []int
	for {
		best := -1
		for li, l := range lists {
			if len(l) > 0 && (best < 0 || l[0] < lists[best][0]) {
				best = li
			}
		}
		if best < 0 {
			return out
		}
		out = append(out, lists[best][0])
		lists[best] = lists[best][1:]
	}
}

func compileRules(rs []Rule) ([]compiledRule, error) {
	out := make([]compiledRule, 0, len(rs))
	for i := range rs {
		r := &rs[i]
		if len(r.Words) == 0 {
			return nil, fmt.Errorf("%s: rule %q has no words", r.At, r.Pattern)
		}
		cr := compiledRule{Rule: r, index: i, pathName: strings.Contains(r.Words[0], "/")}
		for _, w := range r.Words {
			m, err := compileWord(w)
			if err != nil {
				return nil, fmt.Errorf("%s: pattern %q: %v", r.At, r.Pattern, err)
			}
			cr.words = append(cr.words, m)
		}
		out = append(out, cr)
	}
	return out, nil
}

// Script decides a shell script run in cwd.
func (e *Engine) Script(src, cwd string) *Decision {
	s, err := shellparse.Parse(src, e.parseOptions())
	if err != nil {
		msg := err.Error()
		if pe, ok := err.(*shellparse.ParseError); ok {
			msg = pe.Error()
		}
		d := &Decision{
			Decision:   Block,
			Reason:     fmt.Sprintf("the script does not parse (%s); guardrun never runs what it cannot read", msg),
			ParseError: msg,
			Parts:      []Part{},
		}
		e.finish(d, &prediction{unbounded: "the script does not parse"}, nil)
		return d
	}
	d, pr := e.decide(s, cwd)
	e.finish(d, pr, []string{e.cfg.Shell.Program, "-c", src})
	return d
}

// Argv decides a command that will be executed directly, without a shell.
func (e *Engine) Argv(argv []string, cwd string) *Decision {
	d, pr := e.decide(shellparse.ParseArgv(argv, e.parseOptions()), cwd)
	e.finish(d, pr, nil)
	return d
}

// Analyse is the analysis Script decides on, for a caller that needs
// more of it than the decision holds (guardrun shell, which carries cd
// and export over to the next line).
func (e *Engine) Analyse(src string) (*shellparse.Script, error) {
	return shellparse.Parse(src, e.parseOptions())
}

func (e *Engine) parseOptions() shellparse.Options {
	return shellparse.Options{Dialect: e.dialect, Home: e.home}
}

func (e *Engine) decide(s *shellparse.Script, cwd string) (*Decision, *prediction) {
	d := &Decision{Parts: []Part{}, Feeds: s.Feeds}
	pr := &prediction{}
	for _, f := range s.Findings {
		v := Ask
		if f.Severity == shellparse.Block {
			v = Block
		}
		d.Parts = append(d.Parts, Part{
			Kind: "finding", Text: f.Text, Decision: v, Reason: f.Reason,
			Pos: f.Pos.String(), Via: f.Via, Dynamic: true, Unbounded: f.Reason,
		})
		pr.add(partPrediction{unbounded: f.Reason})
	}
	commands, networked := 0, 0
	judged := make([]Part, len(s.Commands))
	for i, c := range s.Commands {
		p, r, ok := e.command(c, cwd)
		q := e.predictCommand(c, cwd, pr)
		pr.add(q)
		if !ok {
			continue
		}
		q.show(&p)
		judged[i] = p
		if !c.Wrapper && !isBuiltin(c.Name()) {
			commands++
			if p.Network {
				networked++
			}
		}
		d.Parts = append(d.Parts, p)
		d.Parts = append(d.Parts, e.effects(c, p, r, cwd)...)
		d.Parts = append(d.Parts, e.scriptParts(c, p, r, cwd)...)
	}
	for _, f := range s.Files {
		p := e.redirect(f, cwd)
		q := e.predictRedirect(f, cwd)
		pr.add(q)
		q.show(&p)
		d.Parts = append(d.Parts, p)
	}
	d.Parts = append(d.Parts, e.gitRepositories(s.Commands, judged, d.Parts, cwd)...)
	d.Network = e.cfg.Sandbox.Network || (commands > 0 && networked == commands)
	if e.cfg.Sandbox.Proxy {
		// network: proxy: every command, and a rule's network: true,
		// reaches the network only through the proxy.
		d.Network, d.Proxy = false, true
		d.Hosts = e.cfg.Sandbox.Domains.Summary()
	}
	d.summarize()
	d.Checkpoint = d.checkpointNeed()
	return d, pr
}

func (d *Decision) summarize() {
	d.Decision = Allow
	for _, p := range d.Parts {
		d.Decision = max(d.Decision, p.Decision)
	}
	switch d.Decision {
	case Block:
		for _, p := range d.Parts {
			if p.Decision == Block {
				d.Reason = p.Reason
				break
			}
		}
	case Ask:
		asking := d.Asking()
		if len(asking) == 1 {
			d.Reason = asking[0].Reason
		} else {
			d.Reason = fmt.Sprintf("%d parts need approval: %s", len(asking), asking[0].Reason)
		}
	default:
		if len(d.Parts) == 0 {
			d.Reason = "nothing to run"
		} else {
			d.Reason = "every part is pre-approved"
		}
	}
}

// builtins never reach the network or the file system by themselves;
// they do not count against a network grant.
var builtins = map[string]bool{
	"cd": true, ":": true, "true": true, "false": true, "echo": true, "printf": true,
	"test": true, "[": true, "[[": true, "export": true, "set": true, "unset": true,
	"shift": true, "exit": true, "return": true, "pwd": true, "read": true,
	"local": true, "declare": true, "typeset": true, "readonly": true, "wait": true,
}

func isBuiltin(name string) bool { return builtins[name] }

func argvValues(ws []shellparse.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		if w.Static() {
			out[i] = w.Value
		} else {
			out[i] = w.Source
		}
	}
	return out
}

// quoted renders argv for a person or an agent: quoted, in the dialect
// of shell.program, so that control characters and spaces cannot
// disguise it.
func (e *Engine) quoted(argv []string) string { return shellparse.QuoteArgv(argv, e.dialect) }

// Dialect is the parser dialect of shell.program, the one scripts are
// read and argvs shown in.
func (e *Engine) Dialect() syntax.LangVariant { return e.dialect }

// matchResult is whether a rule matches: definitely, not at all, or
// maybe (a dynamic word stands where the pattern needs to see a value).
type matchResult int

const (
	noMatch matchResult = iota
	maybeMatch
	match
)

func (e *Engine) matchRule(r compiledRule, c shellparse.Command) matchResult {
	argv := c.Argv
	uncertain := false
	for i, re := range r.words {
		if i >= len(argv) {
			// A splitting word earlier could have produced this one.
			for _, w := range argv {
				if w.Split {
					return maybeMatch
				}
			}
			return noMatch
		}
		w := argv[i]
		if w.Split && i < len(r.words)-1 {
			uncertain = true
		}
		val := w.Value
		if i == 0 && !r.pathName {
			val = c.Name()
			// ./cat or /work/bin/cat is not the cat a rule pre-approves:
			// it is whatever file lies there.
			if w.Static() && strings.Contains(w.Value, "/") && r.Action.Allowed && !r.Action.Approval &&
				!e.systemProgram(w.Value) && systemHas(val) {
				return noMatch
			}
		}
		if !w.Static() {
			if r.Words[i] == "*" && !w.Split {
				continue
			}
			uncertain = true
			continue
		}
		if !re.MatchString(val) {
			if uncertain {
				return maybeMatch
			}
			return noMatch
		}
	}
	if uncertain {
		return maybeMatch
	}
	return match
}

// firstRule finds the first rule that definitely matches c. maybe is set
// when an earlier rule might have matched, had the dynamic words been
// known. near says why the first rule whose words matched but whose
// code_in or network: loopback did not hold passed c by.
func (e *Engine) firstRule(rs []compiledRule, ix *ruleIndex, c shellparse.Command, cwd string) (r *compiledRule, maybe bool, near string) {
	order := func(yield func(int) bool) {
		if len(c.Argv) > 0 && c.Argv[0].Static() {
			for _, i := range ix.candidates(c.Name(), c.Argv[0].Value) {
				if !yield(i) {
					return
				}
			}
			return
		}
		for i := range rs {
			if !yield(i) {
				return
			}
		}
	}
	for i := range order {
		m := e.matchRule(rs[i], c)
		if m == noMatch {
			continue
		}
		if m == match && len(rs[i].SandboxPaths) > 0 {
			if ok, _ := e.pathsInside(c, len(rs[i].words), rs[i].SandboxPaths, cwd); !ok {
				continue
			}
		}
		if m == match && len(rs[i].CodeIn) > 0 {
			if ok, why := e.codeInside(c, rs[i].CodeIn, cwd); !ok {
				if near == "" {
					near = fmt.Sprintf("rule %q covers only code in %s: %s", rs[i].Pattern, strings.Join(rs[i].CodeIn, ", "), why)
				}
				continue
			}
		}
		if m == match && rs[i].Loopback {
			if ok, why := e.loopbackOnly(c); !ok {
				if near == "" {
					near = fmt.Sprintf("rule %q covers only requests to the project's servers on loopback ports sandbox.domains.loopback lists: %s", rs[i].Pattern, why)
				}
				continue
			}
		}
		if m == maybeMatch {
			maybe = true
			continue
		}
		return &rs[i], maybe, near
	}
	return nil, maybe, near
}

// judge fills p's verdict from rule r.
func judge(p *Part, r *compiledRule, display string) {
	p.Rule, p.RuleAt, p.Description = r.Pattern, r.At, r.Description
	p.Network = r.Network && r.Action.Allowed
	p.Checkpoint = r.Action.Checkpoint
	switch {
	case !r.Action.Allowed:
		p.Decision = Block
		why := "never allowed"
		if r.Description != "" {
			why = r.Description
		}
		p.Reason = fmt.Sprintf("%s matches rule %q (%s)", display, r.Pattern, why)
	case r.Action.Approval:
		p.Decision = Ask
		p.Reason = fmt.Sprintf("%s matches rule %q, which needs approval", display, r.Pattern)
		if r.Description != "" {
			p.Reason += " (" + r.Description + ")"
		}
	default:
		p.Decision = Allow
		p.Reason = fmt.Sprintf("%s matches rule %q", display, r.Pattern)
	}
}

func (e *Engine) command(c shellparse.Command, cwd string) (Part, *compiledRule, bool) {
	argv := argvValues(c.Argv)
	p := Part{
		Kind: "command", Text: c.Text, Argv: argv, Pos: c.Pos.String(),
		Via: c.Via, Wrapper: c.Wrapper,
	}
	display := e.quoted(argv)
	if p.Text == "" {
		p.Text = display
	}
	r, maybe, near := e.firstRule(e.rules, &e.ruleIx, c, cwd)
	switch {
	case r != nil:
		judge(&p, r, display)
		if maybe && p.Decision == Allow {
			p.Decision, p.Dynamic = Ask, true
			p.Reason = fmt.Sprintf("%s has words not known until run time; it may match an earlier rule", display)
		}
	case c.Wrapper && !maybe:
		// A wrapper is judged only where a rule names it; what it runs
		// is its own part.
		if !e.tightened(&p, c, cwd, display) {
			return p, nil, false
		}
		return p, nil, true
	case c.Wrapper:
		p.Decision, p.Dynamic = Ask, true
		p.Reason = fmt.Sprintf("%s has words not known until run time", display)
	case len(c.Argv) > 0 && !c.Argv[0].Static():
		p.Decision, p.Dynamic = Ask, true
		p.Reason = fmt.Sprintf("%s: the command name is not known until run time", display)
	default:
		def := e.cfg.Shell.Default
		p.Checkpoint = def.Checkpoint
		switch {
		case !def.Allowed:
			p.Decision = Block
			p.Reason = fmt.Sprintf("%s matches no rule and unknown commands are blocked", display)
		case maybe:
			p.Decision, p.Dynamic = Ask, true
			p.Reason = fmt.Sprintf("%s has words not known until run time", display)
		case def.Approval:
			p.Decision = Ask
			p.Reason = fmt.Sprintf("%s matches no rule; unknown commands need approval", display)
			if near != "" {
				p.Reason += " (" + near + ")"
			}
		default:
			p.Decision = Allow
			p.Reason = fmt.Sprintf("%s matches no rule; shell.default allows unknown commands", display)
		}
	}
	if pr := e.projectRule(&p, c, cwd, display); pr != nil {
		e.tightened(&p, c, cwd, display)
		if p.Decision != Allow {
			// An untrusted project file's rule asks: the project rule
			// did not decide it.
			p.Project = ""
			return p, r, true
		}
		return p, pr, true
	}
	e.tightened(&p, c, cwd, display)
	return p, r, true
}

// tightened applies the untrusted project's rules, which can only make
// p's verdict stricter. It reports whether one matched.
func (e *Engine) tightened(p *Part, c shellparse.Command, cwd, display string) bool {
	if len(e.tightening) == 0 {
		return false
	}
	r, maybe, _ := e.firstRule(e.tightening, &e.tightIx, c, cwd)
	if r == nil {
		if maybe && p.Decision == Allow {
			p.Decision, p.Dynamic = Ask, true
			p.Reason = fmt.Sprintf("%s has words not known until run time; it may match a project rule", display)
			return true
		}
		return false
	}
	var t Part
	judge(&t, r, display)
	if t.Decision > p.Decision {
		p.Decision, p.Reason = t.Decision, t.Reason+" (project config)"
		p.Rule, p.RuleAt, p.Description = t.Rule, t.RuleAt, t.Description
		// What a project rule says of checkpoints counts for nothing:
		// it can only make the request ask, and then one is taken.
		p.Checkpoint = CheckpointBestEffort
	}
	return true
}

// pathsInside reports whether every path argument after the pattern's
// words resolves inside one of the named zones. Options (-x) are not
// paths; the value of --opt=value is when it holds a slash. Arguments not
// known statically, or supplied at run time, cannot be checked, so the
// rule does not apply.
func (e *Engine) pathsInside(c shellparse.Command, skip int, zones []string, cwd string) (bool, string) {
	if c.ArgsFromInput {
		return false, "arguments are supplied at run time"
	}
	dirs, why := e.dirs(c.Dir, cwd)
	if why != "" {
		return false, "the working directory is not known until run time (" + why + ")"
	}
	for _, d := range dirs {
		if ok, why := e.pathsInsideIn(c, skip, zones, d); !ok {
			return false, why
		}
	}
	return true, ""
}

// pathsInsideIn is pathsInside for one working directory.
func (e *Engine) pathsInsideIn(c shellparse.Command, skip int, zones []string, cwd string) (bool, string) {
	for _, w := range c.Argv[min(skip, len(c.Argv)):] {
		if !w.Static() {
			return false, fmt.Sprintf("%s is not known until run time", w.Source)
		}
		v := w.Value
		if strings.HasPrefix(v, "-") {
			_, val, ok := strings.Cut(v, "=")
			if !ok || !strings.Contains(val, "/") {
				continue
			}
			v = val
		}
		path := Resolve(e.expandHome(v), cwd)
		if e.denied(path) {
			return false, fmt.Sprintf("%s is denied", v)
		}
		z := e.zoneFor(path)
		if z == nil || !contains(zones, z.Name) {
			return false, fmt.Sprintf("%s is outside %s", v, strings.Join(zones, ", "))
		}
	}
	return true, ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (e *Engine) expandHome(p string) string {
	if e.home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return e.home + p[1:]
	}
	return p
}

// zoneFor returns the innermost zone holding path (resolved), or nil.
func (e *Engine) zoneFor(path string) *resolvedZone {
	var best *resolvedZone
	for i := range e.zones {
		z := &e.zones[i]
		if Within(path, z.root) && (best == nil || len(z.root) > len(best.root)) {
			best = z
		}
	}
	return best
}

// denied reports whether a resolved path is, or is inside, a denied path,
// or has a component with a denied name. Names are compared ignoring
// case: on a case-insensitive file system (macOS, Windows shares) .ENV
// opens .env.
func (e *Engine) denied(path string) bool {
	for _, d := range e.deny {
		if withinFold(path, d) {
			return true
		}
	}
	if len(e.names) > 0 {
		for _, c := range strings.Split(path, "/") {
			if slices.ContainsFunc(e.names, func(n string) bool { return strings.EqualFold(n, c) }) {
				return true
			}
		}
	}
	return false
}

// withinFold is Within with each path component compared ignoring case
// (Unicode simple folding, as case-insensitive file systems do: the
// Kelvin sign folds to k).
func withinFold(path, root string) bool {
	if Within(path, root) {
		return true
	}
	if root == "/" {
		return strings.HasPrefix(path, "/")
	}
	if ascii(path) && ascii(root) {
		// Folding keeps ASCII lengths: no need to split.
		return len(path) >= len(root) && strings.EqualFold(path[:len(root)], root) && (len(path) == len(root) || path[len(root)] == '/')
	}
	p, r := strings.Split(path, "/"), strings.Split(root, "/")
	return len(p) >= len(r) && slices.EqualFunc(p[:len(r)], r, strings.EqualFold)
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// alwaysFine are redirection targets that never touch a file.
// Descriptor paths (/dev/stdout, /dev/fd/N) are judged by what the script
// bound to them.
var alwaysFine = map[string]bool{"/dev/null": true, "/dev/tty": true, "/dev/zero": true}

// readable are devices any command may read.
var readable = map[string]bool{"/dev/urandom": true, "/dev/random": true, "/dev/zero": true, "/dev/null": true}

func (e *Engine) redirect(f shellparse.FileOp, cwd string) Part {
	p := Part{Kind: "file", Text: f.Text, Op: string(f.Op), Pos: f.Pos.String(), Via: f.Via, Path: f.Path.Value}
	if !f.Path.Static() {
		p.Path = f.Path.Source
		p.Decision, p.Dynamic = Ask, true
		p.Reason = fmt.Sprintf("%s: the %s target %s is not known until run time", f.Text, f.Op, f.Path.Source)
		return p
	}
	if alwaysFine[f.Path.Value] || f.Op == shellparse.OpRead && readable[f.Path.Value] {
		p.Decision = Allow
		p.Reason = fmt.Sprintf("%s is always fine", f.Path.Value)
		return p
	}
	var fp Part
	if f.Bound != nil {
		fp = e.bound(Op(f.Op), f.Bound, f.Path.Value, cwd)
	} else {
		path := e.expandHome(f.Path.Value)
		fp = e.inDirs(path, f.Dir, cwd, f.Text, func(dir string) Part { return e.file(Op(f.Op), path, dir, true) })
	}
	fp.Text, fp.Pos, fp.Via = f.Text, p.Pos, f.Via
	if fp.Op == "" {
		fp.Op = string(f.Op)
	}
	return fp
}

// Op is a file operation.
type Op string

const (
	OpRead   Op = "read"
	OpWrite  Op = "write"
	OpDelete Op = "delete"
)

// File decides one file operation on path (relative to cwd): zones,
// suffixes, approvals and deny, with `..` and symlinks resolved.
//
// File judges an operation guardrun itself performs on the host (guardrun
// fs); a command's paths are judged with sandboxed, where the sandbox's
// private /tmp is a place to write.
func (e *Engine) File(op Op, path, cwd string) Part { return e.file(op, path, cwd, false) }

func (e *Engine) file(op Op, path, cwd string, sandboxed bool) Part {
	resolved := Resolve(path, cwd)
	lexical := path
	if !filepath.IsAbs(lexical) {
		lexical = filepath.Join(cwd, lexical)
	}
	lexical = filepath.Clean(lexical)
	p := Part{Kind: "file", Op: string(op), Path: resolved, Text: fmt.Sprintf("%s %s", op, path)}
	if e.denied(resolved) || e.denied(lexical) {
		p.Decision = Block
		p.Reason = fmt.Sprintf("%s %s: the path is denied (sandbox.deny)", op, path)
		return p
	}
	if processPath(resolved) {
		p.Decision = Ask
		p.Reason = fmt.Sprintf("%s %s: the path leads to %s, whose meaning depends on the process that opens it", op, path, resolved)
		return p
	}
	z := e.zoneFor(resolved)
	if z == nil && sandboxed && e.inPrivateTmp(resolved) {
		p.Zone = "tmp"
		p.Decision = Allow
		p.Reason = fmt.Sprintf("%s %s: inside the sandbox's private /tmp, which does not outlive the command", op, path)
		return p
	}
	if z == nil {
		if op == OpRead && (e.systemReadable(resolved) || readable[resolved]) {
			p.Decision = Allow
			p.Reason = fmt.Sprintf("read %s: system files are readable", path)
			return p
		}
		p.Decision = Block
		where := "outside every zone"
		if op != OpRead {
			where = "outside every rw zone"
		}
		if resolved != lexical {
			where += " (resolves to " + resolved + ")"
		}
		p.Reason = fmt.Sprintf("%s %s: the path is %s", op, path, where)
		return p
	}
	p.Zone = z.Name
	switch op {
	case OpRead:
		if z.ReadApproval {
			p.Decision = Ask
			p.Reason = fmt.Sprintf("read %s: zone %q needs approval to read", path, z.Name)
			return p
		}
	case OpWrite, OpDelete:
		if z.Mode != ReadWrite {
			p.Decision = Block
			p.Reason = fmt.Sprintf("%s %s: zone %q is read-only", op, path, z.Name)
			return p
		}
		if op == OpWrite && len(z.Suffixes) > 0 && !hasSuffix(resolved, z.Suffixes) {
			p.Decision = Block
			p.Reason = fmt.Sprintf("write %s: zone %q only takes files ending in %s", path, z.Name, strings.Join(z.Suffixes, ", "))
			return p
		}
		if what := e.protected(resolved, lexical, z.root); what != "" {
			// Something outside the sandbox later runs or obeys it
			// (a git hook, .git/config, a shell startup file): a
			// person decides, whatever the zone pre-approves.
			p.Decision = Ask
			p.Reason = fmt.Sprintf("%s %s: %s is protected (sandbox.protect)", op, path, what)
			return p
		}
		if op == OpWrite {
			if d := e.onPath(resolved, false); d != "" {
				// An activated virtualenv's .venv/bin: a file put
				// there runs in place of the program a later
				// command names (ls, git).
				p.Decision = Ask
				p.Reason = fmt.Sprintf("write %s: %s is on PATH, so a program written there runs in place of the one a command names", path, d)
				return p
			}
		}
		if op == OpWrite && z.WriteApproval || op == OpDelete && z.DeleteApproval {
			p.Decision = Ask
			p.Reason = fmt.Sprintf("%s %s: zone %q needs approval to %s", op, path, z.Name, op)
			return p
		}
	}
	p.Decision = Allow
	p.Reason = fmt.Sprintf("%s %s: inside zone %q", op, path, z.Name)
	return p
}

// protected returns the protected name or path that the resolved or
// lexical path is, or lies inside, below the zone root; "" if none. A name
// matches at any depth: .git/config matches /w/sub/.git/config/x, and
// ignoring case, as on a case-insensitive file system: .GIT/Config.
func (e *Engine) protected(resolved, lexical, root string) string {
	for _, p := range e.protectPaths {
		if withinFold(resolved, p) || withinFold(lexical, p) {
			return p
		}
	}
	for _, path := range []string{resolved, lexical} {
		if !Within(path, root) || path == root {
			continue
		}
		rel := strings.Split(strings.TrimPrefix(path[len(root):], "/"), "/")
		for _, n := range e.protect {
			for i := 0; i+len(n) <= len(rel); i++ {
				if slices.EqualFunc(rel[i:i+len(n)], n, strings.EqualFold) {
					return strings.Join(n, "/")
				}
			}
		}
		if what := gitCode(rel); what != "" {
			return what
		}
	}
	return ""
}

// onPath returns the absolute PATH directory (of the commands' PATH) that
// a write to the resolved path puts a file in, or, with tree (a copy or
// move, which lands a whole tree there), that lies inside the path; ""
// when there is none. Relative entries are the working directory's at
// run time, which predict.go's plantable accounts for.
func (e *Engine) onPath(resolved string, tree bool) string {
	for _, d := range e.run.path {
		if !filepath.IsAbs(d) {
			continue
		}
		r := Resolve(d, "/")
		if Within(resolved, r) && resolved != r || tree && Within(r, resolved) {
			return d
		}
	}
	return ""
}

// gitDirCode are the names in a git directory that make git run programs
// or take them from elsewhere (as sandbox.derive protects them).
var gitDirCode = []string{"config", "config.worktree", "hooks", "commondir"}

// gitCode returns what a path (its components below a zone root) is
// when it holds code git runs, beyond the fixed names: a file named .git
// (a gitfile sends git to another directory's config and hooks), and the
// config and hooks of the git directories inside a .git directory
// (.git/modules/NAME/config of a submodule, which git status runs in,
// .git/worktrees/NAME/commondir); "" otherwise.
func gitCode(rel []string) string {
	if n := len(rel); n > 0 && strings.EqualFold(rel[n-1], ".git") {
		return ".git"
	}
	for i, c := range rel {
		if !strings.EqualFold(c, ".git") {
			continue
		}
		for _, d := range rel[i+1:] {
			if slices.ContainsFunc(gitDirCode, func(n string) bool { return strings.EqualFold(n, d) }) {
				return ".git/.../" + d
			}
		}
	}
	return ""
}

func hasSuffix(p string, suffixes []string) bool {
	for _, s := range suffixes {
		if strings.HasSuffix(p, s) {
			return true
		}
	}
	return false
}

func (e *Engine) systemReadable(p string) bool {
	for _, s := range e.system {
		if Within(p, s) {
			return true
		}
	}
	return false
}
