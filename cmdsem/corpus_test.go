package cmdsem

import (
	"fmt"
	"sort"
	"strings"
)

// corpus returns argument vectors that exercise every option, subcommand
// and operand position the table knows for the command: each short
// letter alone, clustered and with an attached or separate value, each
// long option whole, abbreviated and with =value, each subcommand with
// the same, operands that are "-", static, known only at run time or
// globs, and words no table lists.
func corpus(name string, s *spec) [][]Arg {
	var out [][]Arg
	st := func(w string) Arg { return Arg{Value: w, Static: true} }
	dyn := Arg{Value: "-", Static: false}
	glob := Arg{Value: "*.c", Glob: true}
	ops := [][]Arg{
		nil,
		{st("in")},
		{st("in"), st("out")},
		{st("a"), st("b"), st("dir/")},
		{st("-")},
		{st("--"), st("-o"), st("x")},
		{dyn},
		{glob, st("out")},
		{st("k=v"), st("x")},
		{st("host:arc"), st("y")},
	}
	var walk func(prefix []Arg, s *spec, depth int)
	walk = func(prefix []Arg, s *spec, depth int) {
		s.init()
		add := func(words ...Arg) {
			for _, o := range ops {
				v := append(append(append([]Arg{}, prefix...), words...), o...)
				out = append(out, v)
			}
		}
		add()
		add(st("--help"))
		add(st("-Q"), st("v"))
		add(st("--no-such-option"))
		add(dyn, st("v"))
		for i := 0; i < len(s.Short); i++ {
			c := s.Short[i]
			if c == ':' {
				continue
			}
			l := string(c)
			add(st("-"+l), st("val"))
			add(st("-" + l + "val"))
			add(st("-v"+l), st("val"))
			add(st("-"+l), Arg{Value: "$x"})
			add(st(l+"f"), st("arc"), st("val"))
		}
		var longs []string
		for l := range s.longs {
			longs = append(longs, l)
		}
		for k := range s.do {
			if len(k) > 1 {
				longs = append(longs, k)
			}
		}
		sort.Strings(longs)
		for _, l := range longs {
			add(st("--"+l), st("val"))
			add(st("--" + l + "=val"))
			add(st("-"+l), st("val"))
			add(st("-" + l + "=val"))
			if len(l) > 3 {
				add(st("--"+l[:3]), st("val"))
			}
		}
		if depth > 0 {
			return
		}
		var subs []string
		for k := range s.sub {
			subs = append(subs, k)
		}
		sort.Strings(subs)
		add(st("no-such-sub"))
		for _, k := range subs {
			walk(append(append([]Arg{}, prefix...), st(k)), s.sub[k], depth+1)
			walk(append(append([]Arg{}, prefix...), st("-C"), st("d"), st(k)), s.sub[k], depth+1)
		}
	}
	walk([]Arg{st(name)}, s, 0)
	// A path as the command name, and scripts for sed and awk.
	out = append(out, []Arg{st("/usr/bin/" + name), st("-o"), st("x")})
	for _, sc := range []string{"w out", "s/a/b/w out", "1r in", "e cmd", "{print > \"f\"}", "BEGIN{system(\"x\")}", "p", "R in"} {
		out = append(out, []Arg{st(name), st(sc), st("file")}, []Arg{st(name), st("-e"), st(sc)}, []Arg{st(name), st("-n"), st(sc)})
	}
	return out
}

// answers renders what the exported functions say about every vector of
// the command's corpus, one line each.
func answers(name string, vecs [][]Arg) []string {
	out := []string{fmt.Sprintf("Known(%s)=%v Risky(%s)=%v", name, Known(name), name, Risky(name))}
	envs := [][]string{nil, {"TMPDIR", "GIT_DIR", "PYTHONPATH", "MAKEFLAGS", "NO_SUCH"}}
	for i, v := range vecs {
		var words []string
		for _, a := range v {
			words = append(words, fmt.Sprintf("%q/%v/%v", a.Value, a.Static, a.Glob))
		}
		env := envs[i%len(envs)]
		out = append(out, strings.Join(words, " ")+" => "+fmt.Sprintf("%+v", Analyze(v, env)))
	}
	return out
}
