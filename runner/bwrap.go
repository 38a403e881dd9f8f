package runner

import (
	"fmt"
	"os"
	"strings"

	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/netproxy"
	"github.com/guardrun/guardrun/sandbox"
)

// bwrapBackend is the bwrap backend: bubblewrap's namespaces and mounts,
// and the seccomp filter.
type bwrapBackend struct{ c Config }

func (*bwrapBackend) Name() string { return BackendBwrap }

// CheckProxy: the bridge needs nothing more than bwrap itself.
func (*bwrapBackend) CheckProxy() error { return nil }

func (*bwrapBackend) ProxyMode() ProxyMode { return ProxyBridge }

// ConfinesSignals: the command has a pid namespace of its own.
func (*bwrapBackend) ConfinesSignals() bool { return true }

// Describe gives bwrap's arguments for p; with the proxy, the route is a
// stand-in (the socket's directory is made per command).
func (*bwrapBackend) Describe(p *sandbox.Profile, o Options) (*Description, error) {
	opts := bwrap.Options{SeccompFD: bwrap.SeccompFD, StatusFD: bwrap.StatusFD}
	if p.Proxy {
		exe, _ := os.Executable()
		opts.Proxy = &bwrap.ProxyRoute{Exe: exe, Socket: "/RUNTIME-DIR/guardrun-proxy-XXXX/proxy.sock"}
	}
	args, err := bwrap.Args(p, opts)
	if err != nil {
		return nil, err
	}
	var w strings.Builder
	fmt.Fprintf(&w, "\nbwrap %s -- CMD...\n", o.quote(args))
	fmt.Fprintf(&w, "(fd %d holds the seccomp filter, fd %d the status pipe)\n", bwrap.SeccompFD, bwrap.StatusFD)
	if p.Proxy {
		fmt.Fprintf(&w, "with the proxy, CMD is run as: %s CMD...\n(fd %d holds the command's own seccomp filter, which refuses unix sockets)\n",
			o.quote(bwrap.BridgeArgv(netproxy.BridgeVerb, "", nil)), bwrap.CommandFilterFD)
	}
	return &Description{
		JSON: struct {
			Bwrap []string `json:"bwrap,omitempty"`
		}{args},
		Seccomp: p.Seccomp,
		Text:    w.String(),
	}, nil
}

// finish moves aside what the command created at the profile's
// MoveAfter paths, which no mount could keep missing.
func (*bwrapBackend) finish(p *sandbox.Profile, stdio Stdio) {
	moveAsideCreated(p, stdio)
}
