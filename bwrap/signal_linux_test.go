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

// TestSignalBeforeFork: a signal sent in the instant after the
// sandbox's init made its session and before it forked the command (the
// group holds the init alone, which as pid 1 of its namespace drops
// signals it has no handler for) ends the sandbox with 128+sig. It was
// lost: the command ran to its end.
func TestSignalBeforeFork(t *testing.T) {
	requireBwrap(t)
	p := runProfile(t, t.TempDir())
	for i := range 20 {
		c, err := Command(context.Background(), p, []string{"/bin/sleep", "100"}, []string{"PATH=/usr/bin:/bin"}, Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		init := c.initPid
		c.mu.Unlock()
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			if pgrp, ok := pgrpOf(init); !ok || pgrp == init {
				break
			}
		}
		if err := c.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		testenv.SignalledStatus(t, fmt.Sprintf("run %d", i), 130, c.Wait, func() { _ = c.Cmd.Process.Kill() })
	}
}

// pgrpOf is the process group of pid.
func pgrpOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return 0, false
	}
	n, err := strconv.Atoi(f[2])
	return n, err == nil
}

// TestHasChild: the look-up Signal makes before it signals the
// sandbox's group sees a single-threaded process's child, and its
// absence, both through /proc/PID/task/PID/children and through the
// parents in /proc (where the kernel has no children file).
func TestHasChild(t *testing.T) {
	sh := exec.Command("/bin/sh", "-c", "read x; /bin/sleep 100 & wait")
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := sh.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer sh.Wait()
	defer syscall.Kill(-sh.Process.Pid, syscall.SIGKILL)
	for name, has := range map[string]func(int) (bool, error){"hasChild": hasChild, "hasChildScan": hasChildScan} {
		if got, err := has(sh.Process.Pid); err != nil || got {
			t.Errorf("%s before the fork: %v, %v", name, got, err)
		}
	}
	in.Write([]byte("\n"))
	for name, has := range map[string]func(int) (bool, error){"hasChild": hasChild, "hasChildScan": hasChildScan} {
		deadline := time.Now().Add(10 * time.Second)
		got, err := has(sh.Process.Pid)
		for !got && err == nil && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			got, err = has(sh.Process.Pid)
		}
		if err != nil || !got {
			t.Errorf("%s after the fork: %v, %v", name, got, err)
		}
	}
}

// TestSignalForgedStatus: a sandboxed command writes bwrap
// status lines ({"child-pid": victim}, {"exit-code": 0}) to every
// descriptor it has. Signal must not then reach a host process the
// command named, and the status must stay the command's own.
func TestSignalForgedStatus(t *testing.T) {
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

// TestSignalNothingLeft: a signal relayed at any instant of the
// sandbox's start (before the init exists, during its setup, just after
// its fork) leaves no process of the command running once Wait has
// returned 128+sig, and never a command that ran to its end.
func TestSignalNothingLeft(t *testing.T) {
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
