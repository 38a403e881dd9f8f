package bwrap

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// TestAttack7SignalForgedStatus: a sandboxed command writes bwrap
// status lines ({"child-pid": victim}, {"exit-code": 0}) to every
// descriptor it has. Signal must not then reach a host process the
// command named, and the status must stay the command's own.
func TestAttack7SignalForgedStatus(t *testing.T) {
	requireBwrap(t)
	victim := exec.Command("/bin/sleep", "100")
	victim.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = victim.Process.Kill(); _ = victim.Wait() }()
	ws := t.TempDir()
	p := runProfile(t, ws)
	line := `{"child-pid": ` + strconv.Itoa(victim.Process.Pid) + `}` + "\n" + `{"exit-code": 0}` + "\n"
	script := `for f in /proc/self/fd/*; do printf '%s' '` + line + `' >> "$f"; done 2>/dev/null; echo ready > ready.tmp && mv ready.tmp ready; sleep 100; exit 7`
	c, err := Command(context.Background(), p, []string{"/bin/sh", "-c", script}, []string{"PATH=/usr/bin:/bin"}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = c.Cmd.Process.Kill()
			c.Wait()
			t.Fatalf("the sandbox did not come up: %s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("Signal: %v", err)
	}
	st, err := c.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if st != 128+int(syscall.SIGTERM) {
		t.Errorf("status %d, want %d (the command's own, by the signal)", st, 128+int(syscall.SIGTERM))
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the host process the command named was signalled: %v", err)
	}
}

// TestAttack7SignalNothingLeft: a signal relayed at any instant of the
// sandbox's start (before the init exists, during its setup, just after
// its fork) leaves no process of the command running once Wait has
// returned 128+sig, and never a command that ran to its end.
func TestAttack7SignalNothingLeft(t *testing.T) {
	requireBwrap(t)
	p := runProfile(t, t.TempDir())
	const mark = "4321.125"
	for i := range 30 {
		c, err := Command(context.Background(), p, []string{"/bin/sleep", mark}, []string{"PATH=/usr/bin:/bin"}, Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i%10) * time.Millisecond)
		if err := c.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		testenv.SignalledStatus(t, fmt.Sprintf("run %d", i), 130, c.Wait, func() { _ = c.Cmd.Process.Kill() })
		if pid := findArg(mark); pid != 0 {
			t.Errorf("run %d: process %d of the command still runs after Wait", i, pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// findArg is a process with arg among its arguments, or 0.
func findArg(arg string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(b), "\x00") {
			if a == arg {
				return pid
			}
		}
	}
	return 0
}
