package rules

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/guardrun/guardrun/sandbox"
)

// SandboxSpec is what this config asks of the OS sandbox for one request:
// its zones, system directories, denied paths and network. network is the
// request's own grant (Decision.Network); protect are guardrun's own
// files.
func (c *Config) SandboxSpec(cwd, home string, network bool, protect []sandbox.Protected) sandbox.Spec {
	s := sandbox.Spec{
		Network: network,
		Proxy:   c.Sandbox.Proxy && !network,
		Protect: protect,
		Cwd:     cwd,
		Home:    home,
		EnvDeny: c.Sandbox.EnvDeny,
	}
	for _, z := range c.Sandbox.Zones {
		s.Zones = append(s.Zones, sandbox.Zone{Name: z.Name, Root: z.Root, Writable: z.Mode == ReadWrite})
	}
	if c.Sandbox.SystemRead.Default {
		s.SystemRead = sandbox.DefaultSystemPaths
		s.Toolchains = true
	} else {
		s.SystemRead = c.Sandbox.SystemRead.Paths
	}
	s.ProtectNames = slices.Clone(sandbox.DefaultProtect)
	for _, p := range c.Sandbox.Protect {
		if filepath.IsAbs(p) {
			s.ProtectPaths = append(s.ProtectPaths, p)
		} else {
			s.ProtectNames = append(s.ProtectNames, p)
		}
	}
	s.UnixSockets = slices.Clone(c.Sandbox.UnixSockets)
	for _, d := range c.Sandbox.Deny {
		if strings.Contains(d, "/") {
			s.Deny = append(s.Deny, d)
		} else {
			s.DenyNames = append(s.DenyNames, d)
		}
	}
	return s
}
