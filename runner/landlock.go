package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/guardrun/guardrun/landlock"
	"github.com/guardrun/guardrun/sandbox"
)

// landlockBackend is the landlock backend: Landlock rules and the seccomp
// filter on the command alone, no namespaces.
type landlockBackend struct{ c Config }

func (*landlockBackend) Name() string { return BackendLandlock }

// Check is landlock.Check, a success remembered beside the check cache.
func (b *landlockBackend) Check() error { return checkLandlock(b.c.CheckCache) }

// CheckProxy: the route to the proxy needs TCP rules.
func (*landlockBackend) CheckProxy() error {
	abi, err := landlock.ABI()
	if err != nil {
		return err
	}
	if abi < landlock.ProxyABI {
		return fmt.Errorf("network: proxy under the landlock backend needs Landlock ABI %d (Linux 6.7) to limit TCP to the proxy's port; this kernel has ABI %d. Use the bwrap backend (sandbox.backend: bwrap, where user namespaces work) or set sandbox.network to true or false", landlock.ProxyABI, abi)
	}
	return nil
}

func (*landlockBackend) ProxyMode() ProxyMode { return ProxyLoopback }

// ConfinesSignals: only with Landlock's signal scope (ABI 6; below it
// the config may accept the loss), else the command could stop or kill
// guardrun.
func (*landlockBackend) ConfinesSignals() bool {
	abi, err := landlock.ABI()
	return err == nil && abi >= 6
}

// Describe gives the ruleset landlock would apply for p (with the
// running kernel's ABI, or the newest this guardrun knows elsewhere) and
// the parts it would refuse for.
func (*landlockBackend) Describe(p *sandbox.Profile, o Options) (*Description, error) {
	rs, refused, err := landlockReport(p, o.LandlockAccept)
	if err != nil {
		return nil, err
	}
	d := &Description{
		JSON: struct {
			Landlock *landlock.Ruleset `json:"landlock,omitempty"`
			// Unenforceable are the parts landlock cannot enforce and
			// the config does not accept losing: commands would be
			// refused.
			Unenforceable []landlock.Part `json:"unenforceable,omitempty"`
		}{rs, refused},
		Seccomp: p.Seccomp,
	}
	// No pid or IPC namespace: the filter the command gets (Command).
	d.Seccomp.HostShared = true
	if p.Network && !p.Seccomp.AllowUnix {
		d.Note = "landlock: bind served by guardrun: an abstract unix name or a unix path refused (the host's network namespace), anything else bound as asked"
	}
	if p.Proxy {
		// TCP sockets only, connect served by guardrun (Command with
		// Config.Proxy).
		d.Seccomp.InetStreamOnly = true
		d.Note = "landlock: TCP only, to the proxy's port (Landlock) and address (connect served by guardrun); a token in the proxy URL"
	}
	var w strings.Builder
	printLandlock(&w, rs, refused)
	d.Text = w.String()
	return d, nil
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

// landlockReport builds the ruleset landlock would apply here (with the
// running kernel's ABI, or the newest this guardrun knows elsewhere),
// and the parts it would refuse for.
func landlockReport(p *sandbox.Profile, accept []string) (*landlock.Ruleset, []landlock.Part, error) {
	abi, err := landlock.ABI()
	if err != nil {
		abi = 7
	}
	rs, err := landlock.Build(p, landlock.Options{ABI: abi, TmpDir: "$TMPDIR", Accept: accept, Self: landlock.SelfExe()})
	var ue *landlock.UnenforceableError
	if errors.As(err, &ue) {
		// Show what it would apply, had the config accepted the losses.
		rs, err = landlock.Build(p, landlock.Options{ABI: abi, TmpDir: "$TMPDIR", Accept: landlock.AcceptNames, Self: landlock.SelfExe()})
		if rs != nil {
			rs.Lost = nil
		}
		return rs, ue.Parts, err
	}
	return rs, nil, err
}

// printLandlock is guardrun profile's text for the ruleset rs and the
// parts landlock would refuse for.
func printLandlock(w io.Writer, rs *landlock.Ruleset, refused []landlock.Part) {
	fmt.Fprintf(w, "\nlandlock (ABI %d) + seccomp on the command alone, no namespaces:\n", rs.ABI)
	// The entries granted one by one inside a directory that may only
	// be listed are counted, not listed (--json has them all). Nested
	// splits (/etc/ssl inside /etc) show as their own "list" line.
	listed := map[string]bool{}
	for _, r := range rs.Rules {
		if landlock.AccessName(r.Access, r.Dir) == "list" {
			listed[r.Path] = true
		}
	}
	for _, r := range rs.Rules {
		name := landlock.AccessName(r.Access, r.Dir)
		if listed[filepath.Dir(r.Path)] && name != "list" {
			continue
		}
		fmt.Fprintf(w, "  %-9s %s\n", name, r.Path)
		if name != "list" {
			continue
		}
		counts := map[string]int{}
		var order []string
		for _, e := range rs.Rules {
			n := landlock.AccessName(e.Access, e.Dir)
			if filepath.Dir(e.Path) == r.Path && n != "list" {
				if counts[n] == 0 {
					order = append(order, n)
				}
				counts[n]++
			}
		}
		for _, n := range order {
			fmt.Fprintf(w, "  %-9s %s/* (%d entries, granted one by one: not the denied or protected ones)\n", n, r.Path, counts[n])
		}
	}
	if len(rs.ConnectTCP) > 0 {
		fmt.Fprintf(w, "  tcp connect only to ports %v\n", rs.ConnectTCP)
	}
	fmt.Fprintln(w, "  private /tmp: a directory of its own as $TMPDIR, removed after; /tmp itself is not visible")
	if self := landlock.SelfExe(); self != "" && rs.Scoped&landlock.ScopeSignal != 0 {
		fmt.Fprintf(w, "  %s (guardrun itself, ro above) runs first in the command's process and gives the command a Landlock domain nested below guardrun's, so it cannot signal guardrun\n", self)
	}
	if rs.Scoped&landlock.ScopeSignal != 0 {
		fmt.Fprintln(w, "  pid isolation: signals and abstract unix sockets stay inside; whatever the command leaves running is ended when it exits")
	}
	fmt.Fprintln(w, "  names stay visible: a denied name's entry shows in its directory listing (unreadable); other processes are listed in /proc")
	if len(rs.Served) > 0 {
		fmt.Fprintln(w, "  entries served by guardrun (hold a denied or protected name, which Landlock cannot keep out of a rule on the directory: creating, removing and renaming")
		fmt.Fprintf(w, "  their other entries is done by guardrun, on a thread restricted by these rules plus the right to change those entries; up to %d new files per file system and %d new directories\n", landlock.PoolSize, landlock.DirPoolSize)
		fmt.Fprintln(w, "  as usable as any in the zone, more files refused; each such call costs a round trip to guardrun; the names kept as they are follow):")
		for _, d := range rs.Served {
			fmt.Fprintf(w, "    %s (kept: %s)\n", d.Dir, strings.Join(d.Keep, ", "))
		}
	}
	if len(rs.Watch) > 0 {
		fmt.Fprintln(w, "  protected names (and missing denied names) restored after the command (their directories stay writable; while the command runs, a host process could observe a change;")
		fmt.Fprintln(w, "  after it, what it changed, replaced, removed or hard-linked is put back and what it created is moved aside, each said on stderr):")
		for _, x := range rs.Watch {
			if x.Missing {
				fmt.Fprintf(w, "    %s (missing: moved aside if created)\n", x.Path)
			} else {
				fmt.Fprintf(w, "    %s\n", x.Path)
			}
		}
	}
	for _, pt := range rs.Lost {
		fmt.Fprintf(w, "  accepted loss: %s\n", pt)
	}
	if len(refused) > 0 {
		fmt.Fprintln(w, "REFUSED: commands would not run; landlock cannot enforce:")
		for _, pt := range refused {
			fmt.Fprintf(w, "  - %s\n", pt)
		}
		fmt.Fprintln(w, "use the bwrap backend, or accept the loss in sandbox.landlock_accept")
	}
}
