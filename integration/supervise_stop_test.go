//go:build linux

package integration

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// procState is the state letter of a process (R, S, T...).
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}

// SIGTSTP from outside gives the person their terminal back as it was and
// stops the supervisor; SIGCONT puts it back in raw mode, and the agent
// still gets keys.
func TestSuperviseStopContinue(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t, superviseConfig)
	tt := startOnTTY(t, w, guardrunBin, "supervise", "--", "sh", fakeAgent(t))
	before := tt.termios()
	at := tt.waitFor(0, "fakeagent: ready")
	if tt.termios().Lflag&unix.ICANON != 0 {
		t.Fatal("not in raw mode under the supervisor")
	}
	pid := tt.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGTSTP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the supervisor to stop", func() bool { return procState(pid) == "T" })
	if got := tt.termios(); got != before {
		t.Errorf("terminal not restored while stopped:\nbefore %+v\nnow    %+v", before, got)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "raw mode again", func() bool { return tt.termios().Lflag&unix.ICANON == 0 })
	tt.typ("echo still-here\n")
	at = tt.waitFor(at, `agent saw: still-here`)

	// Stopped while a prompt waits: the prompt leaves the screen, and
	// comes back drawn again when continued; y then approves it.
	tt.typ("touch while-stopped\n")
	at = tt.waitFor(at, `touch while-stopped[\s\S]*\[y\] approve once.*> `)
	if err := syscall.Kill(pid, syscall.SIGTSTP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the supervisor to stop", func() bool { return procState(pid) == "T" })
	at = tt.waitFor(at, `\x1b\[\?1049l`)
	if got := tt.termios(); got != before {
		t.Errorf("terminal not restored while stopped at a prompt")
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	at = tt.waitFor(at, `\x1b\[\?1049h[\s\S]*touch while-stopped[\s\S]*\[y\] approve once.*> `)
	time.Sleep(450 * time.Millisecond)
	tt.typ("y")
	tt.waitFor(at, `>>> end \d+: status 0`)
	tt.typ("quit\n")
	if st := tt.wait(); st != 0 {
		t.Errorf("supervise exited %d", st)
	}
	if got := tt.termios(); got != before {
		t.Errorf("terminal not restored at the end")
	}
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
