package shellparse

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/guardrun/guardrun/cmdsem"
)

// analysis collects the results of one Parse or ParseArgv call.
type analysis struct {
	opts     Options
	maxDepth int
	out      Script
	// swept counts nodes that only the final safety sweep found. The
	// walker is meant to reach every node itself; tests assert zero.
	swept int
	// braceBudget is how many more words brace expansion may produce.
	braceBudget int
	// anyCd: some code changes directory, so a function body cannot
	// know the directory it will be called in. cdpath: the script
	// mentions CDPATH, so a bare cd operand is a search.
	anyCd, cdpath bool
	// parts and outBytes count what the result holds, against MaxParts
	// and MaxOutputBytes; full is set once either is passed.
	parts, outBytes int
	budget          int
	full            bool
	// level is how deeply the walker is nested in statements.
	level int
	// values are the values assigned to each variable, and arithUses
	// the values evaluated as arithmetic or as names (see arith.go).
	values    map[string]*varValues
	arithUses []arithUse
	noArith   int // walking an associative array's subscript
	// unsafeMemo holds why each variable's value is unsafe in
	// arithmetic ("" when it is safe), once judged.
	unsafeMemo map[string]string
	// lastpipe: the script may set bash's lastpipe option, under which
	// the last command of a pipeline runs in the shell itself, so its
	// cd changes the directory of what follows.
	lastpipe bool
}

// admit accounts for one more part of size bytes of text. Once a limit is
// passed it records one Block finding and admits nothing more.
func (f *frame) admit(size int) bool {
	a := f.a
	if a.full {
		return false
	}
	a.parts++
	a.outBytes += size
	if a.parts <= MaxParts && a.outBytes <= a.budget {
		return true
	}
	a.full = true
	reason := fmt.Sprintf("the script has more than %d commands, file operations and findings", MaxParts)
	if a.outBytes > a.budget {
		reason = fmt.Sprintf("the analysis of the script would report more than %d bytes of text (nested constructs repeat their text)", a.budget)
	}
	a.out.Findings = append(a.out.Findings, Finding{Severity: Block, Reason: reason, Text: "", Via: f.via})
	return false
}

func newAnalysis(opts Options) *analysis {
	d := opts.MaxDepth
	if d <= 0 {
		d = defaultMaxDepth
	}
	return &analysis{opts: opts, maxDepth: d, braceBudget: maxBraceTotal}
}

func (a *analysis) result() *Script {
	s := a.out
	if s.Commands == nil {
		s.Commands = []Command{}
	}
	if s.Files == nil {
		s.Files = []FileOp{}
	}
	if s.Findings == nil {
		s.Findings = []Finding{}
	}
	return &s
}

func (a *analysis) root(src string, lang syntax.LangVariant) *frame {
	a.budget = outputBudget(len(src))
	return &frame{a: a, src: src, lang: lang, seen: map[syntax.Node]bool{}, sc: newScope()}
}

// frame is one piece of source being walked: the top-level script, or
// code found inside it (a bash -c string, an eval argument, ...).
type frame struct {
	a     *analysis
	src   string
	lang  syntax.LangVariant
	depth int
	via   []string
	// anchor, when set, is the position of the outermost word holding
	// this code; every position inside nested code reports it.
	anchor *Pos
	// seen holds the nodes that produce commands once handled, so that
	// brace expansion cannot report a substitution twice and the final
	// sweep can tell what the walker missed.
	seen map[syntax.Node]bool
	// sc is the working directory and descriptor bindings in force.
	sc *scope
}

// with returns a frame for code reached through via.
func (f *frame) with(via string) *frame {
	g := *f
	g.via = append(slices.Clip(f.via), via)
	return &g
}

func (f *frame) pos(p syntax.Pos) Pos {
	if f.anchor != nil {
		return *f.anchor
	}
	return convPos(p)
}

// offsets returns the byte range of [from, to) in the frame's source,
// clamped so that a bad position can never slice out of range.
func (f *frame) offsets(from, to syntax.Pos) (uint, uint) {
	n := uint(len(f.src))
	s, e := from.Offset(), to.Offset()
	if !from.IsValid() {
		s = 0
	}
	if !to.IsValid() {
		e = s
	}
	s, e = min(s, n), min(e, n)
	if e < s {
		e = s
	}
	return s, e
}

func (f *frame) text(n syntax.Node) string {
	s, e := f.offsets(n.Pos(), safeEnd(n))
	return f.src[s:e]
}

// safeEnd is n.End() for nodes whose End can index an empty word list.
func safeEnd(n syntax.Node) (end syntax.Pos) {
	defer func() {
		if recover() != nil {
			end = n.Pos()
		}
	}()
	return n.End()
}

func (f *frame) find(sev Severity, reason, text string, pos Pos) {
	if !f.admit(len(text) + len(reason)) {
		return
	}
	// Code re-read from a dynamic word holds a placeholder where a
	// substitution stood; a person reads it as one.
	reason = strings.ReplaceAll(reason, substPlaceholder, "$(...)")
	text = strings.ReplaceAll(text, substPlaceholder, "$(...)")
	f.a.out.Findings = append(f.a.out.Findings, Finding{
		Severity: sev,
		Reason:   reason,
		Text:     text,
		Via:      f.via,
		Pos:      pos,
	})
}

// file walks a parsed file, then sweeps it for any command-producing
// node the walker did not reach.
func (f *frame) file(file *syntax.File) {
	// Only function bodies need to know (they run wherever they are
	// called from); skip the walk for code that defines none.
	if (strings.Contains(f.src, "(") || strings.Contains(f.src, "function")) && changesDir(file) {
		f.a.anyCd = true
	}
	if strings.Contains(f.src, "CDPATH") {
		f.a.cdpath = true
	}
	f.stmts(file.Stmts)
	f.sweep(file)
}

func (f *frame) sweep(root syntax.Node) {
	syntax.Walk(root, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if !f.seen[n] {
				f.a.swept++
				f.callExpr(n, nil)
			}
		case *syntax.CmdSubst:
			if !f.seen[n] {
				f.a.swept++
				f.cmdSubst(n)
			}
		case *syntax.ProcSubst:
			if !f.seen[n] {
				f.a.swept++
				f.procSubst(n)
			}
		case *syntax.ExtGlob:
			if !f.seen[n] {
				f.a.swept++
				f.extGlob(n)
			}
		}
		return true
	})
}

func (f *frame) stmts(list []*syntax.Stmt) {
	for _, s := range list {
		f.stmt(s)
	}
}

func (f *frame) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	f.a.level++
	defer func() { f.a.level-- }()
	if f.a.level > MaxNesting {
		if f.a.level == MaxNesting+1 {
			f.find(Block, fmt.Sprintf("constructs nested more than %d levels deep", MaxNesting), excerpt(f.text(s), 0), f.pos(s.Pos()))
		}
		return
	}
	if ce, ok := s.Cmd.(*syntax.CallExpr); ok {
		f.callExpr(ce, s.Redirs)
		return
	}
	g := f.in(f.sc.child())
	g.redirs(s.Redirs)
	if s.Cmd != nil {
		g.compound(s.Cmd)
	}
}

// in returns the frame walking with scope sc.
func (f *frame) in(sc *scope) *frame {
	g := *f
	g.sc = sc
	return &g
}

func (f *frame) compound(cmd syntax.Command) {
	switch c := cmd.(type) {
	case *syntax.IfClause:
		for cl := c; cl != nil; cl = cl.Else {
			f.stmts(cl.Cond)
			f.stmts(cl.Then)
		}
	case *syntax.WhileClause:
		f.sc.dir.loop++
		f.stmts(c.Cond)
		f.stmts(c.Do)
		f.sc.dir.loop--
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			var items []wval
			for _, w := range l.Items {
				items = append(items, f.words(w, ctxArg)...)
			}
			if l.Name != nil {
				f.checkAssign(l.Name.Value, nil, f.text(c), f.pos(l.Name.Pos()))
				for _, it := range items {
					f.noteValue(l.Name.Value, &it.Word, false, f.text(c), f.pos(l.Name.Pos()))
				}
				if len(l.Items) == 0 || !l.InPos.IsValid() {
					f.noteValue(l.Name.Value, nil, false, f.text(c), f.pos(l.Name.Pos())) // "$@"
				}
			}
		case *syntax.CStyleLoop:
			f.arithm(l.Init)
			f.arithm(l.Cond)
			f.arithm(l.Post)
		}
		f.sc.dir.loop++
		f.stmts(c.Do)
		f.sc.dir.loop--
	case *syntax.CaseClause:
		f.word(c.Word, ctxPlain)
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				f.word(p, ctxPlain)
			}
			f.stmts(it.Stmts)
		}
	case *syntax.Block:
		f.stmts(c.Stmts)
	case *syntax.Subshell:
		f.in(f.sc.subshell()).stmts(c.Stmts)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			// Each side of a pipeline is its own process.
			x := f.in(f.sc.subshell())
			x.sc.bind(Binding{Fd: 1, Kind: "pipe"})
			if c.Op == syntax.PipeAll {
				x.sc.bind(Binding{Fd: 2, Kind: "pipe"})
			}
			x.stmt(c.X)
			y := f.in(f.sc.subshell())
			y.sc.bind(Binding{Fd: 0, Kind: "pipe"})
			y.stmt(c.Y)
			if f.a.lastpipe && changesDir(c.Y) {
				// Under lastpipe the last command runs in this shell.
				f.sc.dir.setUnknown("with lastpipe set, the last command of a pipeline runs in this shell, and it changes directory")
			}
		case syntax.AndStmt:
			n := len(f.sc.dir.steps)
			f.stmt(c.X)
			undo := f.sc.dir.certain(n)
			f.stmt(c.Y)
			undo()
		default:
			f.stmt(c.X)
			f.stmt(c.Y)
		}
	case *syntax.FuncDecl:
		name := "function"
		if c.Name != nil {
			name = "function " + c.Name.Value
		}
		body := f.in(f.sc.subshell())
		if f.a.anyCd {
			body.sc.dir.setUnknown(name + " runs in the directory it is called from")
		}
		body.with(name).stmt(c.Body)
		if changesDir(c.Body) {
			f.sc.dir.setUnknown(name + " changes directory when called")
		}
	case *syntax.ArithmCmd:
		f.arithm(c.X)
	case *syntax.TestClause:
		f.test(c.X)
	case *syntax.DeclClause:
		f.declClause(c)
	case *syntax.LetClause:
		f.letClause(c)
	case *syntax.TimeClause:
		f.with("time").stmt(c.Stmt)
	case *syntax.CoprocClause:
		f.word(c.Name, ctxPlain)
		if c.Name != nil {
			// coproc NAME sets the array NAME and NAME_PID.
			f.assignedName(c.Name.Lit(), f.text(c.Name), f.pos(c.Name.Pos()))
			f.assignedName(c.Name.Lit()+"_PID", f.text(c.Name), f.pos(c.Name.Pos()))
		}
		f.with("coproc").stmt(c.Stmt)
	case *syntax.TestDecl:
		f.word(c.Description, ctxPlain)
		f.with("@test").stmt(c.Body)
	default:
		// Fail closed on a construct from a newer parser.
		f.find(Block, fmt.Sprintf("unsupported shell construct %T", cmd), f.text(cmd), f.pos(cmd.Pos()))
	}
}

func (f *frame) arithm(x syntax.ArithmExpr) {
	switch x := x.(type) {
	case nil:
	case *syntax.BinaryArithm:
		if isArithAssign(x.Op) {
			f.arithAssign(x.X)
		}
		f.arithm(x.X)
		f.arithm(x.Y)
	case *syntax.UnaryArithm:
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			f.arithAssign(x.X)
		}
		f.arithm(x.X)
	case *syntax.ParenArithm:
		f.arithm(x.X)
	case *syntax.FlagsArithm:
		f.arithm(x.X)
	case *syntax.Word:
		f.arithWord(x)
		f.word(x, ctxPlain)
	}
}

func (f *frame) test(x syntax.TestExpr) {
	switch x := x.(type) {
	case nil:
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			// [[ ]] evaluates the operands of -eq and the like as
			// arithmetic.
			for _, o := range []syntax.TestExpr{x.X, x.Y} {
				if w, ok := o.(*syntax.Word); ok {
					f.arithWord(w)
				}
			}
		}
		f.test(x.X)
		f.test(x.Y)
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			if w, ok := x.X.(*syntax.Word); ok && hasExpansion(w) {
				f.find(Ask, "[[ -v ]] of a name not known until run time: a subscript in it runs commands", f.text(w), f.pos(w.Pos()))
			} else if ok {
				if v, static := staticText(w); static {
					f.nameWord(v, f.text(w), f.pos(w.Pos()))
				}
			}
		}
		f.test(x.X)
	case *syntax.ParenTest:
		f.test(x.X)
	case *syntax.Word:
		f.word(x, ctxPlain)
	}
}

func (f *frame) cmdSubst(c *syntax.CmdSubst) {
	if f.seen[c] {
		return
	}
	f.seen[c] = true
	via := "$(...)"
	switch {
	case c.Backquotes:
		via = "`...`"
	case c.TempFile:
		via = "${ ...;}"
	case c.ReplyVar:
		via = "${|...;}"
	}
	g := f.in(f.sc.subshell())
	g.sc.bind(Binding{Fd: 1, Kind: "pipe"})
	g.with(via).stmts(c.Stmts)
}

func (f *frame) procSubst(p *syntax.ProcSubst) {
	if f.seen[p] {
		return
	}
	f.seen[p] = true
	via := "<(...)"
	switch p.Op {
	case syntax.CmdOut:
		via = ">(...)"
	case syntax.CmdInTemp:
		via = "=(...)"
	}
	g := f.in(f.sc.subshell())
	if p.Op == syntax.CmdOut {
		g.sc.bind(Binding{Fd: 0, Kind: "pipe"})
	} else {
		g.sc.bind(Binding{Fd: 1, Kind: "pipe"})
	}
	g.with(via).stmts(p.Stmts)
}

func (f *frame) paramExp(p *syntax.ParamExp) {
	if p.Excl && p.Names == 0 && !keysIndex(p.Index) || p.Flags != nil && strings.Contains(p.Flags.Value, "P") {
		// ${!name}, zsh's ${(P)name}: the value of name is a variable
		// reference, whose subscript bash evaluates (${!a[@]} lists
		// a's keys instead).
		f.indirectUse(p)
	}
	if p.NestedParam != nil {
		var a acc
		f.part(p.NestedParam, quoteNone, ctxPlain, &a)
	}
	if p.Param != nil {
		f.subscript(p.Param.Value, p.Index)
	} else {
		f.arithm(p.Index)
	}
	if p.Slice != nil {
		f.arithm(p.Slice.Offset)
		f.arithm(p.Slice.Length)
	}
	if p.Repl != nil {
		f.word(p.Repl.Orig, ctxPlain)
		f.word(p.Repl.With, ctxPlain)
	}
	if p.Exp == nil {
		return
	}
	f.word(p.Exp.Word, ctxPlain)
	switch p.Exp.Op {
	case syntax.AssignUnset, syntax.AssignUnsetOrNull:
		if p.Param != nil {
			f.assignedName(p.Param.Value, f.text(p), f.pos(p.Pos()))
		}
	case syntax.OtherParamOps:
		if p.Exp.Word != nil && strings.Contains(p.Exp.Word.Lit(), "P") {
			f.find(Ask, "${var@P} expands the value as a prompt string, which can run commands: "+f.text(p), f.text(p), f.pos(p.Pos()))
		}
	}
}

// extGlob looks for substitutions inside an extended glob: the parser
// keeps the pattern as raw text, but bash expands $(...) in it.
func (f *frame) extGlob(g *syntax.ExtGlob) {
	if f.seen[g] {
		return
	}
	f.seen[g] = true
	if g.Pattern == nil || !strings.ContainsAny(g.Pattern.Value, "$`") {
		return
	}
	f.walkText(g.Pattern.Value, f.pos(g.Pos()), "extended glob holds an expansion that does not parse: "+f.text(g))
}

// walkText walks text the parser kept as a literal but bash expands like
// a here-document body, reporting its substitutions at pos. Text that does
// not parse asks with reason.
func (f *frame) walkText(text string, pos Pos, reason string) {
	w, err := syntax.NewParser(syntax.Variant(f.lang)).Document(strings.NewReader(text))
	if err != nil {
		f.find(Ask, reason, excerpt(text, 0), pos)
		return
	}
	sub := *f
	sub.src = text
	sub.anchor = &pos
	sub.seen = map[syntax.Node]bool{}
	var a acc
	for _, p := range w.Parts {
		sub.part(p, quoteHeredoc, ctxPlain, &a)
	}
	sub.sweep(w)
}

// assignedName reports an assignment to a variable that changes what
// runs.
func (f *frame) assignedName(name, text string, pos Pos) {
	f.assignedValue(name, nil, text, pos)
}

// assignedNumber is assignedName for a value that is a number (an
// arithmetic assignment, a descriptor).
func (f *frame) assignedNumber(name, text string, pos Pos) {
	f.checkAssign(name, nil, text, pos)
	f.noteValue(name, nil, true, text, pos)
}

// assignedValue is assignedName where the value assigned is known (nil
// when it is not): a locale variable asks unless its value is a static
// SafeLocale name.
func (f *frame) assignedValue(name string, v *Word, text string, pos Pos) {
	f.checkAssign(name, v, text, pos)
	f.noteValue(name, v, false, text, pos)
}

// checkAssign judges an assignment to name of v (nil when not known).
func (f *frame) checkAssign(name string, v *Word, text string, pos Pos) {
	if _, ok := cmdsem.OptionVariable(name); ok {
		var val *cmdsem.Arg
		if v != nil {
			val = &cmdsem.Arg{Value: v.Value, Static: v.Static()}
		}
		if why := cmdsem.OptionEffects(name, val); why != "" {
			f.find(Ask, why, text, pos)
		}
		return
	}
	if DangerousVariable(name) {
		f.find(Ask, fmt.Sprintf("assignment to %s can change what runs", name), text, pos)
		return
	}
	if LocaleVariable(name) && (v == nil || !v.Static() || !SafeLocale(v.Value)) {
		f.find(Ask, fmt.Sprintf("assignment to %s may choose a character set in which bash and programs read bytes differently from guardrun (only C, POSIX and names with a UTF-8, ASCII, ISO-8859, KOI8, CP125x or EUC codeset are known safe)", name), text, pos)
	}
}

// assigns evaluates assignments written before a command or alone.
func (f *frame) assigns(list []*syntax.Assign) []Assign {
	var out []Assign
	for _, as := range list {
		if as == nil || as.Name == nil {
			continue
		}
		f.subscript(as.Name.Value, as.Index)
		pos := f.pos(as.Pos())
		var v Word
		switch {
		case as.Array != nil:
			v = f.arrayValue(as.Name.Value, as.Array)
		case as.Value != nil:
			v = f.word(as.Value, ctxAssign).Word
		default:
			v = Word{Pos: pos}
		}
		switch {
		case as.Append || as.Array != nil || as.Index != nil:
			f.assignedName(as.Name.Value, f.text(as), pos)
		case numberWord(as.Value):
			f.checkAssign(as.Name.Value, &v, f.text(as), pos)
			f.noteValue(as.Name.Value, nil, true, f.text(as), pos)
		default:
			f.assignedValue(as.Name.Value, &v, f.text(as), pos)
		}
		out = append(out, Assign{Name: as.Name.Value, Value: v, Pos: pos})
	}
	return out
}

func (f *frame) arrayValue(name string, arr *syntax.ArrayExpr) Word {
	w := Word{Source: f.text(arr), Pos: f.pos(arr.Pos())}
	var vals []string
	for _, e := range arr.Elems {
		if e == nil {
			continue
		}
		f.subscript(name, e.Index)
		for _, v := range f.words(e.Value, ctxArg) {
			vals = append(vals, v.Value)
			w.Dynamic = w.Dynamic || v.Dynamic
			w.Glob = w.Glob || v.Glob
			w.Split = w.Split || v.Split
		}
	}
	w.Value = strings.Join(vals, " ")
	return w
}

// callExpr handles a simple command with the redirections of its
// statement.
func (f *frame) callExpr(ce *syntax.CallExpr, redirs []*syntax.Redirect) {
	f.seen[ce] = true
	assigns := f.assigns(ce.Assigns)
	var args []wval
	for _, w := range ce.Args {
		args = append(args, f.words(w, ctxArg)...)
	}
	// Redirections bind descriptors for this command only, except a
	// bare exec, whose bindings stay for the rest of the shell.
	g := f
	if len(args) != 1 || !args[0].Static() || args[0].Value != "exec" {
		g = f.in(f.sc.child())
	}
	in := g.redirs(redirs)
	if len(args) == 0 {
		return
	}
	start, end := f.stmtSpan(ce, redirs)
	g.emit(call{
		args:    args,
		assigns: assigns,
		via:     f.via,
		stdin:   in,
		pos:     f.pos(ce.Pos()),
		start:   start,
		end:     end,
	})
}

// stmtSpan is the source range of a command and its redirections, up to
// (not including) here-document bodies.
func (f *frame) stmtSpan(n syntax.Node, redirs []*syntax.Redirect) (uint, uint) {
	start, end := f.offsets(n.Pos(), safeEnd(n))
	for _, r := range redirs {
		var rend syntax.Pos
		if r.Word != nil && len(r.Word.Parts) > 0 {
			rend = r.Word.End()
		} else {
			rend = r.OpPos
		}
		s, e := f.offsets(r.Pos(), rend)
		start, end = min(start, s), max(end, e)
	}
	return start, end
}

// declClause reports declare, local, export, readonly, typeset and
// nameref as commands so that the assignments they make are checked like
// any other.
func (f *frame) declClause(d *syntax.DeclClause) {
	if d.Variant == nil {
		return
	}
	start, end := f.stmtSpan(d, nil)
	vs, ve := f.offsets(d.Variant.Pos(), d.Variant.End())
	args := []wval{{
		Word:  Word{Value: d.Variant.Value, Source: d.Variant.Value, Pos: f.pos(d.Variant.Pos())},
		tmpl:  d.Variant.Value,
		start: vs, end: ve,
	}}
	// declare -A m=([k]=v): the keys are strings, known before the
	// values are walked.
	assoc := false
	for _, as := range d.Args {
		if as != nil && as.Naked && as.Value != nil {
			if v, ok := staticText(as.Value); ok && strings.HasPrefix(v, "-") && strings.Contains(v, "A") {
				assoc = true
			}
		}
		if assoc && as != nil && as.Name != nil {
			f.noteAssoc(as.Name.Value)
		}
	}
	for _, as := range d.Args {
		if as == nil {
			continue
		}
		if as.Name != nil {
			f.subscript(as.Name.Value, as.Index)
		} else {
			f.arithm(as.Index)
		}
		s, e := f.offsets(as.Pos(), safeEnd(as))
		src := f.src[s:e]
		switch {
		case as.Naked && as.Value != nil:
			// An option or a word the parser could not read as NAME.
			args = append(args, f.words(as.Value, ctxArg)...)
		case as.Naked && as.Name != nil:
			args = append(args, wval{
				Word: Word{Value: as.Name.Value, Source: src, Pos: f.pos(as.Pos())},
				tmpl: as.Name.Value, start: s, end: e,
			})
		case as.Name != nil:
			var v Word
			if as.Array != nil {
				v = f.arrayValue(as.Name.Value, as.Array)
			} else if as.Value != nil {
				v = f.word(as.Value, ctxAssign).Word
			}
			number := as.Array == nil && numberWord(as.Value)
			op := "="
			if as.Append {
				op = "+="
			}
			name := as.Name.Value
			if as.Index != nil {
				name += "[" + f.text(as.Index) + "]"
			}
			args = append(args, wval{
				Word: Word{
					Value:   name + op + v.Value,
					Source:  src,
					Dynamic: v.Dynamic,
					Glob:    false,
					Pos:     f.pos(as.Pos()),
				},
				tmpl:  src,
				start: s, end: e,
				number: number,
			})
		}
	}
	f.emit(call{
		args:  args,
		via:   f.via,
		pos:   f.pos(d.Pos()),
		start: start,
		end:   end,
	})
}

// letClause reports let as a command; its expressions are arithmetic.
func (f *frame) letClause(l *syntax.LetClause) {
	start, end := f.stmtSpan(l, nil)
	args := []wval{{
		Word:  Word{Value: "let", Source: "let", Pos: f.pos(l.Pos())},
		tmpl:  "let",
		start: start, end: start + 3,
	}}
	for _, x := range l.Exprs {
		f.arithm(x)
		s, e := f.offsets(x.Pos(), safeEnd(x))
		src := f.src[s:e]
		args = append(args, wval{
			Word:  Word{Value: src, Source: src, Dynamic: strings.ContainsAny(src, "$`"), Pos: f.pos(x.Pos())},
			tmpl:  src,
			start: s, end: e,
		})
	}
	f.emit(call{args: args, via: f.via, pos: f.pos(l.Pos()), start: start, end: end})
}

// stdin is what a command reads on file descriptor 0, as far as the
// redirections of its own statement tell.
type stdin struct {
	kind stdinKind
	word wval // the body of a here-document or here-string, or the file
}

type stdinKind int

const (
	stdinInherited stdinKind = iota // a pipe, the terminal, whatever the caller gave
	stdinHeredoc
	stdinHereString
	stdinFile
)

// redirs records file operations and returns what fd 0 reads.
func (f *frame) redirs(rs []*syntax.Redirect) stdin {
	var in stdin
	for _, r := range rs {
		if r == nil {
			continue
		}
		fd, named := -1, false
		if r.N != nil {
			if n, ok := atoi(r.N.Value); ok {
				fd = n
			} else {
				named = true // {var}>file allocates a descriptor
				f.assignedNumber(strings.Trim(r.N.Value, "{}"), f.text(r), f.pos(r.Pos()))
			}
		}
		def := func(d int) int {
			if fd < 0 && !named {
				return d
			}
			return fd
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			f.markDelimiter(r.Word)
			if f.heredocAmbiguous(r) {
				f.find(Ask, "a line of the here-document starts with its delimiter (followed by an operator, as EOF) inside $(...), or once backslash-newlines are joined), where bash may end it and read the lines after it as commands", f.text(r.Word), f.pos(r.Pos()))
			}
			body := f.heredoc(r)
			if !named {
				f.sc.bind(Binding{Fd: def(0), Kind: "pipe"})
			}
			if def(0) == 0 {
				in = stdin{kind: stdinHeredoc, word: body}
			}
		case syntax.WordHdoc:
			w := f.word(r.Word, ctxPlain)
			w.Value += "\n"
			w.tmpl += "\n"
			if !named {
				f.sc.bind(Binding{Fd: def(0), Kind: "pipe"})
			}
			if def(0) == 0 {
				in = stdin{kind: stdinHereString, word: w}
			}
		case syntax.RdrIn:
			for _, w := range f.words(r.Word, ctxRedir) {
				f.fileOp(OpRead, w, def(0), r)
				if !named {
					f.bindRedirect(def(0), OpRead, w, "file")
				}
				if def(0) == 0 {
					in = stdin{kind: stdinFile, word: w}
				}
			}
		case syntax.DplIn, syntax.DplOut:
			for _, w := range f.words(r.Word, ctxRedir) {
				if w.Static() && isFdTarget(w.Value) {
					if !named {
						d := def(1)
						if r.Op == syntax.DplIn {
							d = def(0)
						}
						f.bindDup(d, w.Value)
					}
					if r.Op == syntax.DplIn && def(0) == 0 {
						in = stdin{} // another descriptor: unknown content
					}
					continue
				}
				if r.Op == syntax.DplIn {
					f.fileOp(OpRead, w, def(0), r)
					if !named {
						f.bindRedirect(def(0), OpRead, w, "file")
					}
					if def(0) == 0 {
						in = stdin{kind: stdinFile, word: w}
					}
				} else {
					f.fileOp(OpWrite, w, def(1), r)
					if !named {
						f.bindRedirect(def(1), OpWrite, w, "file")
					}
				}
			}
		case syntax.RdrInOut:
			for _, w := range f.words(r.Word, ctxRedir) {
				f.fileOp(OpWrite, w, def(0), r)
				if !named {
					f.bindRedirect(def(0), OpWrite, w, "file")
				}
				if def(0) == 0 {
					in = stdin{kind: stdinFile, word: w}
				}
			}
		default:
			// >, >>, >|, &>, &>>, and zsh's clobbering forms.
			for _, w := range f.words(r.Word, ctxRedir) {
				f.fileOp(OpWrite, w, def(1), r)
				if !named {
					f.bindRedirect(def(1), OpWrite, w, "file")
					if r.Op == syntax.RdrAll || r.Op == syntax.AppAll {
						f.bindRedirect(2, OpWrite, w, "file")
					}
				}
			}
		}
	}
	return in
}

func (f *frame) fileOp(op Op, w wval, fd int, r *syntax.Redirect) {
	s, e := f.offsets(r.Pos(), safeEnd(r.Word))
	if !f.admit(int(e-s) + len(w.Source)) {
		return
	}
	f.a.out.Files = append(f.a.out.Files, FileOp{
		Op:    op,
		Path:  w.Word,
		Fd:    fd,
		Via:   f.via,
		Text:  f.src[s:e],
		Pos:   f.pos(r.Pos()),
		Dir:   f.sc.snapshot(),
		Bound: f.fdBinding(w.Word),
	})
}

// markDelimiter keeps the sweep from reporting substitutions the parser
// found in a here-document delimiter: bash never expands it.
func (f *frame) markDelimiter(w *syntax.Word) {
	if w == nil {
		return
	}
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.CallExpr, *syntax.ExtGlob:
			f.seen[n] = true
		}
		return true
	})
}

// heredoc evaluates a here-document body. With a quoted delimiter the
// body is literal text; otherwise it undergoes expansions like a
// double-quoted string.
func (f *frame) heredoc(r *syntax.Redirect) wval {
	var out wval
	if r.Word != nil && len(r.Word.Parts) > 0 {
		out.Pos = f.pos(r.Word.Pos())
	} else {
		out.Pos = f.pos(r.OpPos)
	}
	if r.Hdoc == nil || len(r.Hdoc.Parts) == 0 {
		return out
	}
	out.start, out.end = f.offsets(r.Hdoc.Pos(), r.Hdoc.End())
	out.Source = f.src[out.start:out.end]
	// The parser's end position for a body runs over the closing
	// delimiter line; the body is everything before it.
	if !strings.HasSuffix(out.Source, "\n") {
		out.Source = out.Source[:strings.LastIndexByte(out.Source, '\n')+1]
		out.end = out.start + uint(len(out.Source))
	}
	out.Pos = f.pos(r.Hdoc.Pos())
	if quotedDelimiter(r.Word) {
		var b strings.Builder
		for _, p := range r.Hdoc.Parts {
			if l, ok := p.(*syntax.Lit); ok {
				b.WriteString(l.Value)
			}
		}
		out.Value, out.tmpl = b.String(), b.String()
		return out
	}
	var a acc
	for _, p := range r.Hdoc.Parts {
		f.part(p, quoteHeredoc, ctxPlain, &a)
	}
	out.Value, out.tmpl, out.Dynamic = a.val.String(), a.tmpl.String(), a.dynamic
	return out
}

func quotedDelimiter(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				return true
			}
		}
	}
	return false
}

// isFdTarget reports the target of a descriptor duplication: a number,
// -, or a number followed by - (move).
func isFdTarget(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-")
	_, ok := atoi(s)
	return ok
}

func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}
