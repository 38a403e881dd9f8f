package shellparse

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Quote returns s written as one word that a shell of dialect lang reads
// back as s, for code guardrun writes itself (cd -- DIR). The error says
// where the dialect has no way to write s: a NUL byte, or a character
// that is not printable in POSIX sh.
func Quote(s string, lang syntax.LangVariant) (string, error) {
	return syntax.Quote(s, dialect(lang))
}

// QuoteArgv is argv as a person reads it, and as a shell of dialect lang
// would read it back: the prompt, explain, the audit log and guardrun log
// all show an argv so. A word that needs no quoting there is shown as it
// is (a=b after the command name, not 'a=b'); any other is quoted with
// syntax.Quote, $'...' for control characters where the dialect has it.
// A word the dialect cannot write (a NUL byte, a control character in
// POSIX sh) is shown Go-quoted, so that no control character is ever
// shown raw.
func QuoteArgv(argv []string, lang syntax.LangVariant) string {
	lang = dialect(lang)
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = quoteWord(a, i == 0, lang)
	}
	return strings.Join(parts, " ")
}

// quoteWord is one word of QuoteArgv; first is set for the command
// name, where NAME=value would be an assignment and if a keyword.
func quoteWord(s string, first bool, lang syntax.LangVariant) string {
	if plainWord(s, first, lang) {
		return s
	}
	q, err := syntax.Quote(s, lang)
	if err != nil {
		return fmt.Sprintf("%q", s)
	}
	return q
}

// plainWord reports whether a word needs no quoting to be read back as
// itself (the common case, which skips the quoting machinery).
func plainWord(s string, first bool, lang syntax.LangVariant) bool {
	if s == "" || first && syntax.IsKeyword(s) {
		return false
	}
	// zsh expands =cmd to the path of cmd.
	if lang == syntax.LangZsh && s[0] == '=' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == '/' || c == ',' || c == ':' || c == '+' || c == '@' || c == '%' ||
			c == '=' && !first) {
			return false
		}
	}
	return true
}
