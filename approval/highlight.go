package approval

import (
	"path/filepath"
	"strings"
	"sync"
)

// Syntax highlighting of the new-file view, written here rather than
// taken from a highlighting library: guardrun starts once per command when
// it is an agent's $SHELL, and a library's lexer tables are built at
// package initialisation, by every process, whether it ever shows a file
// or not (chroma's took 1.7 ms of each start). These tables are built on
// first use. The view shows the person what a file is; it needs comments,
// strings, numbers, keywords and names told apart, not a parser.

// language is how one language is coloured.
type language struct {
	name     string
	files    []string // file name globs
	shebangs []string // interpreters named on a #! line
	line     []string // line comment openers
	block    [2]string
	quotes   string // string delimiters
	// keywords, types and builtins are space-separated words.
	keywords, types, builtins string
	// namespace words name a module after them (package, import).
	namespace string
	// keys colours a word before ':' or '=' at the start of a line
	// (YAML, TOML); markup colours <tags> (HTML); headings colours lines
	// starting with '#' (Markdown).
	keys, markup, headings bool
	// caseFold matches keywords in any case (SQL).
	caseFold bool

	once           sync.Once
	kw, ty, bi, ns map[string]bool
}

func (l *language) words() {
	l.once.Do(func() {
		set := func(s string) map[string]bool {
			m := map[string]bool{}
			for _, w := range strings.Fields(s) {
				if l.caseFold {
					w = strings.ToLower(w)
				}
				m[w] = true
			}
			return m
		}
		l.kw, l.ty, l.bi, l.ns = set(l.keywords), set(l.types), set(l.builtins), set(l.namespace)
	})
}

const cTypes = "int char short long float double void unsigned signed bool size_t uint8_t uint16_t uint32_t uint64_t int8_t int16_t int32_t int64_t"
const cKeywords = "if else for while do switch case default break continue return goto struct union enum typedef static extern const volatile inline sizeof register"

var languages = []*language{
	{name: "Go", files: []string{"*.go"}, line: []string{"//"}, block: [2]string{"/*", "*/"}, quotes: "\"'`",
		keywords:  "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var",
		types:     "bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any",
		builtins:  "append cap clear close complex copy delete imag len make max min new panic print println real recover true false nil iota",
		namespace: "package import"},
	{name: "Python", files: []string{"*.py", "*.pyw", "SConstruct", "*.pyi"}, shebangs: []string{"python", "python3", "python2"}, line: []string{"#"}, quotes: "\"'",
		keywords:  "and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield",
		builtins:  "True False None print len range open int str list dict set tuple self isinstance super",
		namespace: "import from"},
	{name: "Bash", files: []string{"*.sh", "*.bash", "*.ksh", "*.zsh", ".bashrc", ".bash_profile", ".profile", "*.ebuild"}, shebangs: []string{"sh", "bash", "zsh", "ksh", "dash"}, line: []string{"#"}, quotes: "\"'",
		keywords: "if then else elif fi case esac for while until do done in function select return exit break continue local export readonly declare set unset",
		builtins: "echo printf cd read test source eval exec shift trap true false"},
	{name: "YAML", files: []string{"*.yaml", "*.yml"}, line: []string{"#"}, quotes: "\"'", keys: true,
		builtins: "true false null yes no on off"},
	{name: "JSON", files: []string{"*.json"}, quotes: "\"", keys: true, builtins: "true false null"},
	{name: "C", files: []string{"*.c", "*.h"}, line: []string{"//"}, block: [2]string{"/*", "*/"}, quotes: "\"'",
		keywords: cKeywords, types: cTypes, builtins: "NULL true false"},
	{name: "C++", files: []string{"*.cpp", "*.hpp", "*.cc", "*.hh", "*.cxx", "*.hxx", "*.C", "*.H"}, line: []string{"//"}, block: [2]string{"/*", "*/"}, quotes: "\"'",
		keywords:  cKeywords + " class public private protected virtual override template typename namespace using new delete try catch throw this operator friend constexpr auto nullptr noexcept",
		types:     cTypes + " string vector map",
		builtins:  "true false nullptr std",
		namespace: "namespace using"},
	{name: "Rust", files: []string{"*.rs"}, line: []string{"//"}, block: [2]string{"/*", "*/"}, quotes: "\"",
		keywords:  "as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while",
		types:     "i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str String Vec Option Result Box",
		builtins:  "true false Some None Ok Err",
		namespace: "use mod crate"},
	{name: "Ruby", files: []string{"*.rb", "Rakefile", "Gemfile", "*.gemspec"}, shebangs: []string{"ruby"}, line: []string{"#"}, quotes: "\"'",
		keywords: "alias and begin break case class def defined do else elsif end ensure for if in module next not or redo rescue retry return self super then undef unless until when while yield",
		builtins: "true false nil puts require attr_accessor"},
	{name: "TypeScript", files: []string{"*.ts", "*.tsx", "*.js", "*.jsx", "*.mjs", "*.cjs"}, shebangs: []string{"node", "deno"}, line: []string{"//"}, block: [2]string{"/*", "*/"}, quotes: "\"'`",
		keywords:  "async await break case catch class const continue debugger default delete do else enum export extends finally for function if implements import in instanceof interface let new of return static super switch this throw try type typeof var void while with yield from as",
		types:     "string number boolean any unknown never void object",
		builtins:  "true false null undefined console require module",
		namespace: "import from"},
	{name: "TOML", files: []string{"*.toml", "Cargo.lock", "Pipfile", "poetry.lock"}, line: []string{"#"}, quotes: "\"'", keys: true, builtins: "true false"},
	{name: "Markdown", files: []string{"*.md", "*.markdown"}, quotes: "`", headings: true},
	{name: "Makefile", files: []string{"Makefile", "makefile", "GNUmakefile", "*.mk", "*.mak"}, line: []string{"#"}, quotes: "\"'",
		keywords: "ifeq ifneq ifdef ifndef else endif include define endef export override",
		builtins: "PHONY wildcard patsubst shell subst foreach call"},
	{name: "Docker", files: []string{"Dockerfile", "*.Dockerfile", "Containerfile", "*.docker"}, line: []string{"#"}, quotes: "\"'", caseFold: true,
		keywords: "FROM RUN CMD LABEL EXPOSE ENV ADD COPY ENTRYPOINT VOLUME USER WORKDIR ARG ONBUILD STOPSIGNAL HEALTHCHECK SHELL AS MAINTAINER"},
	{name: "SQL", files: []string{"*.sql"}, line: []string{"--"}, block: [2]string{"/*", "*/"}, quotes: "'\"", caseFold: true,
		keywords: "select from where and or not insert into values update set delete create table drop alter index view join left right inner outer on as group by order having limit offset union all distinct primary key foreign references null is in like between case when then else end begin commit rollback",
		types:    "int integer bigint smallint text varchar char boolean date timestamp real float numeric serial blob"},
	{name: "HTML", files: []string{"*.html", "*.htm", "*.xhtml", "*.xml", "*.svg"}, block: [2]string{"<!--", "-->"}, quotes: "\"'", markup: true},
	{name: "Java", files: []string{"*.java"}, line: []string{"//"}, block: [2]string{"/*", "*/"}, quotes: "\"'",
		keywords:  "abstract assert break case catch class const continue default do else enum extends final finally for goto if implements import instanceof interface native new package private protected public return static strictfp super switch synchronized this throw throws transient try var void volatile while record",
		types:     "boolean byte char double float int long short String Object",
		builtins:  "true false null System",
		namespace: "package import"},
}

// languageFor picks a language by file name, else by a #! line; nil for
// plain text or a language not in the table.
func languageFor(path, text string) *language {
	base := filepath.Base(path)
	for _, l := range languages {
		for _, pat := range l.files {
			if ok, _ := filepath.Match(pat, base); ok {
				return l
			}
		}
	}
	if !strings.HasPrefix(text, "#!") {
		return nil
	}
	first, _, _ := strings.Cut(text[2:], "\n")
	f := strings.Fields(first)
	if len(f) == 0 {
		return nil
	}
	interp := filepath.Base(f[0])
	if interp == "env" && len(f) > 1 {
		interp = f[1]
	}
	for _, l := range languages {
		for _, s := range l.shebangs {
			if interp == s || strings.HasPrefix(interp, s) && strings.Trim(interp[len(s):], "0123456789.") == "" {
				return l
			}
		}
	}
	return nil
}

// Colours, the terminal's own 16 (see tokenColour's former table):
// comments dim, numbers and constants magenta, types and builtins cyan,
// keywords bold blue, strings green, functions and tags yellow.
const (
	colComment = "2"
	colNumber  = "35"
	colType    = "36"
	colKeyword = "34;1"
	colString  = "32"
	colName    = "33"
	colHeading = "1"
)

// colourText splits text into lines, each carrying its own colours and
// closing them, so truncating anywhere leaves no colour open.
func (l *language) colourText(text string) []string {
	l.words()
	var lines []string
	var cur strings.Builder
	emit := func(s, code string) {
		for {
			piece, rest, nl := strings.Cut(s, "\n")
			if piece != "" {
				if code != "" {
					cur.WriteString("\x1b[" + code + "m" + piece + "\x1b[0m")
				} else {
					cur.WriteString(piece)
				}
			}
			if !nl {
				return
			}
			lines = append(lines, cur.String())
			cur.Reset()
			s = rest
		}
	}
	lineStart := true
	prevWord := ""
	for i := 0; i < len(text); {
		c := text[i]
		rest := text[i:]
		switch {
		case c == '\n':
			emit("\n", "")
			i++
			lineStart = true
			continue
		case l.block[0] != "" && strings.HasPrefix(rest, l.block[0]):
			end := strings.Index(rest[len(l.block[0]):], l.block[1])
			n := len(rest)
			if end >= 0 {
				n = len(l.block[0]) + end + len(l.block[1])
			}
			emit(rest[:n], colComment)
			i += n
			continue
		case hasAnyPrefix(rest, l.line) || l.headings && lineStart && c == '#':
			n := strings.IndexByte(rest, '\n')
			if n < 0 {
				n = len(rest)
			}
			code := colComment
			if l.headings {
				code = colHeading
			}
			emit(rest[:n], code)
			i += n
			continue
		case l.markup && c == '<':
			n := strings.IndexAny(rest[1:], "<>")
			if n < 0 || rest[1+n] != '>' {
				emit(rest[:1], "")
				i++
				break
			}
			emit(rest[:n+2], colName)
			i += n + 2
			continue
		case strings.IndexByte(l.quotes, c) >= 0:
			n := quoted(rest)
			emit(rest[:n], colString)
			i += n
			lineStart = false
			continue
		case c >= '0' && c <= '9':
			n := 1
			for n < len(rest) && (isWord(rest[n]) || rest[n] == '.') {
				n++
			}
			emit(rest[:n], colNumber)
			i += n
			lineStart = false
			continue
		case isWord(c):
			n := 1
			for n < len(rest) && (isWord(rest[n]) || rest[n] == '-' && l.keys) {
				n++
			}
			w := rest[:n]
			key := w
			if l.caseFold {
				key = strings.ToLower(w)
			}
			after := strings.TrimLeft(rest[n:], " \t")
			code := ""
			switch {
			case l.keys && lineStart && (strings.HasPrefix(after, ":") || strings.HasPrefix(after, "=")):
				code = colName
			case l.kw[key]:
				code = colKeyword
			case l.ty[key] || l.bi[key] || l.ns[prevWord]:
				code = colType
			case strings.HasPrefix(after, "("):
				code = colName
			}
			emit(w, code)
			prevWord = key
			i += n
			lineStart = false
			continue
		}
		if c != ' ' && c != '\t' && c != '-' {
			lineStart = false
		}
		if c != ' ' && c != '\t' {
			prevWord = ""
		}
		emit(rest[:1], "")
		i++
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// quoted is the length of the string literal at the start of s: up to the
// same quote unescaped, or the end of the line for all but a backquote.
func quoted(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if q != '`' {
				i++
			}
		case q:
			return i + 1
		case '\n':
			if q != '`' {
				return i
			}
		}
	}
	return len(s)
}
