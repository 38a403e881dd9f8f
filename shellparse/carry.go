package shellparse

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Carried is what one input does to a shell that keeps its working
// directory and environment from one input to the next but runs each
// input in a fresh process (guardrun shell): the effect of an input that
// is exactly one cd, export, unset or exit, which that shell applies
// itself once the input ran.
type Carried struct {
	// Builtin is "cd", "export", "unset" or "exit".
	Builtin string
	// Args are its words after the name, expanded; for export, only the
	// options and the names without a value.
	Args []string
	// Exports are export's NAME=value and NAME+=value words, in order.
	Exports []Export
}

// Export is one NAME=value (Append: NAME+=value) of export.
type Export struct {
	Name, Value string
	Append      bool
}

// EnvChange is one change an export or unset makes to the shell's
// environment: Unset removes Name; otherwise Name is set to Value,
// appended to its old value when Append.
type EnvChange struct {
	Name, Value   string
	Append, Unset bool
}

// EnvChanges are the changes a Carried export or unset makes to the
// environment, in the order to apply them: export -n NAME and unset NAME
// remove NAME, export NAME=value sets it; a word that is not a variable
// name changes nothing, and unset -f (functions) ends the list.
func (c *Carried) EnvChanges() []EnvChange {
	var out []EnvChange
	switch c.Builtin {
	case "export":
		unexport := false
		for _, a := range c.Args {
			switch {
			case a == "-n":
				unexport = true
			case strings.HasPrefix(a, "-"):
			case unexport && varName().MatchString(a):
				out = append(out, EnvChange{Name: a, Unset: true})
			}
		}
		for _, a := range c.Exports {
			if !varName().MatchString(a.Name) {
				continue
			}
			if unexport {
				out = append(out, EnvChange{Name: a.Name, Unset: true})
				continue
			}
			out = append(out, EnvChange{Name: a.Name, Value: a.Value, Append: a.Append})
		}
	case "unset":
		for _, a := range c.Args {
			if a == "-f" {
				break // functions do not outlive a line anyway
			}
			if !strings.HasPrefix(a, "-") && varName().MatchString(a) {
				out = append(out, EnvChange{Name: a, Unset: true})
			}
		}
	}
	return out
}

// Expander expands words as the shell that runs the input would, with
// its environment and without running anything (mvdan.cc/sh/v3/expand
// does): Fields into fields, Literal an assignment's value, which is not
// split. An error means the word needs something run, such as a command
// substitution.
type Expander struct {
	Fields  func(*syntax.Word) ([]string, error)
	Literal func(*syntax.Word) (string, error)
}

// Carry returns the effect of the script (see Carried) when it is exactly
// one cd, export, unset or exit: one plain command, with no redirection,
// assignment, pipe or background, whose words expand without running
// anything and without globbing. It is read from the tree the analysis
// parsed, in the script's dialect. Otherwise c is nil, and note, unless
// empty, says why what the script does cannot carry over to the next
// input: a plain assignment, a pattern, a word that needs something run.
func (s *Script) Carry(x Expander) (c *Carried, note string) {
	st := s.single
	if st == nil || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 {
		return nil, ""
	}
	switch cmd := st.Cmd.(type) {
	case *syntax.CallExpr:
		return carryCall(cmd, x)
	case *syntax.DeclClause:
		return carryDecl(cmd, x)
	}
	return nil, ""
}

func carryCall(c *syntax.CallExpr, x Expander) (*Carried, string) {
	if len(c.Args) == 0 && len(c.Assigns) > 0 && c.Assigns[0].Name != nil {
		// Each input runs in a fresh shell: a plain variable dies with
		// it.
		n := c.Assigns[0].Name.Value
		return nil, fmt.Sprintf("%s= does not carry over to the next line; use export %s=...", n, n)
	}
	if len(c.Assigns) > 0 || len(c.Args) == 0 {
		return nil, ""
	}
	name := c.Args[0].Lit()
	switch name {
	case "cd", "export", "unset", "exit":
	default:
		return nil, ""
	}
	for _, w := range c.Args[1:] {
		if hasGlob(w) {
			return nil, fmt.Sprintf("%s with a pattern does not carry over to the next line; name it literally", name)
		}
	}
	var args []string
	for _, w := range c.Args[1:] {
		var ws []string
		var err error
		if name == "export" && isAssignWord(w) {
			// A declaration utility: NAME=$X is not split (POSIX
			// dialects parse export as a plain command).
			var v string
			v, err = x.Literal(w)
			ws = []string{v}
		} else {
			ws, err = x.Fields(w)
		}
		if err != nil {
			return nil, fmt.Sprintf("%s's words need running something (%v), so its effect does not carry over to the next line", name, err)
		}
		args = append(args, ws...)
	}
	out := &Carried{Builtin: name, Args: args}
	if name == "export" {
		out.Args = nil
		for _, a := range args {
			if n, v, ok := strings.Cut(a, "="); ok && !strings.HasPrefix(a, "-") {
				out.Exports = append(out.Exports, Export{Name: strings.TrimSuffix(n, "+"), Value: v, Append: strings.HasSuffix(n, "+")})
			} else {
				out.Args = append(out.Args, a)
			}
		}
	}
	return out, ""
}

func carryDecl(c *syntax.DeclClause, x Expander) (*Carried, string) {
	if c.Variant == nil || c.Variant.Value != "export" {
		return nil, ""
	}
	out := &Carried{Builtin: "export"}
	for _, a := range c.Args {
		if a.Array != nil || a.Index != nil {
			return nil, "export of an array does not carry over to the next line"
		}
		switch {
		case a.Naked && a.Name != nil:
			out.Args = append(out.Args, a.Name.Value)
		case a.Naked:
			if hasGlob(a.Value) {
				return nil, "export with a pattern does not carry over to the next line; name it literally"
			}
			ws, err := x.Fields(a.Value)
			if err != nil {
				return nil, fmt.Sprintf("export's words need running something (%v), so its effect does not carry over to the next line", err)
			}
			out.Args = append(out.Args, ws...)
		default:
			v := ""
			if a.Value != nil {
				var err error
				if v, err = x.Literal(a.Value); err != nil {
					return nil, fmt.Sprintf("export's value needs running something (%v), so it does not carry over to the next line", err)
				}
			}
			out.Exports = append(out.Exports, Export{Name: a.Name.Value, Value: v, Append: a.Append})
		}
	}
	return out, ""
}

var varName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

var assignPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\+?=`) })

// isAssignWord reports whether w starts with a literal NAME= or NAME+=.
func isAssignWord(w *syntax.Word) bool {
	if len(w.Parts) == 0 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && assignPrefix().MatchString(l.Value)
}

// hasGlob reports whether a word has an unquoted pattern character, which
// the shell would expand against files guardrun does not list.
func hasGlob(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.ContainsAny(l.Value, "*?[") {
			return true
		}
		if _, ok := p.(*syntax.ExtGlob); ok {
			return true
		}
	}
	return false
}
