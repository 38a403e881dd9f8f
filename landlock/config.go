package landlock

import (
	"net/netip"

	"github.com/guardrun/guardrun/seccomp/notify"
)

// Config is what Command takes besides the profile and the command, as
// values its caller holds.
type Config struct {
	// Accept are the losses the config accepts (AcceptNames).
	Accept []string
	// ConnectTCP, when not nil, limits TCP connections to those ports
	// (see Options.ConnectTCP). With the proxy it is not used: TCP goes
	// to Proxy's port only.
	ConnectTCP []uint16
	// Proxy is where guardrun's proxy listens, a loopback address and
	// port of the host: required for a profile with Proxy
	// (sandbox.network: proxy), not used otherwise.
	Proxy netip.AddrPort
	// FilterCache is the directory where compiled seccomp programs are
	// kept between processes (seccomp.BuildCached), outside every zone.
	// Empty: none are kept.
	FilterCache string
	// StateDir is guardrun's state directory (0700, outside every zone:
	// the sandbox hides it), where the landlock backend keeps, for each
	// protected path a running command watches, the lock its running
	// commands hold and the snapshot they restore to, shared by every
	// guardrun process of the user that names the same directory
	// (share_linux.go). Empty: none; a command that watches a protected
	// path is then refused.
	StateDir string
	// Verify, when set, runs the command verified (run-time
	// verification of a pre-approved request): every exec and every
	// write-like call is routed to guardrun, which lets through what
	// Verify's prediction allows and holds the rest (notify.Verifier).
	// It needs the nested domain (Landlock ABI 6).
	Verify *notify.Verify
}
