package agents

import (
	"strings"
	"testing"
	"time"
)

// TestEditResultIsBounded: the content an edit is computed to, for the
// person's diff, stays bounded whatever the edit multiplies: an edit
// that would grow the file past MaxEditResult says so instead.
func TestEditResultIsBounded(t *testing.T) {
	file := []byte(strings.Repeat("a", 1<<20))
	tests := []struct {
		name  string
		agent *Agent
		tool  string
		input map[string]any
	}{
		{"gemini replace, every a by 128 bytes", Gemini, "replace", map[string]any{"file_path": "x", "old_string": "a", "new_string": strings.Repeat("b", 128), "allow_multiple": true}},
		{"gemini replace, a count of occurrences", Gemini, "replace", map[string]any{"file_path": "x", "old_string": "a", "new_string": strings.Repeat("b", 128), "expected_replacements": 1 << 20}},
		{"claude edit, replace_all", Claude, "Edit", map[string]any{"file_path": "/p/x", "old_string": "a", "new_string": strings.Repeat("b", 128), "replace_all": true}},
		{"claude multiedit, doubling", Claude, "MultiEdit", map[string]any{"file_path": "/p/x", "edits": func() []any {
			var e []any
			for range 40 {
				e = append(e, map[string]any{"old_string": "a", "new_string": "aa", "replace_all": true})
			}
			return e
		}()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseHook(tt.agent, hookJSON(t, tt.agent.Event, tt.tool, tt.input))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out, err := c.Files[0].Apply(file)
			if err == nil || !strings.Contains(err.Error(), "more than 64 MiB") {
				t.Errorf("Apply made %d bytes (error %v); want a refusal to grow past 64 MiB", len(out), err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Apply took %v", d)
			}
		})
	}
}
