package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

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
		Proxy: o.ProxyAddr, FilterCache: b.c.FilterCache, StateDir: b.c.StateDir})
	if err != nil {
		return nil, err
	}
	c.Cmd.Stdin, c.Cmd.Stdout, c.Cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
	return &landlockCmd{Cmd: c, p: p, accept: o.LandlockAccept, stderr: stdio.Stderr}, nil
}

// landlockCmd is a landlock command that says on stderr, once it has
// ended, what was put back or moved aside among the protected names and,
// when it failed, why landlock may have refused what bwrap would allow.
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
	if err == nil && status != 0 {
		noteFixed(c.stderr, c.p, c.accept)
	}
	return status, err
}

// noteFixed tells, after a command failed, that its working directory
// could not get new entries (it holds a denied or protected name; see
// docs/backends.md), which is the likely reason for an EACCES there that
// bwrap would not give.
func noteFixed(w io.Writer, p *sandbox.Profile, accept []string) {
	abi, err := landlock.ABI()
	if err != nil {
		return
	}
	rs, err := landlock.Build(p, landlock.Options{ABI: abi, Accept: accept})
	if err != nil || !slices.Contains(rs.Fixed, p.Cwd) {
		return
	}
	var names []string
	for _, d := range append(slices.Clone(p.Deny), p.ReadOnlyOver...) {
		if sandbox.Within(d, p.Cwd) && d != p.Cwd {
			if _, err := os.Lstat(d); err == nil && len(names) < 3 {
				names = append(names, d)
			}
		}
	}
	fmt.Fprintf(w, "guardrun: note: under the landlock backend nothing can be created, removed or renamed directly in %s: it holds denied or protected names (%s); see guardrun profile\n",
		p.Cwd, strings.Join(names, ", "))
}
