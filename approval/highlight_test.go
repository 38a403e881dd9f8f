package approval

import (
	"strings"
	"testing"
)

func TestLanguageFor(t *testing.T) {
	for _, tt := range []struct{ path, text, want string }{
		{"/w/main.go", "", "Go"},
		{"/w/Makefile", "", "Makefile"},
		{"/w/Dockerfile", "", "Docker"},
		{"/w/x.tsx", "", "TypeScript"},
		{"/w/run", "#!/usr/bin/env python3\nprint(1)\n", "Python"},
		{"/w/run", "#!/bin/bash -e\necho\n", "Bash"},
		{"/w/run", "#!/usr/bin/perl\n", ""},
		{"/w/notes.txt", "if x then y\n", ""},
	} {
		got := ""
		if l := languageFor(tt.path, tt.text); l != nil {
			got = l.name
		}
		if got != tt.want {
			t.Errorf("languageFor(%q, %q) = %q, want %q", tt.path, tt.text, got, tt.want)
		}
	}
}

func TestColourTextLines(t *testing.T) {
	src := "/* one\ntwo */ int x = \"s\";\nSELECT\n"
	l := languageFor("/w/a.c", "")
	lines := l.colourText(src)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3: %q", len(lines), lines)
	}
	want := []string{
		"\x1b[2m/* one\x1b[0m",
		"\x1b[2mtwo */\x1b[0m \x1b[36mint\x1b[0m x = \x1b[32m\"s\"\x1b[0m;",
		"SELECT",
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i+1, lines[i], want[i])
		}
	}
	// SQL keywords in any case.
	sql := languageFor("/w/q.sql", "").colourText("select 1 FROM t -- c\n")
	if !strings.Contains(sql[0], "\x1b[34;1mselect\x1b[0m") || !strings.Contains(sql[0], "\x1b[34;1mFROM\x1b[0m") || !strings.Contains(sql[0], "\x1b[2m-- c\x1b[0m") {
		t.Errorf("sql: %q", sql[0])
	}
}
