package rules

import (
	"fmt"
	"net/netip"
	"strings"
)

// Domains is sandbox.domains: which hosts the network proxy lets a
// command reach without asking, and which never.
type Domains struct {
	Allow []HostPattern
	Deny  []HostPattern
	// Loopback are the ports of the host's loopback (127.0.0.1, ::1,
	// localhost) a command may reach through the proxy: the project's
	// own servers. Only these ports, only on loopback; the host's other
	// addresses stay refused.
	Loopback []int
	// LoopbackAt is where sandbox.domains.loopback was written.
	LoopbackAt string
}

// HostPattern is one entry of sandbox.domains: a host name ("github.com",
// exactly that name), a subdomain wildcard ("*.npmjs.org", every name
// below npmjs.org but not npmjs.org itself), an IP address or a CIDR
// prefix.
type HostPattern struct {
	// Text is the entry as written (lower-cased).
	Text string
	// Name is the host name, or the suffix after "*." when Wildcard.
	Name     string
	Wildcard bool
	// Prefix is set for an address or CIDR entry (an address is a /32 or
	// /128 prefix).
	Prefix netip.Prefix
	At     string
}

// ParseHostPattern reads one sandbox.domains entry.
func ParseHostPattern(s string) (HostPattern, error) {
	if strings.TrimSpace(s) != s {
		return HostPattern{}, fmt.Errorf("%q: surrounding spaces", s)
	}
	t := strings.TrimSuffix(strings.ToLower(s), ".")
	if t == "" {
		return HostPattern{}, fmt.Errorf("empty host")
	}
	if pfx, err := netip.ParsePrefix(t); err == nil {
		if pfx.Masked() != pfx {
			return HostPattern{}, fmt.Errorf("%q: host bits set; did you mean %s?", s, pfx.Masked())
		}
		return HostPattern{Text: t, Prefix: pfx}, nil
	}
	if a, err := netip.ParseAddr(t); err == nil {
		if a.Zone() != "" {
			return HostPattern{}, fmt.Errorf("%q: addresses with a zone are not supported", s)
		}
		return HostPattern{Text: t, Prefix: netip.PrefixFrom(a, a.BitLen())}, nil
	}
	if strings.Contains(t, "/") {
		return HostPattern{}, fmt.Errorf("%q: not an address prefix such as 10.0.0.0/8", s)
	}
	p := HostPattern{Text: t, Name: t}
	if strings.HasPrefix(t, "*.") {
		p.Wildcard, p.Name = true, t[2:]
	}
	if err := checkHostName(p.Name); err != nil {
		return HostPattern{}, fmt.Errorf("%q: %v (want a host such as github.com, *.npmjs.org, 10.0.0.5 or 10.0.0.0/8)", s, err)
	}
	return p, nil
}

// NormalizeHost lower-cases a host name and drops one trailing dot; it
// fails for anything that is not a plain ASCII host name or IP address.
func NormalizeHost(h string) (string, error) {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if _, err := netip.ParseAddr(h); err == nil {
		return h, nil
	}
	if err := checkHostName(h); err != nil {
		return "", fmt.Errorf("host %q: %v", h, err)
	}
	return h, nil
}

func checkHostName(n string) error {
	if n == "" {
		return fmt.Errorf("empty name")
	}
	if len(n) > 253 {
		return fmt.Errorf("name longer than 253 characters")
	}
	for _, label := range strings.Split(n, ".") {
		if label == "" {
			return fmt.Errorf("empty label")
		}
		if len(label) > 63 {
			return fmt.Errorf("label longer than 63 characters")
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return fmt.Errorf("%q is not allowed in a host name (only ASCII letters, digits, '-', '_' and '.'; write IDNs in punycode)", r)
			}
		}
	}
	return nil
}

// MatchName reports whether the pattern covers the normalized host name
// (never an address: address entries match with MatchAddr).
func (p HostPattern) MatchName(host string) bool {
	if p.Prefix.IsValid() {
		if a, err := netip.ParseAddr(host); err == nil {
			return p.Prefix.Contains(a.Unmap())
		}
		return false
	}
	if p.Wildcard {
		return strings.HasSuffix(host, "."+p.Name)
	}
	return host == p.Name
}

// MatchAddr reports whether an address or CIDR pattern covers a.
func (p HostPattern) MatchAddr(a netip.Addr) bool {
	return p.Prefix.IsValid() && p.Prefix.Contains(a.Unmap())
}

// HostVerdict is what sandbox.domains says about a host: Allow, Block
// (deny) or Ask.
func (d Domains) HostVerdict(host string) (Verdict, string) {
	for _, p := range d.Deny {
		if p.MatchName(host) {
			return Block, fmt.Sprintf("%s matches sandbox.domains.deny %q", host, p.Text)
		}
	}
	for _, p := range d.Allow {
		if p.MatchName(host) {
			return Allow, fmt.Sprintf("%s matches sandbox.domains.allow %q", host, p.Text)
		}
	}
	return Ask, fmt.Sprintf("%s is not listed in sandbox.domains", host)
}

// AddrListed reports whether an address is named by an address or CIDR
// entry of allow (so that a private or loopback address may be reached),
// and whether deny names it.
func (d Domains) AddrListed(a netip.Addr) (allowed, denied bool) {
	for _, p := range d.Deny {
		if p.MatchAddr(a) {
			return false, true
		}
	}
	for _, p := range d.Allow {
		if p.MatchAddr(a) {
			return true, false
		}
	}
	return false, false
}

// Summary says in one line which hosts a command may reach through the
// proxy.
func (d Domains) Summary() string {
	list := func(ps []HostPattern) string {
		var t []string
		for _, p := range ps {
			t = append(t, p.Text)
		}
		if len(t) > 8 {
			t = append(t[:8], fmt.Sprintf("(%d more)", len(t)-8))
		}
		return strings.Join(t, ", ")
	}
	s := "network through guardrun's proxy: "
	if len(d.Allow) > 0 {
		s += "allowed " + list(d.Allow) + "; "
	}
	if len(d.Deny) > 0 {
		s += "denied " + list(d.Deny) + "; "
	}
	return s + "other hosts ask; private and loopback addresses refused unless allowed by address"
}
