package runner

import (
	"context"
	"os"
	"os/signal"

	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
)

// Check reports whether the OS sandbox works here (bubblewrap with user
// namespaces, and seccomp), as a sentence that says how to fix it.
func Check() error {
	if err := bwrap.Check(); err != nil {
		return err
	}
	return seccomp.Supported()
}

// Run runs argv inside the sandbox described by p and returns its exit
// status (128+N when signal N ended it, as sh reports). err is set only
// when the sandbox could not be set up or started; a command that ran and
// failed is a status, not an error.
//
// While the command runs, SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to
// this process are relayed to the command (and only to it), and Run keeps
// waiting for its status. Cancelling ctx sends SIGTERM, then kills the
// sandbox after bwrap.WaitDelay. Nothing of the sandbox outlives this
// process, even if it is killed with SIGKILL.
func Run(ctx context.Context, p *sandbox.Profile, argv []string, env []string, stdio Stdio) (int, error) {
	return RunProxy(ctx, p, nil, argv, env, stdio)
}

// RunProxy is Run for a profile that may reach the network through
// guardrun's proxy: route is where the proxy's unix socket is (required
// when p.Proxy is set).
func RunProxy(ctx context.Context, p *sandbox.Profile, route *ProxyRoute, argv []string, env []string, stdio Stdio) (int, error) {
	// Subscribe before starting, so that no signal in between takes the
	// default action (killing guardrun, and with it the sandbox, which
	// during bwrap's setup could leave the sandbox orphaned). Subscribing
	// and unsubscribing each wait for the runtime's signal thread, so the
	// first overlaps with preparing the command and the second is not
	// waited for: a signal in the moment after the command ended is
	// dropped rather than relayed.
	sigs := make(chan os.Signal, 4)
	subscribed := make(chan struct{})
	go func() {
		signal.Notify(sigs, relayed...)
		close(subscribed)
	}()
	defer func() {
		<-subscribed
		go signal.Stop(sigs)
	}()

	c, err := bwrap.CommandProxy(ctx, p, route, argv, env)
	if err != nil {
		return 0, err
	}
	c.Cmd.Stdin, c.Cmd.Stdout, c.Cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr

	<-subscribed
	if err := c.Start(); err != nil {
		return 0, err
	}
	// The relay goroutine's stop condition: done closes when Wait has
	// returned; after that no pid it knows may be signalled.
	done := make(chan struct{})
	relayDone := make(chan struct{})
	go func() {
		defer close(relayDone)
		for {
			select {
			case s := <-sigs:
				_ = c.Signal(s)
			case <-done:
				return
			}
		}
	}()
	status, err := c.Wait()
	close(done)
	<-relayDone
	return status, err
}

// CheckCached is Check with a trial sandbox's success remembered in
// cacheFile (see bwrap.CheckCached), for callers that start once per
// command.
func CheckCached(cacheFile string) error {
	return bwrap.CheckCached(cacheFile, seccomp.Supported)
}
