package runner

import (
	"context"
	"fmt"
	"io"

	"github.com/guardrun/guardrun/landlock"
	"github.com/guardrun/guardrun/sandbox"
)

// Command is landlock.Command with the backend's filter cache and state
// directory and what o gives the command: the accepted losses, the TCP
// ports, the proxy's address.
func (b *landlockBackend) Command(ctx context.Context, p *sandbox.Profile, argv, env []string, o Options, stdio Stdio) (Cmd, error) {
	if p != nil && p.Proxy && !o.ProxyAddr.IsValid() {
		return nil, ErrLandlockProxy
	}
	c, err := landlock.Command(ctx, p, argv, env, landlock.Config{Accept: o.LandlockAccept, ConnectTCP: o.ConnectTCP,
		Proxy: o.ProxyAddr, FilterCache: b.c.FilterCache, StateDir: b.c.StateDir, Verify: o.Verify})
	if err != nil {
		return nil, err
	}
	c.Cmd.Stdin, c.Cmd.Stdout, c.Cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
	return &landlockCmd{Cmd: c, p: p, accept: o.LandlockAccept, stderr: stdio.Stderr}, nil
}

// landlockCmd is a landlock command that says on stderr, once it has
// ended, what was put back or moved aside among the protected names and
// what it met that landlock could not do as bwrap does.
type landlockCmd struct {
	*landlock.Cmd
	p      *sandbox.Profile
	accept []string
	stderr io.Writer
}

func (c *landlockCmd) Wait() (int, error) {
	status, err := c.Cmd.Wait()
	if c.stderr == nil {
		return status, err
	}
	for _, l := range c.Restored {
		fmt.Fprintln(c.stderr, l)
	}
	for _, l := range c.Notes {
		fmt.Fprintln(c.stderr, l)
	}
	return status, err
}
