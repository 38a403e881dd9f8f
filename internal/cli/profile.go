package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/landlock"
	"github.com/guardrun/guardrun/runner"
	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seatbelt"
	"github.com/guardrun/guardrun/seccomp"
)

const profileUsage = `Usage: guardrun profile [--os linux|darwin] [--json]

Shows the OS sandbox the config in force would apply to a command run in
the working directory: the platform-neutral profile (read-only, read-write
and denied paths, network, system call policy) and, for Linux, the exact
bubblewrap arguments, or for macOS the Seatbelt (SBPL) profile and its
parameters. On Linux it names the backend (sandbox.backend or --backend;
auto is resolved here) and, for landlock, the rules and what Landlock
leaves out. It lists the protected names (sandbox.protect and the built-in
list), the directories pinned so they cannot be renamed away, and the
socket policy (which unix sockets may be reached, which socket families
the system call filter refuses). --os renders for either platform on any
platform. A rule with
network: true can turn the network on for the commands it matches; this
shows the config's own setting.
`

type profileReport struct {
	OS      string           `json:"os"`
	Config  string           `json:"config"`
	Profile *sandbox.Profile `json:"profile"`
	// Backend is the OS sandbox that would run commands here.
	Backend string `json:"backend"`
	// BackendError says why no backend would run them.
	BackendError string            `json:"backend_error,omitempty"`
	Bwrap        []string          `json:"bwrap,omitempty"`
	Landlock     *landlock.Ruleset `json:"landlock,omitempty"`
	// Unenforceable are the parts landlock cannot enforce and the config
	// does not accept losing: commands would be refused.
	Unenforceable []landlock.Part  `json:"unenforceable,omitempty"`
	SBPL          string           `json:"sbpl,omitempty"`
	Params        []seatbelt.Param `json:"params,omitempty"`
}

func cmdProfile(g *global, args []string, io IO) error {
	vf, help, err := verbStart(g, args, profileUsage, []string{"--os"}, nil, io)
	if err != nil || help {
		return err
	}
	if len(vf.args) > 0 || vf.dashes {
		return usagef("profile takes no arguments")
	}
	osName := vf.values["--os"]
	if osName == "" {
		osName = runtime.GOOS
		if osName != "darwin" {
			osName = "linux"
		}
	}
	if osName != "linux" && osName != "darwin" {
		return usagef("--os wants linux or darwin, got %q", osName)
	}
	e, l, err := config.LoadProcess(g.ConfigFlags())
	if err != nil {
		return err
	}
	p, err := request.ProfileFor(l, e, e.Cwd, l.Cfg.Sandbox.Network)
	if err != nil {
		return err
	}
	rep := profileReport{OS: osName, Config: l.Cfg.File, Profile: p}
	switch osName {
	case "linux":
		rep.Backend = string(request.BackendFor(g.Options, l))
		if runtime.GOOS == "linux" {
			b, berr := request.ChooseBackend(g.Options, l, e)
			if berr != nil {
				rep.BackendError = berr.Error()
			} else {
				rep.Backend = b
			}
		}
		if rep.Backend == runner.BackendLandlock {
			rep.Landlock, rep.Unenforceable, err = landlockReport(p, l.Cfg.Sandbox.LandlockAccept)
			if p.Proxy && rep.BackendError == "" {
				if err := request.LandlockProxyABI(); err != nil {
					rep.BackendError = err.Error()
				}
			}
		} else {
			opts := bwrap.Options{SeccompFD: bwrap.SeccompFD, StatusFD: bwrap.StatusFD}
			if p.Proxy {
				// The socket's directory is made per command.
				exe, _ := os.Executable()
				opts.Proxy = &bwrap.ProxyRoute{Exe: exe, Socket: "/RUNTIME-DIR/guardrun-proxy-XXXX/proxy.sock"}
			}
			rep.Bwrap, err = bwrap.Args(p, opts)
		}
	case "darwin":
		var r *seatbelt.Rendered
		if r, err = seatbelt.Render(p); err == nil {
			rep.SBPL, rep.Params = r.Text, r.Params
		}
	}
	if err != nil {
		return err
	}
	if g.json {
		enc := json.NewEncoder(io.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	w := io.Stdout
	fmt.Fprintf(w, "config:     %s\n", rep.Config)
	if rep.Backend != "" {
		fmt.Fprintf(w, "backend:    %s\n", rep.Backend)
	}
	if rep.BackendError != "" {
		fmt.Fprintf(w, "            (unavailable: %s)\n", rep.BackendError)
	}
	fmt.Fprintf(w, "cwd:        %s\n", p.Cwd)
	list := func(name string, l []string) {
		fmt.Fprintf(w, "%-11s %s\n", name+":", strings.Join(l, " "))
	}
	list("read-only", p.ReadOnly)
	list("read-write", p.ReadWrite)
	list("ro-over", p.ReadOnlyOver)
	list("denied", p.Deny)
	list("protected", p.ProtectNames)
	fmt.Fprintf(w, "            (read-only at any depth inside read-write trees; those that exist now are among ro-over)\n")
	list("pinned", p.Pinned)
	fmt.Fprintf(w, "network:    %v\n", p.Network)
	if p.Proxy {
		fmt.Fprintf(w, "proxy:      %s\n", l.Cfg.Sandbox.Domains.Summary())
	}
	if len(p.UnixSockets) == 0 {
		fmt.Fprintf(w, "unix sockets: none (socket(AF_UNIX) refused; socketpair allowed)\n")
	} else {
		list("unix sockets", p.UnixSockets)
	}
	pol := p.Seccomp
	if p.Proxy && rep.Backend == runner.BackendLandlock {
		// landlock.CommandProxy: TCP sockets only, connect served by
		// guardrun.
		pol.InetStreamOnly = true
		fmt.Fprintf(w, "            (landlock: TCP only, to the proxy's port (Landlock) and address (connect served by guardrun); a token in the proxy URL)\n")
	}
	for _, r := range seccomp.Rules(pol) {
		if r.Name == "socket" || r.Name == "socketpair" || r.Name == "bind" || pol.InetStreamOnly && (r.Name == "listen" || strings.HasPrefix(r.Name, "send")) {
			fmt.Fprintf(w, "  refused: %s (%s) when %s\n", r.Name, r.Action, r.Cond)
		}
	}
	for _, wn := range p.Warnings {
		fmt.Fprintf(w, "warning:    %s\n", wn)
	}
	fmt.Fprintf(w, "private /tmp: %v\n", p.PrivateTmp)
	list("env denied", p.EnvDeny)
	switch osName {
	case "linux":
		if rep.Backend == runner.BackendLandlock {
			printLandlock(w, rep.Landlock, rep.Unenforceable)
			break
		}
		fmt.Fprintf(w, "\nbwrap %s -- CMD...\n", request.QuoteArgv(rep.Bwrap))
		fmt.Fprintf(w, "(fd %d holds the seccomp filter, fd %d the status pipe)\n", bwrap.SeccompFD, bwrap.StatusFD)
		if p.Proxy {
			fmt.Fprintf(w, "with the proxy, CMD is run as: %s CMD...\n(fd %d holds the command's own seccomp filter, which refuses unix sockets)\n",
				request.QuoteArgv(bwrap.BridgeArgv(nil)), bwrap.CommandFilterFD)
		}
	case "darwin":
		fmt.Fprintln(w, "\nsandbox-exec -p PROFILE with:")
		for _, prm := range rep.Params {
			fmt.Fprintf(w, "  -D %s=%s\n", prm.Name, prm.Value)
		}
		fmt.Fprintf(w, "\n%s\n", rep.SBPL)
	}
	return nil
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
	if len(rs.Fixed) > 0 {
		fmt.Fprintln(w, "  entries fixed (hold a denied or protected name; files inside stay writable, nothing new can be created, removed or renamed there):")
		for _, d := range rs.Fixed {
			fmt.Fprintf(w, "    %s\n", d)
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
