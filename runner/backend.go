package runner

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp/notify"
)

// Backend names, as sandbox.backend and --backend spell them and as the
// audit log and guardrun profile print them. Auto picks bwrap where user
// namespaces work, else landlock (Linux); macOS always uses Seatbelt.
const (
	BackendAuto     = "auto"
	BackendBwrap    = "bwrap"
	BackendLandlock = "landlock"
	BackendSeatbelt = "seatbelt"
)

// Backend is an OS sandbox that runs commands: bwrap or landlock on
// Linux, seatbelt on macOS. Choose gives the one that works here, New one
// by name without checking it. A caller holds the value and asks it what
// it does; the name is for people (the audit log, guardrun profile).
type Backend interface {
	// Name is the backend's name (BackendBwrap, BackendLandlock,
	// BackendSeatbelt).
	Name() string
	// Check reports whether the backend works here, as a sentence that
	// says how to fix it. A success is remembered in Config.CheckCache
	// where a check costs more than a command (see Config).
	Check() error
	// CheckProxy reports why commands with the proxy (sandbox.network:
	// proxy) cannot run under the backend here, or nil.
	CheckProxy() error
	// ProxyMode is how the backend's commands reach guardrun's proxy.
	ProxyMode() ProxyMode
	// ConfinesSignals reports whether a command under the backend can
	// signal no process outside its sandbox, guardrun's own included:
	// `guardrun serve` runs its clients' commands in one process only
	// then.
	ConfinesSignals() bool
	// Describe renders p as the backend would apply it to a command run
	// with o, for guardrun profile. It runs nothing, on any platform.
	Describe(p *sandbox.Profile, o Options) (*Description, error)
	// Command prepares argv to run under p with environment env, reading
	// and writing stdio, with what o gives it (the accepted losses, the
	// route to the proxy). Nothing runs until Start.
	Command(ctx context.Context, p *sandbox.Profile, argv, env []string, o Options, stdio Stdio) (Cmd, error)
}

// Cmd is a command a Backend prepared.
type Cmd interface {
	// Start starts the command; from then on Signal reaches it.
	Start() error
	// Signal delivers sig to the command, as the backend passes on a
	// signal guardrun received.
	Signal(sig os.Signal) error
	// Wait waits for the command and returns its exit status (128+N for
	// signal N, as sh reports it). err is set only when the sandbox did
	// not start or the command could not be run.
	Wait() (int, error)
}

// ProxyMode is how a backend's commands reach guardrun's network proxy
// (sandbox.network: proxy).
type ProxyMode int

const (
	// ProxyNone: the backend has no route to the proxy yet (seatbelt);
	// a command with the proxy runs without network.
	ProxyNone ProxyMode = iota
	// ProxyBridge: a bridge inside the sandbox hands a listener of its
	// own to the proxy over the proxy's unix socket (Options.Proxy;
	// bwrap).
	ProxyBridge
	// ProxyLoopback: the command connects to the proxy on a loopback TCP
	// port of the host (Options.ProxyAddr), each request carrying the
	// command's token (landlock).
	ProxyLoopback
)

// Config is what a backend keeps for every command it runs, as values
// its caller holds. guardrun keeps all of it in its state directory,
// which the sandbox hides.
type Config struct {
	// CheckCache is the file that remembers a successful bwrap check
	// (see bwrap.CheckCached); beside it, CheckCache+"-landlock" the
	// landlock check and CheckCache+"-bwrap-failed" a failed bwrap check
	// under auto. Empty: nothing is remembered.
	CheckCache string
	// FilterCache is the directory where compiled seccomp programs are
	// kept between processes (seccomp.BuildCached), outside every zone.
	// Empty: none are kept.
	FilterCache string
	// StateDir is guardrun's state directory, where the landlock backend
	// shares the snapshots of protected names between guardrun processes
	// (landlock.Config.StateDir). Empty: a landlock command that watches
	// a protected name is refused.
	StateDir string
}

// Options say which backend runs a command and what that command brings
// besides its profile.
type Options struct {
	// Quote shows an argv in Describe's text as the person's shell
	// would read it back (shellparse.QuoteArgv in the config's
	// dialect); nil quotes each word as Go does.
	Quote func(argv []string) string
	// Backend runs the command; nil means the platform's default,
	// unchecked and without a Config (bwrap on Linux, seatbelt on macOS).
	Backend Backend
	// LandlockAccept are the parts of a profile the config accepts
	// losing under landlock (landlock.AcceptNames).
	LandlockAccept []string
	// ConnectTCP, when not nil, limits TCP to connecting to these ports
	// under landlock (the hook for a local proxy; see
	// landlock.Config.ConnectTCP).
	ConnectTCP []uint16
	// Proxy is the route to guardrun's network proxy, required for a
	// profile with Proxy under bwrap (ProxyBridge; see
	// bwrap.Config.Proxy).
	Proxy *ProxyRoute
	// ProxyAddr is where guardrun's proxy listens on the host's
	// loopback, required for a profile with Proxy under landlock
	// (ProxyLoopback; see landlock.Config.Proxy).
	ProxyAddr netip.AddrPort
	// Signals, when not nil, are the signals to relay to the command
	// instead of those this process receives (SIGINT, SIGTERM, SIGHUP,
	// SIGQUIT): `guardrun serve` runs many commands in one process and
	// feeds each the signals its own client received.
	Signals <-chan os.Signal
	// Verify, when set, runs the command verified (SPEC §3, "Run-time
	// verification"): its execs and write-like calls outside
	// Verify.Prediction are held and asked about through Verify.Hold,
	// under either Linux backend. After the run Verify holds every held
	// call and its answer; one refused makes the request end refused
	// (Verify.Refused, exit 77). Not on macOS yet: there RunWith
	// refuses a verified command.
	Verify *Verify
}

// Verify is what a verified command runs under (notify.Verify): the
// prediction, who is asked about a call outside it, and afterwards the
// record of every held call.
type Verify = notify.Verify

// Description is how a backend applies a profile, for guardrun profile.
type Description struct {
	// JSON is the backend's part of guardrun profile --json: a value
	// that encodes as a JSON object, whose members follow the profile's.
	JSON any
	// Seccomp is the system call policy the command runs under, whose
	// socket rules guardrun profile lists; Note, when not empty, says
	// what the backend changes about the profile's.
	Seccomp sandbox.SeccompPolicy
	Note    string
	// Text is the backend's own part of guardrun profile, printed last.
	Text string
}

// ErrLandlockProxy: a profile with the proxy under landlock, but no
// proxy address to route it to; running the command with the network
// open or shut would not be what the config says.
var ErrLandlockProxy = errors.New("runner: network: proxy under the landlock backend needs the proxy's address (Options.ProxyAddr)")

// Choose resolves want (auto, bwrap, landlock; empty is auto) to the
// backend that will run commands here, configured by c, checking that it
// works. The error says why none can be used and how to fix it.
func Choose(want string, c Config) (Backend, error) {
	if want == "" {
		want = BackendAuto
	}
	switch want {
	case BackendAuto, BackendBwrap, BackendLandlock:
	default:
		return nil, fmt.Errorf("unknown sandbox backend %q: want auto, bwrap or landlock", want)
	}
	if runtime.GOOS != "linux" && want != BackendAuto {
		return nil, fmt.Errorf("sandbox backend %s is for Linux; on %s guardrun uses its own OS sandbox (backend: auto)", want, runtime.GOOS)
	}
	return choose(want, c)
}

// New is the backend that runs commands on goos ("linux", "darwin") when
// name is asked for, configured by c and not checked (Choose checks). On
// Linux that is bwrap or landlock, auto (or empty) naming bwrap, the one
// auto prefers; on macOS seatbelt (auto, empty or seatbelt). Every
// backend describes a profile on every platform (guardrun profile --os);
// only the platform's own runs commands.
func New(goos, name string, c Config) (Backend, error) {
	switch goos {
	case "linux":
		switch name {
		case "", BackendAuto, BackendBwrap:
			return &bwrapBackend{c}, nil
		case BackendLandlock:
			return &landlockBackend{c}, nil
		}
	case "darwin":
		switch name {
		case "", BackendAuto, BackendSeatbelt:
			return seatbeltBackend{}, nil
		}
	default:
		return nil, unsupported(goos)
	}
	return nil, fmt.Errorf("unknown sandbox backend %q for %s", name, goos)
}

// unsupported is the error for a platform without an OS sandbox.
func unsupported(goos string) error {
	return errors.New("no OS sandbox for " + goos + ": guardrun sandboxes commands on Linux (bubblewrap) and macOS (Seatbelt)")
}

// finisher is a backend with something to do once its command has
// ended, or could not be prepared or started.
type finisher interface {
	finish(p *sandbox.Profile, stdio Stdio)
}
