package shellparse

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFeeds: the here-documents and here-strings a script feeds its
// commands, as written and in order, as the parser of the script's
// dialect reads them.
func TestFeeds(t *testing.T) {
	tests := []struct {
		name    string
		dialect string
		src     string
		want    []string
	}{
		{"here-documents, a here-string and one inside $(...)", "bash",
			"cat <<EOF\na $x\nEOF\ncat <<-'E2' | sh\n\tb\n\tE2\ntr a b <<< \"c d\"\necho $(cat <<X\nnested\nX\n)",
			[]string{"heredoc <<EOF\na $x\nEOF", "heredoc <<-'E2'\n\tb\n\tE2", "herestring \"c d\"", "heredoc <<X\nnested\nX"}},
		{"none", "bash", "echo a \"<<\" b; cat < f", nil},
		{"a here-document in zsh syntax bash cannot parse", "zsh",
			"() {\npython3 - <<'EOF'\nprint(1)\nEOF\n}\n",
			[]string{"heredoc <<'EOF'\nprint(1)\nEOF"}},
		{"sh reads $'EOF' as $ and a quoted EOF", "sh",
			"cat <<$'EOF'\na\nEOF\nb\n$EOF\n",
			[]string{"heredoc <<$'EOF'\na\nEOF\nb\n$EOF"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.src, Options{Dialect: DialectFor(tc.dialect)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(s.Feeds, tc.want); diff != "" {
				t.Errorf("Feeds (-got +want):\n%s", diff)
			}
		})
	}
}
