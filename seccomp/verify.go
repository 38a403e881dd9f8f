package seccomp

import "github.com/guardrun/guardrun/sandbox"

// bindLengthsLeft are the address lengths between 3 and 110 that a bind
// with the network on keeps (rules): netlink, IPv4, CAN or old IPv6,
// IPv6.
var bindLengthsLeft = []uint64{12, 16, 24, 28}

// Clone flags the verified filter looks at (linux/sched.h).
const (
	cloneVM     = 0x00000100
	cloneFS     = 0x00000200
	cloneFiles  = 0x00000400
	cloneVfork  = 0x00004000
	cloneParent = 0x00008000
	cloneThread = 0x00010000
)

// verifyRules are the rules a verified request's filter adds
// (SeccompPolicy.Verify). guardrun lets an exec the prediction allows go
// on (SECCOMP_USER_NOTIF_FLAG_CONTINUE) only when nothing can change
// what it looked at before the kernel reads it again: the caller's
// memory (its path and argv), its working directory (a relative path)
// and its descriptors (execveat's dirfd). Threads and vfork parents are
// counted at the exec; the rest of what could share them is refused
// here. clone3 is already ENOSYS (its flags are in memory), so libc
// uses clone, whose flags are in a register.
func verifyRules(p sandbox.SeccompPolicy) []rule {
	if !p.Verify {
		return nil
	}
	rs := []rule{
		{name: "clone", errno: errnoEPERM,
			cond: "verified: flags share memory (CLONE_VM) with neither CLONE_THREAD nor CLONE_VFORK",
			any:  []match{{arg: 0, op: opMaskedEq, mask: cloneVM | cloneThread | cloneVfork, val: cloneVM}}},
		{name: "clone", errno: errnoEPERM,
			cond: "verified: flags share memory (CLONE_VM) with the caller's parent as the child's (CLONE_PARENT) without CLONE_THREAD",
			// The memory's other user would then not be among the
			// child's parents, where the exec check looks for it.
			any: []match{{arg: 0, op: opMaskedEq, mask: cloneVM | cloneParent | cloneThread, val: cloneVM | cloneParent}}},
		{name: "clone", errno: errnoEPERM,
			cond: "verified: flags share the working directory (CLONE_FS) without CLONE_THREAD",
			any:  []match{{arg: 0, op: opMaskedEq, mask: cloneFS | cloneThread, val: cloneFS}}},
		{name: "clone", errno: errnoEPERM,
			cond: "verified: flags share the descriptor table (CLONE_FILES) without CLONE_THREAD",
			any:  []match{{arg: 0, op: opMaskedEq, mask: cloneFiles | cloneThread, val: cloneFiles}}},
	}
	// Memory another process can write while the exec is looked at:
	// ENOSYS, as a kernel without them says, so that programs take the
	// way they have for that.
	rs = append(rs, always(errnoENOSYS, "memfd_create", "memfd_secret", "openat2")...)
	if !p.HostShared {
		// Under HostShared they are refused already.
		rs = append(rs, always(errnoENOSYS, "shmget", "shmat", "shmctl", "shmdt")...)
	}
	// Memory the kernel itself writes later, after the call that asked
	// for it returned: a Linux AIO read (O_DIRECT) lands in the caller's
	// buffer when the device is done, which can be between guardrun's
	// look at an exec and the kernel's; ENOSYS, as a kernel without AIO
	// says (POSIX aio in libc uses threads). A page given up with
	// MADV_FREE turns to zeros whenever the kernel reclaims it (an argv
	// cut short); EINVAL, as a kernel before 4.5 says, sends allocators
	// back to MADV_DONTNEED, which empties the page at once.
	rs = append(rs, always(errnoENOSYS, "io_setup", "io_submit", "io_getevents", "io_pgetevents", "io_cancel", "io_destroy")...)
	rs = append(rs, rule{name: "madvise", errno: errnoEINVAL,
		cond: "verified: advice (low 32 bits) is MADV_FREE", any: []match{lowEq(2, madvFree)}})
	return rs
}

// madvFree is MADV_FREE.
const madvFree = 8

// BindRoute is the route of bind(2) for a verified command under p
// (p.Verify): every bind the filter lets through, which guardrun makes
// itself (an AF_UNIX address on a path creates a file there, which the
// prediction must allow). ok is false where the filter refuses every
// bind.
func BindRoute(p sandbox.SeccompPolicy) (r Route, ok bool) {
	rs := rules(p)
	left := Route{Name: "bind"}
	for _, n := range bindLengthsLeft {
		left.Any = append(left.Any, Cond{Arg: 2, Mask: low32, Val: n})
	}
	for _, r := range []Route{{Name: "bind"}, left} {
		if disjoint(r, rs) {
			return r, true
		}
	}
	return Route{}, false
}

// disjoint reports whether route r can never match a call that one of
// the deny rules rs refuses (see BuildRoutes): each of r's conditions
// fixes the bits every rule's comparison looks at (the same argument,
// under a mask that holds the rule's), to other values.
func disjoint(r Route, rs []rule) bool {
	for _, d := range rs {
		if d.name != r.Name {
			continue
		}
		if len(r.Any) == 0 || len(d.any) == 0 || len(d.with) > 0 {
			return false
		}
		for _, m := range d.any {
			if m.op != opMaskedEq {
				return false
			}
			for _, c := range r.Any {
				if c.Arg != m.arg || c.Mask&m.mask != m.mask || c.Val&m.mask == m.val {
					return false
				}
			}
		}
	}
	return true
}
