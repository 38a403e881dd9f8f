package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/landlock"
	"github.com/guardrun/guardrun/netproxy"
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
	return RunWith(ctx, Options{Backend: BackendBwrap}, p, argv, env, stdio)
}

// RunWith is Run with the backend o names. Under landlock the command
// runs without namespaces: Landlock rules and the same seccomp filter,
// applied to the command alone; a profile landlock cannot enforce in
// full (and o does not accept losing) is an error naming the parts
// (*landlock.UnenforceableError), and nothing runs; a profile with Proxy
// needs o.ProxyAddr (landlock.Config.Proxy; else ErrLandlockProxy). Under bwrap a profile with Proxy needs
// o.Proxy, the route to guardrun's proxy. Everything the command leaves
// running is ended when it exits.
func RunWith(ctx context.Context, o Options, p *sandbox.Profile, argv []string, env []string, stdio Stdio) (int, error) {
	switch o.Backend {
	case "", BackendBwrap:
	case BackendLandlock:
		if p != nil && p.Proxy && !o.ProxyAddr.IsValid() {
			return 0, ErrLandlockProxy
		}
		return runLandlock(ctx, o, p, argv, env, stdio)
	default:
		return 0, fmt.Errorf("runner: backend %q is not available on Linux", o.Backend)
	}
	status, err := runRelaying(o.Signals, func() (sandboxedCmd, error) {
		c, err := bwrap.Command(ctx, p, argv, env, bwrap.Config{FilterCache: o.FilterCache, Proxy: o.Proxy, BridgeVerb: netproxy.BridgeVerb})
		if err != nil {
			return nil, err
		}
		c.Cmd.Stdin, c.Cmd.Stdout, c.Cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
		return c, nil
	})
	moveAsideCreated(p, stdio)
	return status, err
}

// sandboxedCmd is what each backend's command offers the relay.
type sandboxedCmd interface {
	Start() error
	Signal(os.Signal) error
	Wait() (int, error)
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
func runRelaying(from <-chan os.Signal, build func() (sandboxedCmd, error)) (int, error) {
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

// CheckCached is Check with a trial sandbox's success remembered in
// cacheFile (see bwrap.CheckCached), for callers that start once per
// command.
func CheckCached(cacheFile string) error {
	return bwrap.CheckCached(cacheFile, seccomp.Supported)
}

// runLandlock is RunWith for the landlock backend: the same signal
// relay, to the command's process group.
func runLandlock(ctx context.Context, o Options, p *sandbox.Profile, argv []string, env []string, stdio Stdio) (int, error) {
	var lc *landlock.Cmd
	status, err := runRelaying(o.Signals, func() (sandboxedCmd, error) {
		c, err := landlock.Command(ctx, p, argv, env, landlock.Config{Accept: o.LandlockAccept, ConnectTCP: o.ConnectTCP,
			Proxy: o.ProxyAddr, FilterCache: o.FilterCache, StateDir: o.StateDir})
		if err != nil {
			return nil, err
		}
		c.Cmd.Stdin, c.Cmd.Stdout, c.Cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
		lc = c
		return c, nil
	})
	if lc != nil && stdio.Stderr != nil {
		for _, l := range lc.Restored {
			fmt.Fprintln(stdio.Stderr, l)
		}
	}
	return status, err
}

// checkLandlock is landlock.Check with a success remembered next to
// cacheFile (cacheFile + "-landlock"), keyed by the Landlock ABI, the
// boot and the user: the check compiles the seccomp filter, which costs
// more than starting the command.
func checkLandlock(cacheFile string) error {
	abi, err := landlock.ABI()
	if err != nil {
		return err
	}
	boot, berr := os.ReadFile("/proc/sys/kernel/random/boot_id")
	key := fmt.Sprintf("landlock-ok v1 abi=%d boot=%s uid=%d\n", abi, strings.TrimSpace(string(boot)), os.Getuid())
	path := ""
	if cacheFile != "" && berr == nil {
		path = cacheFile + "-landlock"
		if b, err := os.ReadFile(path); err == nil && string(b) == key {
			return nil
		}
	}
	if err := landlock.Check(); err != nil {
		return err
	}
	if path != "" {
		writeSmall(path, key)
	}
	return nil
}

// checkBwrapAuto is CheckCached for auto, which also remembers a failure
// (cacheFile + "-bwrap-failed", with the same key: bwrap binary, boot,
// user and user namespace), so that where user namespaces are off every
// command does not pay for a trial sandbox before falling back to
// landlock. Enabling them without a reboot is then noticed only after
// the next reboot or bwrap upgrade; until then auto keeps landlock,
// which enforces the profile or refuses.
func checkBwrapAuto(cacheFile string) error {
	failed := ""
	key, kerr := bwrap.CacheKey()
	if cacheFile != "" && kerr == nil {
		failed = cacheFile + "-bwrap-failed"
		if b, err := os.ReadFile(failed); err == nil {
			if k, why, ok := strings.Cut(string(b), "\x00"); ok && k == key {
				return errors.New(why)
			}
		}
	}
	err := CheckCached(cacheFile)
	if err != nil && failed != "" {
		writeSmall(failed, key+"\x00"+err.Error())
	}
	return err
}

// writeSmall replaces path with data, best effort: a memory that cannot
// be written costs a check.
func writeSmall(path, data string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".sandbox-ok-*")
	if err != nil {
		return
	}
	_, werr := f.WriteString(data)
	if cerr := f.Close(); werr == nil && cerr == nil {
		_ = os.Rename(f.Name(), path)
	}
	os.Remove(f.Name())
}

// CheckBackend reports whether the named backend works here.
func CheckBackend(name, cacheFile string) error {
	switch name {
	case BackendLandlock:
		return checkLandlock(cacheFile)
	case BackendBwrap, "":
		return CheckCached(cacheFile)
	}
	_, err := Choose(name, cacheFile)
	return err
}

func choose(want, cacheFile string) (string, error) {
	switch want {
	case BackendBwrap:
		return BackendBwrap, CheckCached(cacheFile)
	case BackendLandlock:
		return BackendLandlock, checkLandlock(cacheFile)
	}
	berr := checkBwrapAuto(cacheFile)
	if berr == nil {
		return BackendBwrap, nil
	}
	lerr := checkLandlock(cacheFile)
	if lerr == nil {
		return BackendLandlock, nil
	}
	return "", errors.Join(berr, fmt.Errorf("and the landlock backend cannot be used either: %w", lerr))
}
