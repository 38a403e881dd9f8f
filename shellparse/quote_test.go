package shellparse

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"mvdan.cc/sh/v3/syntax"
)

// TestQuoteArgv: an argv is shown as the dialect's shell would read it
// back, never with a raw control character, plain words left alone.
func TestQuoteArgv(t *testing.T) {
	tests := []struct {
		name string
		lang syntax.LangVariant
		argv []string
		want string
	}{
		{"plain words stay as they are", syntax.LangBash, []string{"git", "log", "--format=%h", "a,b:c+d@e"}, "git log --format=%h a,b:c+d@e"},
		{"spaces and quotes are quoted", syntax.LangBash, []string{"echo", "a b", "it's", ""}, `echo 'a b' "it's" ''`},
		{"NAME=value is an argument after the command name", syntax.LangBash, []string{"env", "FOO=bar", "ls"}, "env FOO=bar ls"},
		{"NAME=value as the command name is quoted, not an assignment", syntax.LangBash, []string{"FOO=bar", "ls"}, "'FOO=bar' ls"},
		{"a keyword as the command name is quoted", syntax.LangBash, []string{"if", "then"}, "'if' then"},
		{"control characters are escaped in bash", syntax.LangBash, []string{"printf", "\x1b[2J\n"}, `printf $'\x1b[2J\n'`},
		{"a NUL byte is shown Go-quoted", syntax.LangBash, []string{"rm", "a\x00\x1b"}, `rm "a\x00\x1b"`},
		{"sh has no escapes: control characters are shown Go-quoted", syntax.LangPOSIX, []string{"echo", "a\rb"}, `echo "a\rb"`},
		{"bytes that are not UTF-8 are escaped", syntax.LangBash, []string{"cat", "\xff"}, `cat $'\xff'`},
		{"zsh expands =cmd", syntax.LangZsh, []string{"ls", "=ls", "a=b"}, "ls '=ls' a=b"},
		{"= alone is plain in bash", syntax.LangBash, []string{"test", "a", "=", "b"}, "test a = b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(QuoteArgv(tc.argv, tc.lang), tc.want); diff != "" {
				t.Errorf("QuoteArgv(%q) (-got +want):\n%s", tc.argv, diff)
			}
		})
	}
}

// TestQuoteReadsBack: a quoted word parses back to itself, or the dialect
// cannot write it and says so.
func TestQuoteReadsBack(t *testing.T) {
	for _, tc := range []struct {
		lang    syntax.LangVariant
		word    string
		wantErr bool
	}{
		{syntax.LangBash, "/tmp/a dir/it's", false},
		{syntax.LangPOSIX, "/tmp/a dir", false},
		{syntax.LangPOSIX, "/tmp/\x1b", true},
		{syntax.LangBash, "a\x00b", true},
	} {
		q, err := Quote(tc.word, tc.lang)
		if (err != nil) != tc.wantErr {
			t.Errorf("Quote(%q): %q, %v; want error %v", tc.word, q, err, tc.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		s, perr := Parse("cd -- "+q, Options{Dialect: tc.lang})
		if perr != nil || len(s.Commands) != 1 || len(s.Commands[0].Argv) != 3 || s.Commands[0].Argv[2].Value != tc.word {
			t.Errorf("cd -- %s does not read back as %q: %+v %v", q, tc.word, s, perr)
		}
	}
}
