package approval

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/rules"
)

// sgr matches the colour sequences the presentations write; any other
// escape byte in a detail is a leak from file content.
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func plain(s string) string { return sgr.ReplaceAllString(s, "") }

func TestDiffDetail(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string
	}{{
		name: "one line changed",
		old:  "a\nb\nc\n",
		new:  "a\nB\nc\n",
		want: `change /w/f.txt: +1, -1
--- /w/f.txt
+++ /w/f.txt
@@ -1,3 +1,3 @@
 a
-b
+B
 c
`,
	}, {
		name: "lines added at the end without a newline",
		old:  "a\n",
		new:  "a\nb",
		want: `change /w/f.txt: +1, -0
--- /w/f.txt
+++ /w/f.txt
@@ -1 +1,2 @@
 a
+b
\ No newline at end of file
`,
	}, {
		name: "emptied",
		old:  "a\nb\n",
		new:  "",
		want: `change /w/f.txt: +0, -2
--- /w/f.txt
+++ /w/f.txt
@@ -1,2 +0,0 @@
-a
-b
`,
	}, {
		name: "escape sequences in content are shown, not sent",
		old:  "title\n",
		new:  "title\x1b[2J\x1b]0;pwned\x07\r\n",
		want: `change /w/f.txt: +1, -1
--- /w/f.txt
+++ /w/f.txt
@@ -1 +1 @@
-title
+title\x1b[2J\x1b]0;pwned\x07\x0d
`,
	}, {
		name: "bidi override is visible",
		old:  "x\n",
		new:  "access = \u202euser\n",
		want: `change /w/f.txt: +1, -1
--- /w/f.txt
+++ /w/f.txt
@@ -1 +1 @@
-x
+access = \u202euser
`,
	}, {
		name: "no change",
		old:  "same\n",
		new:  "same\n",
		want: "rewrite /w/f.txt: no change (5 bytes)\n",
	}, {
		name: "NUL bytes make it binary",
		old:  "text\n",
		new:  "bin\x00ary",
		want: "replace /w/f.txt: binary content, 5 bytes → 7 bytes (not shown)\n",
	}, {
		name: "invalid UTF-8 makes it binary",
		old:  "\xff\xfe",
		new:  "text\n",
		want: "replace /w/f.txt: binary content, 2 bytes → 5 bytes (not shown)\n",
	}, {
		name: "too large to diff",
		old:  "a\n",
		new:  strings.Repeat("x", MaxShownBytes+1),
		want: "replace /w/f.txt: 2 bytes → 1.0 MiB (1048577 bytes) (too large to show a diff)\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DiffDetail("/w/f.txt", []byte(tt.old), []byte(tt.new), Style{})
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want)\n%s", diff)
			}
			coloured := DiffDetail("/w/f.txt", []byte(tt.old), []byte(tt.new), Style{Color: true})
			if diff := cmp.Diff(plain(coloured), tt.want); diff != "" {
				t.Errorf("coloured, colours removed (-got +want)\n%s", diff)
			}
			checkEscapes(t, got, coloured)
		})
	}
}

// checkEscapes fails if a detail holds an escape byte that is not one of
// its own colours, or if the uncoloured form holds any.
func checkEscapes(t *testing.T, uncoloured, coloured string) {
	t.Helper()
	if strings.ContainsRune(uncoloured, 0x1b) {
		t.Errorf("escape byte without colour: %q", uncoloured)
	}
	if strings.ContainsRune(plain(coloured), 0x1b) {
		t.Errorf("escape byte that is not a colour: %q", plain(coloured))
	}
	for _, r := range plain(coloured) {
		if r < 0x20 && r != '\n' && r != '\t' {
			t.Errorf("control character %q reached the detail", r)
		}
	}
}

func TestDiffDetailColours(t *testing.T) {
	got := DiffDetail("f", []byte("a\nold\n"), []byte("a\nnew\n"), Style{Color: true})
	for _, want := range []string{
		"\x1b[31m-old\x1b[0m\n",
		"\x1b[32m+new\x1b[0m\n",
		"\x1b[36m@@ -1,2 +1,2 @@\x1b[0m\n",
		"\n a\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}

func TestNewFileDetail(t *testing.T) {
	tests := []struct {
		name, path, content string
		want                string
	}{{
		name:    "text with numbered lines",
		path:    "/w/notes.txt",
		content: "one\ntwo\n",
		want:    "new file /w/notes.txt: 2 lines, 8 bytes\n1 │ one\n2 │ two\n",
	}, {
		name:    "no newline at the end",
		path:    "/w/a",
		content: "x",
		want:    "new file /w/a: 1 line, 1 byte\n1 │ x\n\\ No newline at end of file\n",
	}, {
		name:    "empty",
		path:    "/w/empty",
		content: "",
		want:    "new file /w/empty: empty\n",
	}, {
		name:    "binary",
		path:    "/w/a.bin",
		content: "\x7fELF\x00\x00",
		want:    "new file /w/a.bin: binary content, 6 bytes (not shown)\n",
	}, {
		name:    "escapes in a Go file",
		path:    "/w/main.go",
		content: "package main\n// \x1b[2J\x1b[31m\nvar s = \"\x1b]52;c;ZXZpbA==\x07\"\n",
		want:    "new file /w/main.go: 3 lines, 53 bytes\n1 │ package main\n2 │ // \\x1b[2J\\x1b[31m\n3 │ var s = \"\\x1b]52;c;ZXZpbA==\\x07\"\n",
	}, {
		name:    "escapes in the path",
		path:    "/w/\x1b[2Jx.txt",
		content: "a\n",
		want:    "new file /w/\\x1b[2Jx.txt: 1 line, 2 bytes\n1 │ a\n",
	}, {
		name:    "line numbers widen",
		path:    "/w/n",
		content: strings.Repeat("x\n", 10),
		want:    "new file /w/n: 10 lines, 20 bytes\n" + numbered(10, "x"),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NewFileDetail(tt.path, []byte(tt.content), Style{})
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want)\n%s", diff)
			}
			coloured := NewFileDetail(tt.path, []byte(tt.content), Style{Color: true})
			checkEscapes(t, got, coloured)
			// Colour changes nothing but colour (and names the lexer).
			gotLines := strings.Split(plain(coloured), "\n")
			wantLines := strings.Split(tt.want, "\n")
			if len(gotLines) != len(wantLines) {
				t.Fatalf("coloured has %d lines, want %d:\n%s", len(gotLines), len(wantLines), coloured)
			}
			for i := 1; i < len(wantLines); i++ {
				if gotLines[i] != wantLines[i] {
					t.Errorf("coloured line %d = %q, want %q", i, gotLines[i], wantLines[i])
				}
			}
		})
	}
}

// numbered is n lines of text with a right-aligned gutter.
func numbered(n int, text string) string {
	var b strings.Builder
	w := len(fmt.Sprint(n))
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%*d │ %s\n", w, i, text)
	}
	return b.String()
}

func TestNewFileHighlighting(t *testing.T) {
	src := "package main\n\n// hello\nfunc main() {\n\tprintln(\"hi\", 42)\n}\n"
	got := NewFileDetail("/w/main.go", []byte(src), Style{Color: true})
	for _, want := range []string{
		", Go\n",                           // the lexer chosen by the name
		"\x1b[34;1mpackage\x1b[0m",         // keyword
		"\x1b[2m// hello\x1b[0m",           // comment
		"\x1b[32m\"hi\"\x1b[0m",            // string
		"\x1b[35m42\x1b[0m",                // number
		"\x1b[36mmain\x1b[0m",              // a name
		"\x1b[2m4 │\x1b[0m \x1b[34;1mfunc", // gutter, then the line
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	// Every line closes its own colours, so truncation leaves none open.
	for i, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if codes := sgr.FindAllString(l, -1); len(codes) > 0 && codes[len(codes)-1] != "\x1b[0m" {
			t.Errorf("line %d leaves a colour open: %q", i+1, l)
		}
	}
	// A shell script without a suffix is recognised by its shebang.
	sh := NewFileDetail("/w/run", []byte("#!/bin/sh\necho hi\n"), Style{Color: true})
	if !strings.Contains(sh, "\x1b[") {
		t.Errorf("shebang script not highlighted:\n%s", sh)
	}
	// Plain text gets no colour beyond the header and the gutter.
	txt := NewFileDetail("/w/notes.txt", []byte("if this then that\n"), Style{Color: true})
	if strings.Contains(txt, "\x1b[34;1mif") {
		t.Errorf("plain text highlighted:\n%s", txt)
	}
}

func TestInfoDetail(t *testing.T) {
	tests := []struct {
		op, path, kind string
		size           int64
		want           string
	}{
		{"delete", "/w/a.txt", "regular file", 1234, "delete /w/a.txt: regular file, 1.2 KiB (1234 bytes)\n"},
		{"delete", "/w/d", "directory", 4096, "delete /w/d: directory\n"},
		{"read", "/w/\x1b[2J", "regular file", 0, "read /w/\\x1b[2J: regular file, 0 bytes\n"},
		{"read", "/w/big", "regular file", 3 << 20, "read /w/big: regular file, 3.0 MiB (3145728 bytes)\n"},
	}
	for _, tt := range tests {
		if got := InfoDetail(tt.op, tt.path, tt.kind, tt.size, Style{}); got != tt.want {
			t.Errorf("InfoDetail(%q, %q) = %q, want %q", tt.op, tt.path, got, tt.want)
		}
	}
}

// TestDetailInPrompt checks the detail through Render: truncated with a
// line count, and the colours of a truncated highlight do not bleed.
func TestDetailInPrompt(t *testing.T) {
	var src strings.Builder
	for range 50 {
		src.WriteString("// comment line\n")
	}
	r := &Request{
		Display:  "guardrun fs write big.go",
		Decision: &rules.Decision{Decision: rules.Ask, Parts: []rules.Part{{Kind: "file", Text: "write big.go", Decision: rules.Ask, Reason: "zone needs approval"}}},
		Cwd:      "/w",
		Detail:   NewFileDetail("/w/big.go", []byte(src.String()), Style{Color: true}),
	}
	out := Render(r, Style{Color: true})
	if !strings.Contains(out, "… 31 more lines ([v] to view all)") {
		t.Errorf("no truncation line in\n%s", out)
	}
	full := FullText(r)
	if strings.ContainsRune(full, 0x1b) {
		t.Error("the pager text holds escape sequences")
	}
	if !strings.Contains(full, "50 │ // comment line") {
		t.Errorf("the pager text lacks the last line:\n%s", full)
	}
}
