package cli

import "testing"

func TestAgentSettingsAreTheAgentsOwnInAnyCase(t *testing.T) {
	tests := []struct {
		path string
		own  bool
	}{
		{"/p/.claude/settings.json", true},
		{"/p/.Claude/settings.json", true},
		{"/p/.CLAUDE/settings.local.json", true},
		{"/home/me/.Claude.json", true},
		{"/p/sub/.Codex/config.toml", true},
		{"/p/.GEMINI/settings.json", true},
		{"/p/claude/settings.json", false},
		{"/p/.claude-notes.md", false},
		{"/p/src/main.go", false},
	}
	for _, tt := range tests {
		if got := agentSettings(tt.path) != ""; got != tt.own {
			t.Errorf("agentSettings(%q) names the agent's own settings: %v, want %v", tt.path, got, tt.own)
		}
	}
}
