package shellparse

import (
	"fmt"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Values evaluated as arithmetic. Where bash evaluates a variable's
// value as an arithmetic expression ($((x)), (( x )), let, for ((;;)),
// [[ x -eq y ]], an indexed array's subscript ${a[x]} and a[x]=, ${s:x},
// an assignment to a declare -i variable) or as a variable name (${!x}),
// a subscript in that value is evaluated too, and a command substitution
// in the subscript runs: x=$(printf 'a[\x24(cmd)]'); echo $((x)) runs
// cmd. The analysis records every such use and every assignment, and
// asks where a value evaluated so is not known to be a number or a
// plain expression: a value made at run time ($(...), read, mapfile,
// printf -v, a for loop over run-time words, the positional parameters),
// one the script does not set (the environment), or text shaped like a
// subscript.

// varValues are the values the script assigns a variable anywhere (the
// order of a script's assignments and uses is not followed: a loop or a
// function may run them in any order).
type varValues struct {
	static []string
	// unknown describes the first assignment of a value made at run time.
	unknown string
	// integer: declared with -i, so every assignment is evaluated as
	// arithmetic; assoc: declared with -A, so subscripts are strings.
	integer, assoc bool
	// assigned holds the assignments' source texts and positions, for
	// integer variables.
	assigned []assignSite
}

type assignSite struct {
	text    string
	pos     Pos
	unknown bool
	value   string
}

// arithUse is a value evaluated as arithmetic or as a name.
type arithUse struct {
	// name is the variable whose value is evaluated; "" when the value
	// is never known (why says what it is).
	name, why string
	// asName: evaluated as a variable name (${!x}), not as arithmetic.
	asName    bool
	text      string
	pos       Pos
	fromValue string // for a static text, the text evaluated
	shell     string // the shell that evaluates it
}

// subscript walks an array's subscript: arithmetic for an indexed
// array, a string for an associative one (declared -A in the script,
// and zsh's special hashes), where only its substitutions matter.
func (f *frame) subscript(array string, idx syntax.ArithmExpr) {
	if idx == nil {
		return
	}
	if f.assocArray(array) {
		f.a.noArith++
		defer func() { f.a.noArith-- }()
	}
	f.arithm(idx)
}

// zshHashes are zsh's special associative arrays (zsh/parameter and
// friends), whose keys are names, not arithmetic.
var zshHashes = map[string]bool{
	"commands": true, "functions": true, "dis_functions": true, "builtins": true, "dis_builtins": true,
	"aliases": true, "dis_aliases": true, "galiases": true, "dis_galiases": true, "saliases": true, "dis_saliases": true,
	"nameddirs": true, "userdirs": true, "parameters": true, "options": true, "modules": true, "reswords": true,
	"dis_reswords": true, "jobtexts": true, "jobstates": true, "jobdirs": true, "history": true, "mapfile": true,
	"widgets": true, "keymaps": true, "sysparams": true, "errnos": true, "termcap": true, "terminfo": true,
	"functions_source": true, "dis_patchars": true, "patchars": true, "usergroups": true,
}

func (f *frame) assocArray(name string) bool {
	if f.lang == syntax.LangZsh && zshHashes[name] {
		return true
	}
	if name == "BASH_ALIASES" || name == "BASH_CMDS" {
		return true
	}
	v := f.a.values[name]
	return v != nil && v.assoc
}

// shell names the shell that reads the frame's code, for a person.
func (f *frame) shell() string {
	switch f.lang {
	case syntax.LangZsh:
		return "zsh"
	case syntax.LangMirBSDKorn:
		return "mksh"
	case syntax.LangPOSIX:
		return "sh"
	}
	return "bash"
}

// keysIndex reports the @ or * of ${!a[@]}, which lists a's keys.
func keysIndex(idx syntax.ArithmExpr) bool {
	w, ok := idx.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// alwaysNumbers are the variables bash keeps as numbers whatever is
// assigned to them.
var alwaysNumbers = map[string]bool{
	"RANDOM": true, "SRANDOM": true, "LINENO": true, "SECONDS": true, "EPOCHSECONDS": true,
	"BASHPID": true, "PPID": true, "UID": true, "EUID": true, "HISTCMD": true, "BASH_SUBSHELL": true,
}

func (a *analysis) vals(name string) *varValues {
	if a.values == nil {
		a.values = map[string]*varValues{}
	}
	v := a.values[name]
	if v == nil {
		v = &varValues{}
		a.values[name] = v
	}
	return v
}

// noteValue records an assignment of v (nil: a value only known at run
// time) to name; number is set for a value known to be a number (an
// arithmetic result, $#).
func (f *frame) noteValue(name string, v *Word, number bool, text string, pos Pos) {
	if name == "" {
		return
	}
	vv := f.a.vals(name)
	site := assignSite{text: excerpt(text, 0), pos: pos}
	switch {
	case number:
		vv.static = append(vv.static, "0")
		site.value = "0"
	case v != nil && v.Static():
		vv.static = append(vv.static, v.Value)
		site.value = v.Value
	default:
		site.unknown = true
		if vv.unknown == "" {
			vv.unknown = excerpt(text, 0)
		}
	}
	if len(vv.assigned) < 16 {
		vv.assigned = append(vv.assigned, site)
	}
}

// noteAssoc records an associative array (declare -A).
func (f *frame) noteAssoc(name string) {
	if name != "" {
		f.a.vals(name).assoc = true
	}
}

// noteInteger records a variable declared with the integer attribute.
func (f *frame) noteInteger(name string) {
	if name != "" {
		f.a.vals(name).integer = true
	}
}

// numberWord reports a word whose value is always a number: an
// arithmetic expansion, $#, $?, $$, $!, ${#x}, digits.
func numberWord(w *syntax.Word) bool {
	if w == nil || len(w.Parts) == 0 {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.ArithmExp:
		case *syntax.Lit:
			if !isDigits(p.Value) {
				return false
			}
		case *syntax.ParamExp:
			if !numberParam(p) {
				return false
			}
		case *syntax.DblQuoted:
			if !numberWord(&syntax.Word{Parts: p.Parts}) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// numberParam reports $#, $?, $$, $! and ${#x}.
func numberParam(p *syntax.ParamExp) bool {
	if p.Length && p.Exp == nil && p.Repl == nil && p.Slice == nil {
		return true
	}
	if p.Param == nil || p.Excl || p.Index != nil || p.Exp != nil || p.Repl != nil || p.Slice != nil || p.Length {
		return false
	}
	switch p.Param.Value {
	case "#", "?", "$", "!":
		return true
	}
	return alwaysNumbers[p.Param.Value]
}

// arithWord records the arithmetic evaluation of w (an operand of
// $(( )), (( )), let, [[ -eq ]] or a subscript).
func (f *frame) arithWord(w *syntax.Word) {
	if w == nil || len(w.Parts) == 0 || f.a.noArith > 0 {
		return
	}
	text := excerpt(f.text(w), 0)
	pos := f.pos(w.Pos())
	use := func(name string) {
		f.a.arithUses = append(f.a.arithUses, arithUse{name: name, text: text, pos: pos, shell: f.shell()})
	}
	never := func(why string) {
		f.a.arithUses = append(f.a.arithUses, arithUse{why: why, text: text, pos: pos, shell: f.shell()})
	}
	if numberWord(w) {
		return
	}
	if len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			f.arithText(p.Value, text, pos)
			return
		case *syntax.ParamExp:
			f.arithParam(p, text, pos, use, never)
			return
		case *syntax.DblQuoted:
			if len(p.Parts) == 1 {
				if pe, ok := p.Parts[0].(*syntax.ParamExp); ok {
					f.arithParam(pe, text, pos, use, never)
					return
				}
			}
		}
	}
	if lit, ok := staticText(w); ok {
		f.arithText(lit, text, pos)
		return
	}
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			never("it holds the output of a command")
			return
		}
	}
	never("it is made at run time")
}

// arithParam records a parameter expansion evaluated as arithmetic.
func (f *frame) arithParam(p *syntax.ParamExp, text string, pos Pos, use func(string), never func(string)) {
	if numberParam(p) {
		return
	}
	if p.Param == nil || p.Excl || p.Repl != nil || p.Slice != nil || p.Length || p.NestedParam != nil {
		never("it is made at run time")
		return
	}
	name := p.Param.Value
	if isDigits(name) || name == "@" || name == "*" || name == "_" || name == "-" || name == "0" {
		never("it is an argument or a parameter set at run time")
		return
	}
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
			if lit, ok := staticText(p.Exp.Word); ok {
				f.arithText(lit, text, pos)
			} else if p.Exp.Word != nil {
				never("it is made at run time")
				return
			}
		default:
			never("it is made at run time")
			return
		}
	}
	use(name)
}

// arithText records static text evaluated as arithmetic: a subscript in
// it runs, and each name in it is evaluated in turn.
func (f *frame) arithText(v, text string, pos Pos) {
	if isNumber(v) {
		return
	}
	if strings.ContainsAny(v, "[$`") {
		f.a.arithUses = append(f.a.arithUses, arithUse{why: "it is text shaped like an array subscript (" + excerpt(v, 0) + "), whose command substitutions it runs", text: text, pos: pos, fromValue: v, shell: f.shell()})
		return
	}
	for _, n := range arithNames(v) {
		f.a.arithUses = append(f.a.arithUses, arithUse{name: n, text: text, pos: pos, shell: f.shell()})
	}
}

// indirectUse records ${!x}: x's value is a variable name, whose
// subscript bash evaluates.
func (f *frame) indirectUse(p *syntax.ParamExp) {
	text := excerpt(f.text(p), 0)
	pos := f.pos(p.Pos())
	if p.Param == nil || isDigits(p.Param.Value) || p.Param.Value == "@" || p.Param.Value == "*" {
		f.a.arithUses = append(f.a.arithUses, arithUse{why: "the name is made at run time", asName: true, text: text, pos: pos, shell: f.shell()})
		return
	}
	f.a.arithUses = append(f.a.arithUses, arithUse{name: p.Param.Value, asName: true, text: text, pos: pos, shell: f.shell()})
}

// staticText returns the value of a word without expansions.
func staticText(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			s, ok := staticText(&syntax.Word{Parts: p.Parts})
			if !ok {
				return "", false
			}
			b.WriteString(s)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// arithNames returns the variable names in an arithmetic expression
// (not the digits of numbers such as 0x1f or 36#zz).
func arithNames(v string) []string {
	var out []string
	for i := 0; i < len(v); {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			for i < len(v) && (isIdentChar(v[i]) || v[i] == '#' || v[i] == '@') {
				i++
			}
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for i < len(v) && isIdentChar(v[i]) {
				i++
			}
			out = append(out, v[j:i])
		default:
			i++
		}
	}
	return out
}

func isIdentChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isIdentifier(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

// maxArithChain bounds how many variables one value may lead through
// (x=y, y=z, ...) before it asks instead.
const maxArithChain = 1000

// unsafeValue says why a variable's value, evaluated as arithmetic (or
// as a name), could run a command, or "" when it cannot. seen breaks
// cycles (x=y; y=x only makes bash complain).
func (a *analysis) unsafeValue(name string, asName bool, seen map[string]bool) string {
	if alwaysNumbers[name] || seen[name] {
		return ""
	}
	if !asName {
		// Each variable is judged once: a chain x1=x2, x2=x3, ... used
		// many times costs its length once.
		if why, ok := a.unsafeMemo[name]; ok {
			return why
		}
	}
	if len(seen) > maxArithChain {
		return fmt.Sprintf("%s's value refers to more than %d variables in turn", name, maxArithChain)
	}
	seen[name] = true
	why := a.unsafeValueOf(name, asName, seen)
	if !asName {
		if a.unsafeMemo == nil {
			a.unsafeMemo = map[string]string{}
		}
		a.unsafeMemo[name] = why
	}
	return why
}

func (a *analysis) unsafeValueOf(name string, asName bool, seen map[string]bool) string {
	v := a.values[name]
	switch {
	case v == nil:
		return fmt.Sprintf("%s is not set by the script, so its value comes from the environment", name)
	case v.unknown != "":
		return fmt.Sprintf("%s holds a value made at run time (%s)", name, v.unknown)
	}
	for _, s := range v.static {
		if asName {
			if s != "" && !isIdentifier(s) {
				return fmt.Sprintf("%s holds %s, which is not a plain variable name", name, excerpt(s, 0))
			}
			continue
		}
		if isNumber(s) || s == "" {
			continue
		}
		if strings.ContainsAny(s, "[$`") {
			return fmt.Sprintf("%s holds text shaped like an array subscript (%s), whose command substitutions bash runs", name, excerpt(s, 0))
		}
		for _, n := range arithNames(s) {
			if why := a.unsafeValue(n, false, seen); why != "" {
				return fmt.Sprintf("%s holds %s, and %s", name, excerpt(s, 0), why)
			}
		}
	}
	return ""
}

// arithmetic reports, once the whole script is read, the values
// evaluated as arithmetic or as names that could run a command, and the
// run-time assignments to integer variables (each evaluated as
// arithmetic).
func (f *frame) arithmetic() {
	a := f.a
	asked := map[string]bool{}
	for _, u := range a.arithUses {
		key := u.name
		if key == "" {
			key = u.text + "\x00" + u.pos.String()
		}
		if asked[key] {
			continue
		}
		why := u.why
		if u.name != "" {
			why = a.unsafeValue(u.name, u.asName, map[string]bool{})
		}
		if why == "" {
			continue
		}
		asked[key] = true
		what := "evaluates " + u.text + " as arithmetic"
		if u.asName {
			what = "reads the variable " + u.text + " names"
		}
		tail := ": a value such as a[$(cmd)] there would run cmd"
		if u.fromValue != "" || strings.Contains(why, "shaped like an array subscript") {
			tail = ""
		}
		f.find(Ask, fmt.Sprintf("%s %s, and %s%s", u.shell, what, why, tail), u.text, u.pos)
	}
	names := make([]string, 0, len(a.values))
	for n, v := range a.values {
		if v.integer {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		v := a.values[n]
		for _, s := range v.assigned {
			why := ""
			switch {
			case s.unknown:
				why = "a value made at run time"
			case !isNumber(s.value) && s.value != "":
				if u := a.unsafeValueText(s.value); u != "" {
					why = u
				}
			}
			if why != "" {
				f.find(Ask, fmt.Sprintf("bash evaluates what %s assigns to %s (declared -i) as arithmetic, and it is %s: a value such as a[$(cmd)] there would run cmd", s.text, n, why), s.text, s.pos)
				break
			}
		}
	}
}

// unsafeValueText is unsafeValue for static text.
func (a *analysis) unsafeValueText(s string) string {
	if strings.ContainsAny(s, "[$`") {
		return "it holds text shaped like an array subscript (" + excerpt(s, 0) + ")"
	}
	for _, n := range arithNames(s) {
		if why := a.unsafeValue(n, false, map[string]bool{}); why != "" {
			return why
		}
	}
	return ""
}
