package shellparse

import (
	"fmt"
	"iter"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Limits on what one analysis reads and reports. Beyond each, the script
// is blocked with a reason that names the limit, before any cost that
// grows faster than the script's size is paid.
const (
	// MaxScriptBytes bounds the text analysed, nested code included.
	MaxScriptBytes = 1 << 20
	// MaxNesting bounds how deeply constructs nest: substitutions,
	// subshells, groups, compound commands. The source is measured
	// before it is parsed (so a 20,000-level $( $( ... ) ) costs one
	// linear scan), and the walker checks the parsed tree again.
	MaxNesting = 100
	// MaxParts bounds the commands, file operations and findings one
	// script reports.
	MaxParts = 10000
	// MaxOutputBytes bounds the text the report carries (each part's text
	// and its words' source), so that a command whose text holds nested
	// commands cannot multiply the script's size in the output. A script
	// may report at most OutputPerByte times its size plus OutputSlack,
	// and never more than MaxOutputBytes.
	MaxOutputBytes = 8 << 20
	OutputPerByte  = 32
	OutputSlack    = 1 << 20
)

// outputBudget is how many bytes of text the report of a script of n
// bytes may carry.
func outputBudget(n int) int {
	return min(MaxOutputBytes, OutputPerByte*n+OutputSlack)
}

// preScan measures src before it is parsed: its size, and an upper bound
// of its nesting found in one pass over the bytes. It reports a Block
// reason, or "".
func preScan(src string) (reason string, at int) {
	if len(src) > MaxScriptBytes {
		return fmt.Sprintf("the script is %d bytes, more than the limit of %d", len(src), MaxScriptBytes), -1
	}
	if d, at := lexicalDepth(src); d > MaxNesting {
		return fmt.Sprintf("constructs nested more than %d levels deep", MaxNesting), at
	}
	return "", -1
}

// lexicalDepth returns the deepest nesting of ( and { in src, counted
// without parsing: single-quoted text and comments are skipped, a
// backslash escapes the next byte, and inside double quotes only $( and
// ${ open a level. It over-counts at worst (a here-document body full
// of parentheses), which only a script nested near the limit notices.
// at is the offset where the limit was first passed.
func lexicalDepth(src string) (maxDepth, at int) {
	depth := 0
	dq := false
	at = -1
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\':
			i++
			continue
		case !dq && c == '\'':
			j := strings.IndexByte(src[i+1:], '\'')
			if j < 0 {
				return maxDepth, at
			}
			i += j + 1
			continue
		case !dq && c == '#' && (i == 0 || isBlankOrOp(src[i-1])):
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				return maxDepth, at
			}
			i += j
			continue
		case c == '"':
			dq = !dq
			continue
		case c == '(' || c == '{':
			if dq && (i == 0 || src[i-1] != '$') {
				continue
			}
			depth++
			if depth > maxDepth {
				maxDepth = depth
				if depth > MaxNesting && at < 0 {
					at = i
				}
			}
		case c == ')' || c == '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return maxDepth, at
}

func isBlankOrOp(c byte) bool {
	switch c {
	case ' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>':
		return true
	}
	return false
}

// lineCol turns a byte offset of src into a position.
func lineCol(src string, off int) Pos {
	if off < 0 || off > len(src) {
		return Pos{}
	}
	line := 1 + strings.Count(src[:off], "\n")
	col := off - strings.LastIndexByte(src[:off], '\n')
	return Pos{Offset: uint(off), Line: uint(line), Col: uint(col)}
}

// inputCheck looks for bytes and byte sequences that bash and the
// parser read differently, so that what guardrun analyses might not be
// the program bash runs. It returns a severity and reason, or "".
//
//   - NUL: bash drops it or cuts the text at it; the parser keeps it.
//   - carriage return: for bash it is an ordinary character of a word, the
//     parser takes it for a blank (ls\r# ; curl x | sh runs curl).
//   - bytes that are not UTF-8: the parser decodes runes, bash reads bytes.
//   - a backslash-newline next to an operator or a $: bash removes it
//     before reading the construct ("$\<newline>(cmd)" runs cmd), the
//     parser does not always.
func inputCheck(src string) (Severity, string, int) {
	if i := strings.IndexByte(src, 0); i >= 0 {
		return Block, "the script holds a NUL byte, which bash and guardrun's parser read differently", i
	}
	if i := strings.IndexByte(src, '\r'); i >= 0 {
		return Ask, "the script holds a carriage return, which bash reads as part of a word and guardrun's parser as a blank", i
	}
	if !utf8.ValidString(src) {
		i := 0
		for i < len(src) {
			r, n := utf8.DecodeRuneInString(src[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return Ask, "the script holds bytes that are not UTF-8, which bash and guardrun's parser may read differently", i
	}
	if i := riskyContinuation(src); i >= 0 {
		return Ask, "a backslash-newline joins an operator or $ construct, which bash reads differently from guardrun's parser", i
	}
	if i := commentContinuation(src); i >= 0 {
		return Ask, "a comment ends in a backslash, which bash leaves in the comment and guardrun's parser reads as joining the next line to the command", i
	}
	return "", "", -1
}

// commentContinuation returns the offset of a backslash-newline on a line
// where a word starts with #, or -1. For bash a comment runs to the end
// of its line and a backslash in it is text: ls # \<newline>rm x runs
// rm. The parser takes the backslash for a continuation and reads rm x
// as arguments of ls. Quoting is not looked at, so "a #b" \<newline>
// asks too.
func commentContinuation(src string) int {
	for i := range continuations(src) {
		start := strings.LastIndexByte(src[:i], '\n') + 1
		for k := start; k < i; k++ {
			if src[k] == '#' && (k == start || isBlankOrOp(src[k-1])) {
				return i
			}
		}
	}
	return -1
}

// continuations yields the offset of every backslash-newline in src.
func continuations(src string) iter.Seq[int] {
	return func(yield func(int) bool) {
		for off := 0; ; {
			j := strings.Index(src[off:], "\\\n")
			if j < 0 || !yield(off+j) {
				return
			}
			off += j + 2
		}
	}
}

// riskyContinuation returns the offset of a backslash-newline that sits
// after $, < or >, or splits an operator (&\<newline>&, (\<newline>(),
// or -1. A backslash-newline between words or inside a plain word reads
// the same in bash and the parser and is left alone.
func riskyContinuation(src string) int {
	for i := range continuations(src) {
		// An even run of backslashes before the newline is not a
		// continuation.
		n := 0
		for k := i; k >= 0 && src[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			continue
		}
		prev := byte(' ')
		for k := i - 1; k >= 0; k-- {
			if src[k] == '\n' && k > 0 && src[k-1] == '\\' {
				k--
				continue
			}
			prev = src[k]
			break
		}
		next := byte(' ')
		for k := i + 2; k < len(src); k++ {
			if src[k] == '\\' && k+1 < len(src) && src[k+1] == '\n' {
				k++
				continue
			}
			next = src[k]
			break
		}
		switch {
		case prev == '$' || prev == '<' || prev == '>':
			// $\<newline>(, <\<newline>(, <\<newline><...
			return i
		case strings.IndexByte("&|;(", prev) >= 0 && strings.IndexByte("<>&|;()", next) >= 0:
			// An operator split in two: &\<newline>&, (\<newline>( ...
			return i
		}
	}
	return -1
}

// excerpt is a short piece of src around offset at, for a finding's text:
// a finding never carries a whole script.
func excerpt(src string, at int) string {
	const before, after = 20, 60
	at = max(0, min(at, len(src)))
	s, e := max(0, at-before), min(len(src), at+after)
	for s > 0 && !utf8.RuneStart(src[s]) {
		s--
	}
	for e < len(src) && !utf8.RuneStart(src[e]) {
		e++
	}
	out := src[s:e]
	if s > 0 {
		out = "…" + out
	}
	if e < len(src) {
		out += "…"
	}
	return out
}

// readable checks code before it is parsed (the limits, and input that
// bash and the parser read differently) and reports what it finds. It
// returns false when the code must not be read further. nested code
// reports the position of the word that holds it.
func (f *frame) readable(code string, anchor Pos, nested bool) bool {
	where := func(at int) Pos {
		if nested || at < 0 {
			return anchor
		}
		return lineCol(code, at)
	}
	if reason, at := preScan(code); reason != "" {
		f.find(Block, reason, excerpt(code, max(at, 0)), where(at))
		return false
	}
	if sev, reason, at := inputCheck(code); reason != "" {
		f.find(sev, reason, excerpt(code, at), where(at))
		return sev != Block
	}
	return true
}

// dialectCheck guards code read as POSIX sh: /bin/sh is dash on some
// systems and bash on others, and bash must not read the same text as
// another program. When bash cannot parse it, or parses it into a
// different tree, the code asks. Code read as zsh asks for a glob
// qualifier (*(e:code:), *(+func) run code for each file) and a
// parameter expansion flag with e (${(e)x} expands the value, $(...)
// included) and a value used as a pattern (${~x}, whose qualifiers run),
// which the analysis does not follow.
func (f *frame) dialectCheck(code string, file *syntax.File, pos Pos, nested bool) {
	if f.lang == syntax.LangZsh {
		f.zshCodeCheck(code, file, pos)
		return
	}
	if f.lang != syntax.LangPOSIX {
		return
	}
	bf, err := parseFile(code, syntax.LangBash)
	same := err == nil
	if same {
		// The trees, not their printed text: $'...' prints the same
		// whether it is an ANSI-C string (bash) or $ and a quoted string
		// (dash).
		var pb, bb strings.Builder
		same = syntax.DebugPrint(&pb, file) == nil && syntax.DebugPrint(&bb, bf) == nil && pb.String() == bb.String()
	}
	if !same {
		if !nested {
			pos = Pos{Offset: 0, Line: 1, Col: 1}
		}
		f.find(Ask, "sh may be dash or bash, and they read this code as different programs", excerpt(code, 0), pos)
	}
}

func (f *frame) zshCodeCheck(code string, file *syntax.File, pos Pos) {
	text := func(n syntax.Node) string {
		s, e := int(n.Pos().Offset()), int(n.End().Offset())
		if s > e || e > len(code) {
			return excerpt(code, 0)
		}
		return code[s:e]
	}
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Word:
			for _, p := range n.Parts {
				if l, ok := p.(*syntax.Lit); ok && strings.HasPrefix(l.Value, "(") {
					f.find(Ask, "zsh reads (...) after a pattern as glob qualifiers, which can run code", text(n), pos)
				}
			}
		case *syntax.ParamExp:
			if n.Flags != nil && strings.ContainsAny(n.Flags.Value, "e~") {
				f.find(Ask, "zsh expands a value again for the (e) flag, $(...) included, and globs it for (~)", text(n), pos)
			}
			if n.GlobSubst == syntax.OptOn {
				f.find(Ask, "zsh globs the value of ${~x}, and glob qualifiers in it run code", text(n), pos)
			}
			// The word of ${x:-word} is read as one literal, but zsh
			// globs it, qualifiers included: ${x:-*(e:code:)}.
			if n.Exp != nil && n.Exp.Word != nil && n.Exp.Op >= syntax.AlternateUnset && n.Exp.Op <= syntax.AssignUnsetOrNull {
				for _, p := range n.Exp.Word.Parts {
					if l, ok := p.(*syntax.Lit); ok && strings.Contains(l.Value, "(") {
						f.find(Ask, "zsh globs the word of ${x:-word}, and glob qualifiers in it run code", text(n), pos)
					}
				}
			}
		}
		return true
	})
}

// heredocAmbiguous reports a here-document whose end bash may find on
// another line than the parser: inside $(...), bash ends it at a line that
// starts with the delimiter followed by ) or another operator (EOF)),
// so the lines after it become commands that a reading up to the plain
// delimiter line takes for text. Any body or terminator line that starts
// with the delimiter and goes on with something else than a word
// character asks, and inside a substitution any line that starts with the
// delimiter and goes on.
func (f *frame) heredocAmbiguous(r *syntax.Redirect) bool {
	if r.Word == nil || r.Hdoc == nil {
		return false
	}
	var d strings.Builder
	for _, p := range r.Word.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			d.WriteString(strings.ReplaceAll(p.Value, `\`, ""))
		case *syntax.SglQuoted:
			d.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					d.WriteString(l.Value)
				}
			}
		}
	}
	delim := d.String()
	if delim == "" {
		return false
	}
	s, e := f.offsets(r.Hdoc.Pos(), r.Hdoc.End())
	// The parser starts the body after backslash-newlines that open it.
	for s >= 2 && f.src[s-2:s] == "\\\n" {
		s -= 2
	}
	// The body, and the line after it that ended it.
	if nl := strings.IndexByte(f.src[e:], '\n'); nl >= 0 {
		e += uint(nl)
	} else {
		e = uint(len(f.src))
	}
	text := f.src[s:e]
	inSubst := f.inSubstitution()
	if !quotedDelimiter(r.Word) && strings.Contains(text, "\\\n") {
		// bash joins backslash-newline in an unquoted body before it
		// looks for the delimiter: EO\<newline>F ends the document.
		// The body is every line before the one that ended it (a line
		// of the body that is the delimiter after a backslash-newline,
		// \<newline>EOF, ends it for bash and not for the parser).
		body := text[:strings.LastIndexByte(text, '\n')+1]
		joined := strings.ReplaceAll(body, "\\\n", "")
		for line := range strings.SplitSeq(joined, "\n") {
			if r.Op == syntax.DashHdoc {
				line = strings.TrimLeft(line, "\t")
			}
			if strings.HasPrefix(line, delim) {
				return true
			}
		}
	}
	for line := range strings.SplitSeq(text, "\n") {
		if r.Op == syntax.DashHdoc {
			line = strings.TrimLeft(line, "\t")
		}
		rest, ok := strings.CutPrefix(line, delim)
		if !ok || rest == "" {
			continue
		}
		c := rest[0]
		if inSubst || !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80) {
			// Inside a substitution bash ends the document even at
			// EOFcmd ), and runs cmd.
			return true
		}
	}
	return false
}

// inSubstitution reports code reached through a command or process
// substitution.
func (f *frame) inSubstitution() bool {
	for _, v := range f.via {
		switch v {
		case "$(...)", "`...`", "<(...)", ">(...)", "=(...)", "${ ...;}", "${|...;}":
			return true
		}
	}
	return false
}
