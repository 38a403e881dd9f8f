package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/netproxy"
	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
)

// Check is bwrap's trial sandbox and the seccomp filter, a success
// remembered in the check cache.
func (b *bwrapBackend) Check() error { return checkBwrap(b.c.CheckCache) }

// Command is bwrap.Command with the backend's filter cache and o's route
// to the proxy.
func (b *bwrapBackend) Command(ctx context.Context, p *sandbox.Profile, argv, env []string, o Options, stdio Stdio) (Cmd, error) {
	cfg := bwrap.Config{FilterCache: b.c.FilterCache, Proxy: o.Proxy, BridgeVerb: netproxy.BridgeVerb, Verify: o.Verify}
	if o.Verify != nil {
		// guardrun's own binary runs the helper inside, as it runs
		// the bridge.
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("runner: a verified command needs guardrun's own binary: %w", err)
		}
		cfg.HelperExe = exe
	}
	c, err := bwrap.Command(ctx, p, argv, env, cfg)
	if err != nil {
		return nil, err
	}
	c.Cmd.Stdin, c.Cmd.Stdout, c.Cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
	return c, nil
}

// checkBwrap is Check with a trial sandbox's success remembered in
// cacheFile (see bwrap.CheckCached), for callers that start once per
// command.
func checkBwrap(cacheFile string) error {
	return bwrap.CheckCached(cacheFile, seccomp.Supported)
}

// checkBwrapAuto is checkBwrap for auto, which also remembers a failure
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
	err := checkBwrap(cacheFile)
	if err != nil && failed != "" {
		writeSmall(failed, key+"\x00"+err.Error())
	}
	return err
}
