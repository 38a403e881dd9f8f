package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/guardrun/guardrun/approval"
)

// drainTime is how long, after the agent exits, output still in the pty
// is relayed. Output normally ends at once (the last writer closed the
// pty); a background process the agent left behind holding the pty open
// must not keep the supervisor alive.
const drainTime = time.Second

// Supervisor runs an agent in a pseudo-terminal on the person's terminal
// and answers approval requests from the agent's commands on the same
// terminal.
type Supervisor struct {
	// In is the person's keyboard and Out their screen, normally stdin
	// and stdout. A terminal In is put in raw mode for the run and always
	// restored.
	In  *os.File
	Out *os.File
	// Style draws prompts.
	Style approval.Style
	// SocketBase is where the socket's private directory is made; empty
	// means $XDG_RUNTIME_DIR, else the temporary directory.
	SocketBase string
	// HoldLimit bounds the agent output kept back while a prompt is shown
	// (DefaultHoldLimit when zero).
	HoldLimit int
	// Settle is how long after a prompt appears keys still go to the
	// agent (DefaultSettle when zero, none when negative).
	Settle time.Duration
	// Started, when set, is called once the agent runs, with its process
	// and the socket path.
	Started func(pid int, socket string)
	// Relay, when set, is the person's approval broker, to which every
	// request is offered as well (Server.Relay).
	Relay Relay
}

// Run starts cmd in a new pty (cmd's stdio and session are set here, and
// GUARDRUN_SOCKET is added to its environment), relays the terminal both
// ways, forwards window size changes and SIGINT, SIGQUIT, SIGTERM and
// SIGHUP, serves approval requests until the agent exits, and returns its
// exit status (128+N for a signal, as sh reports it). Cancelling ctx sends
// the agent SIGTERM. With no terminal on In, nobody is asked: every
// request is answered that no person can be (Reply.NoPerson).
func (sv *Supervisor) Run(ctx context.Context, cmd *exec.Cmd) (status int, err error) {
	inFd, inTTY := -1, false
	if sv.In != nil {
		inFd = int(sv.In.Fd())
		inTTY = term.IsTerminal(inFd)
	}
	ptm, tty, err := openPTY()
	if err != nil {
		return 0, fmt.Errorf("supervisor: open a pty: %w", err)
	}
	defer ptm.Close()
	closeTTY := func() {
		if tty != nil {
			tty.Close()
			tty = nil
		}
	}
	defer closeTTY()
	if err := setSize(ptm, sv.size()); err != nil {
		return 0, fmt.Errorf("supervisor: pty size: %w", err)
	}

	settle := sv.Settle
	if settle == 0 {
		settle = DefaultSettle
	}
	scr := newScreen(sv.Out, sv.HoldLimit)
	keys := newKeyboard(max(settle, 0))
	var agent atomic.Int64 // the agent's pid, once started
	terminal := &Terminal{
		screen: scr, keys: keys, style: sv.Style,
		size: func() (int, int) { ws := sv.size(); return int(ws.Rows), int(ws.Cols) },
		// A prompt drew over whatever the agent had on screen; full
		// screen programs repaint on SIGWINCH, line programs ignore it.
		redraw: func() {
			if pid := int(agent.Load()); pid > 0 {
				signalGroup(foreground(ptm, pid), syscall.SIGWINCH)
			}
		},
	}
	var prompter approval.Prompter = terminal
	if !inTTY {
		// Keys from a pipe or a file are no person's answer: nobody is
		// asked, and the agent's commands act as under strict mode.
		prompter = approval.Nobody(&approval.NoPersonError{Why: "guardrun supervise has no terminal to ask on (its standard input is not one)"})
	}
	srv, err := Listen(sv.SocketBase, prompter)
	if err != nil {
		return 0, err
	}
	srv.Relay = sv.Relay
	defer srv.Close()
	go srv.Serve()

	cmd.Env = setEnv(cmd.Env, "GUARDRUN_SOCKET", srv.Path())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Setctty = true
	cmd.SysProcAttr.Ctty = 0 // the child's stdin

	// Signals are caught before the terminal goes raw and released after
	// it is restored (defers run last-in first-out), so no signal can end
	// the process while the terminal is raw.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGWINCH,
		syscall.SIGTSTP, syscall.SIGCONT)
	defer signal.Stop(sigs)
	restore, reraw := func() {}, func() {}
	if inTTY {
		old, err := term.MakeRaw(inFd)
		if err != nil {
			return 0, fmt.Errorf("supervisor: raw mode: %w", err)
		}
		restore = func() { term.Restore(inFd, old) }
		reraw = func() { term.MakeRaw(inFd) }
		defer restore()
	}

	if err := cmd.Start(); err != nil {
		return 0, err
	}
	closeTTY() // the agent has its copy; EIO on the master then means it is gone
	pid := cmd.Process.Pid
	agent.Store(int64(pid))
	if sv.Started != nil {
		sv.Started(pid, srv.Path())
	}

	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		defer restoreOnPanic(restore)
		relayOutput(ptm, scr)
	}()
	stopInput := readKeyboard(sv.In, keys, restore)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		defer restoreOnPanic(restore)
		feedAgent(ptm, keys, !inTTY)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	done := ctx.Done()
	var waitErr error
loop:
	for {
		select {
		case sig := <-sigs:
			switch sig {
			case syscall.SIGWINCH:
				setSize(ptm, sv.size())
			case syscall.SIGINT, syscall.SIGQUIT:
				// As the terminal would: to the foreground job.
				signalGroup(foreground(ptm, pid), sig.(syscall.Signal))
			case syscall.SIGTSTP:
				// Stopped from outside (kill -TSTP; ^Z reaches the
				// agent as a key): the agent's job stops as it would
				// on a terminal, the person gets their terminal back as
				// it was, and the supervisor stops.
				signalGroup(foreground(ptm, pid), syscall.SIGTSTP)
				terminal.suspend()
				restore()
				syscall.Kill(os.Getpid(), syscall.SIGSTOP)
			case syscall.SIGCONT:
				// Continued (after a stop of any kind, the shell may
				// have reset the terminal): raw again, the size may have
				// changed meanwhile, and the agent continues and
				// repaints.
				reraw()
				setSize(ptm, sv.size())
				terminal.resume()
				fg := foreground(ptm, pid)
				signalGroup(fg, syscall.SIGCONT)
				signalGroup(fg, syscall.SIGWINCH)
			default:
				signalGroup(pid, sig.(syscall.Signal))
			}
		case <-done:
			signalGroup(pid, syscall.SIGTERM)
			done = nil
		case waitErr = <-waited:
			break loop
		}
	}

	// Withdraw what still waits for the person (the processes that asked
	// are orphans now), relay the output left in the pty, then stop.
	srv.Close()
	ptm.SetReadDeadline(time.Now().Add(drainTime))
	<-outDone
	keys.stop()
	stopInput()
	ptm.Close()
	<-writerDone
	scr.release()

	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		return 0, fmt.Errorf("supervisor: wait: %w", waitErr)
	}
	return exitStatus(cmd.ProcessState), nil
}

// restoreOnPanic, deferred in a goroutine, puts the person's terminal
// back before a panic ends the process: only the goroutine that panics
// runs its defers.
func restoreOnPanic(restore func()) {
	if r := recover(); r != nil {
		restore()
		panic(r)
	}
}

// size is the person's terminal size, or 80x24 without a terminal.
func (sv *Supervisor) size() *pty.Winsize {
	for _, f := range []*os.File{sv.In, sv.Out} {
		if f == nil {
			continue
		}
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Row > 0 && ws.Col > 0 {
			return &pty.Winsize{Rows: ws.Row, Cols: ws.Col, X: ws.Xpixel, Y: ws.Ypixel}
		}
	}
	return &pty.Winsize{Rows: 24, Cols: 80}
}

func exitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// relayOutput copies the agent's output to the screen until the pty
// ends (EIO once the agent and its children closed it) or its read
// deadline passes.
func relayOutput(ptm *os.File, scr *screen) {
	buf := make([]byte, 64<<10)
	for {
		n, err := ptm.Read(buf)
		if n > 0 {
			scr.agentOutput(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// feedAgent writes the keys meant for the agent to the pty. When the
// keyboard is not a terminal and ends, the agent gets an end-of-file
// character, as it would from a person pressing ^D.
func feedAgent(ptm *os.File, keys *keyboard, sendEOF bool) {
	for {
		p, eof, ok := keys.forAgent()
		if !ok {
			return
		}
		if eof {
			if sendEOF {
				ptm.Write([]byte{4})
			}
			return
		}
		if _, err := ptm.Write(p); err != nil {
			return
		}
	}
}

// readKeyboard reads the person's keys into keys until the input ends or
// the returned stop is called. It waits for input with poll/select on a
// stop pipe rather than a blocking read, so stopping never leaves a
// reader behind to steal the person's next keystroke.
func readKeyboard(in *os.File, keys *keyboard, restore func()) (stop func()) {
	if in == nil {
		keys.ended()
		return func() {}
	}
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		keys.ended()
		return func() {}
	}
	unix.CloseOnExec(p[0])
	unix.CloseOnExec(p[1])
	fd := int(in.Fd())
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer restoreOnPanic(restore)
		buf := make([]byte, 4096)
		for {
			ready, err := waitReadable(fd, p[0])
			if err != nil {
				keys.ended()
				return
			}
			if !ready {
				return
			}
			n, err := in.Read(buf)
			if n > 0 {
				keys.typed(buf[:n])
			}
			if err != nil {
				keys.ended()
				return
			}
		}
	}()
	return func() {
		unix.Close(p[1])
		<-finished
		unix.Close(p[0])
	}
}

// openPTY opens a pty whose master is non-blocking and so goes through
// Go's poller: reads can be given a deadline and Close interrupts them.
// (pty.Open leaves the master blocking.)
func openPTY() (ptm, tty *os.File, err error) {
	m, t, err := pty.Open()
	if err != nil {
		return nil, nil, err
	}
	fd, err := unix.FcntlInt(m.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	m.Close()
	if err == nil {
		err = unix.SetNonblock(fd, true)
		if err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		t.Close()
		return nil, nil, err
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), t, nil
}

func setSize(ptm *os.File, ws *pty.Winsize) error {
	rc, err := ptm.SyscallConn()
	if err != nil {
		return err
	}
	var ierr error
	err = rc.Control(func(fd uintptr) {
		ierr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: ws.Rows, Col: ws.Cols, Xpixel: ws.X, Ypixel: ws.Y})
	})
	if err != nil {
		return err
	}
	return ierr
}

// foreground is the pty's foreground process group, where a terminal
// sends ^C; the agent's own group when it cannot be read.
func foreground(ptm *os.File, agent int) int {
	rc, err := ptm.SyscallConn()
	if err != nil {
		return agent
	}
	pgrp := 0
	rc.Control(func(fd uintptr) {
		pgrp, _ = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP)
	})
	if pgrp <= 0 {
		return agent
	}
	return pgrp
}

// signalGroup signals process group pgrp, or the process of that id when
// it leads no group any more.
func signalGroup(pgrp int, sig syscall.Signal) {
	if pgrp <= 0 {
		return
	}
	if err := syscall.Kill(-pgrp, sig); err != nil {
		syscall.Kill(pgrp, sig)
	}
}

// setEnv returns env (the process's own when nil) with key set to val.
func setEnv(env []string, key, val string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+val)
}
