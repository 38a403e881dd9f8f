package cli

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTakeHookFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		// want is the agent, workspace, ticket and descriptor read, or
		// the usage error.
		want string
		rest []string
	}{
		{"all of them", []string{"--via", "codex", "--workspace", "/p", "--ticket", "ab", "--cwd-fd", "3", "-c", "ls"}, "codex /p ab 3", []string{"-c", "ls"}},
		{"claude is claude-code", []string{"--via", "claude", "-c", "ls"}, "claude-code   0", []string{"-c", "ls"}},
		{"not a hook command", []string{"-c", "ls"}, "none", []string{"-c", "ls"}},
		{"an unknown agent", []string{"--via", "aider", "-c", "ls"}, `--via: unknown agent "aider" (want claude-code, codex or gemini)`, nil},
		{"a relative workspace", []string{"--via", "codex", "--workspace", "p", "-c", "ls"}, "--workspace needs an absolute path", nil},
		{"a standard descriptor", []string{"--via", "codex", "--cwd-fd", "1", "-c", "ls"}, "--cwd-fd needs a descriptor number of 3 or more", nil},
		{"a missing value", []string{"--via", "codex", "--ticket"}, "--ticket needs a value", nil},
		{"nothing to run", []string{"--via", "codex"}, "--via: nothing to run (want -c SCRIPT)", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hf, rest, err := takeHookFlags(tt.args)
			got := "none"
			switch {
			case err != nil:
				got = err.Error()
			case hf != nil:
				got = hf.agent.Name + " " + hf.workspace + " " + hf.ticket + " " + strconv.Itoa(hf.cwdFD)
			}
			if diff := cmp.Diff([]any{got, rest}, []any{tt.want, tt.rest}); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}
