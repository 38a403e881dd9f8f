package seccomp

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/sandbox"
)

// TestRulesCoverSpec checks the groups SPEC §5 requires, in the data
// guardrun profile prints (the programs are checked in bpf_linux_test.go).
func TestRulesCoverSpec(t *testing.T) {
	for _, p := range []sandbox.SeccompPolicy{{}, {AllowNetwork: true}} {
		refused := map[string]bool{}
		for _, r := range Rules(p) {
			if r.Name == "" || !errnoNameValid(r.Action) {
				t.Errorf("AllowNetwork=%v: malformed rule %+v", p.AllowNetwork, r)
			}
			refused[r.Name] = true
		}
		for _, name := range []string{
			"ptrace", "process_vm_readv", "process_vm_writev",
			"mount", "umount2", "pivot_root", "fsopen", "move_mount",
			"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
			"bpf", "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd",
			"io_uring_setup", "io_uring_enter", "io_uring_register",
			"clone", "clone3", "unshare", "setns", "personality", "ioctl",
			"socket",
		} {
			if !refused[name] {
				t.Errorf("AllowNetwork=%v: no rule for %s", p.AllowNetwork, name)
			}
		}
	}
}

func errnoNameValid(s string) bool {
	for _, n := range errnoName {
		if n == s {
			return true
		}
	}
	return false
}

// TestRulesNetwork checks that the network policy changes the socket
// rules (and bind) and nothing else.
func TestRulesNetwork(t *testing.T) {
	socketRules := func(rs []RuleDesc) (sock, other []RuleDesc) {
		for _, r := range rs {
			if r.Name == "socket" || r.Name == "socketpair" || r.Name == "bind" {
				sock = append(sock, r)
			} else {
				other = append(other, r)
			}
		}
		return sock, other
	}
	noNetSock, noNetOther := socketRules(Rules(sandbox.SeccompPolicy{}))
	netSock, netOther := socketRules(Rules(sandbox.SeccompPolicy{AllowNetwork: true}))
	if diff := cmp.Diff(netOther, noNetOther); diff != "" {
		t.Errorf("rules other than socket differ by network (-net +none):\n%s", diff)
	}
	unixRule := RuleDesc{Name: "socket", Action: "EPERM", Cond: "domain (low 32 bits) is AF_UNIX and no unix_sockets are listed"}
	dgramPair := RuleDesc{Name: "socketpair", Action: "EPERM", Cond: "domain (low 32 bits) is AF_UNIX and type (low 4 bits) is neither SOCK_STREAM nor SOCK_SEQPACKET and no unix_sockets are listed"}
	if diff := cmp.Diff(noNetSock, []RuleDesc{
		unixRule, dgramPair,
		{Name: "bind", Action: "EPERM", Cond: "always (no network and no unix_sockets: the only sockets are socketpairs)"},
		{Name: "socket", Action: "EAFNOSUPPORT", Cond: "domain is not AF_UNIX"},
		{Name: "socketpair", Action: "EAFNOSUPPORT", Cond: "domain is not AF_UNIX"},
	}); diff != "" {
		t.Errorf("socket rules without network (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(netSock, []RuleDesc{
		unixRule, dgramPair,
		{Name: "bind", Action: "EPERM", Cond: "address length (low 32 bits) is 3 to 110 but not 12, 16, 24 or 28 (an abstract unix name in the host's network namespace)"},
		{Name: "socket", Action: "EPERM", Cond: "domain (low 32 bits) is AF_PACKET"},
		{Name: "socket", Action: "EAFNOSUPPORT", Cond: "domain (low 32 bits) is AF_ALG, AF_VSOCK or AF_TIPC"},
		{Name: "socket", Action: "EPERM", Cond: "domain is AF_INET or AF_INET6 and type (low 4 bits) is SOCK_RAW"},
		{Name: "socket", Action: "EPERM", Cond: "domain is AF_INET or AF_INET6 and type (low 4 bits) is SOCK_PACKET"},
		{Name: "socket", Action: "EPROTONOSUPPORT", Cond: "protocol (low 32 bits) is IPPROTO_MPTCP"},
		{Name: "socketpair", Action: "EAFNOSUPPORT", Cond: "domain is not AF_UNIX"},
	}); diff != "" {
		t.Errorf("socket rules with network (-got +want):\n%s", diff)
	}
}

// holds evaluates a match the way the compiled comparison does.
func (m match) holds(args [6]uint64) bool {
	switch m.op {
	case opMaskedEq:
		return args[m.arg]&m.mask == m.val
	case opNotEqual:
		return args[m.arg] != m.val
	}
	panic("unknown op")
}

// TestPersonalityRing checks the union of single comparisons that stands
// for "persona is neither 0 nor 0xffffffff", without a kernel or cgo.
func TestPersonalityRing(t *testing.T) {
	ms := notQueryOrLinux()
	refused := func(x uint64) bool {
		return slices.ContainsFunc(ms, func(m match) bool { return m.holds([6]uint64{x}) })
	}
	values := []uint64{0, 0xffffffff, 1, 8, 0x80000000, 0x7fffffff, 0xfffffffe, 0x40000,
		0xffffffff00000000, 0xffffffffffffffff, 0x00000001ffffffff}
	for i := range 32 {
		values = append(values, 1<<i, 0xffffffff&^(1<<i))
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		values = append(values, rnd.Uint64())
	}
	for _, x := range values {
		want := uint32(x) != 0 && uint32(x) != 0xffffffff
		if got := refused(x); got != want {
			t.Errorf("personality(%#x): refused %v, want %v", x, got, want)
		}
	}
}

// TestNotIn checks the unions that stand for "none of these values"
// (TCP only: the domain, the type, the protocol), without a kernel.
func TestNotIn(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		mask uint64
		vals []uint64
	}{
		{low32, []uint64{afInet, afInet6}},
		{low32, []uint64{0, ipprotoTCP}},
		{sockTypeMask, []uint64{sockStream}},
	} {
		ms := maskedNotIn(0, tc.mask, tc.vals...)
		values := []uint64{0, 1, 2, 3, 6, 8, 10, 11, 17, 0x802, 0x80002, 0xffffffff, 0x100000002, 0xffffffff0000000a}
		for range 20000 {
			values = append(values, rnd.Uint64()&0xff, rnd.Uint64())
		}
		for _, x := range values {
			want := !slices.Contains(tc.vals, x&tc.mask)
			got := slices.ContainsFunc(ms, func(m match) bool { return m.holds([6]uint64{x}) })
			if got != want {
				t.Errorf("mask %#x, values %v: %#x refused %v, want %v", tc.mask, tc.vals, x, got, want)
			}
		}
	}
}

// TestLowRangeExcept checks the blocks that stand for "in [lo, hi] and
// none of these" (bind's address length with the network on), without a
// kernel.
func TestLowRangeExcept(t *testing.T) {
	ms := lowRangeExcept(2, 3, 110, 12, 16, 24, 28)
	for x := uint64(0); x < 300; x++ {
		for _, junk := range []uint64{0, 0xffffffff00000000, 0x100000000} {
			want := x >= 3 && x <= 110 && x != 12 && x != 16 && x != 24 && x != 28
			got := slices.ContainsFunc(ms, func(m match) bool { return m.holds([6]uint64{2: x | junk}) })
			if got != want {
				t.Errorf("length %d (junk %#x): matched %v, want %v", x, junk, got, want)
			}
		}
	}
	if len(ms) > 24 {
		t.Errorf("%d comparisons for one range", len(ms))
	}
}
