package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/runner"
	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
	"github.com/guardrun/guardrun/shellparse"
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
	BackendError string `json:"backend_error,omitempty"`
	// detail is the backend's own members (runner.Description.JSON),
	// after these.
	detail any
}

// MarshalJSON is the report's members followed by the backend's.
func (r profileReport) MarshalJSON() ([]byte, error) {
	type plain profileReport
	head, err := json.Marshal(plain(r))
	if err != nil || r.detail == nil {
		return head, err
	}
	tail, err := json.Marshal(r.detail)
	if err != nil {
		return nil, err
	}
	if len(tail) < 2 || tail[0] != '{' {
		return nil, fmt.Errorf("profile: the backend's description is not an object: %s", tail)
	}
	if string(tail) == "{}" {
		return head, nil
	}
	return append(append(head[:len(head)-1], ','), tail[1:]...), nil
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
	// The backend that would run commands on osName: the one that works
	// here, else (elsewhere, or none works) the one asked for, unchecked.
	var b runner.Backend
	want := runner.BackendAuto
	if osName == "linux" {
		rep.Backend = string(request.BackendFor(g.Options, l))
		want = rep.Backend
		if runtime.GOOS == "linux" {
			chosen, berr := request.ChooseBackend(g.Options, l, e)
			if berr != nil {
				rep.BackendError = berr.Error()
			} else {
				b, rep.Backend = chosen, chosen.Name()
			}
		}
	}
	if b == nil {
		if b, err = runner.New(osName, want, runner.Config{}); err != nil {
			return err
		}
	}
	d, err := b.Describe(p, runner.Options{LandlockAccept: l.Cfg.Sandbox.LandlockAccept, Quote: func(argv []string) string { return shellparse.QuoteArgv(argv, l.Engine.Dialect()) }})
	if err != nil {
		return err
	}
	rep.detail = d.JSON
	if p.Proxy && rep.BackendError == "" {
		if err := b.CheckProxy(); err != nil {
			rep.BackendError = err.Error()
		}
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
	if len(p.HomeRead) > 0 {
		// Why parts of the home directory are visible: the person's
		// toolchains, found through PATH (system_read: default).
		fmt.Fprintf(w, "home read-only (toolchains on PATH; system_read: default):\n")
		for _, h := range p.HomeRead {
			fmt.Fprintf(w, "            %s  (%s)\n", h.Path, h.Why)
		}
	}
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
	pol := d.Seccomp
	if d.Note != "" {
		fmt.Fprintf(w, "            (%s)\n", d.Note)
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
	fmt.Fprint(w, d.Text)
	return nil
}
