package request

import (
	"slices"
	"testing"
)

// TestCommandEnvDuplicates: an environment a process was given with
// execve can hold a name twice. Whichever copy bash or a program would
// take (bash the last it imports, getenv the first), none of them is a
// dropped variable, an unsafe locale or a shell level below 1.
func TestCommandEnvDuplicates(t *testing.T) {
	rows := []struct {
		in   []string
		want []string
	}{
		{[]string{"LC_ALL=C.UTF-8", "LC_ALL=zh_TW.BIG5"}, []string{"LC_ALL=C.UTF-8", "LC_CTYPE=C.UTF-8", "SHLVL=1"}},
		{[]string{"LC_ALL=zh_TW.BIG5", "LC_ALL=C.UTF-8"}, []string{"LC_ALL=C.UTF-8", "LC_CTYPE=C.UTF-8", "SHLVL=1"}},
		{[]string{"LC_CTYPE=C", "LANG=zh_TW"}, []string{"LC_CTYPE=C", "SHLVL=1"}},
		{[]string{"LC_ALL=zh_TW@x.UTF-8", "LANG=C.UTF-8"}, []string{"LANG=C.UTF-8", "LC_CTYPE=C.UTF-8", "SHLVL=1"}},
		{[]string{"BASH_FUNC_ls%%=() { :; }", "X=1", "BASH_FUNC_ls%%=() { :; }"}, []string{"X=1", "SHLVL=1"}},
		{[]string{"TEXTDOMAINDIR=.", "TEXTDOMAINDIR=/x", "LOCPATH=.", "ZDOTDIR=.", "READNULLCMD=x", "NULLCMD=x"}, []string{"SHLVL=1"}},
		{[]string{"SHLVL=4", "SHLVL=0"}, []string{"SHLVL=1"}},
		{[]string{"SHLVL=0", "SHLVL=4"}, []string{"SHLVL=4"}},
		{[]string{"SHLVL=999"}, []string{"SHLVL=1"}},
		{[]string{"SHLVL=998"}, []string{"SHLVL=998"}},
		{[]string{"SHLVL= 3"}, []string{"SHLVL=1"}},
	}
	for _, r := range rows {
		got := commandEnv(r.in, "/bin/bash")
		want := append(slices.Clone(r.want), "SHELL=/bin/bash")
		if !slices.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", r.in, got, want)
		}
	}
}
