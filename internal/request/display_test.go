package request

import (
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// TestArgvShownAsDecided: an argv is shown to the person (Display, and
// the grant's summary) as the decision's command parts show it (the
// command a wrapper runs is the end of the wrapper's text), quoted in the
// dialect of shell.program, with no control character left raw.
func TestArgvShownAsDecided(t *testing.T) {
	for _, tc := range []struct {
		program string
		argv    []string
		want    string
	}{
		{"/bin/bash", []string{"env", "FOO=bar", "printf", "a b\x1b[2J"}, `env FOO=bar printf $'a b\x1b[2J'`},
		{"/bin/bash", []string{"FOO=bar", "ls"}, `'FOO=bar' ls`},
		{"/bin/sh", []string{"printf", "\r"}, `printf "\r"`},
		{"/bin/zsh", []string{"ls", "=ls"}, `ls '=ls'`},
	} {
		t.Run(tc.program+" "+strings.Join(tc.argv, " "), func(t *testing.T) {
			w := newWorld(t, "shell:\n  program: "+tc.program+"\nsandbox:\n  paths:\n    workspace: {root: WORK, mode: rw}\n")
			io, _, _ := testIO()
			s, err := OpenForFiles(Options{Config: w.config}, io)
			if err != nil {
				t.Fatal(err)
			}
			j := &Job{Argv: tc.argv}
			got := s.Display(j)
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("Display (-got +want):\n%s", diff)
			}
			d := s.Decide(j)
			if len(d.Parts) == 0 || d.Parts[0].Kind != "command" || !strings.HasSuffix(got, d.Parts[0].Text) {
				t.Errorf("the decision shows the argv otherwise than the prompt %q: %+v", got, d.Parts)
			}
			if strings.IndexFunc(got, unicode.IsControl) >= 0 {
				t.Errorf("%q shows a control character raw", got)
			}
		})
	}
}
