package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// RunUnsandboxed runs argv in cwd with env and no OS sandbox, for a config
// that says require_os_sandbox: false (SPEC §5). It exists so that every
// command guardrun runs goes through this package; the caller decides
// (and warns) that there is no sandbox. Status and error mean what they
// mean for Run.
//
// The command stays in guardrun's process group, as a shell's foreground
// job does: a ^C on the terminal reaches it directly, so SIGINT and
// SIGQUIT are only kept from killing guardrun, not relayed (it would get
// them twice). SIGTERM and SIGHUP sent to guardrun are relayed.
func RunUnsandboxed(ctx context.Context, cwd string, argv []string, env []string, stdio Stdio) (int, error) {
	if len(argv) == 0 {
		return 0, errors.New("runner: no command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = cwd
	cmd.Env = env
	if cmd.Env == nil {
		cmd.Env = []string{} // nil would mean guardrun's own environment
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, relayed...)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("runner: start %s: %w", argv[0], err)
	}
	return waitRelaying(cmd, sigs, func(s os.Signal) {
		if s == syscall.SIGTERM || s == syscall.SIGHUP {
			_ = cmd.Process.Signal(s)
		}
	}, "runner")
}
