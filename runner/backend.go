package runner

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
)

// Backend names, as sandbox.backend and --backend spell them. Auto picks
// bwrap where user namespaces work, else landlock (Linux); macOS always
// uses Seatbelt.
const (
	BackendAuto     = "auto"
	BackendBwrap    = "bwrap"
	BackendLandlock = "landlock"
	BackendSeatbelt = "seatbelt"
)

// Options say which backend runs a command and what it may leave out.
type Options struct {
	// Backend is a resolved backend (Choose's answer); empty means the
	// platform's default (bwrap on Linux).
	Backend string
	// LandlockAccept are the parts of a profile the config accepts
	// losing under landlock (landlock.AcceptNames).
	LandlockAccept []string
	// ConnectTCP, when not nil, limits TCP to connecting to these ports
	// under landlock (the hook for a local proxy; see
	// landlock.Options.ConnectTCP).
	ConnectTCP []uint16
	// Proxy is the route to guardrun's network proxy, required for a
	// profile with Proxy under bwrap (see bwrap.Config.Proxy).
	Proxy *ProxyRoute
	// ProxyAddr is where guardrun's proxy listens on the host's
	// loopback, required for a profile with Proxy under landlock (see
	// landlock.Config.Proxy).
	ProxyAddr netip.AddrPort
	// FilterCache is the directory where compiled seccomp programs are
	// kept between processes (seccomp.BuildCached), outside every zone;
	// empty: none are kept.
	FilterCache string
	// StateDir is guardrun's state directory, where the landlock
	// backend shares the snapshots of protected names between guardrun
	// processes (landlock.Config.StateDir).
	StateDir string
	// Signals, when not nil, are the signals to relay to the command
	// instead of those this process receives (SIGINT, SIGTERM, SIGHUP,
	// SIGQUIT): `guardrun serve` runs many commands in one process and
	// feeds each the signals its own client received.
	Signals <-chan os.Signal
}

// ErrLandlockProxy: a profile with the proxy under landlock, but no
// proxy address to route it to; running the command with the network
// open or shut would not be what the config says.
var ErrLandlockProxy = errors.New("runner: network: proxy under the landlock backend needs the proxy's address (Options.ProxyAddr)")

// Choose resolves want (auto, bwrap, landlock; empty is auto) to the
// backend that will run commands here, checking that it works. cacheFile
// remembers a successful bwrap check (see CheckCached). The error says
// why none can be used and how to fix it.
func Choose(want, cacheFile string) (string, error) {
	if want == "" {
		want = BackendAuto
	}
	switch want {
	case BackendAuto, BackendBwrap, BackendLandlock:
	default:
		return "", fmt.Errorf("unknown sandbox backend %q: want auto, bwrap or landlock", want)
	}
	if runtime.GOOS != "linux" && want != BackendAuto {
		return "", fmt.Errorf("sandbox backend %s is for Linux; on %s guardrun uses its own OS sandbox (backend: auto)", want, runtime.GOOS)
	}
	return choose(want, cacheFile)
}
