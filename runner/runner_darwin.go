package runner

import (
	"context"
	"fmt"
	"os"
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
	return waitRelaying(cmd, sigs, func(s os.Signal) {
		// seatbelt.Command starts the command in its own process group
		// (sandbox-exec execs the command).
		if err := syscall.Kill(-cmd.Process.Pid, s.(syscall.Signal)); err != nil {
			_ = cmd.Process.Signal(s)
		}
	}, "seatbelt")
}

// CheckCached is Check; nothing here is worth remembering.
func CheckCached(cacheFile string) error { return Check() }

// RunWith is Run; macOS has one backend. Seatbelt has no route to the
// proxy yet: a profile with Proxy (and no Network) runs without network,
// and o.Proxy is not used.
func RunWith(ctx context.Context, o Options, p *sandbox.Profile, argv []string, env []string, stdio Stdio) (int, error) {
	if o.Backend != "" && o.Backend != BackendSeatbelt {
		return 0, fmt.Errorf("runner: backend %q is not available on macOS", o.Backend)
	}
	status, err := Run(ctx, p, argv, env, stdio)
	moveAsideCreated(p, stdio)
	return status, err
}

// CheckBackend is Check for the one backend macOS has.
func CheckBackend(name, cacheFile string) error {
	if _, err := Choose(name, cacheFile); err != nil {
		return err
	}
	return Check()
}

func choose(want, cacheFile string) (string, error) { return BackendSeatbelt, Check() }
