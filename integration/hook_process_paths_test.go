//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHookRefusesPathsThroughTheAgentsOwnProcess: a file tool's path
// through /proc/self, /proc/PID or /dev/fd names what the agent's own
// process has there (its working directory, its root, its descriptors),
// which the agent opens itself: refused outright, not asked, as a person
// shown /proc/self/cwd/secret.txt could not tell that it is a denied file
// of the project.
func TestHookRefusesPathsThroughTheAgentsOwnProcess(t *testing.T) {
	requireSandbox(t)
	w := hookWorld(t)
	if err := os.Symlink("/proc/self/cwd/README.md", filepath.Join(w.work, "proclink")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ tool, path string }{
		{"Read", "/proc/self/cwd/README.md"},
		{"Read", "/proc/thread-self/root/etc/hostname"},
		{"Read", "/proc/1/root/etc/hostname"},
		{"Read", "/dev/fd/0"},
		{"Read", "/dev/stdin"},
		{"Read", filepath.Join(w.work, "proclink")},
		{"Write", "/proc/self/cwd/new.txt"},
		{"Write", "/proc/self/root" + w.work + "/new.txt"},
		{"Glob", "/proc/self/cwd"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.path, func(t *testing.T) {
			in := map[string]any{"file_path": tt.path}
			switch tt.tool {
			case "Write":
				in["content"] = "x"
			case "Glob":
				in = map[string]any{"pattern": "*", "path": tt.path}
			}
			ans, stderr, code := hook(t, w, "claude-code", hookInput(w, "PreToolUse", tt.tool, in))
			d, reason, _ := decision(ans)
			if code != 0 || d != "deny" || !strings.Contains(reason, "the agent's own process") {
				t.Errorf("exit %d, decision %q, reason %q (stderr %s); want a denial", code, d, reason, stderr)
			}
		})
	}
}
