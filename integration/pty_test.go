package integration

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// ptyRun is guardrun running with a pty as its controlling terminal, so
// it prompts on /dev/tty, which the test reads (screen) and types on
// (send); stdout and stderr are captured apart from it.
type ptyRun struct {
	t      testing.TB
	cmd    *exec.Cmd
	ptmx   *os.File
	mu     sync.Mutex
	screen bytes.Buffer
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan error
	// shown is closed once the terminal has nothing more to show: the
	// child and everything it started closed it.
	shown chan struct{}
}

// startOnPTY starts guardrun with args in dir. stdin is its standard
// input; nil makes the pty its standard input too.
func startOnPTY(t testing.TB, dir string, env []string, stdin io.Reader, args ...string) *ptyRun {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		testenv.Missing(t, "no pty: %v", err)
	}
	pty.Setsize(ptmx, &pty.Winsize{Rows: 50, Cols: 160})
	r := &ptyRun{t: t, ptmx: ptmx, done: make(chan error, 1), shown: make(chan struct{})}
	r.cmd = exec.Command(guardrunBin, args...)
	r.cmd.Dir = dir
	r.cmd.Env = env
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if stdin == nil {
		r.cmd.Stdin = tty
		r.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	} else {
		// The pty is fd 3 in the child and becomes its controlling terminal.
		r.cmd.Stdin = stdin
		r.cmd.ExtraFiles = []*os.File{tty}
		r.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	// Reads until the child closes the terminal; it stops with EIO then.
	go func() {
		defer close(r.shown)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			r.mu.Lock()
			r.screen.Write(buf[:n])
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { r.done <- r.cmd.Wait() }()
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		ptmx.Close()
	})
	return r
}

func (r *ptyRun) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.screen.String()
}

// waitFor waits until the terminal shows s for the n-th time.
func (r *ptyRun) waitFor(s string, n int) {
	r.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for strings.Count(r.text(), s) < n {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %q (%d) on the terminal; it shows:\n%s\nstderr: %s", s, n, r.text(), r.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// send types s. An answer key (y, s, n, v) is typed as a person would:
// after the prompt's quiet time, and y and s followed by the approval
// code the prompt shows where programs can type into the terminal.
func (r *ptyRun) send(s string) {
	r.t.Helper()
	answer := s == "y" || s == "s" || s == "n" || s == "v"
	if answer {
		time.Sleep(450 * time.Millisecond) // the prompt discards keys until the keyboard was quiet 300 ms
	}
	confirms := strings.Count(r.text(), "to confirm, type")
	if _, err := r.ptmx.Write([]byte(s)); err != nil {
		r.t.Fatal(err)
	}
	if (s == "y" || s == "s") && approval.InjectionPossible() {
		r.waitFor("to confirm, type", confirms+1)
		m := regexp.MustCompile(`to confirm, type (?:\x1b\[1m)?([a-z]+)`).FindAllStringSubmatch(r.text(), -1)
		if len(m) <= confirms {
			r.t.Fatalf("no approval code on the terminal:\n%s", r.text())
		}
		if _, err := r.ptmx.Write([]byte(m[confirms][1])); err != nil {
			r.t.Fatal(err)
		}
	}
}

// drained waits until everything the child wrote on the terminal has been
// read.
func (r *ptyRun) drained() {
	r.t.Helper()
	select {
	case <-r.shown:
	case <-time.After(15 * time.Second):
		r.t.Fatalf("the terminal was not closed; it shows:\n%s", r.text())
	}
}

// wait returns the exit status.
func (r *ptyRun) wait() int {
	r.t.Helper()
	select {
	case err := <-r.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			r.t.Fatal(err)
		}
		return 0
	case <-time.After(15 * time.Second):
		r.t.Fatalf("guardrun did not exit; the terminal shows:\n%s", r.text())
	}
	return -1
}
