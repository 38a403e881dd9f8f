package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seatbelt"
)

// Check reports whether the OS sandbox works here (sandbox-exec), as a
// sentence that says how to fix it.
func Check() error { return seatbelt.Check() }

// Run runs argv under sandbox-exec with p's Seatbelt profile and returns
// its exit status (128+N when signal N ended it, as sh reports). err is set
// only when the sandbox could not be set up or started.
//
// While the command runs, SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to this
// process are relayed to the command's process group.
func Run(ctx context.Context, p *sandbox.Profile, argv []string, env []string, stdio Stdio) (int, error) {
	cmd, err := seatbelt.Command(ctx, p, argv, env)
	if err != nil {
		return 0, err
	}
	defer seatbelt.Cleanup(cmd)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, relayed...)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("seatbelt: start: %w", err)
	}
	// Stops when done closes, after Wait: the pid may be reused then.
	done := make(chan struct{})
	relayDone := make(chan struct{})
	go func() {
		defer close(relayDone)
		for {
			select {
			case s := <-sigs:
				// seatbelt.Command starts the command in its own
				// process group (sandbox-exec execs the command).
				if err := syscall.Kill(-cmd.Process.Pid, s.(syscall.Signal)); err != nil {
					_ = cmd.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	werr := cmd.Wait()
	close(done)
	<-relayDone
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Exited():
				return ws.ExitStatus(), nil
			case ws.Signaled():
				return 128 + int(ws.Signal()), nil
			}
		}
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return 0, fmt.Errorf("seatbelt: %w", werr)
	}
	return 0, errors.New("seatbelt: the command ended without an exit status")
}

// CheckCached is Check; nothing here is worth remembering.
func CheckCached(cacheFile string) error { return Check() }
