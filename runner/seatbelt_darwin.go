package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seatbelt"
)

// Command is seatbelt.Command, started and signalled as one process
// group.
func (seatbeltBackend) Command(ctx context.Context, p *sandbox.Profile, argv, env []string, o Options, stdio Stdio) (Cmd, error) {
	if o.Verify != nil {
		// TODO(seatbelt): verified commands (Endpoint Security).
		return nil, fmt.Errorf("seatbelt: run-time verification is not available on macOS yet")
	}
	cmd, err := seatbelt.Command(ctx, p, argv, env)
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
	return &seatbeltCmd{cmd}, nil
}

// seatbeltCmd is a command under sandbox-exec, which execs the command
// in the process group seatbelt.Command starts it in.
type seatbeltCmd struct{ cmd *exec.Cmd }

func (c *seatbeltCmd) Start() error {
	if err := c.cmd.Start(); err != nil {
		seatbelt.Cleanup(c.cmd)
		return fmt.Errorf("seatbelt: start: %w", err)
	}
	return nil
}

// Signal delivers sig to the command's process group, else to the
// command.
func (c *seatbeltCmd) Signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("seatbelt: unsupported signal %v", sig)
	}
	if err := syscall.Kill(-c.cmd.Process.Pid, s); err != nil {
		return c.cmd.Process.Signal(s)
	}
	return nil
}

// Wait waits for the command and removes its private temporary
// directory.
func (c *seatbeltCmd) Wait() (int, error) {
	defer seatbelt.Cleanup(c.cmd)
	werr := c.cmd.Wait()
	return exitStatus(c.cmd, werr, "seatbelt")
}
