package shellparse

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestShellScript: a shell run on a script file names that file as the
// command's script, for policy to judge where it lies; a shell given
// code, reading its input or -s names none.
func TestShellScript(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // each command's script, "" for none
	}{
		{"bash on a file", "bash scripts/x.sh a b", []string{"scripts/x.sh"}},
		{"after options", "bash -e -o pipefail --norc ./x.sh", []string{"./x.sh"}},
		{"named like an option", "sh -- -x.sh", []string{""}},
		{"through a wrapper", "nice -n 5 dash x.sh", []string{"", "x.sh"}},
		{"inside -c", "bash -c 'sh y.sh'", []string{"", "y.sh"}},
		{"-c code", "bash -c ls", []string{"", ""}},
		{"-s reads its input", "bash -s x", []string{""}},
		{"its input", "bash < x.sh", []string{""}},
		{"version", "bash --version", []string{""}},
		{"find -exec", `find . -exec bash {} \;`, []string{"", ""}},
		{"xargs", "xargs bash x.sh", []string{"", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range s.Commands {
				v := ""
				if c.Script != nil {
					v = c.Script.Value
				}
				got = append(got, v)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("%s: scripts (-got +want):\n%s", tt.src, diff)
			}
		})
	}
}
