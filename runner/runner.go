package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/sandbox"
)

// ProxyRoute is how a sandbox reaches guardrun's network proxy: the
// guardrun binary (which runs the bridge inside) and the proxy's unix
// socket.
type ProxyRoute = bwrap.ProxyRoute

// Stdio is where the sandboxed command reads and writes. Nil means
// /dev/null. *os.File values are handed to the command as they are, so a
// terminal stays a terminal inside; other readers and writers are copied
// through pipes.
type Stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// relayed are the signals a person or a supervisor sends to guardrun that
// belong to the command: guardrun passes them on and keeps waiting for
// the command's own exit status. Keep in sync with the package doc.
var relayed = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// waitRelaying waits for cmd, passing each signal from sigs to relay
// meanwhile, and returns the exit status as sh reports it (128+N for
// signal N). prefix names the mechanism in errors.
func waitRelaying(cmd *exec.Cmd, sigs <-chan os.Signal, relay func(os.Signal), prefix string) (int, error) {
	// The relay's stop condition: done closes after Wait, when the pid
	// may be reused.
	done := make(chan struct{})
	relayDone := make(chan struct{})
	go func() {
		defer close(relayDone)
		for {
			select {
			case s := <-sigs:
				relay(s)
			case <-done:
				return
			}
		}
	}()
	werr := cmd.Wait()
	close(done)
	<-relayDone
	return exitStatus(cmd, werr, prefix)
}

// exitStatus is the status of cmd, which Wait ended with werr, as sh
// reports it (128+N for signal N). prefix names the mechanism in errors.
func exitStatus(cmd *exec.Cmd, werr error, prefix string) (int, error) {
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
		return 0, fmt.Errorf("%s: %w", prefix, werr)
	}
	return 0, fmt.Errorf("%s: the command ended without an exit status", prefix)
}

// RunWith runs argv inside the sandbox described by p, under o.Backend
// (nil: the platform's default, bwrap on Linux, Seatbelt on macOS,
// unchecked), with what o gives the command, and returns its exit status
// (128+N when signal N ended it, as sh reports). err is set only when
// the sandbox could not be set up or started; a command that ran and
// failed is a status, not an error.
//
// While the command runs, SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to
// this process (or, with o.Signals, those delivered there) are relayed
// to the command (and only to it), and RunWith keeps waiting for its
// status. Cancelling ctx sends SIGTERM, then kills the sandbox after
// bwrap.WaitDelay. Nothing of the sandbox outlives this process, even if
// it is killed with SIGKILL.
//
// Under landlock the command runs without namespaces: Landlock rules and
// the same seccomp filter, applied to the command alone; a profile
// landlock cannot enforce in full (and o does not accept losing) is an
// error naming the parts (*landlock.UnenforceableError), and nothing
// runs; a profile with Proxy needs o.ProxyAddr (else ErrLandlockProxy).
// Under bwrap a profile with Proxy needs o.Proxy, the route to guardrun's
// proxy. Everything the command leaves running is ended when it exits.
func RunWith(ctx context.Context, o Options, p *sandbox.Profile, argv []string, env []string, stdio Stdio) (int, error) {
	b := o.Backend
	if b == nil {
		var err error
		if b, err = New(runtime.GOOS, BackendAuto, Config{}); err != nil {
			return 0, err
		}
	}
	status, err := runRelaying(o.Signals, func() (Cmd, error) {
		return b.Command(ctx, p, argv, env, o, stdio)
	})
	if f, ok := b.(finisher); ok {
		f.finish(p, stdio)
	}
	return status, err
}

// runRelaying builds the command with build, starts it, and waits for its
// status, relaying SIGINT, SIGTERM, SIGHUP and SIGQUIT to it meanwhile.
//
// It subscribes before starting, so that no signal in between takes the
// default action (killing guardrun, and with it the sandbox, which
// during bwrap's setup could leave the sandbox orphaned). Subscribing
// and unsubscribing each wait for the runtime's signal thread, so the
// first overlaps with build and the second is not waited for: a signal
// in the moment after the command ended is dropped rather than relayed.
//
// With from not nil, the process's signals are left alone and what from
// delivers is relayed instead (Options.Signals).
func runRelaying(from <-chan os.Signal, build func() (Cmd, error)) (int, error) {
	var sigs <-chan os.Signal = from
	subscribed := make(chan struct{})
	if from == nil {
		own := make(chan os.Signal, 4)
		sigs = own
		go func() {
			signal.Notify(own, relayed...)
			close(subscribed)
		}()
		defer func() {
			<-subscribed
			go signal.Stop(own)
		}()
	} else {
		close(subscribed)
	}

	c, err := build()
	if err != nil {
		return 0, err
	}
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

// quote is o.Quote, else each word quoted as Go does.
func (o Options) quote(argv []string) string {
	if o.Quote != nil {
		return o.Quote(argv)
	}
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = strconv.Quote(a)
	}
	return strings.Join(parts, " ")
}

// moveAsideCreated moves aside what the command created at the
// profile's MoveAfter paths (names no mount can keep missing), saying so
// on stderr. The landlock backend does it with its other protected names.
func moveAsideCreated(p *sandbox.Profile, stdio Stdio) {
	if p == nil {
		return
	}
	for _, m := range p.MoveAsideCreated(time.Now()) {
		if stdio.Stderr != nil {
			fmt.Fprintf(stdio.Stderr, "guardrun: %s\n", m)
		}
	}
}
