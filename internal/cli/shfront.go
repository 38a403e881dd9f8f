package cli

import (
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/guardrun/guardrun/internal/request"
)

// What programs send to $SHELL is read as bash reads its own arguments
// (shell.c): first its long options (--login, and the same names after
// one dash: -login), then option clusters of letters after - or + (-lc,
// -ec, +x, -o NAME, -O NAME, whose names are the next words in order:
// -oo errexit nounset), ending at the first word that is not an option
// or at - or --; then, with c anywhere among them, the next word is the
// script and the words after it are $0 and the positional parameters. A
// long option after a letter cluster is an error, as in bash (`-c
// --login` is "--: invalid option").
//
// Options that change how bash reads or runs the script beyond what
// guardrun's analysis follows are refused (exit 2) rather than passed
// on; options that only make the shell run less (errexit, nounset,
// noexec, ...) or that the analysis already assumes are passed to the
// shell that runs the script, as -o NAME / +o NAME and (bash) -O NAME /
// +O NAME. A login shell (-l, --login, an argv[0] starting with -) and
// an interactive one (-i) are accepted and run as a plain `-c`: the
// sandboxed shell reads no startup file, as for -lc since guardrun first
// accepted it, so what runs is only the script that was judged; --norc,
// --noprofile, --noediting, --rcfile FILE and --init-file FILE (which
// only an interactive shell reads) are accepted for the same reason.

// shArgs is what bash makes of an argument list.
type shArgs struct {
	command bool   // -c was given
	script  string // the word after the options, with -c
	stdin   bool   // -s: commands from standard input
	// opts are the options passed on to the shell that runs the script.
	opts []string
	// set are the options given, in the order they first came, with
	// their last state.
	set []optionState
	// rest are the words after the options (after the script with -c).
	rest []string
}

// optionState is one option as the arguments left it.
type optionState struct {
	shopt   bool
	name    string
	on      bool
	spelled string // as last written
}

// bashLong are bash's long options (also written with one dash).
// takesFile marks --rcfile FILE and --init-file FILE.
var bashLong = map[string]struct {
	takesFile bool
	// refuse, when set, is why guardrun does not take it.
	refuse string
	// set is the set -o option it stands for, when it is one.
	set string
}{
	"login":           {},
	"noprofile":       {},
	"norc":            {},
	"noediting":       {},
	"rcfile":          {takesFile: true},
	"init-file":       {takesFile: true},
	"verbose":         {set: "verbose"},
	"posix":           {refuse: "it changes how the script is read (aliases are expanded), which guardrun's analysis does not follow"},
	"restricted":      {refuse: "guardrun does not run restricted shells"},
	"debug":           {refuse: "it is a shell developer's option"},
	"debugger":        {refuse: "it turns on extdebug and sources the debugger's start file, which guardrun cannot read"},
	"dump-strings":    {refuse: "it prints the script's translatable strings instead of running it"},
	"dump-po-strings": {refuse: "it prints the script's translatable strings instead of running it"},
	"pretty-print":    {refuse: "it prints the script instead of running it"},
	"help":            {refuse: "as a shell guardrun runs scripts; for its own help run guardrun --help"},
	"version":         {refuse: "as a shell guardrun runs scripts; for its version run guardrun version"},
}

// optionRule is how guardrun takes a set -o or shopt option: its state
// in a new `bash -c` (setting it to that state does nothing), and the
// state it refuses, with why, when guardrun cannot follow the script
// with the option in that state.
type optionRule struct {
	on         bool
	refuse     string // why; empty when every state is followed
	refuseWhen bool   // the state refused
	ignore     bool   // no effect on a -c script (line editing, EOF at a prompt, read-only)
}

func (o optionRule) decide(on bool) (pass bool, refuse string) {
	switch {
	case o.ignore, on == o.on:
		return false, ""
	case o.refuse != "" && on == o.refuseWhen:
		return false, o.refuse
	}
	return true, ""
}

const (
	whyBrace    = "it turns brace expansion off, which guardrun's analysis always performs ({rm,-rf,x} would run a command of that name)"
	whyComments = "without it # starts no comment, so text guardrun read as a comment would run"
	whyPosix    = "it changes how the script is read (aliases are expanded), which guardrun's analysis does not follow"
	whyCompat   = "an older bash's rules change how the script is read"
)

// setOptions are bash's set -o options (bash 5.2).
var setOptions = map[string]optionRule{
	"allexport":            {},
	"braceexpand":          {on: true, refuse: whyBrace, refuseWhen: false},
	"emacs":                {ignore: true},
	"errexit":              {},
	"errtrace":             {},
	"functrace":            {refuse: "it carries DEBUG and RETURN traps into functions and substitutions", refuseWhen: true},
	"hashall":              {on: true},
	"histexpand":           {refuse: "history expansion changes what a line runs", refuseWhen: true},
	"history":              {refuse: "a command history lets fc run earlier lines again", refuseWhen: true},
	"ignoreeof":            {ignore: true},
	"interactive-comments": {on: true, refuse: whyComments, refuseWhen: false},
	"keyword":              {refuse: "it makes every NAME=value word an assignment, also after the command name", refuseWhen: true},
	"monitor":              {},
	"noclobber":            {},
	"noexec":               {},
	"noglob":               {},
	"nolog":                {ignore: true},
	"notify":               {},
	"nounset":              {},
	"onecmd":               {},
	"physical":             {refuse: "it makes every cd follow symbolic links first, which guardrun's reading of cd does not", refuseWhen: true},
	"pipefail":             {},
	"posix":                {refuse: whyPosix, refuseWhen: true},
	"privileged":           {},
	"verbose":              {},
	"vi":                   {ignore: true},
	"xtrace":               {},
}

// setLetters are the option letters that stand for set -o options.
var setLetters = map[rune]string{
	'a': "allexport", 'b': "notify", 'e': "errexit", 'f': "noglob", 'h': "hashall",
	'k': "keyword", 'm': "monitor", 'n': "noexec", 'p': "privileged", 't': "onecmd",
	'u': "nounset", 'v': "verbose", 'x': "xtrace", 'B': "braceexpand", 'C': "noclobber",
	'E': "errtrace", 'H': "histexpand", 'P': "physical", 'T': "functrace",
}

// shopts are bash's shopt options (bash 5.2). Those not refused change
// only what a glob matches, messages, or what an interactive shell does,
// or they make the shell run less.
var shopts = map[string]optionRule{
	"autocd": {}, "assoc_expand_once": {}, "cdspell": {}, "checkhash": {}, "checkjobs": {},
	"checkwinsize": {on: true}, "cmdhist": {on: true}, "complete_fullquote": {on: true},
	"direxpand": {}, "dirspell": {}, "dotglob": {}, "execfail": {}, "extglob": {},
	"failglob": {}, "force_fignore": {on: true}, "globasciiranges": {on: true},
	"globskipdots": {on: true}, "globstar": {}, "gnu_errfmt": {}, "histappend": {},
	"histreedit": {}, "histverify": {}, "hostcomplete": {on: true}, "huponexit": {},
	"inherit_errexit": {}, "lithist": {}, "localvar_inherit": {}, "localvar_unset": {},
	"mailwarn": {}, "no_empty_cmd_completion": {}, "nocaseglob": {}, "nocasematch": {},
	"noexpand_translation": {}, "nullglob": {}, "patsub_replacement": {on: true},
	"progcomp": {on: true}, "progcomp_alias": {}, "promptvars": {on: true},
	"shift_verbose": {}, "sourcepath": {on: true}, "varredir_close": {}, "xpg_echo": {},
	"login_shell": {ignore: true}, "restricted_shell": {ignore: true},
	"expand_aliases":       {refuse: "aliases would change what the script's commands run", refuseWhen: true},
	"extdebug":             {refuse: "a DEBUG trap could skip or replace commands", refuseWhen: true},
	"lastpipe":             {refuse: "the last command of a pipeline runs in the shell itself, so its cd or variables outlive the pipeline", refuseWhen: true},
	"cdable_vars":          {refuse: "cd NAME would go where a variable points", refuseWhen: true},
	"extquote":             {on: true, refuse: "it changes how quotes inside ${...} are read", refuseWhen: false},
	"interactive_comments": {on: true, refuse: whyComments, refuseWhen: false},
	"compat31":             {refuse: whyCompat, refuseWhen: true}, "compat32": {refuse: whyCompat, refuseWhen: true},
	"compat40": {refuse: whyCompat, refuseWhen: true}, "compat41": {refuse: whyCompat, refuseWhen: true},
	"compat42": {refuse: whyCompat, refuseWhen: true}, "compat43": {refuse: whyCompat, refuseWhen: true},
	"compat44": {refuse: whyCompat, refuseWhen: true},
}

// parseBashArgs reads args (what follows argv[0], after guardrun's own
// flags) as bash does.
func parseBashArgs(args []string) (*shArgs, error) {
	sa := &shArgs{}
	i := 0
	// Long options, before any letter cluster.
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		a := args[i]
		name, long := a[1:], false
		if len(a) > 2 && a[1] == '-' {
			name, long = a[2:], true
		}
		lo, ok := bashLong[name]
		if !ok {
			if long {
				return nil, usagef("%s: invalid option (bash reads long options only before the others)", a)
			}
			break
		}
		if lo.refuse != "" {
			return nil, usagef("%s is not supported: %s", a, lo.refuse)
		}
		if lo.takesFile {
			if i+1 >= len(args) {
				return nil, usagef("%s needs a file", a)
			}
			i++
		}
		if lo.set != "" {
			sa.option(false, a, lo.set, true)
		}
		i++
	}
	// Letter clusters: -abc, +abc; o and O take the next unused words.
	for i < len(args) {
		a := args[i]
		if a == "" || a[0] != '-' && a[0] != '+' {
			break
		}
		if a == "-" || a == "--" {
			i++
			break
		}
		on := a[0] == '-'
		next := i + 1
		for _, c := range a[1:] {
			switch c {
			case 'c':
				sa.command = true
			case 's':
				sa.stdin = true
			case 'l', 'i':
				// Run as a plain -c (see above).
			case 'o', 'O':
				if next >= len(args) {
					return nil, usagef("%c%c needs an option name", a[0], c)
				}
				name := args[next]
				next++
				flag := "o"
				if c == 'O' {
					flag = "O"
				}
				if err := sa.option(c == 'O', string(a[0])+flag+" "+name, name, on); err != nil {
					return nil, err
				}
			case 'r':
				if on {
					return nil, usagef("%s: -r is not supported: guardrun does not run restricted shells", a)
				}
			case 'D':
				return nil, usagef("%s: -D is not supported: it prints the script's translatable strings instead of running it", a)
			default:
				name, ok := setLetters[c]
				if !ok {
					return nil, usagef("%c%c: invalid option", a[0], c)
				}
				if err := sa.option(false, string(a[0])+string(c)+" ("+name+")", name, on); err != nil {
					return nil, err
				}
			}
		}
		i = next
	}
	if err := sa.finish(); err != nil {
		return nil, err
	}
	if sa.command {
		if i >= len(args) {
			return nil, usagef("-c needs a script")
		}
		sa.script = args[i]
		i++
	}
	sa.rest = args[i:]
	return sa, nil
}

// option records the set -o option name (shopt: the shell option) set
// on or off; spelled is how it was written. The options' last states
// are checked and passed on by finish.
func (sa *shArgs) option(shopt bool, spelled, name string, on bool) error {
	table, what := setOptions, "option"
	if shopt {
		table, what = shopts, "shell option"
	}
	if _, ok := table[name]; !ok {
		return usagef("%s: invalid %s name", spelled, what)
	}
	for i := range sa.set {
		if sa.set[i].shopt == shopt && sa.set[i].name == name {
			sa.set[i].on, sa.set[i].spelled = on, spelled
			return nil
		}
	}
	sa.set = append(sa.set, optionState{shopt: shopt, name: name, on: on, spelled: spelled})
	return nil
}

// finish passes on, in the order they first came, the options whose
// last state is not a new shell's, or refuses one guardrun cannot
// follow.
func (sa *shArgs) finish() error {
	for _, o := range sa.set {
		table, flag := setOptions, "o"
		if o.shopt {
			table, flag = shopts, "O"
		}
		pass, refuse := table[o.name].decide(o.on)
		if refuse != "" {
			return usagef("%s is not supported: %s", o.spelled, refuse)
		}
		if pass {
			sign := "-"
			if !o.on {
				sign = "+"
			}
			sa.opts = append(sa.opts, sign+flag, o.name)
		}
	}
	return nil
}

// isShFlags reports whether arg, the first word after guardrun's own
// flags, starts a shell's argument list: a bash long option or an
// option cluster of letters bash knows after - or +.
func isShFlags(arg string) bool {
	if len(arg) < 2 || arg[0] != '-' && arg[0] != '+' {
		return false
	}
	if arg[0] == '-' {
		name := arg[1:]
		if arg[1] == '-' {
			name = arg[2:]
		}
		if _, ok := bashLong[name]; ok {
			return true
		}
		if arg[1] == '-' {
			return false
		}
	}
	for _, c := range arg[1:] {
		if _, ok := setLetters[c]; !ok && !strings.ContainsRune("cslioOrD", c) {
			return false
		}
	}
	return true
}

// runShFront handles what programs send to $SHELL: bash's arguments,
// with -c SCRIPT [ARGV0 [ARG...]].
func runShFront(g *global, args []string, io IO) error {
	j, err := parseShFront(args, getenvOS)
	if err != nil {
		return err
	}
	if j == nil {
		if isTerminal(io.Stdin) {
			return runShell(g, nil, io)
		}
		return usagef("guardrun does not read commands from stdin; use -c 'SCRIPT'")
	}
	return execute(g, j, io)
}

// parseShFront parses runShFront's arguments into the job; nil, with no
// error, when there is no -c SCRIPT and no script file either. A script
// that is an agent's wrapper around its command (request.RecognizeWrapper)
// becomes a job for that command; getenv is the environment it came
// with, nil to take every script as it is (a command guardrun hook
// rewrote is the model's own text).
func parseShFront(args []string, getenv func(string) string) (*request.Job, error) {
	sa, err := parseBashArgs(args)
	if err != nil {
		return nil, err
	}
	if !sa.command {
		switch {
		case len(sa.rest) > 0 && !sa.stdin:
			return nil, usagef("a script file (%s) cannot be checked; use -c 'SCRIPT'", sa.rest[0])
		case len(sa.rest) > 0:
			return nil, usagef("guardrun does not read commands from stdin; use -c 'SCRIPT'")
		}
		return nil, nil
	}
	j := &request.Job{Script: sa.script, ShellOpts: sa.opts, PosArgs: sa.rest}
	if getenv == nil {
		return j, nil
	}
	if w := request.RecognizeWrapper(sa.script, getenv); w != nil {
		j.Wrapper, j.Via = w, w.Agent.Name
		if w.Decline == "" {
			j.Script = w.Command
		}
	}
	return j, nil
}

func getenvOS(k string) string { return os.Getenv(k) }

// isTerminal reports whether r is a terminal.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
