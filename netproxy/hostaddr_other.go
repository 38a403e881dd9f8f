//go:build !linux

package netproxy

import "net/netip"

// localRoutes has no routing tables to read here: the interfaces'
// addresses and broadcasts (hostLocalNow) are the host's own addresses.
func localRoutes() ([]netip.Prefix, error) { return nil, nil }
