package netproxy

import (
	"fmt"
	"net"
	"net/netip"
)

// hostLocal is what this machine answers to itself at one moment: the
// addresses of its interfaces and the prefixes its routing tables deliver
// locally (the kernel's local table on Linux: each address, a whole /8 of
// 127, subnet broadcasts, an AnyIP route such as `ip route add local
// 198.51.100.0/24 dev lo`). The proxy dials from the host, so a command
// that names one of these reaches the host's own services (an ssh or
// database listening on a public or documentation address, a container
// bridge's gateway) as if it were local. It is enumerated on every
// check: addresses come and go (DHCP, VPNs, containers starting).
type hostLocal struct {
	addrs    map[netip.Addr]bool
	prefixes []netip.Prefix
}

// contains reports whether a is one of the host's own addresses or lies
// in a prefix delivered locally.
func (h *hostLocal) contains(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	if h.addrs[a] {
		return true
	}
	for _, p := range h.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// hostLocalNow enumerates the host's addresses: its interfaces'
// addresses and their IPv4 broadcast addresses everywhere, and where the
// system lets guardrun read them (Linux), the routes its tables deliver
// locally. An error means the check cannot be made; the caller refuses.
func hostLocalNow() (*hostLocal, error) {
	h := &hostLocal{addrs: map[netip.Addr]bool{}}
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list this host's addresses: %w", err)
	}
	for _, a := range ifs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		addr, ok := netip.AddrFromSlice(ipn.IP)
		if !ok {
			continue
		}
		addr = addr.Unmap()
		h.addrs[addr] = true
		ones, bits := ipn.Mask.Size()
		if addr.Is4() && bits == 32 && ones < 31 {
			// The subnet's broadcast address.
			b := addr.As4()
			for i := range 4 {
				b[i] |= ^ipn.Mask[len(ipn.Mask)-4+i]
			}
			h.addrs[netip.AddrFrom4(b)] = true
		}
	}
	routes, err := localRoutes()
	if err != nil {
		return nil, fmt.Errorf("read this host's local routes: %w", err)
	}
	h.prefixes = routes
	return h, nil
}

// ownAddress says why a is an address of this host, directly or as the
// IPv4 address a NAT64, 6to4 or Teredo form carries, or "".
func (h *hostLocal) ownAddress(a netip.Addr) string {
	if h.contains(a) {
		return "an address of this host"
	}
	via, v4s := embeddedIPv4(a)
	for _, v4 := range v4s {
		if h.contains(v4) {
			return "an address of this host (through " + via + ")"
		}
	}
	return ""
}
