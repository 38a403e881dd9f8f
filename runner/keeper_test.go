//go:build linux

package runner

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestExitStatus: the status guardrun reports is the command's own,
// whether it exits or is killed by a signal, through the landlock
// backend's keeper (which exits as the command did) as through bwrap:
// core-dumping signals, the keeper's own parent-death signal
// (SIGRTMIN+2, 36 as glibc numbers it), the last real-time signal, and,
// under landlock, a command that went through the trampoline again.
func TestExitStatus(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name   string
		script string
		want   int
	}
	rows := []row{
		{"exit 0", "exit 0", 0},
		{"exit 1", "exit 1", 1},
		{"exit 3", "exit 3", 3},
		{"exit 255", "exit 255", 255},
		{"exit 137 (a killed child's status, as an exit code)", "exit 137", 137},
		{"SIGSEGV (core)", "kill -SEGV $$", 139},
		{"SIGABRT (core)", "kill -ABRT $$", 134},
		{"SIGKILL", "kill -KILL $$", 137},
		{"SIGTERM", "kill -TERM $$", 143},
		{"SIGUSR1", "kill -USR1 $$", 138},
		{"SIGPIPE", "kill -PIPE $$", 141},
		{"SIGRTMIN+2 (the keeper's parent-death signal)", "kill -36 $$", 164},
		{"SIGRTMAX", "kill -64 $$", 192},
		{"a background child killed, the command exits 0", "sleep 30 & kill -KILL $!; wait; exit 0", 0},
	}
	if landlockTest() {
		// "$0" is guardrun's executable (this test binary), "$1" the
		// trampoline's marker.
		rows = append(rows,
			row{"through the trampoline again: exit 7", `"$0" "$1" /bin/sh sh -c 'exit 7'`, 7},
			row{"through the trampoline again: SIGSEGV", `"$0" "$1" /bin/sh sh -c 'kill -SEGV $$'`, 139},
			row{"through the trampoline twice: SIGRTMIN+2", `"$0" "$1" "$0" guardrun "$1" /bin/sh sh -c 'kill -36 $$'`, 164},
			row{"through the trampoline: not found", `"$0" "$1" /nonexistent x`, 127},
			row{"through the trampoline: a directory", `"$0" "$1" /usr x`, 126},
		)
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var out bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			status, err := RunWith(ctx, f.opts(), f.profile, Script("/bin/sh", r.script, exe, nestMarker),
				f.env, Stdio{Stdout: &out, Stderr: &out})
			if err != nil {
				t.Fatalf("the sandbox did not start: %v\n%s", err, out.String())
			}
			if status != r.want {
				t.Errorf("status %d, want %d\n%s", status, r.want, out.String())
			}
			if strings.Contains(out.String(), "core dumped") {
				t.Errorf("a core was dumped:\n%s", out.String())
			}
		})
	}
}

// nestMarker is the landlock trampoline's marker argument
// (landlock/nest_linux.go).
const nestMarker = "\x01guardrun-landlock-nest"
