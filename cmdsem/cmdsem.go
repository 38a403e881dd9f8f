package cmdsem

import (
	"fmt"
	"path"
	"strings"
	"sync"
)

// Kind is what an option, operand or variable makes a program do.
type Kind string

const (
	// Write: the program creates, truncates or changes the file at Path.
	Write Kind = "write"
	// Read: the program reads the file at Path (beyond its input).
	Read Kind = "read"
	// Delete: the program removes the file at Path (mv's sources).
	Delete Kind = "delete"
	// Exec: the program runs another program or code.
	Exec Kind = "exec"
	// Unknown: an option the table does not know, or a word known only at
	// run time where an option may stand; its meaning cannot be judged.
	Unknown Kind = "unknown"
	// Env: an environment variable set for the program makes it read,
	// write or run something else.
	Env Kind = "env"
	// Code: the program runs the code of a file the command implies
	// (make's Makefile, npm test's package.json, go test's module); Code
	// and Path say where it is found (projectcode.go). Never a question
	// by itself: policy uses it to tell the project's own code.
	Code Kind = "code"
	// Connect: the program connects to the URL (or host) in Path
	// (loopback.go). Never a question by itself either.
	Connect Kind = "connect"
)

// Arg is one argv word as policy knows it before running.
type Arg struct {
	// Value is the word, or its static prefix when not Static.
	Value string
	// Static is set when Value is the whole word.
	Static bool
	// Glob is set when the word holds unquoted glob characters, so bash
	// may replace it with file names (which may start with -).
	Glob bool
}

// Effect is one thing a command's arguments make it do.
type Effect struct {
	Kind Kind
	// Word is the index in argv of the word that holds the path or
	// program (the option's own word when its value is attached).
	Word int
	// Option is the option as written, "" for an operand, or the
	// variable's name for Env.
	Option string
	// Path is the file for Write, Read and Delete.
	Path string
	// Dynamic is set when Path is not known until run time.
	Dynamic bool
	// Dir, when set, is the directory (-C) the program moves to before
	// using Path; a relative Path is relative to it.
	Dir string
	// Into, for a Write whose Path may be an existing directory (cp, mv,
	// install, ln DEST), are the names written inside it.
	Into []string
	// Code, for an Exec or a Code effect, says how policy finds the code
	// the program runs from Path (a script, a module, a program of the
	// project's node_modules/.bin, text on the command line); "" when the
	// effect names no code.
	Code Lookup
	// Why says what the program does, for a person.
	Why string
	// MovedTo, for a Delete of a file mv moves, is the destination as
	// written: the file's contents live on there.
	MovedTo string
	// Terminal is set when the effect happens only where the program's
	// output is a terminal (a pager's keyboard commands).
	Terminal bool
}

// Known reports whether the table describes the command (by base name).
func Known(name string) bool { return findEntry(name) != nil }

// Risky reports whether some option of a known command writes, deletes or
// runs something, so that an argument only known at run time may turn
// into one.
func Risky(name string) bool {
	s := lookup(name)
	return s != nil && s.risky()
}

// Analyze returns what argv (argv[0] the command name, directory stripped
// or not) makes the command do according to the table, and the
// assignments written before it (NAME=value, names only). A command the
// table does not know yields nothing.
func Analyze(argv []Arg, env []string) []Effect {
	if len(argv) == 0 || !argv[0].Static {
		return nil
	}
	name := path.Base(argv[0].Value)
	s := lookup(name)
	if s == nil {
		return nil
	}
	r := &result{name: name, argv: argv}
	for _, v := range env {
		if why := s.envWhy(v); why != "" {
			r.add(Effect{Kind: Env, Word: -1, Option: v, Why: why})
		}
	}
	s.run(r, 1)
	for i := range r.out {
		if r.dir != "" && r.out[i].Path != "" && r.out[i].Dir == "" {
			r.out[i].Dir = r.dir
		}
	}
	return r.out
}

// result collects the effects of one command.
type result struct {
	name string
	argv []Arg
	out  []Effect
	// dir is a -C directory in force.
	dir string
	// targetDir is cp/mv/install/ln -t DIR.
	targetDir *opnd
	// flags are the options seen, by canonical name; vals their values
	// and where they stand.
	flags map[string]string
	vals  map[string]opnd
	all   map[string][]opnd
}

func (r *result) add(e Effect) { r.out = append(r.out, e) }

// opnd is an operand or an option's value and where it stands.
type opnd struct {
	Arg
	idx int
}

// fileEffect records a Write, Read or Delete of the file named by o.
func (r *result) file(k Kind, o opnd, option, why string) {
	e := Effect{Kind: k, Word: o.idx, Option: option, Path: o.Value, Dynamic: !o.Static, Why: why}
	if e.Dynamic && e.Path == "" {
		e.Path = "(run-time value)"
	}
	r.add(e)
}

func (r *result) exec(idx int, option, why string) {
	r.add(Effect{Kind: Exec, Word: idx, Option: option, Why: why})
}

func (r *result) unknown(idx int, option, why string) {
	r.add(Effect{Kind: Unknown, Word: idx, Option: option, Why: why})
}

func (r *result) seen(name string) (string, bool) {
	v, ok := r.flags[name]
	return v, ok
}

// act is what an option does with its argument.
type act struct {
	kind Kind // Write, Read, Exec; "chdir" for -C
	why  string
}

const (
	chdir  Kind = "chdir"
	atFile Kind = "atfile"
)

// spec describes one command: its options, in the notation Scan reads,
// and what they, its operands and its environment make it do.
type spec struct {
	Options
	// initOnce prepares the options on the spec's first use.
	initOnce sync.Once
	// do says what options do, by short letter or long name.
	do map[string]act
	// operands gives the operands' effects.
	operands func(r *result, ops []opnd)
	// custom replaces the option reader (find, sed scripts, ...); it
	// gets the index of the first argument.
	custom func(s *spec, r *result, i int)
	// env are variables (NAME or PREFIX*) that redirect the program,
	// beyond the common ones.
	env []string
	// sub are subcommands, read after the options (git, go, npm, pip).
	sub map[string]*spec
	// anySub: a subcommand not in sub is Unknown (git aliases can run
	// shell commands).
	anySub bool
	// writesOperands: some operand is a file the command writes (cp's
	// last, uniq's second), so operands added at run time may be one.
	writesOperands bool
	// readOnly: a custom reader's program writes and runs nothing,
	// whatever its arguments (echo, jq, cd).
	readOnly bool
}

// commonEnv redirect almost any program: where it writes temporary
// files, which pager, editor or shell it starts, where it reads its
// configuration.
var commonEnv = map[string]string{
	"TMPDIR":          "moves where the program writes temporary files",
	"PAGER":           "names a program the command may start",
	"EDITOR":          "names a program the command may start",
	"VISUAL":          "names a program the command may start",
	"BROWSER":         "names a program the command may start",
	"SHELL":           "names the shell the command may start",
	"LESSOPEN":        "makes less run a program on each file",
	"LESSCLOSE":       "makes less run a program on each file",
	"GNUPGHOME":       "moves where gpg, which git runs to check signatures, reads its configuration, which can name programs it runs",
	"MANPAGER":        "names a program the command may start",
	"HOME":            "moves where the program reads its configuration",
	"XDG_CONFIG_HOME": "moves where the program reads its configuration",
	"XDG_CACHE_HOME":  "moves where the program writes its cache",
	"XDG_DATA_HOME":   "moves where the program writes its data",
}

func (s *spec) envWhy(name string) string {
	if why, ok := commonEnv[name]; ok {
		return why
	}
	// less, the pager git and man start, reads its key bindings (with
	// an #env section that can set LESSOPEN), history and metacharacter
	// quoting from more LESS* variables than the two above.
	if _, ok := optionVars[name]; ok {
		return "" // judged by the options it holds, where it is assigned
	}
	if strings.HasPrefix(name, "LESS") {
		return "configures the less pager the command may start, which can run programs"
	}
	for _, e := range s.env {
		if p, ok := strings.CutSuffix(e, "*"); ok && strings.HasPrefix(name, p) || e == name {
			return "changes what the program reads, writes or runs"
		}
	}
	return ""
}

// init prepares the spec's options: a long no- option without an act of
// its own only turns a default off, so it is read as taking no argument.
func (s *spec) init() {
	s.initOnce.Do(func() {
		s.Options.init()
		for l := range s.longs {
			if strings.HasPrefix(l, "no-") && s.do[l].kind == "" {
				s.longs[l] = NoArg
			}
		}
	})
}

// risky reports whether some option of the command writes, deletes or
// runs something: then a word that may turn into an option asks.
func (s *spec) risky() bool {
	if s.custom != nil && !s.readOnly || s.sub != nil || s.writesOperands {
		return true
	}
	for _, a := range s.do {
		if a.kind == Write || a.kind == Exec || a.kind == Delete {
			return true
		}
	}
	return false
}

// mayBeOption reports a word only known at run time that could start
// with - (a parameter, a substitution, a glob that may match a file
// named like an option).
func mayBeOption(a Arg) bool {
	if a.Static {
		return false
	}
	return a.Value == "" || a.Value[0] == '-' || a.Glob && strings.ContainsAny(a.Value[:1], "*?[")
}

// run reads argv from index i with the spec.
func (s *spec) run(r *result, i int) {
	s.init()
	if s.custom != nil {
		s.custom(s, r, i)
		return
	}
	ops, next := s.scan(r, i)
	if s.sub != nil {
		if next >= len(r.argv) {
			return
		}
		w := r.argv[next]
		if !w.Static {
			r.unknown(next, "", "the subcommand is not known until run time")
			return
		}
		sub := s.sub[w.Value]
		if sub == nil {
			if s.anySub {
				r.unknown(next, w.Value, fmt.Sprintf("%s %s is not a subcommand guardrun knows (it may be an alias that runs a program)", r.name, w.Value))
			}
			return
		}
		r.name += " " + w.Value
		sub.run(r, next+1)
		return
	}
	if s.operands != nil {
		s.operands(r, ops)
	}
}

// scan reads options from argv[i:] and returns the operands; with
// subcommands it stops at the first operand and returns its index.
func (s *spec) scan(r *result, i int) ([]opnd, int) {
	return s.scanFrom(r, i, s.Permute)
}

// scanFrom is scan, with options after operands or not.
func (s *spec) scanFrom(r *result, i int, permute bool) ([]opnd, int) {
	s.init()
	if s.sub != nil {
		permute = false
	}
	risky := s.risky()
	if r.flags == nil {
		r.flags = map[string]string{}
	}
	sc := s.Options.scan(r.argv, i, permute)
	for _, t := range sc.Tokens {
		s.token(r, t, risky)
	}
	if s.sub != nil {
		if sc.Ended {
			return nil, len(r.argv)
		}
		return nil, sc.Next
	}
	var ops []opnd
	for _, k := range sc.Operands {
		ops = append(ops, opnd{r.argv[k], k})
	}
	for k := sc.Next; k < len(r.argv); k++ {
		ops = append(ops, opnd{r.argv[k], k})
	}
	return ops, len(r.argv)
}

// token records one option Scan read: what it does, or that it cannot
// be judged.
func (s *spec) token(r *result, t Token, risky bool) {
	switch t.Kind {
	case TokRunTime:
		if mayBeOption(r.argv[t.Word]) && risky {
			r.unknown(t.Word, "", fmt.Sprintf("%s: a word known only at run time may be an option", r.name))
		}
		return
	case TokUnknown:
		if t.Long {
			why := fmt.Sprintf("%s --%s is not an option guardrun knows", r.name, t.Name)
			if t.Why == "ambiguous" {
				why = fmt.Sprintf("%s --%s is an ambiguous abbreviation of more than one option", r.name, t.Name)
			}
			r.unknown(t.Word, "--"+t.Name, why)
		} else {
			c := t.Name[0]
			r.unknown(t.Word, "-"+string(rune(c)), fmt.Sprintf("%s -%c is not an option guardrun knows", r.name, c))
		}
		return
	}
	if !t.Listed {
		return
	}
	written := "-" + t.Name
	if t.Long && !s.GoFlags {
		written = "-" + written
	}
	var o opnd
	switch {
	case t.Mode == RequiredArg && !t.HasVal:
		// The option's argument is missing: the program refuses to run.
		return
	case t.Mode == NoArg || !t.HasVal:
		r.flags[t.Name] = ""
		s.apply(r, t.Name, opnd{idx: t.Word}, written, false)
		return
	case t.Attached:
		o = opnd{Arg{Value: t.Value, Static: true}, t.Word}
	default:
		o = opnd{r.argv[t.ValWord], t.ValWord}
	}
	r.flags[t.Name] = o.Value
	s.apply(r, t.Name, o, written, true)
}

// apply records what option name does with its value o.
func (s *spec) apply(r *result, name string, o opnd, written string, hasVal bool) {
	if hasVal {
		if r.vals == nil {
			r.vals = map[string]opnd{}
		}
		r.vals[name] = o
		if r.all == nil {
			r.all = map[string][]opnd{}
		}
		r.all[name] = append(r.all[name], o)
	}
	a, ok := s.do[name]
	if !ok {
		return
	}
	switch a.kind {
	case Write, Read, Delete:
		if hasVal {
			r.file(a.kind, o, written, a.why)
		} else if a.kind == Write {
			// curl -O: a file named by the program in the working
			// directory.
			r.file(Write, opnd{Arg{Value: ".", Static: true}, o.idx}, written, a.why)
		}
	case Exec:
		r.exec(o.idx, written, a.why)
	case Connect:
		if hasVal {
			r.add(Effect{Kind: Connect, Word: o.idx, Option: written, Path: o.Value, Dynamic: !o.Static, Why: a.why})
		}
	case Unknown:
		r.unknown(o.idx, written, a.why)
	case chdir:
		if hasVal {
			if !o.Static {
				r.unknown(o.idx, written, fmt.Sprintf("%s %s: the directory is not known until run time", r.name, written))
				return
			}
			if r.dir == "" || path.IsAbs(o.Value) {
				r.dir = o.Value
			} else {
				r.dir = path.Join(r.dir, o.Value)
			}
		}
	case atFile:
		// curl -d @file, -F name=@file or name=<file.
		if hasVal {
			v := o.Value
			if _, after, ok := strings.Cut(v, "="); ok && written != "-d" && !strings.HasPrefix(written, "--data") {
				v = after
			}
			if f, ok := strings.CutPrefix(v, "@"); ok {
				o.Value = f
				r.file(Read, o, written, a.why)
			} else if f, ok := strings.CutPrefix(v, "<"); ok {
				o.Value = f
				r.file(Read, o, written, a.why)
			} else if !o.Static {
				r.unknown(o.idx, written, fmt.Sprintf("%s %s: the value is not known until run time and may name a file", r.name, written))
			}
		}
	case ldflags:
		if hasVal && (!o.Static || strings.Contains(o.Value, "extld") || strings.Contains(o.Value, "extar") || strings.Contains(o.Value, "tmpdir")) {
			r.exec(o.idx, written, "names the external linker or archiver go runs, or where it writes")
		}
	case "target":
		if hasVal {
			r.targetDir = &o
			r.file(Write, o, written, a.why)
		}
	}
}
