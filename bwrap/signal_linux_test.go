package bwrap

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
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
