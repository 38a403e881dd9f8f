package cmdsem

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// sedOptions are sed's options, built on first use.
var sedOptions struct {
	once sync.Once
	spec *spec
}

func buildSedOptions() {
	sedOptions.spec = &spec{
		Options: Options{Short: "ne:f:i::l:EnrsuzbE", AllShort: true,
			Long:   "debug expression= file= follow-symlinks in-place[=] line-length= null-data zero-terminated posix quiet regexp-extended sandbox separate silent unbuffered binary help version",
			Abbrev: true, StrictLong: true, Permute: true},
	}
}

// sedCmd reads sed's options, then its script (from -e, or the first
// operand) for the commands that write (w, W, s///w), read (r, R) or run
// programs (e, s///e), and -i, which rewrites every input file.
func sedCmd(s *spec, r *result, i int) {
	sedOptions.once.Do(buildSedOptions)
	o := sedOptions.spec
	o.init()
	ops, _ := o.scan(r, i)
	scripts := append(append([]opnd(nil), r.all["e"]...), r.all["expression"]...)
	slices.SortFunc(scripts, func(a, b opnd) int { return a.idx - b.idx })
	if f, ok := r.vals["f"]; ok {
		r.file(Read, f, "-f", "reads sed commands from the file")
		r.unknown(f.idx, "-f", "the sed program in the file can write files and run programs, and guardrun cannot see it")
	} else if f, ok := r.vals["file"]; ok {
		r.file(Read, f, "--file", "reads sed commands from the file")
		r.unknown(f.idx, "--file", "the sed program in the file can write files and run programs, and guardrun cannot see it")
	} else if len(scripts) == 0 && len(ops) > 0 {
		scripts, ops = ops[:1], ops[1:]
	}
	if !r.hasAny("sandbox") && len(scripts) > 0 {
		// sed joins its -e scripts with newlines: -e 'a\' -e 'text'
		// is one command.
		joined := opnd{Arg{Static: true}, scripts[0].idx}
		var texts []string
		for _, sc := range scripts {
			if !sc.Static {
				r.exec(sc.idx, "", "the sed program is not known until run time; it can write files and run programs")
				joined.Static = false
				break
			}
			texts = append(texts, sc.Value)
		}
		if joined.Static {
			joined.Value = strings.Join(texts, "\n")
			sedScript(r, joined)
		}
	}
	inPlace := r.hasAny("i", "in-place")
	suffix := ""
	for _, name := range []string{"i", "in-place"} {
		if v, ok := r.vals[name]; ok {
			suffix = v.Value
		}
	}
	for _, op := range ops {
		if !inPlace {
			if op.Value != "-" {
				r.file(Read, op, "", "reads the file")
			}
			continue
		}
		r.file(Write, op, "-i", "sed -i rewrites the file")
		if suffix != "" && op.Static {
			// GNU sed renames the file to its backup: FILE+SUFFIX, or
			// SUFFIX with each * replaced by FILE as written, which
			// may name another directory (-i'bak/*').
			b := op.Value + suffix
			if strings.Contains(suffix, "*") {
				b = strings.ReplaceAll(suffix, "*", op.Value)
			}
			r.file(Write, opnd{Arg{Value: b, Static: true}, op.idx}, "-i"+suffix, "sed -i keeps the file's backup here")
		}
	}
}

// sedScript scans a sed program for commands with effects.
func sedScript(r *result, sc opnd) {
	p := &sedParser{s: sc.Value}
	for {
		p.skip(" \t\n;")
		if p.eof() {
			return
		}
		if !p.address() {
			r.unknown(sc.idx, "", "the sed program has an address guardrun cannot read")
			return
		}
		p.skip(" \t!")
		if p.eof() {
			return
		}
		c := p.next()
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case '#':
			p.line()
		case ':':
			p.label()
		case 'a', 'i', 'c':
			p.text()
		case 'b', 't', 'T', 'v':
			p.label()
		case 'q', 'Q', 'l', 'L':
			p.skip(" \t")
			p.skip("0123456789")
		case 'r', 'R':
			r.file(Read, opnd{Arg{Value: sedFileName(p.line()), Static: true}, sc.idx}, string(c), "sed reads the file into its output")
		case 'w', 'W':
			if !sedWrite(r, sc, string(c), sedFileName(p.line())) {
				return
			}
		case 'e':
			r.exec(sc.idx, "e", "sed's e command runs a shell command")
			p.line()
		case 's':
			flags, ok := p.subst()
			if !ok {
				r.unknown(sc.idx, "s", "the sed program has an s command guardrun cannot read")
				return
			}
			if strings.ContainsRune(flags, 'e') {
				r.exec(sc.idx, "s///e", "sed's s///e runs the pattern space as a shell command")
			}
			if k := strings.IndexByte(flags, 'w'); k >= 0 && !sedWrite(r, sc, "s///w", sedFileName(p.line())) {
				return
			}
		case 'y':
			if !p.transliterate() {
				r.unknown(sc.idx, "y", "the sed program has a y command guardrun cannot read")
				return
			}
		default:
			r.unknown(sc.idx, string(c), fmt.Sprintf("sed command %q is not one guardrun knows", c))
			return
		}
	}
}

// sedWrite records the file a w command writes; sed refuses a w
// without one, and the scan stops there.
func sedWrite(r *result, sc opnd, cmd, file string) bool {
	switch file {
	case "":
		r.unknown(sc.idx, cmd, "sed's "+cmd+" without a file name: sed refuses the program")
		return false
	case "/dev/stdout", "/dev/stderr":
		return true
	}
	r.file(Write, opnd{Arg{Value: file, Static: true}, sc.idx}, cmd, "sed writes to the file")
	return true
}

type sedParser struct {
	s string
	i int
}

func (p *sedParser) eof() bool  { return p.i >= len(p.s) }
func (p *sedParser) next() byte { c := p.s[p.i]; p.i++; return c }
func (p *sedParser) skip(set string) {
	for !p.eof() && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

// line returns the rest of the line (file names and e commands take it
// whole, ; included).
func (p *sedParser) line() string {
	j := strings.IndexByte(p.s[p.i:], '\n')
	if j < 0 {
		j = len(p.s) - p.i
	}
	out := p.s[p.i : p.i+j]
	p.i += j
	return out
}

// text skips a/i/c text: to the end of the line, with backslash-newline
// continuing it.
func (p *sedParser) text() {
	for !p.eof() {
		c := p.next()
		if c == '\\' && !p.eof() {
			p.i++
			continue
		}
		if c == '\n' {
			return
		}
	}
}

// label skips a label (of :, b, t, T) or v's version: GNU sed 4.9 ends
// it at a blank, ;, }, # or a newline, and reads on after it (:a;e cmd
// runs cmd).
func (p *sedParser) label() {
	p.skip(" \t")
	for !p.eof() && strings.IndexByte(" \t\n;}#", p.s[p.i]) < 0 {
		p.i++
	}
}

// address skips zero, one or two addresses.
func (p *sedParser) address() bool {
	for k := 0; k < 2; k++ {
		if p.eof() {
			return true
		}
		switch c := p.s[p.i]; {
		case c >= '0' && c <= '9':
			p.skip("0123456789")
			if !p.eof() && p.s[p.i] == '~' {
				p.i++
				p.skip("0123456789")
			}
		case c == '$':
			p.i++
		case c == '/' || c == '\\':
			if c == '\\' {
				p.i++
				if p.eof() {
					return false
				}
			}
			d := p.next()
			if !p.regex(d) {
				return false
			}
			p.skip("IM")
		case (c == '+' || c == '~') && k == 1:
			p.i++
			p.skip("0123456789")
		default:
			return k > 0 || true
		}
		p.skip(" \t")
		if k == 0 && !p.eof() && p.s[p.i] == ',' {
			p.i++
			p.skip(" \t")
			continue
		}
		return true
	}
	return true
}

// until skips to just past the next unescaped d.
func (p *sedParser) until(d byte) bool {
	for !p.eof() {
		c := p.next()
		if c == '\\' {
			if p.eof() {
				return false
			}
			p.i++
			continue
		}
		if c == d {
			return true
		}
		if c == '\n' && d != '\n' {
			return false
		}
	}
	return false
}

// transliterate skips y/src/dst/, where brackets are plain characters.
func (p *sedParser) transliterate() bool {
	if p.eof() {
		return false
	}
	d := p.next()
	return d != '\n' && d != '\\' && p.until(d) && p.until(d)
}

// regex skips a regular expression up to just past the next unescaped
// d outside a bracket expression: GNU sed reads s/[/]/x/ as a match of
// /, so a d inside [...] (also [:class:], [.x.], [=x=] and a leading ])
// ends nothing. Inside brackets a backslash is an ordinary character.
func (p *sedParser) regex(d byte) bool {
	for !p.eof() {
		c := p.next()
		switch {
		case c == '\\':
			if p.eof() {
				return false
			}
			p.i++
		case c == d:
			return true
		case c == '\n':
			return false
		case c == '[':
			if !p.bracket() {
				return false
			}
		}
	}
	return false
}

// bracket skips a bracket expression after its [.
func (p *sedParser) bracket() bool {
	if !p.eof() && p.s[p.i] == '^' {
		p.i++
	}
	if !p.eof() && p.s[p.i] == ']' {
		p.i++
	}
	for !p.eof() {
		c := p.next()
		switch {
		case c == ']':
			return true
		case c == '\n':
			return false
		case c == '[' && !p.eof() && strings.IndexByte(":.=", p.s[p.i]) >= 0:
			end := "]"
			end = string(p.s[p.i]) + end
			p.i++
			k := strings.Index(p.s[p.i:], end)
			if k < 0 {
				return false
			}
			p.i += k + len(end)
		}
	}
	return false
}

// subst skips s/regex/replacement/ and returns its flags.
func (p *sedParser) subst() (string, bool) {
	if p.eof() {
		return "", false
	}
	d := p.next()
	if d == '\n' || d == '\\' {
		return "", false
	}
	// The pattern, then the replacement, each ended by d.
	if !p.regex(d) {
		return "", false
	}
	if !p.until(d) {
		return "", false
	}
	start := p.i
	for !p.eof() && strings.IndexByte("gpeiImM0123456789", p.s[p.i]) >= 0 {
		p.i++
	}
	if !p.eof() && p.s[p.i] == 'w' {
		p.i++
		return p.s[start:p.i], true
	}
	return p.s[start:p.i], true
}

// sedFileName is the file name of an r, R, w or W command (and s///w):
// GNU sed skips the blanks before it and keeps the rest of the line, so
// `w out ` writes a file whose name ends in a space.
func sedFileName(rest string) string {
	return strings.TrimLeft(rest, " \t")
}
