package integration

// The two ways these tests run a program: without a terminal (proc), its
// output collected, and on a pty of its own (term), as a person's
// terminal emulator would run it. Every test runs guardrun through one of
// them (or through tmux, tmux_test.go), so that a change to how a
// program is started, bounded or reaped is made here once.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// proc is a program a test runs without a controlling terminal: in a
// session of its own, so that nothing it starts can open /dev/tty and
// prompt, with its stdout and stderr collected apart.
type proc struct {
	dir   string
	env   []string
	stdin io.Reader
	// limit, if not zero, kills the whole session after that long; the
	// result then says timedOut, with code -1.
	limit time.Duration
	// waitDelay bounds the wait for whatever still holds stdout or
	// stderr once the program exited (pipeGrace when zero).
	waitDelay time.Duration
}

// procResult is what a proc's run did.
type procResult struct {
	stdout, stderr string
	// code is the exit status; -1 when the program did not exit of its
	// own (timedOut) or could not be run or waited for (err).
	code     int
	timedOut bool
	// err is a failure to start the program or to collect its output
	// (exec.ErrWaitDelay: something it left behind held them), never an
	// exit status.
	err error
}

// run runs argv[0] with the rest of argv as its arguments.
func (p proc) run(argv ...string) procResult {
	ctx := context.Background()
	if p.limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.limit)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = p.dir, p.env, p.stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// At the limit the whole session goes, so that a hung child shows
	// as a time-out rather than stalling the test.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = p.waitDelay
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = pipeGrace
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	r := procResult{stdout: o.String(), stderr: e.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.code, r.timedOut = -1, true
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		r.code, r.err = -1, err
	}
	return r
}

// term is a new pty (160 columns, 50 rows) with a program started as a
// session leader that has it as its controlling terminal. The test types
// on the master and reads everything shown there, from a goroutine that
// stops when the last process holding the terminal closed it.
type term struct {
	t   testing.TB
	pm  *os.File // the master, the test's side
	ps  *os.File // the program's side; nil unless termOpts.keepSlave
	cmd *exec.Cmd

	mu    sync.Mutex
	buf   bytes.Buffer
	count int64 // bytes shown, kept or not

	// shown is closed once the terminal has nothing more to show: the
	// program and everything it started closed it.
	shown     chan struct{}
	done      chan error // the program's Wait
	closeOnce sync.Once
}

// termOpts are how a term is set up.
type termOpts struct {
	// keepSlave keeps the program's side of the pty open in the test
	// (to read its modes); shown then is never closed.
	keepSlave bool
	// discard counts what the terminal shows without keeping it (a
	// throughput benchmark).
	discard bool
}

// startTerm starts cmd on a new pty. Each of cmd's Stdin, Stdout and
// Stderr left nil is the pty; a Stdin of its own makes the pty the
// child's descriptor 3, still its controlling terminal.
func startTerm(t testing.TB, cmd *exec.Cmd, o termOpts) *term {
	t.Helper()
	pm, ps, err := pty.Open()
	if err != nil {
		testenv.Missing(t, "no pty: %v", err)
	}
	pty.Setsize(pm, &pty.Winsize{Rows: 50, Cols: 160})
	ctty := 0
	if cmd.Stdin == nil {
		cmd.Stdin = ps
	} else {
		cmd.ExtraFiles = []*os.File{ps}
		ctty = 3
	}
	if cmd.Stdout == nil {
		cmd.Stdout = ps
	}
	if cmd.Stderr == nil {
		cmd.Stderr = ps
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: ctty}
	tm := &term{t: t, pm: pm, cmd: cmd, shown: make(chan struct{}), done: make(chan error, 1)}
	if err := cmd.Start(); err != nil {
		pm.Close()
		ps.Close()
		t.Fatal(err)
	}
	if o.keepSlave {
		tm.ps = ps
	} else {
		ps.Close()
	}
	// Reads until the last holder of the terminal closed it: then it
	// stops with EIO.
	go func() {
		defer close(tm.shown)
		b := make([]byte, 64<<10)
		for {
			n, err := pm.Read(b)
			tm.mu.Lock()
			tm.count += int64(n)
			if !o.discard {
				tm.buf.Write(b[:n])
			}
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { tm.done <- cmd.Wait() }()
	t.Cleanup(tm.close)
	return tm
}

// close kills the program (if it still runs) and closes the terminal.
func (tm *term) close() {
	tm.closeOnce.Do(func() {
		tm.cmd.Process.Kill()
		if tm.ps != nil {
			tm.ps.Close()
		}
		tm.pm.Close()
	})
}

// screen is everything the terminal showed so far.
func (tm *term) screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.buf.String()
}

// typ types s on the terminal.
func (tm *term) typ(s string) {
	tm.t.Helper()
	if _, err := tm.pm.Write([]byte(s)); err != nil {
		tm.t.Fatal(err)
	}
}

// wait waits for the program and returns its exit status.
func (tm *term) wait() int {
	tm.t.Helper()
	select {
	case err := <-tm.done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			tm.t.Fatal(err)
		}
		return tm.cmd.ProcessState.ExitCode()
	case <-time.After(20 * time.Second):
		tm.t.Fatalf("%s still runs after 20 s; the terminal shows:\n%s", tm.cmd.Path, tm.screen())
		return -1
	}
}
