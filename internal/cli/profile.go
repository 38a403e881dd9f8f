package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seatbelt"
)

const profileUsage = `Usage: guardrun profile [--os linux|darwin] [--json]

Shows the OS sandbox the config in force would apply to a command run in
the working directory: the platform-neutral profile (read-only, read-write
and denied paths, network, system call policy) and, for Linux, the exact
bubblewrap arguments, or for macOS the Seatbelt (SBPL) profile and its
parameters. --os renders for either platform on any platform. A rule with
network: true can turn the network on for the commands it matches; this
shows the config's own setting.
`

type profileReport struct {
	OS      string           `json:"os"`
	Config  string           `json:"config"`
	Profile *sandbox.Profile `json:"profile"`
	Bwrap   []string         `json:"bwrap,omitempty"`
	SBPL    string           `json:"sbpl,omitempty"`
	Params  []seatbelt.Param `json:"params,omitempty"`
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
	e, l, err := loadConfig(g)
	if err != nil {
		return err
	}
	p, err := profileFor(l, e, e.cwd, l.cfg.Sandbox.Network)
	if err != nil {
		return err
	}
	rep := profileReport{OS: osName, Config: l.cfg.File, Profile: p}
	switch osName {
	case "linux":
		opts := bwrap.Options{SeccompFD: bwrap.SeccompFD, StatusFD: bwrap.StatusFD}
		if p.Proxy {
			// The socket's directory is made per command.
			exe, _ := os.Executable()
			opts.Proxy = &bwrap.ProxyRoute{Exe: exe, Socket: "/RUNTIME-DIR/guardrun-proxy-XXXX/proxy.sock"}
		}
		rep.Bwrap, err = bwrap.Args(p, opts)
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
	fmt.Fprintf(w, "cwd:        %s\n", p.Cwd)
	list := func(name string, l []string) {
		fmt.Fprintf(w, "%-11s %s\n", name+":", strings.Join(l, " "))
	}
	list("read-only", p.ReadOnly)
	list("read-write", p.ReadWrite)
	list("ro-over", p.ReadOnlyOver)
	list("denied", p.Deny)
	fmt.Fprintf(w, "network:    %v\n", p.Network)
	if p.Proxy {
		fmt.Fprintf(w, "proxy:      %s\n", l.cfg.Sandbox.Domains.Summary())
	}
	fmt.Fprintf(w, "private /tmp: %v\n", p.PrivateTmp)
	list("env denied", p.EnvDeny)
	switch osName {
	case "linux":
		fmt.Fprintf(w, "\nbwrap %s -- CMD...\n", quoteArgv(rep.Bwrap))
		fmt.Fprintf(w, "(fd %d holds the seccomp filter, fd %d the status pipe)\n", bwrap.SeccompFD, bwrap.StatusFD)
		if p.Proxy {
			fmt.Fprintf(w, "with the proxy, CMD is run as: %s CMD...\n(fd %d holds the command's own seccomp filter, which refuses unix sockets)\n",
				quoteArgv(bwrap.BridgeArgv(nil)), bwrap.CommandFilterFD)
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
