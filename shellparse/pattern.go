package shellparse

import (
	"errors"
	"fmt"
	"iter"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// SplitPattern splits a rule pattern such as `git commit` or `"a b" *`
// into words with the same parser that reads commands, so quoting means
// the same in both. Each word is returned as a pattern for
// mvdan.cc/sh/v3/pattern: unquoted *, ? and [...] are globs, quoted or
// backslash-escaped ones are escaped and match themselves. Extended globs
// such as @(a|b) are passed through and need pattern.ExtendedOperators.
// A leading ~ is not expanded.
//
// Patterns holding expansions ($x, $(...), `...`), operators, redirections,
// assignments, compound commands or more than one command are errors, as
// is an empty pattern.
func SplitPattern(pat string, lang syntax.LangVariant) ([]string, error) {
	return splitPattern(pat, lang, false)
}

// splitPattern is SplitPattern; reread reads a simple command's words
// again as plain words, as every shape is read (the tests compare both).
func splitPattern(pat string, lang syntax.LangVariant, reread bool) ([]string, error) {
	if strings.TrimSpace(pat) == "" {
		return nil, errors.New("empty pattern")
	}
	lang = dialect(lang)
	file, err := parseFile(pat, lang)
	if err != nil {
		return nil, fmt.Errorf("pattern does not parse: %w", toParseError(err))
	}
	if err := checkPatternShape(file); err != nil {
		return nil, err
	}
	// A simple command's words are the ones the parser has just read;
	// the other shapes (export, declare, let ...), whose words the parser
	// reads its own way, are read again as plain words.
	if c, ok := file.Stmts[0].Cmd.(*syntax.CallExpr); ok && !reread {
		return patternWords(func(yield func(*syntax.Word, error) bool) {
			for _, w := range c.Args {
				if !yield(w, nil) {
					return
				}
			}
		}, pat)
	}
	p := getParser(lang)
	defer putParser(lang, p)
	return patternWords(p.WordsSeq(strings.NewReader(pat)), pat)
}

// patternWords turns the words of pattern pat into globs, each checked.
func patternWords(words iter.Seq2[*syntax.Word, error], pat string) ([]string, error) {
	var out []string
	for w, err := range words {
		if err != nil {
			return nil, fmt.Errorf("pattern does not parse: %w", toParseError(err))
		}
		g, err := globWord(w, pat)
		if err != nil {
			return nil, err
		}
		if _, err := CompileWord(g); err != nil {
			var neg *pattern.NegExtGlobError
			if errors.As(err, &neg) {
				return nil, fmt.Errorf("invalid glob %q: negated extended globs !(...) are not supported in a pattern (quote it to match it literally)", g)
			}
			return nil, fmt.Errorf("invalid glob %q: %v", g, err)
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		return nil, errors.New("empty pattern")
	}
	return out, nil
}

func checkPatternShape(file *syntax.File) error {
	switch len(file.Stmts) {
	case 0:
		return errors.New("empty pattern")
	case 1:
	default:
		return errors.New("a pattern must be one command; it has more than one (newline or ;)")
	}
	st := file.Stmts[0]
	switch {
	case st.Negated:
		//lint:ignore ST1005 the ! is the operator named, not punctuation
		return errors.New("operators are not allowed in a pattern: !")
	case st.Background, st.Coprocess, st.Disown:
		return errors.New("operators are not allowed in a pattern: &")
	case st.Semicolon.IsValid():
		return errors.New("operators are not allowed in a pattern: ;")
	case len(st.Redirs) > 0:
		return errors.New("redirections are not allowed in a pattern")
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Assigns) > 0 {
			return errors.New("assignments are not allowed in a pattern: it matches the command's words")
		}
	case *syntax.DeclClause, *syntax.LetClause:
		// export, declare, let ...: builtins the parser reads specially.
	case *syntax.BinaryCmd:
		return fmt.Errorf("operators are not allowed in a pattern: %s", c.Op)
	case nil:
		return errors.New("empty pattern")
	default:
		return fmt.Errorf("a pattern must be a simple command, not shell syntax (%s)", strings.TrimPrefix(fmt.Sprintf("%T", c), "*syntax."))
	}
	return nil
}

// globWord turns a parsed word into a pattern: quote removal done,
// quoted glob characters escaped.
func globWord(w *syntax.Word, src string) (string, error) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			for i := 0; i < len(v); i++ {
				if v[i] == '\\' {
					// A backslash at the very end quotes nothing and
					// stands for itself, as in bash.
					if i+1 < len(v) {
						i++
					}
					b.WriteString(quoteMeta(v[i : i+1]))
					continue
				}
				b.WriteByte(v[i])
			}
		case *syntax.SglQuoted:
			v := p.Value
			if p.Dollar {
				v = ansiC(v)
			}
			b.WriteString(quoteMeta(v))
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				l, ok := dp.(*syntax.Lit)
				if !ok {
					return "", expansionError(dp, src)
				}
				b.WriteString(quoteMeta(unescape(l.Value, "$`\"\\\n")))
			}
		case *syntax.ExtGlob:
			if p.Pattern != nil && strings.ContainsAny(p.Pattern.Value, "$`") {
				return "", expansionError(p, src)
			}
			b.WriteString(p.Op.String())
			if p.Pattern != nil {
				b.WriteString(p.Pattern.Value)
			}
			b.WriteString(")")
		default:
			return "", expansionError(p, src)
		}
	}
	return b.String(), nil
}

func expansionError(n syntax.Node, src string) error {
	s, e := n.Pos().Offset(), safeEnd(n).Offset()
	text := ""
	if s <= e && e <= uint(len(src)) {
		text = src[s:e]
	}
	return fmt.Errorf("expansions are not allowed in a pattern, they would only be known at run time: %s (quote it to match it literally)", text)
}

// WordMatcher matches argv words against one word of SplitPattern's
// output: unquoted *, ? and [...] (and extended globs) glob, quoted or
// escaped ones match themselves. Plain words are compared as strings; only
// globs pay for a regexp. Policy matches rules with it, so the fuzz test
// of SplitPattern checks the matcher that production uses.
type WordMatcher struct {
	lit string
	re  *regexp.Regexp // nil: compare with lit
}

// CompileWord compiles a pattern word from SplitPattern.
func CompileWord(w string) (WordMatcher, error) {
	if !hasMeta(w) {
		return WordMatcher{lit: unescapePattern(w)}, nil
	}
	expr, err := pattern.Regexp(w, pattern.EntireString|pattern.NoGlobStar|pattern.ExtendedOperators)
	if err != nil {
		return WordMatcher{}, err
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return WordMatcher{}, err
	}
	return WordMatcher{re: re}, nil
}

// Literal returns the one word the matcher matches, when it is not a
// glob.
func (m WordMatcher) Literal() (string, bool) { return m.lit, m.re == nil }

// MatchString reports whether s matches.
func (m WordMatcher) MatchString(s string) bool {
	if m.re == nil {
		return s == m.lit
	}
	return m.re.MatchString(s)
}

// hasMeta reports unescaped glob characters, extended globs included.
func hasMeta(p string) bool {
	if pattern.HasMeta(p, 0) {
		return true
	}
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '+', '@', '!':
			if i+1 < len(p) && p[i+1] == '(' {
				return true
			}
		}
	}
	return false
}

// unescapePattern removes the backslashes that quote characters in a
// pattern without globs.
func unescapePattern(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// quoteMeta escapes every character a pattern gives meaning to, the
// extended glob operators included (pattern.QuoteMeta leaves @( and +(
// alone, so a quoted "@(a|b)" would still glob).
func quoteMeta(s string) string {
	if !strings.ContainsAny(s, `*?[]\+@!()|`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[]\+@!()|`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
