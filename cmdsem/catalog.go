package cmdsem

import (
	"sort"
	"strings"
)

// Option is one table entry: an option of a command (or subcommand) that
// writes, reads or runs something.
type Option struct {
	// Command is the command and subcommand, "git diff".
	Command string
	// Short is the option's letter, or 0; Long its long name, or "".
	Short byte
	Long  string
	// TakesValue is set when the option takes a value (required);
	// OptionalValue when only an attached one.
	TakesValue, OptionalValue bool
	// GoStyle: Go's flag syntax (-name value, -name=value).
	GoStyle bool
	// Cluster is a short option without effect that can share a word
	// with Short (-n in -no F), or 0.
	Cluster byte
	// Prefix is the shortest abbreviation of Long the program accepts,
	// or "" where it accepts none.
	Prefix string
	Kind   Kind
	Why    string
}

// Catalog lists every option of the table that writes, reads, deletes or
// runs something, for documentation and tests.
func Catalog() []Option {
	var out []Option
	var walk func(name string, s *spec)
	walk = func(name string, s *spec) {
		s.init()
		seen := map[act]bool{}
		// Pair each short letter with the long name sharing its act.
		type pair struct {
			short byte
			long  string
		}
		byAct := map[act]*pair{}
		var order []act
		for k, a := range s.do {
			switch a.kind {
			case Write, Read, Delete, Exec, "target":
			default:
				continue
			}
			p := byAct[a]
			if p == nil {
				p = &pair{}
				byAct[a] = p
				order = append(order, a)
			}
			if len(k) == 1 && !s.GoFlags {
				if _, ok := s.shortMode(k[0]); ok {
					if p.short != 0 {
						// Two letters for one act: list separately.
						out = append(out, s.entry(name, k[0], "", a))
						continue
					}
					p.short = k[0]
				}
			} else if _, ok := s.longs[k]; ok {
				if p.long != "" {
					out = append(out, s.entry(name, 0, k, a))
					continue
				}
				p.long = k
			}
		}
		for _, a := range order {
			if seen[a] {
				continue
			}
			seen[a] = true
			p := byAct[a]
			if p.short == 0 && p.long == "" {
				continue
			}
			out = append(out, s.entry(name, p.short, p.long, a))
		}
		for sub, ss := range s.sub {
			walk(name+" "+sub, ss)
		}
	}
	for name, s := range specs() {
		walk(name, s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Command != b.Command {
			return a.Command < b.Command
		}
		if a.Long != b.Long {
			return a.Long < b.Long
		}
		return a.Short < b.Short
	})
	return out
}

func (s *spec) entry(name string, short byte, long string, a act) Option {
	o := Option{Command: name, Short: short, Long: long, Kind: a.kind, Why: a.why, GoStyle: s.GoFlags}
	if o.Kind == "target" {
		o.Kind = Write
	}
	if short != 0 {
		m, _ := s.shortMode(short)
		o.TakesValue, o.OptionalValue = m == RequiredArg, m == OptionalArg
	}
	for i := 0; i < len(s.Short) && !s.GoFlags; i++ {
		c := s.Short[i]
		if m, ok := s.shortMode(c); ok && m == NoArg && c != short && s.do[string(c)].kind == "" && c >= 'a' && c <= 'z' {
			o.Cluster = c
			break
		}
	}
	if long != "" && s.Abbrev {
		for n := 1; n < len(long); n++ {
			if l, _, bad := s.findLong(long[:n]); bad == "" && l == long {
				o.Prefix = long[:n]
				break
			}
		}
	}
	if long != "" {
		m := s.longs[long]
		o.TakesValue = o.TakesValue || m == RequiredArg
		o.OptionalValue = o.OptionalValue || m == OptionalArg && !o.TakesValue
	}
	return o
}

// Commands lists the commands the table describes.
func Commands() []string {
	var out []string
	for name := range specs() {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func (o Option) String() string {
	var names []string
	if o.Short != 0 {
		names = append(names, "-"+string(o.Short))
	}
	if o.Long != "" {
		dash := "--"
		if o.GoStyle {
			dash = "-"
		}
		names = append(names, dash+o.Long)
	}
	return o.Command + " " + strings.Join(names, "/")
}
