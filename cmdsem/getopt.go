package cmdsem

import (
	"strings"
	"sync"
)

// Options describe a program's options in getopt terms: a getopt
// optstring for the short ones, a list for the long ones, and how the
// program reads the words around them. It is guardrun's one notation for
// options, and Scan its one reader: the table's specs hold one each, and
// package shellparse reads the options of the wrappers it looks through
// (nice, timeout, env, xargs, sudo, the shells) with it.
type Options struct {
	// Short is a getopt optstring: "o:" takes an argument, "x::" an
	// optional attached one, "a" none.
	Short string
	// Long lists long options: "name", "name=" (argument required),
	// "name[=]" (optional, only attached).
	Long string
	// AllShort: Short lists every letter; another is a TokUnknown. Without
	// it, another letter is a flag that is not Listed.
	AllShort bool
	// ReadOnAfterUnknown: after a letter AllShort does not allow, the rest
	// of its word is read as more letters, as getopt does. Without it the
	// rest is left unread, since it may be that option's argument.
	ReadOnAfterUnknown bool
	// Abbrev: unambiguous prefixes of long options are accepted
	// (getopt_long, git's parse-options).
	Abbrev bool
	// StrictLong: a long option Long does not list is a TokUnknown;
	// without it, only an ambiguous prefix is.
	StrictLong bool
	// Permute: options may follow operands (GNU getopt). Without it the
	// first operand ends the options.
	Permute bool
	// GoFlags: Go's flag package: -name and --name alike, -name=value or
	// -name value, no clusters.
	GoFlags bool
	// Plus: +o is an option too (the shells' set options).
	Plus bool
	// Numeric: -N is an option, "N" with the digits as its value (nice
	// -10).
	Numeric bool
	// Dash is how a lone "-" is read.
	Dash DashMode
	// StopAfter lists options (letters and long names, space-separated)
	// after which Scan stops, leaving the words that follow unread (env
	// -S rewrites them).
	StopAfter string
	// SkipRunTimeOptions: a word known only at run time whose known
	// prefix starts with - (or + with Plus) is reported as a TokRunTime
	// and read past, and any other is an operand. Without it, every such
	// word is reported as a TokRunTime and is an operand.
	SkipRunTimeOptions bool

	// initOnce parses Long into longs, on first use: Options are package
	// data, and most runs meet few of them.
	initOnce sync.Once
	longs    map[string]ArgMode
}

// ArgMode is how an option takes its argument.
type ArgMode int

const (
	NoArg       ArgMode = iota
	RequiredArg         // -o F, -oF, --output F, --output=F
	OptionalArg         // -xVAL, --name=VAL only
)

// DashMode is how a lone "-" is read.
type DashMode int

const (
	DashOperand DashMode = iota // an operand (standard input, mostly)
	DashOption                  // an option named "-" (env: - is -i)
	DashEnds                    // the end of the options, as -- (shells)
)

// TokenKind says what a Token is.
type TokenKind int

const (
	// TokOption is an option: Listed, or a letter or long name the
	// Options leave open.
	TokOption TokenKind = iota
	// TokUnknown is an option the Options do not allow: a letter with
	// AllShort, a long name with StrictLong, an ambiguous prefix.
	TokUnknown
	// TokRunTime is a word known only at run time where an option may
	// stand.
	TokRunTime
)

// Token is one option Scan read, or one word it could not read.
type Token struct {
	Kind TokenKind
	// Name is the option: its letter, its long name as listed (a prefix
	// resolved), the long name as written when it is not listed, "N" for
	// -N (Numeric) and "-" for a lone - (DashOption).
	Name string
	// Long is set for an option written as a long one.
	Long bool
	// Listed is set when Short or Long lists the option.
	Listed bool
	Mode   ArgMode
	// Word is the index of the option's word.
	Word int
	// Value is the option's argument when HasVal: part of the option's
	// own word when Attached (-oF, --out=F), otherwise word ValWord.
	Value            string
	HasVal, Attached bool
	ValWord          int
	// Why is "unknown" or "ambiguous" for a long TokUnknown.
	Why string
}

// Scanned is what Scan read.
type Scanned struct {
	Tokens []Token
	// Operands are the indices of operands read among the options
	// (Permute).
	Operands []int
	// Next is the first word not read: the first operand (without
	// Permute), the word after -- or after a StopAfter option, or
	// len(argv). Every word from Next on is an operand.
	Next int
	// Ended is set when -- (or a lone - with DashEnds) ended the options.
	Ended bool
}

func (o *Options) init() {
	o.initOnce.Do(func() {
		o.longs = map[string]ArgMode{}
		for _, l := range strings.Fields(o.Long) {
			switch {
			case strings.HasSuffix(l, "[=]"):
				o.longs[strings.TrimSuffix(l, "[=]")] = OptionalArg
			case strings.HasSuffix(l, "="):
				o.longs[strings.TrimSuffix(l, "=")] = RequiredArg
			default:
				o.longs[l] = NoArg
			}
		}
	})
}

// Scan reads the options of argv from index i on.
func (o *Options) Scan(argv []Arg, i int) Scanned {
	return o.scan(argv, i, o.Permute)
}

func (o *Options) scan(argv []Arg, i int, permute bool) Scanned {
	o.init()
	var out Scanned
	add := func(t Token) { out.Tokens = append(out.Tokens, t) }
	for i < len(argv) {
		a := argv[i]
		v := a.Value
		if !a.Static {
			if o.SkipRunTimeOptions {
				if !strings.HasPrefix(v, "-") && !(o.Plus && strings.HasPrefix(v, "+")) {
					break
				}
				add(Token{Kind: TokRunTime, Word: i})
				i++
				continue
			}
			add(Token{Kind: TokRunTime, Word: i})
			if !permute {
				break
			}
			out.Operands = append(out.Operands, i)
			i++
			continue
		}
		long := o.GoFlags && strings.HasPrefix(v, "-") || strings.HasPrefix(v, "--")
		switch {
		case v == "--":
			out.Ended = true
			out.Next = i + 1
			return out
		case v == "-" && o.Dash == DashOption:
			add(Token{Kind: TokOption, Name: "-", Word: i})
			i++
			continue
		case v == "-" && o.Dash == DashEnds:
			out.Ended = true
			out.Next = i + 1
			return out
		case v != "-" && long:
			name := v[1:]
			if !o.GoFlags || strings.HasPrefix(name, "-") {
				name = name[1:]
			}
			t := o.longToken(argv, &i, name)
			add(t)
			i++
			if o.stops(t.Name) {
				out.Next = i
				return out
			}
			continue
		case v != "-" && strings.HasPrefix(v, "-") || o.Plus && strings.HasPrefix(v, "+") && len(v) > 1:
			if o.Numeric && isDigits(v[1:]) {
				add(Token{Kind: TokOption, Name: "N", Word: i, Value: v[1:], HasVal: true, Attached: true, ValWord: i})
				i++
				continue
			}
			if o.shortTokens(argv, &i, add) {
				out.Next = i
				return out
			}
			continue
		}
		// An operand.
		if !permute {
			break
		}
		out.Operands = append(out.Operands, i)
		i++
	}
	out.Next = i
	return out
}

// longToken reads the long option name (dashes stripped) of word *i,
// and its argument, which may be the next word.
func (o *Options) longToken(argv []Arg, i *int, written string) Token {
	name, val, hasEq := strings.Cut(written, "=")
	full, mode, why := o.findLong(name)
	t := Token{Kind: TokOption, Name: full, Long: true, Listed: true, Mode: mode, Word: *i}
	if why != "" {
		t = Token{Kind: TokOption, Name: name, Long: true, Word: *i}
		// ---name is no option getopt_long, parse-options or Go's flag
		// package accepts, but a program's own reader may take it for
		// --name: it cannot be judged.
		if o.StrictLong || why == "ambiguous" || strings.HasPrefix(name, "-") {
			t.Kind, t.Why = TokUnknown, why
		}
	}
	switch {
	case hasEq:
		t.Value, t.HasVal, t.Attached, t.ValWord = val, true, true, *i
	case t.Listed && mode == RequiredArg && *i+1 < len(argv):
		*i++
		t.Value, t.HasVal, t.ValWord = argv[*i].Value, true, *i
	}
	return t
}

// shortTokens reads the letters of word *i (after its - or +), and an
// argument that may be the next word, and reports whether a StopAfter
// option was among them. *i is left after the words read.
func (o *Options) shortTokens(argv []Arg, i *int, add func(Token)) (stop bool) {
	v := argv[*i].Value
	w := *i
	for j := 1; j < len(v); j++ {
		name := v[j : j+1]
		mode, listed := o.shortMode(v[j])
		if !listed {
			if !o.AllShort {
				add(Token{Kind: TokOption, Name: name, Word: w})
				continue
			}
			add(Token{Kind: TokUnknown, Name: name, Word: w})
			if o.ReadOnAfterUnknown {
				continue
			}
			break
		}
		t := Token{Kind: TokOption, Name: name, Listed: true, Mode: mode, Word: w}
		switch mode {
		case NoArg:
			add(t)
			continue
		case RequiredArg:
			if j+1 < len(v) {
				t.Value, t.HasVal, t.Attached, t.ValWord = v[j+1:], true, true, w
			} else if *i+1 < len(argv) {
				*i++
				t.Value, t.HasVal, t.ValWord = argv[*i].Value, true, *i
			}
			stop = o.stops(name)
		case OptionalArg:
			if j+1 < len(v) {
				t.Value, t.HasVal, t.Attached, t.ValWord = v[j+1:], true, true, w
			}
		}
		add(t)
		break
	}
	*i++
	return stop
}

func (o *Options) stops(name string) bool {
	if o.StopAfter == "" {
		return false
	}
	for _, s := range strings.Fields(o.StopAfter) {
		if s == name {
			return true
		}
	}
	return false
}

// shortMode says how letter c takes its argument, and whether Short
// lists it.
func (o *Options) shortMode(c byte) (ArgMode, bool) {
	i := strings.IndexByte(o.Short, c)
	if i < 0 || c == ':' {
		return NoArg, false
	}
	switch {
	case strings.HasPrefix(o.Short[i+1:], "::"):
		return OptionalArg, true
	case strings.HasPrefix(o.Short[i+1:], ":"):
		return RequiredArg, true
	}
	return NoArg, true
}

// findLong returns the long option name matches: itself, or with Abbrev
// the one option it is an unambiguous prefix of. why is "unknown" or
// "ambiguous" when there is none.
func (o *Options) findLong(name string) (full string, mode ArgMode, why string) {
	o.init()
	if m, ok := o.longs[name]; ok {
		return name, m, ""
	}
	if !o.Abbrev || name == "" {
		return "", 0, "unknown"
	}
	var found []string
	for l := range o.longs {
		if strings.HasPrefix(l, name) {
			found = append(found, l)
		}
	}
	switch len(found) {
	case 0:
		return "", 0, "unknown"
	case 1:
		return found[0], o.longs[found[0]], ""
	}
	// getopt_long accepts an ambiguous prefix when every candidate is
	// the same option; here they never are.
	return "", 0, "ambiguous"
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
