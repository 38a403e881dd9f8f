package shellparse

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNonUTF8Bytes: bytes that are not UTF-8 are literal characters, as
// in bash; argv, texts and positions hold the original bytes.
func TestNonUTF8Bytes(t *testing.T) {
	for _, tc := range []struct {
		src  string
		argv [][]string
	}{
		{"grep '\xff' a.txt", [][]string{{"grep", "\xff", "a.txt"}}},
		{"grep \xff a.txt", [][]string{{"grep", "\xff", "a.txt"}}},
		{"echo \"a\xfeb\" | grep -c x\x80y", [][]string{{"echo", "a\xfeb"}, {"grep", "-c", "x\x80y"}}},
		{"\xe9cho x; rm y", [][]string{{"\xe9cho", "x"}, {"rm", "y"}}},
		{"echo x > f\xff", [][]string{{"echo", "x"}}},
	} {
		s, err := Parse(tc.src, Options{})
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.src, err)
		}
		var got [][]string
		for _, c := range s.Commands {
			var argv []string
			for _, w := range c.Argv {
				argv = append(argv, w.Value)
				if !strings.Contains(tc.src, w.Source) {
					t.Errorf("Parse(%q): word source %q is not in the script", tc.src, w.Source)
				}
				if w.Pos.Offset > uint(len(tc.src)) || !strings.HasPrefix(tc.src[w.Pos.Offset:], w.Source) {
					t.Errorf("Parse(%q): word %q at offset %d does not point at it", tc.src, w.Source, w.Pos.Offset)
				}
			}
			got = append(got, argv)
			if !strings.Contains(tc.src, c.Text) {
				t.Errorf("Parse(%q): command text %q is not in the script", tc.src, c.Text)
			}
		}
		if len(got) != len(tc.argv) {
			t.Fatalf("Parse(%q) = %q, want %q", tc.src, got, tc.argv)
		}
		for i := range got {
			if strings.Join(got[i], "\x00") != strings.Join(tc.argv[i], "\x00") {
				t.Errorf("Parse(%q) command %d = %q, want %q", tc.src, i, got[i], tc.argv[i])
			}
		}
		for _, f := range s.Files {
			if f.Path.Value != "f\xff" {
				t.Errorf("Parse(%q): redirection target %q", tc.src, f.Path.Value)
			}
		}
	}
	// bash agrees on the argv.
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skipf("bash not found: %v", err)
	}
	out, err := exec.Command(bash, "-c", "printf '%s\\n' grep '\xff' a\x80b").Output()
	if err != nil || string(out) != "grep\n\xff\na\x80b\n" {
		t.Errorf("bash reads the bytes as %q (%v)", out, err)
	}
}
