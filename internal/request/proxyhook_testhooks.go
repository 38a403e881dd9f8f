//go:build guardrun_testhooks

package request

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"
)

// In a binary built with -tags guardrun_testhooks (tests only, never a
// release: a resolver taken from the environment would let whatever
// shapes guardrun's environment send an allowed name anywhere), the
// proxy resolves names from GUARDRUN_TEST_RESOLVE ("name=addr,...") and
// nothing else, so tests never reach a real resolver.
func init() {
	spec, ok := os.LookupEnv("GUARDRUN_TEST_RESOLVE")
	if !ok {
		return
	}
	m := map[string]netip.Addr{}
	for _, kv := range strings.Split(spec, ",") {
		name, addr, _ := strings.Cut(kv, "=")
		if a, err := netip.ParseAddr(addr); err == nil {
			m[strings.ToLower(name)] = a
		}
	}
	proxyLookup = func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, ok := m[host]; ok {
			return []netip.Addr{a}, nil
		}
		return nil, fmt.Errorf("no such host (test resolver)")
	}
}
