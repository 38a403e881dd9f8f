package cli

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/rules"
	"github.com/guardrun/guardrun/shellparse"
)

const explainUsage = `Usage: guardrun explain [--json] -c 'SCRIPT' | -- CMD [ARG...]

Shows the decision (allow, ask or block) for a script or command and the
reason for each part, without running anything. The script is given as
to guardrun itself, with bash's options in bash's order (-c -l 'SCRIPT',
-lc 'SCRIPT', -O extglob -c 'SCRIPT'); an agent's wrapper around a
command is judged as its command, as a run would judge it. Exits 0
whatever the decision; 125 on a bad config.
`

func cmdExplain(g *global, args []string, io IO) error {
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "-h" || a == "--help" {
			fmt.Fprint(io.Stdout, explainUsage)
			return nil
		}
		if a == "--json" {
			g.json = true
			i++
			continue
		}
		n, err := g.take(args[i:])
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		i += n
	}
	rest := args[i:]
	var j *request.Job
	switch {
	case len(rest) == 0:
		return usagef("explain needs -c SCRIPT or -- CMD")
	case rest[0] == "--":
		if len(rest) == 1 {
			return usagef("-- needs a command")
		}
		j = &request.Job{Argv: rest[1:]}
	case isShFlags(rest[0]):
		var err error
		if j, err = parseShFront(rest, getenvOS); err != nil {
			return err
		}
		if j == nil {
			return usagef("explain needs -c SCRIPT or -- CMD")
		}
		// After the script come $0 and the positional parameters, which
		// change no decision, and guardrun's own flags.
		for k := 0; k < len(j.PosArgs); k++ {
			a := j.PosArgs[k]
			if a == "--json" {
				g.json = true
				continue
			}
			if a == "--" {
				return usagef("explain takes -c SCRIPT or -- CMD, not both")
			}
			n, err := g.take(j.PosArgs[k:])
			if err != nil {
				return err
			}
			k += max(n-1, 0)
		}
	case strings.HasPrefix(rest[0], "-"):
		return usagef("unknown flag %s", rest[0])
	default:
		return usagef("unexpected argument %q", rest[0])
	}
	e, l, err := config.LoadProcess(g.ConfigFlags())
	if err != nil {
		return err
	}
	l.WarnIgnored(io.Stderr)
	// The person's "always in this project" rules count, as they do
	// when the request runs.
	pl := *l
	pl.Engine = request.ProjectEngine(l, e, e.Cwd)
	d := request.DecideJob(&pl, j, e.Cwd)
	if g.json {
		enc := json.NewEncoder(io.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	}
	if w := j.Wrapper; w != nil && w.Decline == "" {
		fmt.Fprintf(io.Stdout, "wrapper:  %s's, around the command judged: %s\n", w.Agent.Title, request.OneLineDisplay(w.Command))
	}
	writeDecision(io, d)
	return nil
}

func writeDecision(io IO, d *rules.Decision) {
	fmt.Fprintf(io.Stdout, "decision: %s\nreason:   %s\n", d.Decision, approval.Sanitize(d.Reason))
	if d.ParseError != "" {
		fmt.Fprintf(io.Stdout, "parse error: %s\n", d.ParseError)
	}
	if d.Network {
		fmt.Fprintln(io.Stdout, "network:  on")
	}
	if d.Proxy {
		fmt.Fprintf(io.Stdout, "network:  %s\n", approval.Sanitize(d.Hosts))
	}
	switch {
	case d.Verified:
		fmt.Fprintln(io.Stdout, "verified: the analysis bounds every part; what it runs and writes is checked as it runs")
	case d.Bounded:
		fmt.Fprintln(io.Stdout, "verified: no, the request is not pre-approved (the analysis bounds every part)")
	default:
		fmt.Fprintf(io.Stdout, "verified: no, %s\n", approval.Sanitize(d.Unbounded))
	}
	if len(d.Parts) > 0 {
		fmt.Fprintln(io.Stdout, "parts:")
	}
	for _, p := range d.Parts {
		kind := p.Kind
		if p.Wrapper {
			kind = "wrapper"
		}
		via := ""
		if len(p.Via) > 0 {
			via = " (via " + strings.Join(p.Via, " > ") + ")"
		}
		fmt.Fprintf(io.Stdout, "  %-6s %-5s %-8s %s%s\n", p.Pos, p.Decision, kind, approval.Sanitize(p.Text), approval.Sanitize(via))
		fmt.Fprintf(io.Stdout, "         %s\n", approval.Sanitize(p.Reason))
	}
}

const checkUsage = `Usage: guardrun check [--json]

Validates the config in force, names the file it came from and whether it
is trusted, and checks every example in shell.examples against the rules
(examples are judged from the config file's directory). Exits 0 when all
is well, 1 when an example fails, 125 when the config is invalid.
`

type exampleResult struct {
	Script   string        `json:"script"`
	Expected rules.Verdict `json:"expected"`
	Got      rules.Verdict `json:"got"`
	OK       bool          `json:"ok"`
	At       string        `json:"at"`
	Reason   string        `json:"reason"`
}

type checkReport struct {
	Config   string          `json:"config"`
	Source   string          `json:"source"`
	Trusted  bool            `json:"trusted"`
	Files    []config.File   `json:"files"`
	Rules    int             `json:"rules"`
	Zones    int             `json:"zones"`
	Examples []exampleResult `json:"examples"`
	Passed   int             `json:"passed"`
	Failed   int             `json:"failed"`
}

func cmdCheck(g *global, args []string, io IO) error {
	vf, help, err := verbStart(g, args, checkUsage, nil, nil, io)
	if err != nil || help {
		return err
	}
	if len(vf.args) > 0 || vf.dashes {
		return usagef("check takes no arguments")
	}
	_, l, err := config.LoadProcess(g.ConfigFlags())
	if err != nil {
		return err
	}
	rep := checkReport{
		Config: l.Cfg.File, Source: l.Source, Trusted: l.Project == "" || l.ProjectTrusted,
		Files: l.Chain, Rules: len(l.Cfg.Shell.Rules), Zones: len(l.Cfg.Sandbox.Zones),
		Examples: []exampleResult{},
	}
	ex := l.Cfg.Shell.Examples
	for _, set := range []struct {
		want rules.Verdict
		list []rules.Example
	}{{rules.Allow, ex.Allow}, {rules.Ask, ex.Ask}, {rules.Block, ex.Block}} {
		for _, x := range set.list {
			d := l.Engine.Script(x.Script, l.Cfg.Dir)
			r := exampleResult{Script: x.Script, Expected: set.want, Got: d.Decision, OK: d.Decision == set.want, At: x.At, Reason: d.Reason}
			rep.Examples = append(rep.Examples, r)
			if r.OK {
				rep.Passed++
			} else {
				rep.Failed++
			}
		}
	}
	if g.json {
		enc := json.NewEncoder(io.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		if rep.Config == rules.DefaultName {
			fmt.Fprintf(io.Stdout, "config: %s\n", rep.Config) // the source says the same
		} else {
			fmt.Fprintf(io.Stdout, "config: %s (%s)\n", rep.Config, rep.Source)
		}
		// Every file of the config in force, base first: where it came
		// from and why it is or is not trusted. The embedded default
		// alone is named once, above.
		for _, f := range l.Chain {
			if f.Trusted && f.File == rules.DefaultName {
				continue
			}
			if f.Trusted {
				fmt.Fprintf(io.Stdout, "trust:  %s is trusted (%s: %s)\n", f.File, f.Origin, f.Why)
				continue
			}
			fmt.Fprintf(io.Stdout, "trust:  %s is NOT trusted (%s: %s); it only tightens the base (to apply it in full, %s)\n", f.File, f.Origin, f.Why, f.Hint)
			for _, s := range f.Ignored {
				fmt.Fprintf(io.Stdout, "        ignored: %s\n", s)
			}
		}
		fmt.Fprintf(io.Stdout, "rules:  %d, zones: %d, mode: %s\n", rep.Rules, rep.Zones, l.Cfg.Mode)
		for _, r := range rep.Examples {
			if !r.OK {
				fmt.Fprintf(io.Stdout, "FAIL %s: example %s: expected %s, got %s: %s\n",
					r.At, shellparse.QuoteArgv([]string{r.Script}, l.Engine.Dialect()), r.Expected, r.Got, approval.Sanitize(r.Reason))
			}
		}
		fmt.Fprintf(io.Stdout, "examples: %d passed, %d failed\n", rep.Passed, rep.Failed)
	}
	if rep.Failed > 0 {
		return &exitStatus{Code: 1}
	}
	return nil
}

func cmdVersion(g *global, args []string, io IO) error {
	vf, err := parseVerb(g, args, nil, nil)
	if err != nil {
		return err
	}
	if len(vf.args) > 0 {
		return usagef("version takes no arguments")
	}
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " " + s.Value[:12]
			}
		}
		v += " " + bi.GoVersion
	}
	fmt.Fprintf(io.Stdout, "guardrun %s\n", v)
	return nil
}
