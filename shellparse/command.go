package shellparse

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/guardrun/guardrun/cmdsem"
)

// call is a command about to be reported: its evaluated words and what
// it inherits from the statement or wrapper that runs it.
type call struct {
	args    []wval
	assigns []Assign
	via     []string
	stdin   stdin
	// fromInput: more arguments arrive at run time (xargs, find -exec).
	fromInput bool
	// replace is the string that xargs -I or find -exec substitutes with
	// input; "" when nothing is substituted.
	replace string
	// wrapped counts the wrappers around this command.
	wrapped int
	// byProgram: a program, not the shell, starts this command.
	byProgram bool
	// noLevel names what started this command, through any wrappers,
	// without the SHLVL its shell exported (env -i, env -u SHLVL,
	// exec -c); "" when nothing did.
	noLevel    string
	pos        Pos
	start, end uint // the command's text in the frame's source
}

// sub is the command that a wrapper runs: its words from k on.
func (c call) sub(k int, via string) call {
	w := c.args[k]
	return call{
		args:      c.args[k:],
		via:       append(slices.Clip(c.via), via),
		stdin:     c.stdin,
		fromInput: c.fromInput,
		replace:   c.replace,
		wrapped:   c.wrapped + 1,
		byProgram: !shellStarts[via],
		noLevel:   c.noLevel,
		pos:       w.Pos,
		start:     w.start,
		end:       max(c.end, w.start),
	}
}

// shellStarts are the wrappers that are builtins of the shell: the
// command they run is started by the shell itself.
var shellStarts = map[string]bool{"command": true, "builtin": true, "exec": true, "coproc": true}

// maxWrapped bounds wrapper chains (env env env ...): each wrapper is
// reported with the rest of the argv, so a long chain costs quadratic
// space.
const maxWrapped = 32

func (f *frame) callText(c call) string {
	n := uint(len(f.src))
	s, e := min(c.start, n), min(c.end, n)
	if e < s {
		e = s
	}
	return f.src[s:e]
}

// handler inspects a command whose name it knows. It reports the commands
// the command runs (by calling emit) and whether the command is only a
// wrapper around them.
type handler func(f *frame, c call) (wrapper bool)

var (
	handlers     map[string]handler
	handlersOnce sync.Once
)

// shells are the programs whose -c string, script or stdin is shell code.
var shells = []string{"sh", "bash", "rbash", "dash", "ash", "zsh", "ksh", "ksh93", "mksh", "lksh", "pdksh", "yash", "posh"}

// initHandlers fills handlers, on first use rather than at package
// initialisation: guardrun verbs that parse nothing do not pay for it.
func initHandlers() {
	handlers = map[string]handler{
		"env":       envCmd,
		"nice":      niceCmd,
		"nohup":     nohupCmd,
		"timeout":   timeoutCmd,
		"time":      timeCmd,
		"command":   commandCmd,
		"builtin":   builtinCmd,
		"exec":      execCmd,
		"stdbuf":    stdbufCmd,
		"setsid":    setsidCmd,
		"xargs":     xargsCmd,
		"find":      findCmd,
		"sudo":      sudoCmd,
		"doas":      doasCmd,
		"coproc":    coprocCmd,
		"eval":      evalCmd,
		"trap":      trapCmd,
		"alias":     aliasCmd,
		"source":    sourceCmd,
		".":         sourceCmd,
		"export":    declCmd,
		"declare":   declCmd,
		"typeset":   declCmd,
		"local":     declCmd,
		"readonly":  declCmd,
		"nameref":   declCmd,
		"enable":    enableCmd,
		"read":      readCmd,
		"printf":    printfCmd,
		"mapfile":   mapfileCmd,
		"readarray": mapfileCmd,
		"getopts":   getoptsCmd,
		"hash":      hashCmd,
		"set":       setCmd,
		"shopt":     shoptCmd,
		"unset":     unsetCmd,
		"test":      testCmd,
		"[":         testCmd,
		"wait":      waitCmd,
		"compgen":   compgenCmd,
		"complete":  compgenCmd,
		"su":        suCmd,
		"runuser":   suCmd,
		"watch":     watchCmd,
		"flock":     flockCmd,
	}
	for _, s := range shells {
		handlers[s] = shellCmd
	}
}

// emit reports a command and, through its handler, whatever it runs.
func (f *frame) emit(c call) {
	if len(c.args) == 0 {
		return
	}
	if c.wrapped > maxWrapped {
		g := *f
		g.via = c.via
		g.find(Block, fmt.Sprintf("more than %d wrappers around one command", maxWrapped), f.callText(c), c.pos)
		return
	}
	text := f.callText(c)
	size := len(text)
	for i := range c.args {
		size += len(c.args[i].Source)
	}
	if !f.admit(size) {
		return
	}
	idx := len(f.a.out.Commands)
	argv := make([]Word, len(c.args))
	for i := range c.args {
		argv[i] = c.args[i].Word
	}
	f.a.out.Commands = append(f.a.out.Commands, Command{
		Argv:          argv,
		Assigns:       c.assigns,
		ArgsFromInput: c.fromInput,
		Replace:       c.replace,
		ByProgram:     c.byProgram,
		Via:           c.via,
		Text:          text,
		Pos:           c.pos,
		Dir:           f.sc.snapshot(),
		Fds:           f.sc.bindings(),
	})
	if isDirChange(c) {
		f.changeDir(c)
	}
	g := *f
	g.via = c.via
	w0 := c.args[0]
	if c.noLevel != "" {
		g.shellLevelReset(c)
	}
	if c.replace != "" && strings.Contains(w0.Value, c.replace) {
		g.find(Ask, "command name is substituted from input at run time: "+w0.Source, text, w0.Pos)
		return
	}
	if !w0.Static() {
		g.find(Ask, "command name is not known until run time: "+w0.Source, text, w0.Pos)
		f.sc.dir.setUnknown("a command whose name is known only at run time may change directory")
		return
	}
	handlersOnce.Do(initHandlers)
	h := handlers[baseName(w0.Value)]
	if h == nil {
		return
	}
	if h(&g, c) {
		f.a.out.Commands[idx].Wrapper = true
	}
}

func baseName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// wrap reports the command a wrapper runs from word k on. With nothing
// left to run it reports false, and asks when xargs or find would supply
// the command itself.
func (f *frame) wrap(c call, k int, via string, assigns []Assign) bool {
	for _, w := range c.args[1:min(k, len(c.args))] {
		if w.Split {
			f.find(Ask, fmt.Sprintf("%s: %s may expand to any number of words, so which command it runs is uncertain", via, w.Source), f.callText(c), w.Pos)
			break
		}
	}
	if k >= len(c.args) {
		if c.fromInput {
			f.find(Ask, via+" runs a command named by its input", f.callText(c), c.pos)
		}
		return false
	}
	s := c.sub(k, via)
	s.assigns = assigns
	f.emit(s)
	return true
}

type opt struct {
	name   string // the letter, or the long name without dashes
	val    wval
	hasVal bool
	idx    int // index of the word that held the option
}

// scan reads options from c.args[i:] with spec (cmdsem's getopt
// reader), stopping at the first operand. An option the spec does not
// allow, or one known only at run time, is an Ask finding, because the
// wrapped command cannot be found with certainty.
func (f *frame) scan(c call, i int, spec *cmdsem.Options, who string) ([]opt, int) {
	argv := make([]cmdsem.Arg, len(c.args))
	for k, w := range c.args {
		argv[k] = cmdsem.Arg{Value: w.Value, Static: w.Static(), Glob: w.Glob || w.Split}
	}
	sc := spec.Scan(argv, i)
	var opts []opt
	for _, t := range sc.Tokens {
		w := c.args[t.Word]
		switch t.Kind {
		case cmdsem.TokRunTime:
			f.find(Ask, fmt.Sprintf("%s: option %s is not known until run time, so what it runs is uncertain", who, w.Source), f.callText(c), w.Pos)
			continue
		case cmdsem.TokUnknown:
			dash := "-"
			if t.Long {
				dash = "--"
			}
			f.find(Ask, fmt.Sprintf("%s: unknown option %s%s, so what it runs is uncertain", who, dash, t.Name), f.callText(c), w.Pos)
		}
		o := opt{name: t.Name, idx: t.Word}
		switch {
		case t.HasVal && t.Attached:
			o.val, o.hasVal = wvalOf(w, t.Value), true
		case t.HasVal:
			o.val, o.hasVal = c.args[t.ValWord], true
		}
		opts = append(opts, o)
	}
	return opts, sc.Next
}

func wvalOf(w wval, value string) wval {
	w.Value, w.tmpl = value, value
	return w
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func has(opts []opt, names ...string) bool {
	for _, o := range opts {
		if slices.Contains(names, o.name) {
			return true
		}
	}
	return false
}

func infoOnly(opts []opt) bool { return has(opts, "help", "version") }

// wrapperOpts are the options of a program or builtin that lists them
// all: another, or one known only at run time, asks. Long options may
// be abbreviated, as getopt_long allows.
func wrapperOpts(short, long string) *cmdsem.Options {
	return &cmdsem.Options{Short: short, Long: long, AllShort: true, ReadOnAfterUnknown: true,
		StrictLong: true, Abbrev: true, SkipRunTimeOptions: true}
}

var (
	niceSpec = func() *cmdsem.Options {
		o := wrapperOpts("n:", "adjustment= help version")
		o.Numeric = true
		return o
	}()
	nohupSpec   = wrapperOpts("", "help version")
	timeoutSpec = wrapperOpts("s:k:vfp", "signal= kill-after= foreground preserve-status verbose help version")
	timeSpec    = wrapperOpts("f:o:pvVaq", "format= output= append portability quiet verbose help version")
	commandSpec = wrapperOpts("pvV", "")
	execSpec    = wrapperOpts("a:cl", "")
	stdbufSpec  = wrapperOpts("i:o:e:", "input= output= error= help version")
	setsidSpec  = wrapperOpts("cfwhV", "ctty fork wait help version")
	xargsSpec   = wrapperOpts("a:E:d:I:P:L:n:s:e::i::l::0prtxo",
		"arg-file= delimiter= max-args= max-procs= max-chars= process-slot-var= eof[=] replace[=] max-lines[=] "+
			"null no-run-if-empty interactive verbose exit open-tty show-limits help version")
	sudoSpec = wrapperOpts("u:g:p:C:D:R:r:t:T:U:h::AbBEeHiKklNnPSsVv",
		"user= group= host= prompt= close-from= chdir= chroot= role= type= command-timeout= other-user= preserve-env[=] "+
			"askpass background bell edit set-home login remove-timestamp reset-timestamp list non-interactive preserve-groups stdin shell version validate help")
	doasSpec = wrapperOpts("u:C:a:nsL", "")
	// The shells take any letter (-abc sets options), +o as well as -o,
	// and - as the end of their options.
	shellSpec = &cmdsem.Options{Short: "o:O:", Long: "rcfile= init-file= help version", Plus: true,
		Dash: cmdsem.DashEnds, Abbrev: true, SkipRunTimeOptions: true}
)

func niceCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, niceSpec, "nice")
	if infoOnly(opts) {
		return false
	}
	return f.wrap(c, i, "nice", nil)
}

func nohupCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, nohupSpec, "nohup")
	if infoOnly(opts) {
		return false
	}
	return f.wrap(c, i, "nohup", nil)
}

func timeoutCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, timeoutSpec, "timeout")
	if infoOnly(opts) || i >= len(c.args) {
		return false
	}
	return f.wrap(c, i+1, "timeout", nil) // skip the duration
}

func timeCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, timeSpec, "time")
	if infoOnly(opts) {
		return false
	}
	for _, o := range opts {
		if (o.name == "o" || o.name == "output") && o.hasVal {
			f.argFileOp(OpWrite, o.val, c)
		}
	}
	return f.wrap(c, i, "time", nil)
}

func commandCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, commandSpec, "command")
	if has(opts, "v", "V") {
		return false // only describes the command
	}
	return f.wrap(c, i, "command", nil)
}

func builtinCmd(f *frame, c call) bool {
	i := 1
	if i < len(c.args) && c.args[i].Static() && c.args[i].Value == "--" {
		i++
	}
	return f.wrap(c, i, "builtin", nil)
}

func execCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, execSpec, "exec")
	if has(opts, "c") {
		c.noLevel = "exec -c"
	}
	toShell := i < len(c.args) && (!c.args[i].Static() || slices.Contains(shells, baseName(c.args[i].Value)))
	for _, o := range opts {
		// exec -a -bash bash: a name that starts with - makes a login
		// shell, which runs ~/.profile or ~/.zprofile first; exec -l
		// puts that - before the name itself.
		if o.name == "a" && o.hasVal && (!o.val.Static() || strings.HasPrefix(o.val.Value, "-")) && toShell {
			f.find(Ask, fmt.Sprintf("exec -a %s starts %s as a login shell, which runs startup files (~/.profile, ~/.zprofile) that guardrun cannot read", o.val.Source, c.args[i].Source), f.callText(c), o.val.Pos)
		} else if o.name == "a" && o.hasVal && i < len(c.args) && (!o.val.Static() || !c.args[i].Static() || baseName(o.val.Value) != baseName(c.args[i].Value)) {
			// A program may do something else under another name: git
			// named git-difftool runs git difftool, pgrep named pkill
			// signals the processes it finds.
			f.find(Ask, fmt.Sprintf("exec -a %s runs %s under another name, and some programs act on the name they are started under (git-NAME runs git NAME, pgrep named pkill signals processes)", o.val.Source, c.args[i].Source), f.callText(c), o.val.Pos)
		}
		if o.name == "l" && toShell {
			f.find(Ask, fmt.Sprintf("exec -l starts %s as a login shell, which runs startup files (~/.profile, ~/.zprofile) that guardrun cannot read", c.args[i].Source), f.callText(c), c.args[i].Pos)
		}
	}
	return f.wrap(c, i, "exec", nil)
}

// shellLevelReset reports a bash started (as c, directly or through
// wrappers such as env, nice or xargs) without the SHLVL its parent
// exported (c.noLevel names what removed it): at shell level 1 a bash -c
// whose standard input is a socket, as an agent's pipes often are, or
// that sees SSH_CLIENT, first runs /etc/bash.bashrc and ~/.bashrc, which
// guardrun did not read.
func (f *frame) shellLevelReset(c call) {
	w := c.args[0]
	// dash keeps no SHLVL of its own, so a bash it starts is at level 1;
	// nor are the pdksh family and yash known to (zsh and ksh93 export
	// it, counted up).
	if w.Static() && !slices.Contains([]string{"bash", "sh", "rbash", "dash", "ash", "mksh", "lksh", "pdksh", "posh", "yash"}, baseName(w.Value)) {
		return
	}
	f.find(Ask, c.noLevel+" starts "+w.Source+" without SHLVL: at shell level 1 bash runs ~/.bashrc first when its input is a socket or SSH_CLIENT is set", f.callText(c), w.Pos)
}

func stdbufCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, stdbufSpec, "stdbuf")
	if infoOnly(opts) {
		return false
	}
	return f.wrap(c, i, "stdbuf", nil)
}

func setsidCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, setsidSpec, "setsid")
	if infoOnly(opts) || has(opts, "h", "V") {
		return false
	}
	return f.wrap(c, i, "setsid", nil)
}

func coprocCmd(f *frame, c call) bool {
	return f.wrap(c, 1, "coproc", nil)
}

func doasCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, doasSpec, "doas")
	if has(opts, "C") {
		return false // checks a config file
	}
	if i >= len(c.args) && has(opts, "s") {
		f.find(Ask, "doas -s starts a shell that reads commands from the terminal", f.callText(c), c.pos)
		return false
	}
	return f.wrap(c, i, "doas", nil)
}

func sudoCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, sudoSpec, "sudo")
	if infoOnly(opts) || has(opts, "e", "edit", "l", "list", "v", "validate", "V") {
		return false // edits files or only reports
	}
	assigns, i := f.envAssigns(c, i)
	if i >= len(c.args) && has(opts, "s", "shell", "i", "login") {
		f.find(Ask, "sudo starts a shell that reads commands from the terminal", f.callText(c), c.pos)
	}
	return f.wrap(c, i, "sudo", assigns)
}

// envAssigns reads NAME=value words (env, sudo) from c.args[i:].
func (f *frame) envAssigns(c call, i int) ([]Assign, int) {
	var out []Assign
	for ; i < len(c.args); i++ {
		w := c.args[i]
		name, val, ok := strings.Cut(w.Value, "=")
		if !ok || name == "" {
			break
		}
		vw := w.Word
		vw.Value = val
		vw.Source = strings.TrimPrefix(w.Source, name+"=")
		out = append(out, Assign{Name: name, Value: vw, Pos: w.Pos})
		f.assignedValue(name, &vw, w.Source, w.Pos)
	}
	return out, i
}

// envSpec: env reads - as -i, and -S rewrites the words after it.
var envSpec = func() *cmdsem.Options {
	o := wrapperOpts("u:C:S:a:P:0iv",
		"unset= chdir= split-string= argv0= block-signal[=] default-signal[=] ignore-signal[=] null ignore-environment debug list-signal-handling help version")
	o.Dash, o.StopAfter = cmdsem.DashOption, "S split-string"
	return o
}()

func envCmd(f *frame, c call) bool {
	i := 1
	var chdir *wval
	cleared := ""
	for rounds := 0; ; rounds++ {
		opts, next := f.scan(c, i, envSpec, "env")
		if infoOnly(opts) || has(opts, "list-signal-handling") {
			return false
		}
		for _, o := range opts {
			if (o.name == "C" || o.name == "chdir") && o.hasVal {
				chdir = &o.val
			}
			switch o.name {
			case "i", "ignore-environment", "-":
				cleared = "env " + o.val.Source
				if !o.hasVal {
					cleared = "env -i"
				}
			case "u", "unset":
				if o.hasVal && (!o.val.Static() || o.val.Value == "SHLVL") {
					cleared = "env -u " + o.val.Source
				}
			}
		}
		i = next
		last := len(opts) - 1
		if last < 0 || (opts[last].name != "S" && opts[last].name != "split-string") || rounds > 64 {
			break
		}
		// env -S splits its argument into words that take the place of
		// the option, so options and assignments can hide inside it.
		o := opts[last]
		if !o.hasVal {
			break
		}
		words, ok := f.splitString(o.val)
		if !ok {
			return false
		}
		args := slices.Concat(c.args[:o.idx], words, c.args[i:])
		c.args = args
		i = o.idx
	}
	assigns, i := f.envAssigns(c, i)
	if cleared != "" {
		c.noLevel = cleared
	}
	if chdir != nil {
		// env -C DIR runs the command in DIR (or not at all): its
		// relative paths lead there, and the shell stays where it was.
		g := *f
		g.sc = f.sc.subshell()
		if chdir.Static() {
			g.sc.dir.steps = append(g.sc.dir.steps, DirStep{Path: chdir.Value, Certain: true})
		} else {
			g.sc.dir.setUnknown("env --chdir " + chdir.Source + ", known only at run time")
		}
		return g.wrap(c, i, "env", assigns)
	}
	return f.wrap(c, i, "env", assigns)
}

// splitString splits an env -S string into words with the shell parser.
func (f *frame) splitString(w wval) ([]wval, bool) {
	if !w.Static() {
		f.find(Ask, "env -S splits a string that is not known until run time: "+w.Source, w.Source, w.Pos)
		return nil, false
	}
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	sub := *f
	sub.src = w.Value
	pos := w.Pos
	sub.anchor = &pos
	sub.seen = map[syntax.Node]bool{}
	var out []wval
	for sw, err := range p.WordsSeq(strings.NewReader(w.Value)) {
		if err != nil {
			f.find(Ask, "env -S string cannot be split: "+err.Error(), w.Source, w.Pos)
			return nil, false
		}
		for _, v := range sub.words(sw, ctxArg) {
			v.Source, v.start, v.end = w.Source, w.start, w.end
			out = append(out, v)
		}
	}
	return out, true
}

func xargsCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, xargsSpec, "xargs")
	if infoOnly(opts) || has(opts, "show-limits") && i >= len(c.args) {
		return false
	}
	replace := ""
	for _, o := range opts {
		switch o.name {
		case "I":
			replace = o.val.Value
		case "i", "replace":
			replace = "{}"
			if o.hasVal {
				replace = o.val.Value
			}
		case "a", "arg-file":
			if o.hasVal {
				f.argFileOp(OpRead, o.val, c)
			}
		case "process-slot-var":
			// xargs sets the variable to a slot number in the
			// environment of each command it runs (and of its own
			// lookup of that command): PATH=0 runs ./0/cat.
			if !o.hasVal {
				break
			}
			if !o.val.Static() {
				f.find(Ask, fmt.Sprintf("xargs --process-slot-var %s names a variable not known until run time, which it sets for the command it runs", o.val.Source), f.callText(c), o.val.Pos)
				break
			}
			f.checkAssign(o.val.Value, &Word{Value: "0", Source: "0", Pos: o.val.Pos}, f.callText(c), o.val.Pos)
		}
	}
	if i >= len(c.args) {
		// With no command, xargs runs echo.
		f.emit(call{
			args: []wval{{Word: Word{Value: "echo", Source: "echo", Pos: c.pos}, tmpl: "echo",
				start: c.end, end: c.end}},
			via:       append(slices.Clip(c.via), "xargs"),
			fromInput: true,
			byProgram: true,
			pos:       c.pos,
			start:     c.start,
			end:       c.end,
		})
		return true
	}
	s := c.sub(i, "xargs")
	s.fromInput = true
	s.replace = replace
	s.stdin = stdin{} // xargs gives its command /dev/null or the terminal
	f.emit(s)
	return true
}

// argFileOp records a file named by a program option (time -o, xargs -a,
// find -fprint) as a file operation.
func (f *frame) argFileOp(op Op, w wval, c call) {
	fd := 1
	if op == OpRead {
		fd = 0
	}
	if !f.admit(len(f.callText(c)) + len(w.Source)) {
		return
	}
	f.a.out.Files = append(f.a.out.Files, FileOp{
		Op: op, Path: w.Word, Fd: fd, Via: f.via, Text: f.callText(c), Pos: w.Pos,
		Dir: f.sc.snapshot(), Bound: f.fdBinding(w.Word),
	})
}

// findArgPrimaries are the find primaries that take one argument; a
// run-time value in that position cannot turn into an action.
var findArgPrimaries = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-lname": true, "-ilname": true, "-type": true, "-xtype": true,
	"-user": true, "-group": true, "-uid": true, "-gid": true, "-perm": true, "-size": true,
	"-mtime": true, "-mmin": true, "-atime": true, "-amin": true, "-ctime": true, "-cmin": true,
	"-newer": true, "-anewer": true, "-cnewer": true, "-inum": true, "-links": true, "-samefile": true,
	"-maxdepth": true, "-mindepth": true, "-fstype": true, "-used": true, "-context": true,
	"-printf": true, "-regextype": true, "-files0-from": true, "-newermt": true, "-newerct": true, "-newerat": true,
	"-newermm": true, "-newerBt": true,
}

func findCmd(f *frame, c call) bool {
	args := c.args
	i := 1
	for i < len(args) && args[i].Static() {
		v := args[i].Value
		if v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O") {
			i++
		} else if v == "-D" {
			i += 2
		} else {
			break
		}
	}
	changes, runs := false, false
	expr := false
	for ; i < len(args); i++ {
		w := args[i]
		v := w.Value
		if !w.Static() {
			prevTakesArg := i > 0 && args[i-1].Static() && findArgPrimaries[args[i-1].Value]
			if !prevTakesArg && (v == "" || strings.HasPrefix(v, "-")) {
				f.find(Ask, "find: "+w.Source+" is not known until run time and could be an action such as -exec", f.callText(c), w.Pos)
			}
			continue
		}
		if !expr && (strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == ",") {
			expr = true
		}
		switch v {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for ; j < len(args); j++ {
				t := args[j]
				if t.Static() && (t.Value == ";" || t.Value == "+" && j > i+1 && args[j-1].Value == "{}") {
					break
				}
			}
			if j > i+1 {
				s := c.sub(i+1, "find "+v)
				s.args = args[i+1 : j]
				s.end = args[j-1].end
				s.fromInput = true
				s.replace = "{}"
				f.emit(s)
				runs = true
			}
			i = j
		case "-delete":
			changes = true
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			changes = true
			if i+1 < len(args) {
				f.argFileOp(OpWrite, args[i+1], c)
				i++
			}
			if v == "-fprintf" {
				i++
			}
		}
	}
	return runs && !changes
}

func evalCmd(f *frame, c call) bool {
	args := c.args[1:]
	if len(args) > 0 && args[0].Static() && args[0].Value == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return false
	}
	f.code(joinWords(args), "eval", f.lang)
	return true
}

// joinWords joins words with spaces, as eval and watch do.
func joinWords(ws []wval) wval {
	out := wval{Word: Word{Pos: ws[0].Pos}, start: ws[0].start, end: ws[len(ws)-1].end}
	var val, tmpl, src []string
	for _, w := range ws {
		val = append(val, w.Value)
		tmpl = append(tmpl, w.tmpl)
		src = append(src, w.Source)
		out.Dynamic = out.Dynamic || w.Dynamic
		out.Glob = out.Glob || w.Glob
		out.Split = out.Split || w.Split
	}
	out.Value, out.tmpl, out.Source = strings.Join(val, " "), strings.Join(tmpl, " "), strings.Join(src, " ")
	return out
}

func trapCmd(f *frame, c call) bool {
	args := c.args[1:]
	if len(args) > 0 && args[0].Static() && args[0].Value == "--" {
		args = args[1:]
	}
	if len(args) < 2 {
		return false // prints, or resets one signal
	}
	a := args[0]
	if a.Static() && (a.Value == "" || a.Value == "-" || isDigits(a.Value) || strings.HasPrefix(a.Value, "-")) {
		return false // ignores, resets, or -l/-p
	}
	f.code(a, "trap", f.lang)
	return true
}

func aliasCmd(f *frame, c call) bool {
	any := false
	for _, w := range c.args[1:] {
		name, val, ok := strings.Cut(w.Value, "=")
		if !ok || name == "" {
			if !w.Static() {
				f.find(Ask, "alias definition is not known until run time: "+w.Source, f.callText(c), w.Pos)
			}
			continue
		}
		cw := w
		cw.Value = val
		if _, t, ok := strings.Cut(w.tmpl, "="); ok {
			cw.tmpl = t
		}
		f.code(cw, "alias", f.lang)
		any = true
	}
	return any
}

func sourceCmd(f *frame, c call) bool {
	what := "a file"
	if len(c.args) > 1 {
		what = c.args[1].Source
	}
	f.find(Ask, fmt.Sprintf("%s runs the code in %s, which guardrun cannot read", c.args[0].Value, what), f.callText(c), c.pos)
	return false
}

func declCmd(f *frame, c call) bool {
	name := baseName(c.args[0].Value)
	nameref := name == "nameref"
	integer, assoc := false, false
	for _, w := range c.args[1:] {
		v := w.Value
		f.declSubst(c, w)
		eq := strings.IndexByte(v, '=')
		if eq < 0 && (strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+")) {
			if !w.Static() {
				f.find(Ask, fmt.Sprintf("%s option %s is not known until run time", name, w.Source), f.callText(c), w.Pos)
				integer = true // it may be -i
				continue
			}
			if strings.HasPrefix(v, "-") && strings.Contains(v, "i") {
				integer = true // -i: every assignment is evaluated as arithmetic
			}
			if strings.HasPrefix(v, "-") && strings.Contains(v, "A") {
				assoc = true
			}
			if name == "export" && strings.Contains(v, "f") {
				f.find(Ask, "export -f passes shell functions to every child shell, which changes what they run", f.callText(c), w.Pos)
			}
			if strings.HasPrefix(v, "-") && strings.Contains(v, "n") {
				nameref = true
			}
			continue
		}
		if eq < 0 {
			if !w.Static() {
				f.find(Ask, fmt.Sprintf("%s of a variable whose name is not known until run time: %s", name, w.Source), f.callText(c), w.Pos)
				continue
			}
			f.nameWord(v, w.Source, w.Pos)
			if k := strings.IndexByte(v, '['); k >= 0 {
				v = v[:k]
			}
			if integer {
				f.noteInteger(v)
			}
			if assoc {
				f.noteAssoc(v)
			}
			continue
		}
		n := strings.TrimSuffix(v[:eq], "+")
		if w.Static() {
			f.nameWord(n, w.Source, w.Pos)
		}
		if k := strings.IndexByte(n, '['); k >= 0 {
			n = n[:k]
		}
		if integer {
			f.noteInteger(n)
		}
		if assoc {
			f.noteAssoc(n)
		}
		switch {
		case n == v[:eq] && !nameref && w.number:
			f.assignedNumber(n, w.Source, w.Pos)
		case n == v[:eq] && !nameref:
			vw := w.Word
			vw.Value = v[eq+1:]
			f.assignedValue(n, &vw, w.Source, w.Pos)
		default:
			f.assignedName(n, w.Source, w.Pos)
		}
		if nameref {
			target := v[eq+1:]
			if !w.Static() || DangerousVariable(target) || LocaleVariable(target) {
				f.find(Ask, fmt.Sprintf("nameref %s points at %s, which can change what runs", n, w.Source), w.Source, w.Pos)
			}
		}
	}
	return false
}

func enableCmd(f *frame, c call) bool {
	for _, w := range c.args[1:] {
		if strings.HasPrefix(w.Value, "-") && strings.Contains(w.Value, "f") || !w.Static() && w.Value == "" {
			f.find(Ask, "enable -f loads a builtin from a shared library", f.callText(c), w.Pos)
			return false
		}
	}
	for _, w := range c.args[1:] {
		if !strings.HasPrefix(w.Value, "-") {
			// enable -n NAME makes NAME run a program from PATH instead
			// of the builtin; enable NAME brings a builtin back.
			f.find(Ask, "enable changes whether "+w.Source+" runs a builtin or a program", f.callText(c), w.Pos)
			break
		}
	}
	return false
}

// assignsOperands checks words that name variables a builtin assigns.
func (f *frame) assignsOperands(c call, who string, ws []wval) {
	for _, w := range ws {
		if !w.Static() {
			f.find(Ask, fmt.Sprintf("%s assigns a variable whose name is not known until run time: %s", who, w.Source), f.callText(c), w.Pos)
			continue
		}
		n := w.Value
		f.nameWord(n, f.callText(c), w.Pos)
		if k := strings.IndexByte(n, '['); k >= 0 {
			n = n[:k]
		}
		f.assignedName(n, f.callText(c), w.Pos)
	}
}

var readSpec = wrapperOpts("a:d:i:n:N:p:t:u:ers", "")

func readCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, readSpec, "read")
	for _, o := range opts {
		if o.name == "a" && o.hasVal {
			f.assignsOperands(c, "read", []wval{o.val})
		}
	}
	f.assignsOperands(c, "read", c.args[i:])
	return false
}

func printfCmd(f *frame, c call) bool {
	f.printfDynamicOption(c)
	if len(c.args) > 2 && c.args[1].Static() && c.args[1].Value == "-v" {
		f.assignsOperands(c, "printf -v", c.args[2:3])
	} else if len(c.args) > 1 && c.args[1].Static() && strings.HasPrefix(c.args[1].Value, "-v") && len(c.args[1].Value) > 2 {
		f.assignsOperands(c, "printf -v", []wval{wvalOf(c.args[1], c.args[1].Value[2:])})
	}
	return false
}

var mapfileSpec = wrapperOpts("d:n:O:s:u:C:c:t", "")

func mapfileCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, mapfileSpec, "mapfile")
	ran := false
	for _, o := range opts {
		if o.name == "C" && o.hasVal {
			f.code(o.val, "mapfile -C", f.lang)
			ran = true
		}
	}
	if i < len(c.args) {
		f.assignsOperands(c, "mapfile", c.args[i:i+1])
	}
	return ran
}

func getoptsCmd(f *frame, c call) bool {
	if len(c.args) > 2 {
		f.assignsOperands(c, "getopts", c.args[2:3])
	}
	return false
}

var hashSpec = wrapperOpts("p:rdlt", "")

func hashCmd(f *frame, c call) bool {
	opts, _ := f.scan(c, 1, hashSpec, "hash")
	if has(opts, "p") {
		f.find(Ask, "hash -p makes a command name run another program", f.callText(c), c.pos)
	}
	return false
}

// compgenSpec: compgen and complete take letters not listed as flags.
var compgenSpec = &cmdsem.Options{Short: "o:A:G:W:F:C:X:P:S:D:abcdefgjksuvEI", Abbrev: true, SkipRunTimeOptions: true}

func compgenCmd(f *frame, c call) bool {
	opts, _ := f.scan(c, 1, compgenSpec, c.args[0].Value)
	ran := false
	for _, o := range opts {
		switch {
		case o.name == "C" && o.hasVal:
			f.code(o.val, c.args[0].Value+" -C", f.lang)
			ran = true
		case o.name == "W" && o.hasVal && (strings.ContainsAny(o.val.Value, "$`") || !o.val.Static()):
			f.find(Ask, c.args[0].Value+" -W expands its word list, which can run commands", f.callText(c), o.val.Pos)
		}
	}
	return ran
}

// suCmd reads the -c code of su and runuser. Both change user, so they
// stay commands of their own for policy to judge.
func suCmd(f *frame, c call) bool {
	// su permutes its arguments, so -c may follow the user name.
	for i := 1; i < len(c.args); i++ {
		w := c.args[i]
		v := w.Value
		if !w.Static() {
			continue
		}
		var code wval
		found := false
		switch {
		case v == "--":
			i = len(c.args)
		case v == "--command" || v == "--session-command":
			if i+1 < len(c.args) {
				code, found = c.args[i+1], true
				i++
			}
		case strings.HasPrefix(v, "--command=") || strings.HasPrefix(v, "--session-command="):
			_, val, _ := strings.Cut(v, "=")
			code, found = wvalOf(w, val), true
		case strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--"):
			if k := strings.IndexByte(v, 'c'); k > 0 && !strings.ContainsAny(v[1:k], "sgGw") {
				if k+1 < len(v) {
					code, found = wvalOf(w, v[k+1:]), true
				} else if i+1 < len(c.args) {
					code, found = c.args[i+1], true
					i++
				}
			} else if strings.ContainsAny(v[1:], "sgGw") {
				i++ // option with an argument
			}
		}
		if found {
			f.code(code, baseName(c.args[0].Value)+" -c", syntax.LangBash)
		}
	}
	return false
}

var watchSpec = wrapperOpts("n:q:d::bceghptwxrCf",
	"interval= equexit= shotsdir= differences[=] chgexit errexit beep color no-color exec precise no-title no-wrap no-linewrap help version")

// watchCmd: watch joins its arguments and runs them with sh -c, unless
// -x runs them directly. watch stays a command of its own.
func watchCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, watchSpec, "watch")
	if infoOnly(opts) || i >= len(c.args) {
		return false
	}
	if has(opts, "x", "exec") {
		f.emit(c.sub(i, "watch"))
		return false
	}
	f.code(joinWords(c.args[i:]), "watch", syntax.LangPOSIX)
	return false
}

var flockSpec = wrapperOpts("E:w:c:sexnouFhV",
	"conflict-exit-code= timeout= wait= command= shared exclusive nonblock nb close unlock no-fork verbose fcntl help version")

// flockCmd: flock FILE CMD..., or flock FILE -c CODE. flock stays a
// command of its own.
func flockCmd(f *frame, c call) bool {
	opts, i := f.scan(c, 1, flockSpec, "flock")
	for _, o := range opts {
		if (o.name == "c" || o.name == "command") && o.hasVal {
			f.code(o.val, "flock -c", syntax.LangPOSIX)
		}
	}
	if infoOnly(opts) || i+1 >= len(c.args) {
		return false
	}
	next := c.args[i+1]
	if next.Static() && (next.Value == "-c" || next.Value == "--command") {
		if i+2 < len(c.args) {
			f.code(c.args[i+2], "flock -c", syntax.LangPOSIX)
		}
		return false
	}
	f.emit(c.sub(i+1, "flock"))
	return false
}

func shellCmd(f *frame, c call) bool {
	self := len(f.a.out.Commands) - 1 // emit reported this shell last
	name := baseName(c.args[0].Value)
	opts, i := f.scan(c, 1, shellSpec, name)
	if infoOnly(opts) {
		return false
	}
	for _, o := range opts {
		if (o.name == "rcfile" || o.name == "init-file") && o.hasVal {
			f.find(Ask, fmt.Sprintf("%s reads startup code from %s, which guardrun cannot read", name, o.val.Source), f.callText(c), o.val.Pos)
		}
	}
	f.shellOptions(c, name, opts)
	lang := DialectFor(name)
	ops := c.args[i:]
	switch {
	case has(opts, "c"):
		if len(ops) == 0 {
			if c.fromInput {
				f.find(Ask, name+" -c runs code taken from its input", f.callText(c), c.pos)
			}
			return false
		}
		code := ops[0]
		if c.replace != "" && strings.Contains(code.tmpl, c.replace) {
			f.find(Ask, fmt.Sprintf("%s -c code has %s replaced with input at run time, so the input becomes code", name, c.replace), f.callText(c), code.Pos)
		}
		f.code(code, name+" -c", lang)
		return true
	case len(ops) > 0 && !has(opts, "s"):
		if !ops[0].Static() || strings.HasPrefix(ops[0].Value, "-") || c.fromInput {
			// Named at run time, named like an option (bash -- -c), or
			// run by xargs or find -exec, which may put their input
			// in its place.
			f.find(Ask, fmt.Sprintf("%s runs the script %s, which guardrun cannot read", name, ops[0].Source), f.callText(c), ops[0].Pos)
			return false
		}
		// A script file: policy judges it by where it lies, as it
		// judges python's or node's (rules.Engine.scriptParts).
		w := ops[0].Word
		f.a.out.Commands[self].Script = &w
		return false
	case c.fromInput && !has(opts, "s"):
		f.find(Ask, name+" runs a script named by its input", f.callText(c), c.pos)
		return false
	}
	switch c.stdin.kind {
	case stdinHeredoc:
		f.code(c.stdin.word, "heredoc to "+name, lang)
		return true
	case stdinHereString:
		f.code(c.stdin.word, "here-string to "+name, lang)
		return true
	case stdinFile:
		f.find(Ask, fmt.Sprintf("%s reads commands from %s, which guardrun cannot read", name, c.stdin.word.Source), f.callText(c), c.pos)
	default:
		f.find(Ask, name+" reads commands from standard input, which guardrun cannot see", f.callText(c), c.pos)
	}
	return false
}

// code analyses text that a command runs as shell code. Static text is
// parsed and must parse; text that depends on run time asks, and is
// still parsed with each expansion standing for itself, so that what is
// visible (eval "rm -rf $dir") reaches policy too.
func (f *frame) code(w wval, via string, lang syntax.LangVariant) {
	if w.Static() {
		f.nested(w.Value, via, lang, w.Pos, true)
		return
	}
	f.find(Ask, fmt.Sprintf("%s runs code that is not known until run time: %s", via, w.Source), w.Source, w.Pos)
	f.nested(w.tmpl, via, lang, w.Pos, false)
}

func (f *frame) nested(code, via string, lang syntax.LangVariant, pos Pos, strict bool) {
	g := f.with(via)
	if f.depth+1 > f.a.maxDepth {
		g.find(Block, fmt.Sprintf("code nested more than %d levels deep", f.a.maxDepth), code, pos)
		return
	}
	lang = dialect(lang)
	g.lang = lang
	if !g.readable(code, pos, true) {
		return
	}
	// No fallback to another dialect: sh may be dash, and a bash reading
	// of code that dash cannot parse the same way is another program.
	file, code, err := parseBash(code, lang)
	if err != nil {
		if strict {
			g.find(Block, fmt.Sprintf("%s: code does not parse: %s", via, toParseError(err)), excerpt(code, 0), pos)
		}
		return
	}
	g.dialectCheck(code, file, pos, true)
	g.src = code
	g.depth = f.depth + 1
	g.anchor = &pos
	g.seen = map[syntax.Node]bool{}
	// Nested code runs in another process (sh -c) or later (trap);
	// eval runs here, so a directory change in it leaves the
	// directory unknown.
	g.sc = f.sc.subshell()
	if via == "eval" && changesDir(file) {
		f.sc.dir.setUnknown("eval changes directory")
	}
	g.file(file)
}
