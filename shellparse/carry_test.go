package shellparse

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// TestCarry: what an input that is one cd, export, unset or exit leaves
// behind for the next input of a shell that keeps its directory and
// environment, its words expanded with that shell's environment; and
// why other inputs leave nothing.
func TestCarry(t *testing.T) {
	env := []string{"D=/w", "TWO=a b", "HOME=/home/u"}
	tests := []struct {
		name     string
		dialect  string
		src      string
		want     *Carried
		wantEnv  []EnvChange
		wantNote string
	}{
		{"cd to a directory", "bash", "cd sub", &Carried{Builtin: "cd", Args: []string{"sub"}}, nil, ""},
		{"cd with a parameter and ~", "bash", `cd "$D/x" ~`, &Carried{Builtin: "cd", Args: []string{"/w/x", "/home/u"}}, nil, ""},
		{"export sets and appends", "bash", `export GREETING="hi there" P+=:x`,
			&Carried{Builtin: "export", Exports: []Export{{Name: "GREETING", Value: "hi there"}, {Name: "P", Value: ":x", Append: true}}},
			[]EnvChange{{Name: "GREETING", Value: "hi there"}, {Name: "P", Value: ":x", Append: true}}, ""},
		{"export's value is not split in sh either", "sh", `export A=$TWO`,
			&Carried{Builtin: "export", Exports: []Export{{Name: "A", Value: "a b"}}}, []EnvChange{{Name: "A", Value: "a b"}}, ""},
		{"export -n removes", "bash", "export -n A B=1",
			&Carried{Builtin: "export", Args: []string{"-n", "A"}, Exports: []Export{{Name: "B", Value: "1"}}},
			[]EnvChange{{Name: "A", Unset: true}, {Name: "B", Unset: true}}, ""},
		{"unset stops at -f", "bash", "unset A -f B",
			&Carried{Builtin: "unset", Args: []string{"A", "-f", "B"}}, []EnvChange{{Name: "A", Unset: true}}, ""},
		{"a word that is no variable name changes nothing", "bash", "unset 1x",
			&Carried{Builtin: "unset", Args: []string{"1x"}}, nil, ""},
		{"exit with its status", "bash", "exit 3", &Carried{Builtin: "exit", Args: []string{"3"}}, nil, ""},
		{"a plain assignment dies with its shell", "bash", "X=1", nil, nil, "X= does not carry over to the next line; use export X=..."},
		{"a pattern is not expanded", "bash", "cd *.d", nil, nil, "cd with a pattern does not carry over to the next line; name it literally"},
		{"a command substitution would need running", "bash", "cd $(pwd)", nil, nil, "cd's words need running something"},
		{"an exported array", "bash", "export A[1]=x", nil, nil, "export of an array does not carry over to the next line"},
		{"more than one command", "bash", "cd x; ls", nil, nil, ""},
		{"a redirection", "bash", "cd x >f", nil, nil, ""},
		{"in the background", "bash", "cd x &", nil, nil, ""},
		{"in a subshell", "bash", "(cd x)", nil, nil, ""},
		{"another command", "bash", "pwd", nil, nil, ""},
		{"bytes that are not UTF-8", "bash", "cd \xff", nil, nil, ""},
	}
	cfg := &expand.Config{Env: expand.ListEnviron(env...)}
	x := Expander{
		Fields:  func(w *syntax.Word) ([]string, error) { return expand.Fields(cfg, w) },
		Literal: func(w *syntax.Word) (string, error) { return expand.Literal(cfg, w) },
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.src, Options{Dialect: DialectFor(tc.dialect), Home: "/home/u"})
			if err != nil {
				t.Fatal(err)
			}
			got, note := s.Carry(x)
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("Carry (-got +want):\n%s", diff)
			}
			if tc.wantNote == "" && note != "" || !strings.HasPrefix(note, tc.wantNote) {
				t.Errorf("note %q, want %q", note, tc.wantNote)
			}
			if got != nil {
				if diff := cmp.Diff(got.EnvChanges(), tc.wantEnv); diff != "" {
					t.Errorf("EnvChanges (-got +want):\n%s", diff)
				}
			}
		})
	}
}
