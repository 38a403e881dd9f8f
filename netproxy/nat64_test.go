package netproxy

import (
	"net/netip"
	"testing"
)

// TestSpecialKindNAT64: an address in the NAT64 prefix is judged by the
// IPv4 address it carries; local-use NAT64 is never reached by default.
func TestSpecialKindNAT64(t *testing.T) {
	for addr, want := range map[string]string{
		"64:ff9b::7f00:1":       "loopback (through NAT64)",
		"64:ff9b::a9fe:a9fe":    "link-local (through NAT64)",
		"64:ff9b::a00:1":        "private (through NAT64)",
		"64:ff9b::808:808":      "",
		"64:ff9b:1::a00:1":      "local-use NAT64",
		"2001:db8::7f00:1":      "",
		"::ffff:127.0.0.1":      "loopback",
		"64:ff9b::ffff:ffff":    "reserved (through NAT64)",
		"64:ff9b::6440:1":       "shared (carrier-grade NAT) (through NAT64)",
		"64:ff9b:0:0:1::7f00:1": "",
	} {
		if got := specialKind(netip.MustParseAddr(addr).Unmap()); got != want {
			t.Errorf("%s: %q, want %q", addr, got, want)
		}
	}
}
