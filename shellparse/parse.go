package shellparse

import (
	"errors"
	"path"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

const defaultMaxDepth = 8

// Parse analyses a shell script and reports every simple command it could
// run, the files its redirections touch, and what cannot be known without
// running it. The error is a *ParseError when the script does not parse;
// nested code that does not parse is a Block finding instead.
func Parse(src string, opts Options) (*Script, error) {
	if !utf8.ValidString(src) {
		return parseBytes(src, opts)
	}
	return parseValid(src, opts)
}

func parseValid(src string, opts Options) (*Script, error) {
	a, err := analyse(src, opts)
	if err != nil {
		return nil, err
	}
	return a.result(), nil
}

func analyse(src string, opts Options) (*analysis, error) {
	lang := dialect(opts.Dialect)
	a := newAnalysis(opts)
	f := a.root(src, lang)
	if !f.readable(src, Pos{}, false) {
		return a, nil
	}
	written := src
	file, src, err := parseBash(src, lang)
	if err != nil {
		return nil, toParseError(err)
	}
	if len(file.Stmts) == 1 && src == written {
		a.out.single = file.Stmts[0]
	}
	f.src = src
	a.lastpipe = strings.Contains(src, "lastpipe")
	f.dialectCheck(src, file, Pos{}, false)
	f.file(file)
	f.arithmetic()
	// The parser reads <<, <<- and <<< only from those characters (it
	// joins no operator across a backslash-newline).
	if strings.Contains(src, "<<") {
		a.out.Feeds = feeds(file, src)
	}
	return a, nil
}

// feeds lists the here-documents and here-strings of file, whose source
// is src (Script.Feeds).
func feeds(file *syntax.File, src string) []string {
	slice := func(from, to syntax.Pos) string {
		a, b := int(from.Offset()), int(to.Offset())
		if a < 0 || b > len(src) || a > b {
			return ""
		}
		return src[a:b]
	}
	var out []string
	syntax.Walk(file, func(n syntax.Node) bool {
		r, ok := n.(*syntax.Redirect)
		if !ok || r.Word == nil {
			return true
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			body := ""
			if r.Hdoc != nil {
				body = slice(r.Hdoc.Pos(), r.Hdoc.End())
			}
			out = append(out, "heredoc "+r.Op.String()+slice(r.Word.Pos(), r.Word.End())+"\n"+body)
		case syntax.WordHdoc:
			out = append(out, "herestring "+slice(r.Word.Pos(), r.Word.End()))
		}
		return true
	})
	return out
}

// ParseArgv analyses an argv that is executed directly, without a shell:
// no quote removal or expansion happens, so every word is static. Wrappers
// are looked through and code handed to a shell (bash -c ...) is parsed as
// in Parse. Word positions have Line 1 and the 1-based word index as Col;
// Offset is the word's offset in the command's Text.
func ParseArgv(argv []string, opts Options) *Script {
	a := newAnalysis(opts)
	if len(argv) == 0 {
		return a.result()
	}
	lang := dialect(opts.Dialect)
	var b strings.Builder
	args := make([]wval, len(argv))
	for i, s := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		q := quoteWord(s, i == 0, lang)
		start := uint(b.Len())
		b.WriteString(q)
		args[i] = wval{
			Word: Word{
				Value:  s,
				Source: q,
				Pos:    Pos{Offset: start, Line: 1, Col: uint(i + 1)},
			},
			tmpl:  s,
			start: start,
			end:   uint(b.Len()),
		}
	}
	f := a.root(b.String(), lang)
	f.emit(call{
		args:  args,
		pos:   args[0].Pos,
		start: 0,
		end:   uint(b.Len()),
	})
	return a.result()
}

// DialectFor returns the parser dialect for a shell program, by its base
// name: bash, sh, dash, ash, posix, mksh, ksh and zsh are known; anything
// else is read as bash.
func DialectFor(program string) syntax.LangVariant {
	name := path.Base(program)
	name = strings.TrimPrefix(name, "-") // login shells are started as -bash
	switch name {
	case "sh", "dash", "ash", "posix":
		return syntax.LangPOSIX
	case "mksh", "ksh":
		return syntax.LangMirBSDKorn
	case "zsh":
		return syntax.LangZsh
	}
	return syntax.LangBash
}

// Incomplete reports whether src ends in the middle of a command, so an
// interactive shell should read another line before analysing it: an open
// quote, substitution, compound command or here-document, a trailing
// operator such as | or &&, or a line continuation.
func Incomplete(src string, lang syntax.LangVariant) bool {
	p := syntax.NewParser(syntax.Variant(dialect(lang)), syntax.KeepComments(true))
	f, err := p.Parse(strings.NewReader(src), "")
	if err != nil {
		return syntax.IsIncomplete(err)
	}
	trimmed := strings.TrimSuffix(src, "\n")
	if oddBackslashes(trimmed) == 0 {
		return false
	}
	// A backslash at the end of a comment continues nothing.
	end := uint(len(trimmed))
	inComment := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.Comment); ok && c.Pos().Offset() < end && c.End().Offset() >= end {
			inComment = true
		}
		return !inComment
	})
	for _, c := range f.Last {
		if c.Pos().Offset() < end && c.End().Offset() >= end {
			inComment = true
		}
	}
	return !inComment
}

// oddBackslashes returns 1 when s ends in an odd number of backslashes.
func oddBackslashes(s string) int {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n % 2
}

func dialect(l syntax.LangVariant) syntax.LangVariant {
	switch l {
	case syntax.LangBash, syntax.LangPOSIX, syntax.LangMirBSDKorn, syntax.LangBats, syntax.LangZsh:
		return l
	}
	// The zero value, LangAuto and anything unknown: the parser panics on
	// the last two, and bash is the documented default.
	return syntax.LangBash
}

func parseFile(src string, lang syntax.LangVariant) (*syntax.File, error) {
	p := getParser(lang)
	defer putParser(lang, p)
	return p.Parse(strings.NewReader(src), "")
}

// maxArithRetries bounds how many $(( or (( are re-read as subshells.
const maxArithRetries = 16

// parseBash parses src as parseFile does, then reads $(( and (( the way
// bash does when their text is not an arithmetic expression: as a
// command substitution or subshell whose first command is a subshell
// (echo $((ls | wc -l) 2>/dev/null) runs ls and wc). The parser refuses
// such text; each retry inserts a space after the first parenthesis of
// the construct the error points into, and returns the source it parsed,
// whose offsets after an insertion are one byte further on.
func parseBash(src string, lang syntax.LangVariant) (*syntax.File, string, error) {
	file, err := parseFile(src, lang)
	first := err
	for range maxArithRetries {
		if err == nil {
			return file, src, nil
		}
		var pe syntax.ParseError
		if !errors.As(err, &pe) || !pe.Pos.IsValid() {
			break
		}
		off := min(int(pe.Pos.Offset())+3, len(src))
		i := strings.LastIndex(src[:off], "((")
		if i < 0 || !strings.Contains(pe.Text, "((") && !strings.Contains(pe.Text, "arithmetic") {
			break
		}
		src = src[:i+1] + " " + src[i+1:]
		file, err = parseFile(src, lang)
	}
	if err != nil {
		return nil, src, first
	}
	return file, src, nil
}

func toParseError(err error) *ParseError {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return &ParseError{Pos: convPos(pe.Pos), Msg: pe.Text}
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		msg := strings.TrimPrefix(le.Error(), le.Pos.String()+": ")
		return &ParseError{Pos: convPos(le.Pos), Msg: msg}
	}
	return &ParseError{Msg: err.Error()}
}

func convPos(p syntax.Pos) Pos {
	if !p.IsValid() {
		return Pos{}
	}
	return Pos{Offset: p.Offset(), Line: p.Line(), Col: p.Col()}
}
