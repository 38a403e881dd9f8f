package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/config"
)

const rulesUsage = `Usage: guardrun rules [list] [--json]
       guardrun rules revoke PATTERN | --all [--project DIR]

"Always in this project" rules: what you approved with [a] at a prompt.
Each is a rule pattern (the command's words) that runs without asking in
one project (its repository's root, else its zone's root), kept in your
own state (never in the repository). Block rules and an untrusted
.guardrun.yaml's rules still apply over them.

  list            every project's rules; * marks this directory's project
  revoke PATTERN  forget PATTERN in this project (as list shows it)
  revoke --all    forget every rule of this project
  --project DIR   the project to revoke in (default: this directory's)
`

func cmdRules(g *global, args []string, io IO) error {
	vf, err := parseVerb(g, args, []string{"--project"}, []string{"--all"})
	if err != nil {
		return err
	}
	if vf.bools["help"] {
		fmt.Fprint(io.Stdout, rulesUsage)
		return nil
	}
	e, l, err := config.LoadProcess(g.ConfigFlags())
	if err != nil {
		return err
	}
	st, err := approval.OpenRuleStore(e.StateDir)
	if err != nil {
		return err
	}
	here := l.Engine.ProjectRoot(e.Cwd)
	if dir := vf.values["--project"]; dir != "" {
		here = l.Engine.ProjectRoot(dir)
	}
	verb := "list"
	if len(vf.args) > 0 {
		verb = vf.args[0]
	}
	switch verb {
	case "list":
		if len(vf.args) > 1 || vf.bools["--all"] {
			return usagef("rules list takes no arguments")
		}
		all, err := st.List()
		if err != nil {
			return err
		}
		if g.json {
			if all == nil {
				all = []approval.ProjectRule{}
			}
			return json.NewEncoder(io.Stdout).Encode(map[string]any{"project": here, "rules": all})
		}
		if len(all) == 0 {
			fmt.Fprintln(io.Stdout, "no project rules (answer [a] at a prompt to add one)")
			return nil
		}
		last := ""
		for _, r := range all {
			if r.Project != last {
				mark := " "
				if r.Project == here {
					mark = "*"
				}
				fmt.Fprintf(io.Stdout, "%s %s\n", mark, approval.Sanitize(r.Project))
				last = r.Project
			}
			fmt.Fprintf(io.Stdout, "    %s  (since %s)\n", approval.Sanitize(r.Pattern), r.Created.Local().Format(time.DateTime))
		}
		return nil
	case "revoke":
		pattern := ""
		switch {
		case vf.bools["--all"] && len(vf.args) == 1:
		case !vf.bools["--all"] && len(vf.args) == 2:
			pattern = vf.args[1]
		default:
			return usagef("rules revoke needs a PATTERN or --all")
		}
		n, err := st.Revoke(here, pattern)
		if err != nil {
			return err
		}
		if g.json {
			return json.NewEncoder(io.Stdout).Encode(map[string]any{"project": here, "revoked": n})
		}
		if n == 0 {
			if pattern != "" {
				return fmt.Errorf("no rule %q in project %s (see guardrun rules list)", pattern, here)
			}
			fmt.Fprintf(io.Stdout, "no rules in project %s\n", approval.Sanitize(here))
			return nil
		}
		fmt.Fprintf(io.Stdout, "revoked %d rule(s) of %s\n", n, approval.Sanitize(here))
		return nil
	}
	return usagef("unknown rules command %q (list or revoke)", verb)
}
