package landlock

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// TestSignalBeforeFork: a signal sent to the command's process group in
// the instant after the keeper blocked its signals and before it forked
// the command (the group holds the keeper alone) ends the command with
// 128+sig. It stayed with the keeper, which passes signals on only to a
// command that left the group: the command ran to its end.
func TestSignalBeforeFork(t *testing.T) {
	requireLandlock(t)
	p := workspace(t, false)
	for i := range 40 {
		c, err := Command(context.Background(), p, []string{"/bin/sleep", "100"}, []string{"PATH=/usr/bin:/bin"}, Config{Accept: []string{AcceptDenyCreate}, StateDir: testState})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if c.nests() {
			waitBlocked(c.Cmd.Process.Pid)
		}
		if err := c.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		testenv.SignalledStatus(t, fmt.Sprintf("run %d", i), 130, c.Wait, func() { _ = syscall.Kill(-c.Cmd.Process.Pid, syscall.SIGKILL) })
	}
}

// waitBlocked waits (at most 1 s) until the keeper pid has blocked its
// signals, or has gone past that: while it waits in sigwaitinfo the
// kernel shows the signals it waits for unblocked.
func waitBlocked(pid int) {
	p := "/proc/" + strconv.Itoa(pid)
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(p + "/status")
		if err != nil {
			return
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "SigBlk:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && m&(1<<(syscall.SIGINT-1)) != 0 {
					return
				}
			}
		}
		if w, _ := os.ReadFile(p + "/wchan"); strings.Contains(string(w), "sigtimedwait") {
			return
		}
	}
}
