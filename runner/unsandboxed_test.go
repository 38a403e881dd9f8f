//go:build linux

package runner

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRunUnsandboxed(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		script string
		status int
		out    string
	}{
		{`pwd; echo "${HOME-unset}"`, 0, dir + "\nunset\n"},
		{"exit 3", 3, ""},
		{"kill -TERM $$", 143, ""},
	} {
		var out bytes.Buffer
		st, err := RunUnsandboxed(context.Background(), dir, Script("/bin/sh", tc.script), nil, Stdio{Stdout: &out})
		if err != nil {
			t.Fatal(err)
		}
		if st != tc.status || !strings.Contains(out.String(), tc.out) {
			t.Errorf("%q: status %d, output %q; want %d, %q", tc.script, st, out.String(), tc.status, tc.out)
		}
	}
	if _, err := RunUnsandboxed(context.Background(), dir, []string{"/nonexistent/cmd"}, nil, Stdio{}); err == nil {
		t.Error("a command that cannot start: want an error")
	}
}
