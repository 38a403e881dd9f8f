package shellparse

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// wordCtx is where a word appears, which decides the expansions bash
// applies to it.
type wordCtx int

const (
	// ctxArg: a command argument. Brace expansion, field splitting and
	// pathname expansion all apply.
	ctxArg wordCtx = iota
	// ctxRedir: a redirection target. Brace and pathname expansion apply
	// (bash uses a single result), field splitting makes it ambiguous.
	ctxRedir
	// ctxAssign: an assignment value. No splitting or globbing; ~ expands
	// after = and after every unquoted :.
	ctxAssign
	// ctxPlain: [[ ]] operands, case words and patterns, parameter
	// expansion operands, arithmetic. Only the substitutions matter.
	ctxPlain
)

// quoteLevel is the quoting a word part sits in.
type quoteLevel int

const (
	quoteNone quoteLevel = iota
	quoteDouble
	quoteHeredoc
)

// maxBraceWords bounds brace expansion per word, and maxBraceTotal per
// analysis: bash would expand {1..100000000}, but nothing useful comes
// from reporting it word by word, and the word is flagged instead.
const (
	maxBraceWords = 1024
	maxBraceTotal = 16384
)

// wval is an evaluated word with the offsets of its source in the
// frame's text, so that a wrapped command's text can be sliced out.
type wval struct {
	Word
	// tmpl is the word's value if every expansion expanded to its own
	// source text. Code built from a dynamic word (eval "rm $x") is
	// parsed from it on a best-effort basis.
	tmpl       string
	start, end uint
	// number: an assignment's value that is always a number ($((...)),
	// $#), for the arithmetic checks.
	number bool
}

// acc accumulates one word while its parts are walked.
type acc struct {
	val     strings.Builder // static prefix
	tmpl    strings.Builder
	dynamic bool
	glob    bool
	split   bool
	bracket bool // an unquoted [ was seen, so a later ] makes a glob
}

func (a *acc) lit(s string) {
	if !a.dynamic {
		a.val.WriteString(s)
	}
	a.tmpl.WriteString(s)
}

func (a *acc) dyn(src string) {
	a.dynamic = true
	if hasSubst(src) {
		// The walker has already reported this expansion's commands;
		// code re-read from tmpl must not find (and walk) them again,
		// which nested eval "$(eval "$(...)")" would make exponential.
		src = substPlaceholder
	}
	a.tmpl.WriteString(src)
}

// dynSubst records a command or process substitution, without looking
// at (or copying) its text, which holds every level nested in it.
func (a *acc) dynSubst() {
	a.dynamic = true
	a.tmpl.WriteString(substPlaceholder)
}

// substPlaceholder stands for an expansion that runs commands when dynamic
// text is read as code on a best-effort basis.
const substPlaceholder = "${__subst__}"

func hasSubst(s string) bool {
	return strings.Contains(s, "$(") || strings.Contains(s, "`") ||
		strings.Contains(s, "<(") || strings.Contains(s, ">(")
}

// words evaluates a word in the given context. Brace expansion can turn
// one source word into several argv words; every other expansion that
// depends on run time is recorded in the flags, not performed.
func (f *frame) words(w *syntax.Word, ctx wordCtx) []wval {
	if w == nil || len(w.Parts) == 0 {
		return nil
	}
	start, end := f.offsets(w.Pos(), safeEnd(w))
	src := f.src[start:end]
	pos := f.pos(w.Pos())

	alts := [][]syntax.WordPart{w.Parts}
	if ctx == ctxArg || ctx == ctxRedir {
		cp := &syntax.Word{Parts: slices.Clone(w.Parts)}
		if syntax.SplitBraces(cp) {
			var ok bool
			// A word that does not expand always fits.
			limit := min(maxBraceWords, f.a.braceBudget+1)
			var reread bool
			alts, ok, reread = expandBraces(cp.Parts, limit)
			if ok && len(alts) > 1 {
				f.a.braceBudget = max(0, f.a.braceBudget-len(alts))
			} else if !ok {
				why := fmt.Sprintf("brace expansion of %s is too large to follow (more than %d words)", src, limit)
				if reread {
					// {a..Z..5} makes a \ that quotes what follows it,
					// {Z..a} a ` that starts a command substitution.
					why = fmt.Sprintf("brace expansion of %s makes a \\ or a ` that bash reads again as quoting or a command substitution", src)
				}
				f.find(Ask, why, src, pos)
				alts = [][]syntax.WordPart{w.Parts}
				out := f.evalParts(alts[0], ctx)
				out.Source, out.Pos, out.start, out.end = src, pos, start, end
				out.Split, out.Glob = true, true
				return []wval{out}
			}
		}
	}
	out := make([]wval, 0, len(alts))
	for _, parts := range alts {
		if len(alts) > 1 && ctx == ctxArg && emptyUnquoted(parts) {
			// bash drops the empty words brace expansion yields:
			// {,rm} -rf x runs rm -rf x.
			continue
		}
		v := f.evalParts(parts, ctx)
		v.Source, v.Pos, v.start, v.end = src, pos, start, end
		out = append(out, v)
	}
	return out
}

// word evaluates a word where brace expansion does not apply and returns
// the single result (or a zero value for an empty word).
func (f *frame) word(w *syntax.Word, ctx wordCtx) wval {
	ws := f.words(w, ctx)
	if len(ws) == 0 {
		return wval{}
	}
	return ws[0]
}

func (f *frame) evalParts(parts []syntax.WordPart, ctx wordCtx) wval {
	var a acc
	for i, p := range parts {
		if lit, ok := p.(*syntax.Lit); ok && i == 0 && ctx == ctxArg && f.lang == syntax.LangZsh && zshEquals(lit.Value) {
			// zsh replaces =name with the path of the command name.
			f.unquotedLit(lit.Value[1:], ctx, &a)
			continue
		}
		if lit, ok := p.(*syntax.Lit); ok && i == 0 && ctx != ctxPlain && strings.HasPrefix(lit.Value, "~") {
			rest, ok := f.tilde(lit.Value, len(parts) == 1, &a)
			if ok {
				f.unquotedLit(rest, ctx, &a)
				continue
			}
		}
		f.part(p, quoteNone, ctx, &a)
	}
	return wval{Word: Word{
		Value:   a.val.String(),
		Dynamic: a.dynamic,
		Glob:    a.glob,
		Split:   a.split,
	}, tmpl: a.tmpl.String()}
}

func zshEquals(s string) bool {
	return len(s) > 1 && s[0] == '=' && (s[1] == '_' || s[1] >= 'a' && s[1] <= 'z' || s[1] >= 'A' && s[1] <= 'Z')
}

// tilde handles a leading tilde prefix in an unquoted literal. It reports
// false when the prefix is not one bash would expand.
func (f *frame) tilde(s string, last bool, a *acc) (rest string, ok bool) {
	prefix, rest, found := strings.Cut(s, "/")
	if !found {
		if !last {
			// The tilde prefix runs into a quoted or expanded part, so
			// bash leaves it alone.
			return "", false
		}
		rest = ""
	} else {
		rest = "/" + rest
	}
	if strings.ContainsAny(prefix, `\'"$`+"`") {
		return "", false
	}
	if prefix == "~" && f.a.opts.Home != "" {
		a.lit(f.a.opts.Home)
		return rest, true
	}
	// ~user, ~+, ~- and ~ without a known home are all run-time values.
	a.dyn(prefix)
	return rest, true
}

func (f *frame) part(p syntax.WordPart, q quoteLevel, ctx wordCtx, a *acc) {
	unquoted := q == quoteNone
	splits := unquoted && (ctx == ctxArg || ctx == ctxRedir)
	switch p := p.(type) {
	case *syntax.Lit:
		switch q {
		case quoteNone:
			f.unquotedLit(p.Value, ctx, a)
		case quoteDouble:
			a.lit(unescape(p.Value, "$`\"\\\n"))
		case quoteHeredoc:
			a.lit(unescape(p.Value, "$`\\\n"))
		}
	case *syntax.SglQuoted:
		if p.Dollar {
			a.lit(ansiC(p.Value))
		} else {
			a.lit(p.Value)
		}
	case *syntax.DblQuoted:
		for _, dp := range p.Parts {
			f.part(dp, quoteDouble, ctx, a)
		}
	case *syntax.ParamExp:
		a.dyn(f.text(p))
		if splits || (ctx == ctxArg && multiField(p)) {
			a.split = true
		}
		f.paramExp(p)
		if q != quoteNone {
			f.quotedOperands(p)
		}
	case *syntax.CmdSubst:
		a.dynSubst()
		if splits {
			a.split = true
		}
		f.cmdSubst(p)
	case *syntax.ArithmExp:
		a.dyn(f.text(p))
		if splits {
			a.split = true
		}
		f.arithm(p.X)
	case *syntax.ProcSubst:
		a.dynSubst()
		f.procSubst(p)
	case *syntax.ExtGlob:
		src := f.text(p)
		if ctx == ctxArg || ctx == ctxRedir {
			a.glob = true
		}
		if p.Pattern != nil && strings.ContainsAny(p.Pattern.Value, "$`") {
			a.dyn(src)
		} else {
			a.lit(src)
		}
		f.extGlob(p)
	case *syntax.BraceExp:
		// Only left when brace expansion gave up; the word is flagged.
		a.dyn(f.text(p))
		a.split, a.glob = true, true
	default:
		// A part this package does not know: never treat it as static.
		a.dyn(fmt.Sprintf("%T", p))
		a.split = true
	}
}

// unquotedLit removes backslash quoting and notes glob characters.
func (f *frame) unquotedLit(s string, ctx wordCtx, a *acc) {
	globs := ctx == ctxArg || ctx == ctxRedir
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			// A backslash at the very end quotes nothing and stands for
			// itself, as in bash.
			if i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
			continue
		case !globs:
		case c == '*' || c == '?':
			a.glob = true
		case c == '[':
			a.bracket = true
		case c == ']' && a.bracket:
			a.glob = true
		}
		if ctx == ctxAssign && c == ':' && i+1 < len(s) && s[i+1] == '~' {
			// PATH-style assignments expand ~ after every colon.
			b.WriteByte(c)
			a.lit(b.String())
			b.Reset()
			seg := s[i+1:]
			if j := strings.IndexAny(seg, ":/"); j >= 0 {
				seg = seg[:j]
			}
			if seg == "~" && f.a.opts.Home != "" {
				a.lit(f.a.opts.Home)
			} else {
				a.dyn(seg)
			}
			i += len(seg)
			continue
		}
		b.WriteByte(c)
	}
	a.lit(b.String())
}

// multiField reports a quoted expansion that still yields several
// words: "$@", "${a[@]}", "${!prefix@}".
func multiField(p *syntax.ParamExp) bool {
	if p.Param != nil && p.Param.Value == "@" {
		return true
	}
	if p.Names == syntax.NamesPrefixWords {
		return true
	}
	if w, ok := p.Index.(*syntax.Word); ok && w.Lit() == "@" {
		return true
	}
	return false
}

// unescape drops a backslash before any byte in special, as bash does
// inside double quotes and unquoted here-documents.
func unescape(s, special string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(special, s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes the escapes of a $'...' string the way bash does,
// including the cut at the first NUL.
func ansiC(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'x', 'u', 'U':
			digits := 2
			switch e {
			case 'u':
				digits = 4
			case 'U':
				digits = 8
			}
			j := i + 1
			for j < len(s) && j-i-1 < digits && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else if n <= utf8.MaxRune {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			} else {
				b.WriteString(`\c`)
			}
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	out, _, _ := strings.Cut(b.String(), "\x00")
	return out
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// expandBraces performs bash brace expansion on parts prepared by
// syntax.SplitBraces. It reports false when the result would exceed
// limit words, or (reread) when a character sequence makes a character
// bash reads again rather than as itself.
func expandBraces(parts []syntax.WordPart, limit int) (out [][]syntax.WordPart, ok, reread bool) {
	ok = braceRec(nil, parts, limit, &out, &reread)
	return out, ok, reread
}

func braceRec(left, parts []syntax.WordPart, limit int, out *[][]syntax.WordPart, reread *bool) bool {
	for i, p := range parts {
		br, isBrace := p.(*syntax.BraceExp)
		if !isBrace {
			continue
		}
		head := slices.Concat(left, parts[:i])
		rest := parts[i+1:]
		alts, ok := braceAlternatives(br, limit, reread)
		if !ok {
			return false
		}
		for _, alt := range alts {
			if !braceRec(head, slices.Concat(alt, rest), limit, out, reread) {
				return false
			}
		}
		return true
	}
	if len(*out) >= limit {
		return false
	}
	*out = append(*out, slices.Concat(left, parts))
	return true
}

// braceAlternatives are the words one brace makes. A character sequence
// spanning Z to a makes the characters between, of which bash reads a
// backslash as quoting the character after it and a backquote as the
// start of a command substitution (x{a..Z..5}y is xay xy): such a
// sequence is not followed (reread).
func braceAlternatives(br *syntax.BraceExp, limit int, reread *bool) ([][]syntax.WordPart, bool) {
	if !br.Sequence {
		alts := make([][]syntax.WordPart, 0, len(br.Elems))
		for _, e := range br.Elems {
			if e == nil {
				alts = append(alts, nil)
				continue
			}
			alts = append(alts, e.Parts)
		}
		return alts, true
	}
	if len(br.Elems) < 2 {
		return nil, false
	}
	fromLit, toLit := br.Elems[0].Lit(), br.Elems[1].Lit()
	if fromLit == "" || toLit == "" {
		return nil, false
	}
	chars := false
	from, err1 := strconv.ParseInt(fromLit, 10, 64)
	to, err2 := strconv.ParseInt(toLit, 10, 64)
	if err1 != nil || err2 != nil {
		chars = true
		from, to = int64(fromLit[0]), int64(toLit[0])
	}
	width := 0
	if !chars && (leadingZero(fromLit) || leadingZero(toLit)) {
		width = max(len(fromLit), len(toLit))
	}
	incr := int64(1)
	if len(br.Elems) > 2 {
		if n, err := strconv.ParseInt(br.Elems[2].Lit(), 10, 64); err == nil && n != 0 {
			incr = max(n, -n)
		}
	}
	span := to - from
	if span < 0 {
		span, incr = -span, -incr
	}
	if span < 0 || span/max(incr, -incr) >= int64(limit) {
		return nil, false
	}
	var alts [][]syntax.WordPart
	for n := from; (incr > 0 && n <= to) || (incr < 0 && n >= to); n += incr {
		var v string
		switch {
		case chars && (n == '\\' || n == '`'):
			*reread = true
			return nil, false
		case chars:
			v = string(rune(n))
		case width > 0:
			v = fmt.Sprintf("%0*d", width, n)
		default:
			v = strconv.FormatInt(n, 10)
		}
		alts = append(alts, []syntax.WordPart{&syntax.Lit{Value: v}})
	}
	return alts, true
}

func leadingZero(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return len(s) > 1 && s[0] == '0'
}

// nameWord judges a static word bash reads as a variable name (read,
// printf -v, declare, unset, test -v, [[ -v ]]): the subscript of an
// indexed array's element is evaluated as arithmetic, so a command
// substitution in it runs (printf -v 'a[$(cmd)]' x).
func (f *frame) nameWord(value, text string, pos Pos) {
	k := strings.IndexByte(value, '[')
	if k < 0 {
		return
	}
	sub := strings.TrimSuffix(value[k+1:], "]")
	if e := strings.LastIndexByte(value, ']'); e > k {
		sub = value[k+1 : e]
	}
	f.arithText(sub, excerpt(text, 0), pos)
}

// emptyUnquoted reports parts that expand to nothing at all: no
// characters and no quotes (an empty quoted string is still a word).
func emptyUnquoted(parts []syntax.WordPart) bool {
	for _, p := range parts {
		l, ok := p.(*syntax.Lit)
		if !ok || l.Value != "" {
			return false
		}
	}
	return true
}
