package cli

import (
	"fmt"
	"strings"

	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/rules"
)

// global holds the flags common to every verb. They may stand before or
// after the verb.
type global struct {
	request.Options
	json bool
}

// parseGlobal takes the common flags from the front of args and returns
// the rest, which starts at the first word that is not a common flag.
func parseGlobal(args []string) (*global, []string, error) {
	g := &global{}
	i := 0
	for i < len(args) {
		n, err := g.take(args[i:])
		if err != nil {
			return nil, nil, err
		}
		if n == 0 {
			break
		}
		i += n
	}
	return g, args[i:], nil
}

// take consumes one common flag from args, returning how many words it
// used (0 when args[0] is not a common flag).
func (g *global) take(args []string) (int, error) {
	a := args[0]
	name, val, hasVal := strings.Cut(a, "=")
	value := func() (string, int, error) {
		if hasVal {
			return val, 1, nil
		}
		if len(args) < 2 {
			return "", 0, usagef("%s needs a value", name)
		}
		return args[1], 2, nil
	}
	switch name {
	case "--config":
		v, n, err := value()
		if err != nil {
			return 0, err
		}
		if v == "" {
			return 0, usagef("--config needs a file")
		}
		g.Config = v
		return n, nil
	case "--mode":
		v, n, err := value()
		if err != nil {
			return 0, err
		}
		switch rules.Mode(v) {
		case rules.ModeInteractive, rules.ModeApproveAll, rules.ModeStrict:
			g.Mode = rules.Mode(v)
		default:
			return 0, usagef("--mode wants interactive, approve-all or strict, got %q", v)
		}
		return n, nil
	case "--backend":
		v, n, err := value()
		if err != nil {
			return 0, err
		}
		b, err := parseBackend("--backend", v)
		if err != nil {
			return 0, err
		}
		g.Backend = b
		return n, nil
	case "--session":
		v, n, err := value()
		if err != nil {
			return 0, err
		}
		if v == "" {
			return 0, usagef("--session needs an id")
		}
		g.Session = v
		return n, nil
	}
	if hasVal {
		return 0, nil
	}
	switch a {
	case "--approve-all":
		g.Mode = rules.ModeApproveAll
		return 1, nil
	case "--strict":
		g.Mode = rules.ModeStrict
		return 1, nil
	case "--interactive":
		g.Mode = rules.ModeInteractive
		return 1, nil
	}
	return 0, nil
}

// parseBackend checks the name of a Linux OS sandbox backend given by
// what (--backend or $GUARDRUN_BACKEND).
func parseBackend(what, v string) (rules.Backend, error) {
	switch rules.Backend(v) {
	case rules.BackendAuto, rules.BackendBwrap, rules.BackendLandlock:
		return rules.Backend(v), nil
	}
	if len(v) > 40 {
		v = v[:40] + "…"
	}
	return "", usagef("%s wants auto, bwrap or landlock, got %q", what, v)
}

// backendFromEnv takes the backend from $GUARDRUN_BACKEND when no
// --backend was given before the verb (one after it still overrides):
// `guardrun supervise --backend NAME` sets it for the agent, so that the
// agent's own guardrun runs use the backend the person chose.
func (g *global) backendFromEnv(getenv func(string) string) error {
	v := getenv("GUARDRUN_BACKEND")
	if g.Backend != "" || v == "" {
		return nil
	}
	b, err := parseBackend("$GUARDRUN_BACKEND", v)
	if err != nil {
		return err
	}
	g.Backend = b
	return nil
}

// verbFlags parses a verb's arguments: common flags anywhere, the verb's
// own flags (name → takes a value), and positional words. "--" ends
// flags; what follows is returned in rest.
type verbFlags struct {
	values map[string]string
	bools  map[string]bool
	args   []string
	rest   []string
	dashes bool // "--" was seen
}

// command is the command a verb runs (serve, supervise): the words after
// "--", or, without "--", all its positional words; a usage error names
// what it needs (needs) when there is none.
func (vf *verbFlags) command(needs string) ([]string, error) {
	argv := vf.rest
	switch {
	case vf.dashes && len(vf.args) > 0:
		return nil, usagef("unexpected argument %q before --", vf.args[0])
	case !vf.dashes:
		argv = vf.args
	}
	if len(argv) == 0 {
		return nil, usagef("%s", needs)
	}
	return argv, nil
}

func parseVerb(g *global, args []string, withValue, boolean []string) (*verbFlags, error) {
	vf := &verbFlags{values: map[string]string{}, bools: map[string]bool{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			vf.dashes = true
			vf.rest = args[i+1:]
			return vf, nil
		}
		n, err := g.take(args[i:])
		if err != nil {
			return nil, err
		}
		if n > 0 {
			i += n - 1
			continue
		}
		if a == "--json" {
			g.json = true
			continue
		}
		if a == "-h" || a == "--help" {
			vf.bools["help"] = true
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		if contains(withValue, name) {
			if !hasVal {
				if i+1 >= len(args) {
					return nil, usagef("%s needs a value", name)
				}
				i++
				val = args[i]
			}
			vf.values[name] = val
			continue
		}
		if contains(boolean, a) {
			vf.bools[a] = true
			continue
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			return nil, usagef("unknown flag %s", a)
		}
		vf.args = append(vf.args, a)
	}
	return vf, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// verbStart parses a verb's arguments like parseVerb and, for -h/--help,
// prints usage; help is then true and the verb has nothing left to do.
func verbStart(g *global, args []string, usage string, withValue, boolean []string, io IO) (vf *verbFlags, help bool, err error) {
	vf, err = parseVerb(g, args, withValue, boolean)
	if err != nil {
		return nil, false, err
	}
	if vf.bools["help"] {
		fmt.Fprint(io.Stdout, usage)
		return vf, true, nil
	}
	return vf, false, nil
}
