package agents

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGlobIsJudgedWhereItsPatternReaches: a glob tool lists the names
// its pattern matches, which an absolute pattern, or one with a path in
// front of its wildcard, finds elsewhere than the tool's directory: the
// directory judged is where the pattern reaches.
func TestGlobIsJudgedWhereItsPatternReaches(t *testing.T) {
	tests := []struct {
		name  string
		agent *Agent
		tool  string
		input map[string]any
		// want is the directory listed, or "refused: ..." part of the
		// refusal.
		want string
	}{
		{"claude, a pattern in the directory", Claude, "Glob", map[string]any{"pattern": "**/*.go"}, "/p"},
		{"claude, an absolute pattern", Claude, "Glob", map[string]any{"pattern": "/home/me/.ssh/*"}, "/home/me/.ssh"},
		{"claude, an absolute pattern with a path", Claude, "Glob", map[string]any{"pattern": "/etc/*", "path": "/p"}, "/etc"},
		{"claude, a pattern under a subdirectory", Claude, "Glob", map[string]any{"pattern": "src/cmd/*.go", "path": "/p"}, "/p/src/cmd"},
		{"claude, a pattern without wildcards names one file", Claude, "Glob", map[string]any{"pattern": "/outside/secret.txt"}, "/outside"},
		{"claude, .. in front", Claude, "Glob", map[string]any{"pattern": "../outside/*"}, "refused: holds .."},
		{"claude, .. after a wildcard", Claude, "Glob", map[string]any{"pattern": "*/../../etc/*"}, "refused: holds .."},
		{"gemini, .. in front", Gemini, "glob", map[string]any{"pattern": "../outside/*"}, "refused: holds .."},
		{"gemini, an absolute pattern", Gemini, "glob", map[string]any{"pattern": "/outside/*", "dir_path": "sub"}, "/outside"},
		{"gemini, a brace", Gemini, "glob", map[string]any{"pattern": "src/{a,b}/*", "dir_path": "sub"}, "/p/sub/src"},
		{"gemini, the directory only", Gemini, "glob", map[string]any{"pattern": "*.md", "dir_path": "sub"}, "/p/sub"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseHook(tt.agent, hookJSON(t, tt.agent.Event, tt.tool, tt.input))
			got := ""
			if err != nil {
				got = "refused: " + err.Error()
				if strings.Contains(got, strings.TrimPrefix(tt.want, "refused: ")) && strings.HasPrefix(tt.want, "refused: ") {
					return
				}
			} else {
				got = c.Files[0].Path
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}
