package cmdsem

import (
	"fmt"
	"strings"
)

// awk, gawk, mawk and nawk: their options, and their program read by a
// lexer that knows awk's strings, regular expressions (and where a /
// starts one rather than divides), comments and line continuations, so
// that text inside a string or a regular expression is never taken for
// code and code never for text. `awk` may be any of them (Debian's is
// mawk), so the options are the union: gawk's, and mawk's -W forms.

// awkLong are gawk's long options (also given as -W name[=value]);
// the value says whether one is required ("="), optional ("[=]") or not
// taken.
var awkLong = map[string]string{
	"assign": "=", "field-separator": "=", "file": "=", "exec": "=", "include": "=", "load": "=", "source": "=",
	"characters-as-bytes": "", "traditional": "", "copyright": "", "dump-variables": "[=]", "debug": "[=]",
	"gen-pot": "", "help": "", "usage": "", "lint": "[=]", "bignum": "", "use-lc-numeric": "", "non-decimal-data": "",
	"optimize": "", "no-optimize": "", "pretty-print": "[=]", "profile": "[=]", "posix": "", "re-interval": "",
	"sandbox": "", "lint-old": "", "version": "", "csv": "", "trace": "", "persist": "[=]",
}

// awkHarmlessW are the -W values of mawk (and gawk) that only change
// how the program runs or print something: anything else asks (mawk
// takes any prefix, so -W e is -W exec).
var awkHarmlessW = map[string]bool{
	"version": true, "v": true, "usage": true, "help": true, "interactive": true, "posix_space": true,
	"posix": true, "traditional": true, "lint": true, "re-interval": true, "characters-as-bytes": true,
	"optimize": true, "no-optimize": true, "non-decimal-data": true, "bignum": true, "copyright": true,
}

// awkCmd reads awk's options, then its program (the first operand,
// unless -f, -E, -e or --source gave it) and its operands (files to
// read, or var=value assignments).
func awkCmd(s *spec, r *result, i int) {
	var programs []opnd
	fromFile, sandbox := false, false
	file := func(idx int, v Arg, option string) {
		if option != "-i" && option != "--include" {
			fromFile = true // an included file adds to the program
		}
		r.file(Read, opnd{v, idx}, option, "reads the awk program from the file")
		r.unknown(idx, option, "the awk program in the file can write files and run commands, and guardrun cannot see it")
	}
	// long applies gawk's long option name (as written, maybe
	// abbreviated) with its value; it reports whether the next word was
	// taken as the value.
	long := func(idx int, written, val string, hasVal bool, next *Arg) (tookNext bool) {
		name, ok := awkLongName(written)
		if !ok {
			r.unknown(idx, "--"+written, fmt.Sprintf("awk --%s is not an option guardrun knows", written))
			return false
		}
		mode := awkLong[name]
		if mode == "=" && !hasVal {
			if next == nil {
				return false
			}
			val, hasVal, tookNext = next.Value, true, true
			if !next.Static {
				r.unknown(idx, "--"+name, "awk --"+name+": the value is not known until run time")
				return true
			}
		}
		arg := Arg{Value: val, Static: true}
		switch name {
		case "file", "include":
			file(idx, arg, "--"+name)
		case "exec":
			file(idx, arg, "--exec")
		case "load":
			r.exec(idx, "--load", "loads a shared library into awk")
		case "source":
			programs = append(programs, opnd{arg, idx})
		case "dump-variables", "pretty-print", "profile":
			out := map[string]string{"dump-variables": "awkvars.out", "pretty-print": "awkprof.out", "profile": "awkprof.out"}[name]
			if hasVal && val != "" {
				out = val
			}
			r.file(Write, opnd{Arg{Value: out, Static: true}, idx}, "--"+name, "writes its report to the file")
		case "debug":
			r.unknown(idx, "--debug", "starts gawk's debugger, which takes commands")
		case "persist":
			r.unknown(idx, "--persist", "keeps gawk's variables in a file")
		case "sandbox":
			sandbox = true
		}
		return tookNext
	}
	stop := false
	for ; i < len(r.argv) && !stop; i++ {
		a := r.argv[i]
		v := a.Value
		var next *Arg
		if i+1 < len(r.argv) {
			next = &r.argv[i+1]
		}
		if !a.Static {
			if v == "" || strings.HasPrefix(v, "-") {
				r.unknown(i, "", "awk: a word known only at run time stands where an option such as -f or --load may")
				continue
			}
			break
		}
		switch {
		case v == "--":
			i++
			stop = true
			i-- // the loop's i++ moves past --
			continue
		case v == "-" || !strings.HasPrefix(v, "-"):
			stop = true
			i--
			continue
		case strings.HasPrefix(v, "--"):
			name, val, hasVal := strings.Cut(v[2:], "=")
			if long(i, name, val, hasVal, next) {
				i++
			}
			if n, _ := awkLongName(name); n == "exec" {
				stop = true // the last option
			}
			continue
		}
		// Short options, clustered as getopt reads them.
	letters:
		for j := 1; j < len(v); j++ {
			c := v[j]
			rest := v[j+1:]
			takeVal := func() (Arg, bool) {
				if rest != "" {
					return Arg{Value: rest, Static: true}, true
				}
				if next != nil {
					i++
					return *next, true
				}
				return Arg{}, false
			}
			switch c {
			case 'b', 'c', 'C', 'g', 'h', 'I', 'k', 'M', 'n', 'N', 'O', 'P', 'r', 's', 't', 'V', 'Y':
			case 'S':
				sandbox = true
			case 'F', 'v':
				takeVal()
				break letters
			case 'L':
				break letters // --lint[=value], attached only
			case 'f', 'i', 'E':
				val, ok := takeVal()
				if ok {
					if !val.Static {
						r.unknown(i, "-"+string(c), "awk -"+string(c)+": the file is not known until run time")
					} else {
						file(i, val, "-"+string(c))
					}
				}
				if c == 'E' {
					stop = true
				}
				break letters
			case 'l':
				takeVal()
				r.exec(i, "-l", "loads a shared library into awk")
				break letters
			case 'e':
				if val, ok := takeVal(); ok {
					programs = append(programs, opnd{val, i})
				}
				break letters
			case 'd', 'o', 'p':
				name := map[byte]string{'d': "dump-variables", 'o': "pretty-print", 'p': "profile"}[c]
				long(i, name, rest, rest != "", nil)
				break letters
			case 'D':
				r.unknown(i, "-D", "starts gawk's debugger, which takes commands")
				break letters
			case 'W':
				val, ok := takeVal()
				if !ok {
					break letters
				}
				if !val.Static {
					r.unknown(i, "-W", "awk -W: the option is not known until run time")
					break letters
				}
				// mawk takes several -W options in one, separated by
				// commas: -Wrandom=1,exec FILE.
				for _, w := range strings.Split(val.Value, ",") {
					name, _, _ := strings.Cut(w, "=")
					switch {
					case awkHarmlessW[name] || strings.HasPrefix(w, "sprintf=") || strings.HasPrefix(w, "random="):
					case strings.HasPrefix("exec", name) && name != "":
						// mawk -W exec FILE (any prefix), gawk -W exec=FILE.
						if _, f, ok := strings.Cut(w, "="); ok {
							file(i, Arg{Value: f, Static: true}, "-W exec")
						} else if next := i + 1; next < len(r.argv) {
							i++
							file(i, r.argv[i], "-W exec")
						}
						stop = true
					default:
						r.unknown(i, "-W "+w, "awk -W "+w+" is not an option guardrun knows to be harmless (mawk reads any prefix: -W e is -W exec)")
					}
					if stop {
						break
					}
				}
				break letters
			default:
				r.unknown(i, "-"+string(c), fmt.Sprintf("awk -%c is not an option guardrun knows", c))
				break letters
			}
		}
	}
	if len(programs) == 0 && !fromFile && i < len(r.argv) {
		programs = append(programs, opnd{r.argv[i], i})
		i++
	}
	// Only gawk has --sandbox: mawk refuses it, and the one true awk
	// (nawk, macOS's awk) warns and runs the program in full. awk may be
	// any of them.
	if !sandbox || r.name != "gawk" {
		for _, p := range programs {
			awkProgram(r, p)
		}
	}
	for ; i < len(r.argv); i++ {
		op := r.argv[i]
		if op.Value == "-" || awkAssignment(op.Value) {
			continue // standard input, or a variable assignment
		}
		r.file(Read, opnd{op, i}, "", "reads the file")
	}
}

// awkLongName resolves an abbreviated gawk long option.
func awkLongName(written string) (string, bool) {
	if _, ok := awkLong[written]; ok {
		return written, true
	}
	found := ""
	for name := range awkLong {
		if strings.HasPrefix(name, written) && written != "" {
			if found != "" {
				return "", false // ambiguous
			}
			found = name
		}
	}
	return found, found != ""
}

// awkAssignment reports an operand awk takes for var=value.
func awkAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" || !(name[0] == '_' || isAlpha(name[0])) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !(name[i] == '_' || isAlpha(name[i]) || name[i] >= '0' && name[i] <= '9') {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// awkProgram scans the awk program p for what runs commands (system(),
// pipes to and from commands, gawk's @load and indirect calls), writes
// files (print and printf redirected with > or >>) and reads files
// (getline < "file").
func awkProgram(r *result, p opnd) {
	if !p.Static {
		r.exec(p.idx, "", "the awk program is not known until run time; it can write files and run commands")
		return
	}
	toks, err := awkLex(p.Value)
	if err != "" {
		r.unknown(p.idx, "", "guardrun cannot read the awk program ("+err+"), so it cannot tell what it runs or writes")
		return
	}
	type state struct {
		print bool // in a print or printf statement
		depth int  // parentheses and brackets opened since
	}
	var st state
	for k, t := range toks {
		next := awkTok{}
		if k+1 < len(toks) {
			next = toks[k+1]
		}
		switch {
		case t.kind == tName && t.text == "system":
			r.exec(p.idx, "system()", "the awk program runs shell commands with system()")
		case t.kind == tOp && (t.text == "|" || t.text == "|&"):
			r.exec(p.idx, t.text, "the awk program pipes to or from shell commands")
		case t.kind == tOp && t.text == "@":
			switch {
			case next.kind == tName && next.text == "load":
				r.exec(p.idx, "@load", "the awk program loads a shared library")
			case next.kind == tName && (next.text == "include" || next.text == "nsinclude"):
				r.unknown(p.idx, "@include", "the awk program includes another file, which can write files and run commands")
			case next.kind == tName && next.text == "namespace", next.kind == tRegex:
			default:
				r.exec(p.idx, "@", "the awk program calls a function named at run time, which can be system()")
			}
		case t.kind == tString && (strings.HasPrefix(t.text, "/inet/") || strings.HasPrefix(t.text, "/inet4/") || strings.HasPrefix(t.text, "/inet6/")):
			r.exec(p.idx, t.text, "the awk program opens a network connection (gawk's /inet files)")
		case t.kind == tName && t.text == "getline":
			// getline [var] < file: a read.
			for j := k + 1; j < len(toks) && j <= k+3; j++ {
				if toks[j].kind == tOp && toks[j].text == "<" {
					if j+1 < len(toks) && toks[j+1].kind == tString {
						r.file(Read, opnd{Arg{Value: toks[j+1].text, Static: true}, p.idx}, "getline <", "the awk program reads the file")
					}
					break
				}
			}
		case t.kind == tName && (t.text == "print" || t.text == "printf"):
			st = state{print: true}
			continue
		}
		if !st.print {
			continue
		}
		switch {
		case t.kind == tOp && (t.text == "(" || t.text == "["):
			st.depth++
		case t.kind == tOp && (t.text == ")" || t.text == "]"):
			st.depth--
		case t.kind == tNewline && k > 0 && awkContinues(toks[k-1]):
			// print 1,<newline>2 > "f" is one statement: awk reads on
			// after a comma, && and || (gawk also after ? and :).
		case t.kind == tNewline || t.kind == tOp && (t.text == ";" || t.text == "}" || t.text == "{"):
			st = state{}
		case st.depth <= 0 && t.kind == tOp && (t.text == ">" || t.text == ">>"):
			// The file is the whole expression after > up to the end of
			// the statement: "a" "b" is the file ab, so only a string
			// that ends the statement is the file's name.
			end := awkTok{kind: tNewline}
			if k+2 < len(toks) {
				end = toks[k+2]
			}
			if next.kind == tString && (end.kind == tNewline || end.kind == tOp && (end.text == ";" || end.text == "}")) {
				if next.text != "/dev/stdout" && next.text != "/dev/stderr" {
					r.file(Write, opnd{Arg{Value: next.text, Static: true}, p.idx}, t.text, "the awk program prints into the file")
				}
			} else {
				r.add(Effect{Kind: Write, Word: p.idx, Option: t.text, Path: "(named by the awk program)", Dynamic: true,
					Why: "the awk program prints into a file"})
			}
			st = state{}
		}
	}
}

// awkContinues reports whether a newline after t continues the statement
// rather than ending it.
func awkContinues(t awkTok) bool {
	return t.kind == tOp && (t.text == "," || t.text == "&&" || t.text == "||" || t.text == "?" || t.text == ":")
}

type awkKind int

const (
	tOp awkKind = iota
	tName
	tNumber
	tString
	tRegex
	tNewline
)

type awkTok struct {
	kind awkKind
	text string // a string's value without its escapes read; a name; an operator
}

// awkKeywords are awk's reserved words after which an operand is
// expected, so a / there starts a regular expression.
var awkKeywords = map[string]bool{
	"BEGIN": true, "END": true, "BEGINFILE": true, "ENDFILE": true, "function": true, "func": true,
	"if": true, "else": true, "while": true, "for": true, "do": true, "break": true, "continue": true,
	"next": true, "nextfile": true, "exit": true, "return": true, "delete": true, "in": true,
	"print": true, "printf": true, "switch": true, "case": true, "default": true,
}

// awkLex splits an awk program into tokens, or says why it cannot. A /
// starts a regular expression where an operand is expected (at the
// start, after an operator, a keyword, an opening parenthesis or the
// closing parenthesis of an if, while or for condition) and divides
// after an operand; after length and getline mawk and gawk disagree
// (mawk reads a regular expression, gawk a division), and the program
// cannot be read.
func awkLex(src string) ([]awkTok, string) {
	var out []awkTok
	// parens remembers, for each open parenthesis, whether it holds the
	// condition of if, while or for (after which a statement starts).
	var parens []bool
	afterControl := false
	operandEnd := func() bool {
		if afterControl {
			return false
		}
		if len(out) == 0 {
			return false
		}
		t := out[len(out)-1]
		switch t.kind {
		case tNumber, tString, tRegex:
			return true
		case tName:
			return !awkKeywords[t.text]
		case tOp:
			return t.text == ")" || t.text == "]" || t.text == "++" || t.text == "--"
		}
		return false
	}
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i += 2 // a line continues
			continue
		case c == '\\' && i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n':
			i += 3
			continue
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '\n':
			out = append(out, awkTok{kind: tNewline})
			afterControl = false
			i++
			continue
		case c == '"':
			j := i + 1
			var b strings.Builder
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\n' {
					return nil, "a string runs past the end of its line"
				}
				if src[j] == '\\' {
					j++
					if j >= len(src) {
						break
					}
				}
				b.WriteByte(src[j])
			}
			if j >= len(src) {
				return nil, "a string does not end"
			}
			out = append(out, awkTok{kind: tString, text: b.String()})
			afterControl = false
			i = j + 1
			continue
		case c == '/' && !operandEnd():
			if prev := last(out); prev.kind == tName && (prev.text == "length" || prev.text == "getline") {
				return nil, "a / after " + prev.text + " divides for gawk and starts a regular expression for mawk"
			}
			j, ok := awkRegexEnd(src, i+1)
			if !ok {
				return nil, "a regular expression does not end"
			}
			out = append(out, awkTok{kind: tRegex, text: src[i+1 : j]})
			afterControl = false
			i = j + 1
			continue
		case c == '/' && operandEnd():
			if prev := last(out); prev.kind == tName && (prev.text == "length" || prev.text == "getline") {
				return nil, "a / after " + prev.text + " divides for gawk and starts a regular expression for mawk"
			}
		case c == '_' || isAlpha(c):
			j := i + 1
			for j < len(src) && (src[j] == '_' || isAlpha(src[j]) || src[j] >= '0' && src[j] <= '9' || src[j] == ':' && j+1 < len(src) && src[j+1] == ':') {
				if src[j] == ':' {
					j++
				}
				j++
			}
			out = append(out, awkTok{kind: tName, text: src[i:j]})
			afterControl = false
			i = j
			continue
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i + 1
			for j < len(src) && (isAlpha(src[j]) || src[j] >= '0' && src[j] <= '9' || src[j] == '.' ||
				(src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E')) {
				j++
			}
			out = append(out, awkTok{kind: tNumber, text: src[i:j]})
			afterControl = false
			i = j
			continue
		}
		// Operators: the two-character ones first.
		op := ""
		for _, o := range []string{"|&", "||", "&&", ">>", "<=", ">=", "==", "!=", "!~", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=", "**"} {
			if strings.HasPrefix(src[i:], o) {
				op = o
				break
			}
		}
		if op == "" {
			if strings.IndexByte("{}()[];,<>=!~+-*/%^?:&|$@", c) < 0 {
				return nil, fmt.Sprintf("the character %q is not awk", c)
			}
			op = string(c)
		}
		wasControl := false
		switch op {
		case "(":
			prev := last(out)
			parens = append(parens, prev.kind == tName && (prev.text == "if" || prev.text == "while" || prev.text == "for"))
		case ")":
			if n := len(parens); n > 0 {
				wasControl = parens[n-1]
				parens = parens[:n-1]
			}
		}
		out = append(out, awkTok{kind: tOp, text: op})
		afterControl = wasControl
		i += len(op)
	}
	return out, ""
}

func last(toks []awkTok) awkTok {
	if len(toks) == 0 {
		return awkTok{kind: tNewline}
	}
	return toks[len(toks)-1]
}

// awkRegexEnd returns the index of the / that ends a regular expression
// starting at i: \ escapes the next character, and a / inside a bracket
// expression is a character (both mawk and gawk read /[/]/ so).
func awkRegexEnd(src string, i int) (int, bool) {
	for i < len(src) {
		switch c := src[i]; c {
		case '\n':
			return 0, false
		case '\\':
			i += 2
			continue
		case '/':
			return i, true
		case '[':
			i++
			if i < len(src) && src[i] == '^' {
				i++
			}
			if i < len(src) && src[i] == ']' {
				i++
			}
			for i < len(src) && src[i] != ']' {
				switch {
				case src[i] == '\n':
					return 0, false
				case src[i] == '\\':
					i++
				case src[i] == '[' && i+1 < len(src) && strings.IndexByte(":.=", src[i+1]) >= 0:
					end := strings.Index(src[i+2:], string(src[i+1])+"]")
					if end < 0 {
						return 0, false
					}
					i += 2 + end + 1
				}
				i++
			}
		}
		i++
	}
	return 0, false
}
