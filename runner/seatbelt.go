package runner

import (
	"fmt"
	"strings"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seatbelt"
)

// seatbeltBackend is macOS's backend: sandbox-exec with a profile
// rendered from the sandbox profile.
type seatbeltBackend struct{}

func (seatbeltBackend) Name() string { return BackendSeatbelt }

// Check is seatbelt.Check; nothing here is worth remembering.
func (seatbeltBackend) Check() error { return seatbelt.Check() }

// CheckProxy: nothing to check, there is no route to the proxy
// (ProxyNone).
func (seatbeltBackend) CheckProxy() error { return nil }

// ProxyMode: Seatbelt has no route to the proxy yet: a profile with
// Proxy (and no Network) runs without network.
func (seatbeltBackend) ProxyMode() ProxyMode { return ProxyNone }

// ConfinesSignals: the command shares guardrun's processes' world.
func (seatbeltBackend) ConfinesSignals() bool { return false }

// Describe gives the SBPL profile and its parameters for p.
func (seatbeltBackend) Describe(p *sandbox.Profile, o Options) (*Description, error) {
	r, err := seatbelt.Render(p)
	if err != nil {
		return nil, err
	}
	var w strings.Builder
	fmt.Fprintln(&w, "\nsandbox-exec -p PROFILE with:")
	for _, prm := range r.Params {
		fmt.Fprintf(&w, "  -D %s=%s\n", prm.Name, prm.Value)
	}
	fmt.Fprintf(&w, "\n%s\n", r.Text)
	return &Description{
		JSON: struct {
			SBPL   string           `json:"sbpl,omitempty"`
			Params []seatbelt.Param `json:"params,omitempty"`
		}{r.Text, r.Params},
		Seccomp: p.Seccomp,
		Text:    w.String(),
	}, nil
}

// finish moves aside what the command created at the profile's
// MoveAfter paths.
func (seatbeltBackend) finish(p *sandbox.Profile, stdio Stdio) {
	moveAsideCreated(p, stdio)
}
