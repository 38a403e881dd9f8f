package rules

import (
	"fmt"
	"slices"
)

// Tighten layers an untrusted project config onto a trusted base. The
// project may only make things stricter: add block or ask rules, deny
// paths and secret variables, narrow existing zones (a root inside the
// base zone's root, rw to ro, more approvals, fewer suffixes), turn the
// network off, shorten the session TTL and require the OS sandbox. Every
// other difference is ignored and named in the returned list, so the
// person can be told once what did not apply.
func Tighten(base, project *Config) (*Config, []string) {
	out := *base
	out.Shell.Rules = slices.Clone(base.Shell.Rules)
	out.Shell.Tightening = slices.Clone(base.Shell.Tightening)
	out.Sandbox.Zones = slices.Clone(base.Sandbox.Zones)
	out.Sandbox.Deny = slices.Clone(base.Sandbox.Deny)
	out.Sandbox.EnvDeny = slices.Clone(base.Sandbox.EnvDeny)
	var ignored []string
	ignore := func(format string, args ...any) {
		ignored = append(ignored, fmt.Sprintf(format, args...))
	}

	if project.Mode != base.Mode && project.Mode != ModeInteractive {
		ignore("mode: %s (an untrusted config cannot change the mode)", project.Mode)
	}
	if project.Shell.Program != base.Shell.Program && project.Shell.Program != "/bin/bash" {
		ignore("shell.program: %s", project.Shell.Program)
	}

	// The default action may only get stricter; what it says of
	// checkpoints counts for nothing (none would take none).
	pd, bd := project.Shell.Default, base.Shell.Default
	if pd.Checkpoint != CheckpointBestEffort {
		ignore("shell.default.checkpoint: %s (an untrusted config cannot change checkpoints)", pd.Checkpoint)
		pd.Checkpoint = CheckpointBestEffort
	}
	switch {
	case !pd.Allowed:
		out.Shell.Default = pd
	case pd.Approval && !bd.Approval && bd.Allowed:
		out.Shell.Default = pd
	case !pd.Approval && bd.Approval:
		ignore("shell.default.approval: false (an untrusted config cannot pre-approve)")
	}
	if project.Checkpoints.given {
		ignore("checkpoints (an untrusted config cannot change checkpoints)")
	}

	for _, r := range project.Shell.Rules {
		if r.Action.Checkpoint != CheckpointBestEffort {
			ignore("rule %q at %s: checkpoint: %s (an untrusted config cannot change checkpoints)", r.Pattern, r.At, r.Action.Checkpoint)
			r.Action.Checkpoint = CheckpointBestEffort
		}
		switch {
		case r.Action.Allowed && !r.Action.Approval:
			ignore("rule %q at %s: approval: false (an untrusted config cannot pre-approve)", r.Pattern, r.At)
			continue
		case r.Network:
			ignore("rule %q at %s: network: true (kept as a rule without network)", r.Pattern, r.At)
			r.Network = false
		}
		out.Shell.Tightening = append(out.Shell.Tightening, r)
	}

	for _, pz := range project.Sandbox.Zones {
		i := slices.IndexFunc(out.Sandbox.Zones, func(z Zone) bool { return z.Name == pz.Name })
		if i < 0 {
			ignore("zone %q at %s: new zones are not allowed", pz.Name, pz.At)
			continue
		}
		bz := &out.Sandbox.Zones[i]
		nz, why := narrowZone(*bz, pz)
		for _, w := range why {
			ignore("zone %q at %s: %s", pz.Name, pz.At, w)
		}
		*bz = nz
	}

	out.Sandbox.Deny = appendNew(out.Sandbox.Deny, project.Sandbox.Deny...)
	out.Sandbox.Protect = appendNew(slices.Clone(base.Sandbox.Protect), project.Sandbox.Protect...)
	for _, s := range project.Sandbox.UnixSockets {
		if !slices.Contains(base.Sandbox.UnixSockets, s) {
			ignore("sandbox.unix_sockets: %s (an untrusted config cannot open a socket)", s)
		}
	}
	if project.Sandbox.EnvDeny != nil {
		if out.Sandbox.EnvDeny == nil {
			out.Sandbox.EnvDeny = []string{} // nil means the built-in list; keep it explicit
		}
		out.Sandbox.EnvDeny = appendNew(out.Sandbox.EnvDeny, project.Sandbox.EnvDeny...)
	}
	switch {
	case project.Sandbox.Network && !base.Sandbox.Network:
		ignore("sandbox.network: true (an untrusted config cannot enable the network)")
	case project.Sandbox.Proxy && !base.Sandbox.Network && !base.Sandbox.Proxy:
		ignore("sandbox.network: proxy (an untrusted config cannot enable the network)")
	case project.Sandbox.Proxy:
		// From the open network to the proxy, or proxy to proxy: narrower.
		out.Sandbox.Network, out.Sandbox.Proxy = false, true
	case !project.Sandbox.Network:
		out.Sandbox.Network, out.Sandbox.Proxy = false, false
	}
	// Project domains may only add denials.
	out.Sandbox.Domains.Deny = append(slices.Clone(base.Sandbox.Domains.Deny), project.Sandbox.Domains.Deny...)
	for _, a := range project.Sandbox.Domains.Allow {
		ignore("sandbox.domains.allow %q at %s (an untrusted config cannot allow hosts)", a.Text, a.At)
	}
	if len(project.Sandbox.Domains.Loopback) > 0 {
		ignore("sandbox.domains.loopback at %s (an untrusted config cannot open loopback ports)", project.Sandbox.Domains.LoopbackAt)
	}
	if project.Sandbox.RequireOSSandbox {
		out.Sandbox.RequireOSSandbox = base.Sandbox.RequireOSSandbox || project.Sandbox.RequireOSSandbox
	} else if base.Sandbox.RequireOSSandbox {
		ignore("sandbox.require_os_sandbox: false")
	}
	if project.Sandbox.Fallback != base.Sandbox.Fallback && project.Sandbox.Fallback != FailFast {
		ignore("sandbox.os_sandbox_fallback: %s", project.Sandbox.Fallback)
	}
	if project.Sandbox.Backend != base.Sandbox.Backend && project.Sandbox.Backend != BackendAuto {
		ignore("sandbox.backend: %s (an untrusted config cannot choose the OS sandbox)", project.Sandbox.Backend)
	}
	if project.Sandbox.LandlockAccept != nil {
		// Only fewer accepted losses: the intersection.
		var keep []string
		for _, a := range project.Sandbox.LandlockAccept {
			if slices.Contains(base.Sandbox.LandlockAccept, a) {
				keep = append(keep, a)
			} else {
				ignore("sandbox.landlock_accept: %s (an untrusted config cannot accept a weaker sandbox)", a)
			}
		}
		out.Sandbox.LandlockAccept = keep
	}
	if !sameSystemRead(project.Sandbox.SystemRead, base.Sandbox.SystemRead) && !project.Sandbox.SystemRead.Default {
		ignore("sandbox.system_read (an untrusted config cannot change the system directories)")
	}
	if project.Audit.Path != base.Audit.Path && project.Audit.Path != "" && project.Audit.Path != defaultAuditFor(project) {
		ignore("audit.path: %s", project.Audit.Path)
	}
	if project.Session.TTL < base.Session.TTL {
		out.Session.TTL = project.Session.TTL
	}
	return &out, ignored
}

// defaultAuditFor is the audit path a config gets when it names none.
func defaultAuditFor(c *Config) string { return c.defaultAudit }

func sameSystemRead(a, b SystemRead) bool {
	return a.Default == b.Default && slices.Equal(a.Paths, b.Paths)
}

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		if !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}

// narrowZone applies the parts of a project zone that narrow the base
// zone and says which parts it ignored.
func narrowZone(base, p Zone) (Zone, []string) {
	var why []string
	out := base
	// Compare where the roots lead, not how they are spelled: a symlink
	// inside the base zone may point anywhere, and a root narrowed through
	// it would widen the zone. The narrowed root is kept resolved.
	switch pr := Resolve(p.Root, "/"); {
	case p.Root == base.Root:
	case Within(pr, Resolve(base.Root, "/")):
		out.Root = pr
	default:
		why = append(why, fmt.Sprintf("root %s is not inside %s", p.Root, base.Root))
	}
	if p.Mode == ReadOnly {
		out.Mode = ReadOnly
	} else if base.Mode == ReadOnly {
		why = append(why, "mode: rw on a read-only zone")
	}
	out.ReadApproval = base.ReadApproval || p.ReadApproval
	out.WriteApproval = base.WriteApproval || p.WriteApproval
	out.DeleteApproval = base.DeleteApproval || p.DeleteApproval
	if base.DeleteApproval && !p.DeleteApproval {
		why = append(why, "delete_approval: false")
	}
	if base.WriteApproval && !p.WriteApproval && p.Mode == ReadWrite {
		why = append(why, "write_approval: false")
	}
	if base.ReadApproval && !p.ReadApproval {
		why = append(why, "read_approval: false")
	}
	switch {
	case len(p.Suffixes) == 0:
	case len(base.Suffixes) == 0:
		out.Suffixes = p.Suffixes
	default:
		var keep []string
		for _, s := range p.Suffixes {
			if slices.Contains(base.Suffixes, s) {
				keep = append(keep, s)
			} else {
				why = append(why, fmt.Sprintf("suffix %s is not allowed by the base zone", s))
			}
		}
		if len(keep) == 0 {
			keep = []string{"\x00none"} // nothing may be written
		}
		out.Suffixes = keep
	}
	if out.Mode == ReadOnly {
		out.WriteApproval, out.DeleteApproval, out.Suffixes = false, false, nil
	}
	return out, why
}
