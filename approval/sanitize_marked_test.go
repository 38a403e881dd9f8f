package approval

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Cutting text into marked segments never changes how a character is
// shown: a combining mark after a cut is still escaped for the ASCII
// letter before it, a look-alike letter still for its token.
func TestSanitizeMarked(t *testing.T) {
	rows := []struct {
		name  string
		s     string
		marks [][2]int
		want  []Segment
	}{
		{"a mark in the middle", "ls; rm -rf x; ls", [][2]int{{4, 12}},
			[]Segment{{"ls; ", false}, {"rm -rf x", true}, {"; ls", false}}},
		{"a combining mark just after a cut", "rm\u0336 x", [][2]int{{0, 2}},
			[]Segment{{"rm", true}, {`\u0336 x`, false}}},
		{"a look-alike letter in a cut token", "cd gіthub.com", [][2]int{{0, 4}},
			[]Segment{{"cd g", true}, {`\u0456thub.com`, false}}},
		{"controls and invalid bytes", "a\x1b[2J\xffb", [][2]int{{1, 5}},
			[]Segment{{"a", false}, {`\x1b[2J`, true}, {`\ufffdb`, false}}},
		{"no marks", "echo \u202ehi", nil, []Segment{{`echo \u202ehi`, false}}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got := SanitizeMarked(r.s, r.marks)
			if diff := cmp.Diff(got, r.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
			var joined strings.Builder
			for _, g := range got {
				joined.WriteString(g.Text)
			}
			if joined.String() != Sanitize(r.s) {
				t.Errorf("joined %q, Sanitize %q", joined.String(), Sanitize(r.s))
			}
		})
	}
}
