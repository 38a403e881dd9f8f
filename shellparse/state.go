package shellparse

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Shell state that changes what a name runs or how the rest of the
// script is read: assignments in forms other than NAME=value, and the
// options of set, shopt, enable and nested shells.

// arithAssign checks the target of an arithmetic assignment or ++/--:
// $((PATH=0)), ((IFS+=1)), let PATH++.
func (f *frame) arithAssign(x syntax.ArithmExpr) {
	w, ok := x.(*syntax.Word)
	if !ok {
		return
	}
	name := w.Lit()
	if k := strings.IndexByte(name, '['); k >= 0 {
		name = name[:k]
	}
	if name == "" {
		f.find(Ask, "arithmetic assigns a variable whose name is not known until run time: "+f.text(w), f.text(w), f.pos(w.Pos()))
		return
	}
	f.assignedNumber(name, f.text(w), f.pos(w.Pos()))
}

func isArithAssign(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
		syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
		syntax.ShrAssgn, syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
		return true
	}
	return false
}

// isNumber reports an arithmetic operand that is a plain number.
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '#' || c == 'x' || c == 'X' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s[0] >= '0' && s[0] <= '9'
}

// hasExpansion reports a word whose value depends on an expansion.
func hasExpansion(w *syntax.Word) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst:
			found = true
		}
		return !found
	})
	return found
}

func hasSubstText(s string) bool {
	return strings.Contains(s, "$(") || strings.Contains(s, "`") || strings.Contains(s, "$[")
}

// testCmd: test -v NAME and [ -v NAME ] evaluate a subscript in NAME;
// a name only known at run time asks.
func testCmd(f *frame, c call) bool {
	for i := 1; i+1 < len(c.args); i++ {
		a := c.args[i]
		if a.Static() && (a.Value == "-v" || a.Value == "-R") && !c.args[i+1].Static() {
			f.find(Ask, fmt.Sprintf("%s %s of a name not known until run time: a subscript in it runs commands", c.args[0].Value, a.Value), f.callText(c), c.args[i+1].Pos)
		} else if a.Static() && (a.Value == "-v" || a.Value == "-R") {
			f.nameWord(c.args[i+1].Value, f.callText(c), c.args[i+1].Pos)
		}
	}
	return false
}

var waitSpec = wrapperOpts("p:nf", "")

// waitCmd: wait -p NAME assigns NAME.
func waitCmd(f *frame, c call) bool {
	opts, _ := f.scan(c, 1, waitSpec, "wait")
	for _, o := range opts {
		if o.name == "p" && o.hasVal {
			f.assignsOperands(c, "wait -p", []wval{o.val})
		}
	}
	return false
}

// declSubst asks for an argument of a declaration builtin whose text
// holds a substitution: bash evaluates a quoted compound assignment
// (declare -a 'x=($(cmd))' runs cmd).
func (f *frame) declSubst(c call, w wval) {
	if hasSubstText(w.Value) {
		f.find(Ask, fmt.Sprintf("%s evaluates %s as an assignment, and the substitution in it runs", baseName(c.args[0].Value), w.Source), f.callText(c), w.Pos)
	}
}

// quotedOperands: inside double quotes, single quotes in the operand of
// ${x:-...}, ${x#...} and the like are ordinary characters for bash and
// dash, so "${x:-'$(cmd)'}" runs cmd. The parser reads them as quotes;
// their text is walked again as text in which expansions happen.
func (f *frame) quotedOperands(p *syntax.ParamExp) {
	var ws []*syntax.Word
	if p.Exp != nil {
		ws = append(ws, p.Exp.Word)
	}
	if p.Repl != nil {
		ws = append(ws, p.Repl.Orig, p.Repl.With)
	}
	for _, w := range ws {
		if w == nil {
			continue
		}
		for _, part := range w.Parts {
			sq, ok := part.(*syntax.SglQuoted)
			// $'...' is no ANSI-C string there either.
			if !ok || !strings.ContainsAny(sq.Value, "$`") {
				continue
			}
			f.walkText(sq.Value, f.pos(sq.Pos()), "single quotes inside \"${...}\" are not quotes for bash and hold an expansion that does not parse: "+f.text(sq))
		}
	}
}

// riskyShopt are the shopt options that change how bash reads or runs
// the rest of the script.
func riskyShopt(name string) bool {
	return name == "expand_aliases" || name == "extdebug" || strings.HasPrefix(name, "compat")
}

// riskySetOption are set -o / bash -o names that change parsing or
// execution: keyword turns NAME=value words anywhere into assignments,
// posix expands aliases and changes parsing, functrace/errtrace carry
// DEBUG/ERR traps into functions.
func riskySetOption(name string) bool {
	switch name {
	case "keyword", "posix", "functrace", "history", "histexpand", "interactive-comments":
		return true
	}
	return false
}

// setCmd: set -k, set -o keyword, set -o posix, set -T and options not
// known until run time change how what follows runs.
func setCmd(f *frame, c call) bool {
	args := c.args[1:]
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		if !w.Static() {
			if v == "" || v[0] == '-' || v[0] == '+' {
				f.find(Ask, "set: option "+w.Source+" is not known until run time, and options change how the script runs", f.callText(c), w.Pos)
			}
			return false
		}
		if v == "--" || v == "-" || v == "" || v[0] != '-' && v[0] != '+' {
			return false
		}
		letters := v[1:]
		if strings.ContainsAny(letters, "kT") && v[0] == '-' {
			f.find(Ask, fmt.Sprintf("set %s changes how bash reads the commands that follow (-k: NAME=value anywhere is an assignment)", v), f.callText(c), w.Pos)
		}
		if strings.Contains(letters, "o") {
			if i+1 >= len(args) {
				continue
			}
			i++
			o := args[i]
			if !o.Static() {
				f.find(Ask, "set -o "+o.Source+": option not known until run time", f.callText(c), o.Pos)
			} else if v[0] == '-' && riskySetOption(o.Value) {
				f.find(Ask, "set -o "+o.Value+" changes how bash reads or runs the commands that follow", f.callText(c), o.Pos)
			}
		}
	}
	return false
}

// shoptCmd: shopt -s expand_aliases (aliases defined in the script then
// change what later lines mean), extdebug, compat levels.
func shoptCmd(f *frame, c call) bool {
	set, setOpt := false, false
	for _, w := range c.args[1:] {
		v := w.Value
		if !w.Static() {
			f.find(Ask, "shopt: "+w.Source+" is not known until run time, and options change how the script runs", f.callText(c), w.Pos)
			continue
		}
		if strings.HasPrefix(v, "-") {
			set = strings.Contains(v, "s") || set && !strings.Contains(v, "u")
			setOpt = setOpt || strings.Contains(v, "o")
			continue
		}
		if set && (riskyShopt(v) || setOpt && riskySetOption(v)) {
			f.find(Ask, "shopt -s "+v+" changes how bash reads or runs the commands that follow", f.callText(c), w.Pos)
		}
		if set && v == "lastpipe" && !f.a.lastpipe {
			// Spelled so that the script's text does not say lastpipe
			// ($'last\x70ipe'): the pipelines already read did not
			// allow for it.
			f.find(Ask, "shopt -s "+w.Source+" sets lastpipe, under which a pipeline's last command runs in this shell", f.callText(c), w.Pos)
		}
	}
	return false
}

// unsetCmd: unsetting PATH, IFS and the like changes what runs too; the
// names' subscripts are checked as words.
func unsetCmd(f *frame, c call) bool {
	fn := false
	for _, w := range c.args[1:] {
		v := w.Value
		if !w.Static() {
			f.find(Ask, "unset of a name not known until run time: "+w.Source, f.callText(c), w.Pos)
			continue
		}
		if strings.HasPrefix(v, "-") {
			fn = strings.Contains(v, "f")
			continue
		}
		if fn {
			continue
		}
		n := v
		f.nameWord(n, f.callText(c), w.Pos)
		if k := strings.IndexByte(n, '['); k >= 0 {
			n = n[:k]
		}
		if DangerousVariable(n) {
			f.find(Ask, fmt.Sprintf("unset %s changes what runs", n), f.callText(c), w.Pos)
		}
	}
	return false
}

// shellOptions checks the options a nested shell is started with.
func (f *frame) shellOptions(c call, name string, opts []opt) {
	for _, o := range opts {
		if name == "zsh" && (o.name == "o" || len(o.name) > 1) {
			// zsh -o globsubst, --emulate sh: a value's glob
			// qualifiers run, among other changes not modelled.
			f.find(Ask, fmt.Sprintf("zsh option %s changes how the code is read or run (globsubst runs the glob qualifiers in a value)", o.name), f.callText(c), c.pos)
			continue
		}
		switch o.name {
		case "i", "l", "login":
			f.find(Ask, fmt.Sprintf("%s -%s runs startup files (%s) that guardrun cannot read", name, o.name, startupFiles(name, o.name)), f.callText(c), c.pos)
		case "k":
			f.find(Ask, name+" -k makes every NAME=value word an assignment, also after the command name", f.callText(c), c.pos)
		case "posix":
			f.find(Ask, name+" --posix changes how the code is read (aliases are expanded)", f.callText(c), c.pos)
		case "debugger":
			f.find(Ask, name+" --debugger turns on extdebug and sources the debugger's start file", f.callText(c), c.pos)
		case "o", "O":
			if !o.hasVal {
				continue
			}
			if !o.val.Static() {
				f.find(Ask, fmt.Sprintf("%s -%s %s: option not known until run time", name, o.name, o.val.Source), f.callText(c), o.val.Pos)
			} else if o.name == "o" && riskySetOption(o.val.Value) || o.name == "O" && riskyShopt(o.val.Value) {
				f.find(Ask, fmt.Sprintf("%s -%s %s changes how the code is read or run", name, o.name, o.val.Value), f.callText(c), o.val.Pos)
			}
		}
	}
}

// printfDynamicOption asks when printf's first argument is not known
// until run time and could be -v, with a variable name after it that
// matters: o=-v; printf $o PATH /x.
func (f *frame) printfDynamicOption(c call) {
	if len(c.args) < 3 || c.args[1].Static() {
		return
	}
	w := c.args[1]
	if w.Value != "" && w.Value[0] != '-' {
		return
	}
	t := c.args[2]
	n := t.Value
	if k := strings.IndexByte(n, '['); k >= 0 {
		n = n[:k]
	}
	if !t.Static() || DangerousVariable(n) || strings.Contains(t.Value, "[") {
		f.find(Ask, fmt.Sprintf("printf: %s is not known until run time and could be -v, which would assign %s", w.Source, t.Source), f.callText(c), w.Pos)
	}
}

// startupFiles names the files a shell started with -i or -l (login)
// runs first, for a person.
func startupFiles(shell, opt string) string {
	login := opt != "i"
	switch shell {
	case "zsh":
		if login {
			return "~/.zshenv, ~/.zprofile, ~/.zshrc, ~/.zlogin"
		}
		return "~/.zshenv, ~/.zshrc"
	case "bash", "rbash":
		if login {
			return "~/.bash_profile or ~/.profile"
		}
		return "~/.bashrc"
	}
	if login {
		return "~/.profile, $ENV"
	}
	return "$ENV"
}
