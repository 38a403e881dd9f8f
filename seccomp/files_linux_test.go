//go:build cgo && linux

package seccomp

import (
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
)

// Requests the Linux headers define that x/sys/unix does not (ext4's are
// in fs/ext4/ext4.h, not the UAPI), spelled as the headers do.
const (
	ext4IocSetversion  = 0x40086604 // _IOW('f', 4, long)
	ext4IocMigrate     = 0x6609     // _IO('f', 9)
	ext4IocAllocDaBlks = 0x660c     // _IO('f', 12)
	ext4IocMoveExt     = 0xc028660f // _IOWR('f', 15, struct move_extent)
	ext4IocClearES     = 0x6628     // _IO('f', 40)
	ext4IocGetstate    = 0x40046629 // _IOW('f', 41, __u32): a read, spelled _IOW
	ext4IocShutdown    = 0x8004587d // _IOR('X', 125, __u32)
	fsIoc32Setflags    = 0x40046602 // _IOW('f', 2, int)
	fsIoc32Getflags    = 0x80046601 // _IOR('f', 1, int)
	fsIocSetversion    = 0x40087602 // _IOW('v', 2, long)
	fsIocGetversion    = 0x80087601 // _IOR('v', 1, long)
	fsIocGetfslabel    = 0x81009431 // _IOR(0x94, 49, char[256])
	btrfsIocSnapCreate = 0x50009401 // _IOW(0x94, 1, struct btrfs_ioctl_vol_args)
	btrfsIocSubvolV2   = 0x50009418 // _IOW(0x94, 24, struct btrfs_ioctl_vol_args_v2)
	btrfsIocStartSync  = 0x80089418 // _IOR(0x94, 24, __u64)
	btrfsIocSetflags   = 0x4008941a // _IOW(0x94, 26, __u64)
	f2fsIocStartAtomic = 0xf501     // _IO(0xf5, 1)
	f2fsIocSetPin      = 0x4004f50d // _IOW(0xf5, 13, __u32)
	fsIocResvsp        = 0x40305828 // _IOW('X', 40, struct space_resv): needs a writable descriptor
	fsIocFssetxattr    = 0x401c5820 // _IOW('X', 32, struct fsxattr)
	fsIocFsgetxattr    = 0x801c581f // _IOR('X', 31, struct fsxattr)
	fsIocFiemap        = 0xc020660b // _IOWR('f', 11, struct fiemap)
	fiFreeze           = 0xc0045877 // _IOWR('X', 119, int)
	fiThaw             = 0xc0045878 // _IOWR('X', 120, int)
	fiTrim             = 0xc0185879 // _IOWR('X', 121, struct fstrim_range)
	fionread           = 0x541b
	atFDCWD            = 0xffffff9c
)

// TestProgramFileChanges: the ioctls that change a file, its file
// system or its keys through any descriptor are refused, the reads and
// the clones (whose destination must be writable) kept; file_setattr and
// file_getattr answer ENOSYS (tools fall back to the ioctls on an open
// file), lsm_set_self_attr too, and F_SETLEASE is refused. Under both
// backends: the filter is the same.
func TestProgramFileChanges(t *testing.T) {
	arch, _ := native(t)
	ioctl, _ := nr(t, "ioctl")
	fcntl, _ := nr(t, "fcntl")
	type c struct {
		name string
		nr   uint32
		args []uint64
		want uint32
	}
	io := func(name string, req uint64, want uint32) c {
		return c{"ioctl " + name, ioctl, []uint64{3, req}, want}
	}
	rows := []c{
		io("FS_IOC_SETFLAGS (chattr)", unix.FS_IOC_SETFLAGS, eperm),
		io("FS_IOC32_SETFLAGS", fsIoc32Setflags, eperm),
		io("FS_IOC_SETFLAGS with junk in the high 32 bits", 0xdeadbeef00000000|unix.FS_IOC_SETFLAGS, eperm),
		io("FS_IOC_FSSETXATTR", fsIocFssetxattr, eperm),
		io("FS_IOC_SETVERSION", fsIocSetversion, eperm),
		io("EXT4_IOC_SETVERSION", ext4IocSetversion, eperm),
		io("FS_IOC_SET_ENCRYPTION_POLICY", unix.FS_IOC_SET_ENCRYPTION_POLICY, eperm),
		io("FS_IOC_GET_ENCRYPTION_PWSALT (writes a salt when there is none)", unix.FS_IOC_GET_ENCRYPTION_PWSALT, eperm),
		io("FS_IOC_ADD_ENCRYPTION_KEY", unix.FS_IOC_ADD_ENCRYPTION_KEY, eperm),
		io("FS_IOC_REMOVE_ENCRYPTION_KEY", unix.FS_IOC_REMOVE_ENCRYPTION_KEY, eperm),
		io("FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS", unix.FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS, eperm),
		io("FS_IOC_ENABLE_VERITY", unix.FS_IOC_ENABLE_VERITY, eperm),
		io("EXT4_IOC_MIGRATE", ext4IocMigrate, eperm),
		io("EXT4_IOC_ALLOC_DA_BLKS", ext4IocAllocDaBlks, eperm),
		io("EXT4_IOC_MOVE_EXT", ext4IocMoveExt, eperm),
		io("EXT4_IOC_CLEAR_ES_CACHE", ext4IocClearES, eperm),
		io("EXT4_IOC_SHUTDOWN", ext4IocShutdown, eperm),
		io("FIFREEZE", fiFreeze, eperm),
		io("FITHAW", fiThaw, eperm),
		io("FITRIM", fiTrim, eperm),
		io("FIDEDUPERANGE (a destination opened read-only)", unix.FIDEDUPERANGE, eperm),
		io("BTRFS_IOC_SNAP_CREATE", btrfsIocSnapCreate, eperm),
		io("BTRFS_IOC_SUBVOL_CREATE_V2", btrfsIocSubvolV2, eperm),
		io("BTRFS_IOC_START_SYNC (btrfs's whole range)", btrfsIocStartSync, eperm),
		io("BTRFS_IOC_SUBVOL_SETFLAGS", btrfsIocSetflags, eperm),
		io("FS_IOC_GETFSLABEL (btrfs's range)", fsIocGetfslabel, eperm),
		io("F2FS_IOC_START_ATOMIC_WRITE", f2fsIocStartAtomic, eperm),
		io("F2FS_IOC_SET_PIN_FILE", f2fsIocSetPin, eperm),

		io("FS_IOC_GETFLAGS (lsattr) kept", unix.FS_IOC_GETFLAGS, allow),
		io("FS_IOC32_GETFLAGS kept", fsIoc32Getflags, allow),
		io("FS_IOC_FSGETXATTR kept", fsIocFsgetxattr, allow),
		io("FS_IOC_GETVERSION kept", fsIocGetversion, allow),
		io("FS_IOC_FIEMAP kept", fsIocFiemap, allow),
		io("FS_IOC_GET_ENCRYPTION_POLICY kept", unix.FS_IOC_GET_ENCRYPTION_POLICY, allow),
		io("FS_IOC_GET_ENCRYPTION_POLICY_EX kept", unix.FS_IOC_GET_ENCRYPTION_POLICY_EX, allow),
		io("FS_IOC_MEASURE_VERITY kept", unix.FS_IOC_MEASURE_VERITY, allow),
		io("EXT4_IOC_GETSTATE kept", ext4IocGetstate, allow),
		io("FICLONE kept (its destination must be writable)", unix.FICLONE, allow),
		io("FICLONERANGE kept", unix.FICLONERANGE, allow),
		io("FS_IOC_RESVSP kept (a writable descriptor only)", fsIocResvsp, allow),
		io("FIONREAD kept", fionread, allow),
		io("TCGETS kept", unix.TCGETS, allow),
		io("FS_IOC_SETFLAGS in the high 32 bits only kept", uint64(unix.FS_IOC_SETFLAGS)<<32, allow),

		{"file_setattr ENOSYS", 469, []uint64{atFDCWD, 0x7f0000001000, 0x7f0000002000, 24, 0}, enosys},
		{"file_getattr ENOSYS", 468, []uint64{atFDCWD, 0x7f0000001000, 0x7f0000002000, 24, 0}, enosys},
		{"lsm_set_self_attr ENOSYS", 460, []uint64{100, 0x7f0000001000, 64, 0}, enosys},
		{"lsm_get_self_attr kept", 459, []uint64{100, 0x7f0000001000, 0x7f0000002000, 0}, allow},
		{"fcntl F_SETLEASE refused", fcntl, []uint64{3, unix.F_SETLEASE, unix.F_RDLCK}, eperm},
		{"fcntl F_SETLEASE with junk in the high 32 bits refused", fcntl, []uint64{3, 0xffffffff00000000 | unix.F_SETLEASE, unix.F_RDLCK}, eperm},
		{"fcntl F_GETLEASE kept", fcntl, []uint64{3, unix.F_GETLEASE}, allow},
		{"fcntl F_SETFL kept", fcntl, []uint64{3, unix.F_SETFL, unix.O_NONBLOCK}, allow},
		{"fcntl F_OFD_SETLK kept", fcntl, []uint64{3, unix.F_OFD_SETLK, 0x7f0000001000}, allow},
	}
	for _, pol := range []sandbox.SeccompPolicy{{}, {AllowNetwork: true}, {HostShared: true}, {AllowNetwork: true, InetStreamOnly: true, HostShared: true}} {
		v := vm(t, pol)
		for _, r := range rows {
			d := seccompData{nr: r.nr, arch: arch, ip: 0x7f0012345678}
			copy(d.args[:], r.args)
			if got := run(t, v, d); got != r.want {
				t.Errorf("%+v: %s: got %s, want %s", pol, r.name, actionName(got), actionName(r.want))
			}
		}
	}
}

// TestProgramBindPolicies: bind under each backend's network policy.
// bwrap with the network on refuses the lengths of abstract unix names
// (the host's network namespace); the landlock backend (HostShared) has
// guardrun read the address, so the filter has no bind rule there; with
// the proxy (TCP only) every bind is refused.
func TestProgramBindPolicies(t *testing.T) {
	arch, _ := native(t)
	bind, _ := nr(t, "bind")
	for _, c := range []struct {
		pol  sandbox.SeccompPolicy
		len  uint64
		want uint32
	}{
		{sandbox.SeccompPolicy{AllowNetwork: true}, 16, allow},
		{sandbox.SeccompPolicy{AllowNetwork: true}, 21, eperm},
		{sandbox.SeccompPolicy{AllowNetwork: true, HostShared: true}, 21, allow},
		{sandbox.SeccompPolicy{AllowNetwork: true, HostShared: true}, 16, allow},
		{sandbox.SeccompPolicy{AllowNetwork: true, HostShared: true, InetStreamOnly: true}, 16, eperm},
		{sandbox.SeccompPolicy{AllowNetwork: true, HostShared: true, InetStreamOnly: true}, 21, eperm},
		{sandbox.SeccompPolicy{AllowUnix: true}, 21, allow},
		{sandbox.SeccompPolicy{HostShared: true}, 16, eperm},
	} {
		d := seccompData{nr: bind, arch: arch, args: [6]uint64{3, 0x7f0000001000, c.len}}
		if got := run(t, vm(t, c.pol), d); got != c.want {
			t.Errorf("%+v: bind with length %d: got %s, want %s", c.pol, c.len, actionName(got), actionName(c.want))
		}
	}
}

// TestProgramMessageQueues: without an IPC namespace of its own (the
// landlock backend), POSIX message queues are the host's and Landlock
// never sees them: every mq_ call answers ENOSYS. With one (bwrap) they
// are the sandbox's own and stay.
func TestProgramMessageQueues(t *testing.T) {
	arch, _ := native(t)
	shared, own := vm(t, sandbox.SeccompPolicy{HostShared: true}), vm(t, sandbox.SeccompPolicy{})
	for _, name := range []string{"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr"} {
		n, ok := nr(t, name)
		if !ok {
			t.Fatalf("%s does not exist", name)
		}
		d := seccompData{nr: n, arch: arch, args: [6]uint64{0x7f0000001000, unix.O_RDWR | unix.O_CREAT, 0o600}}
		if got := run(t, shared, d); got != enosys {
			t.Errorf("host shared: %s: got %s, want ENOSYS", name, actionName(got))
		}
		if got := run(t, own, d); got != allow {
			t.Errorf("own IPC namespace: %s: got %s, want allowed", name, actionName(got))
		}
	}
}

// changingIoctls are the requests TestFileIoctlArguments expects refused
// by direction, type and number: those that change a file, its file
// system or its keys (as the headers define them).
var changingIoctls = []uint32{unix.FS_IOC_SETFLAGS, ext4IocSetversion, 0x40086607, 0x40286608, ext4IocMigrate,
	ext4IocAllocDaBlks, ext4IocMoveExt, 0x40086610, 0x6611, unix.FS_IOC_SET_ENCRYPTION_POLICY,
	unix.FS_IOC_GET_ENCRYPTION_PWSALT, unix.FS_IOC_ADD_ENCRYPTION_KEY, unix.FS_IOC_REMOVE_ENCRYPTION_KEY,
	unix.FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS, ext4IocClearES, 0x4004662b, 0x4008662c,
	unix.FS_IOC_ENABLE_VERITY, fsIocSetversion, fsIocFssetxattr, fiFreeze, fiThaw,
	fiTrim, ext4IocShutdown}

// wantIoctl is the ioctl rules restated: the terminal injections, the
// requests that change files (any size), and btrfs's range (but the two
// clones) and f2fs's.
func wantIoctl(x uint64) uint32 {
	c := uint32(x)
	switch {
	case c == unix.TIOCSTI || c == unix.TIOCLINUX || c == unix.TIOCSETD:
		return eperm
	case slices.ContainsFunc(changingIoctls, func(r uint32) bool { return r&0xc000ffff == c&0xc000ffff }):
		return eperm
	case c>>8&0xff == 0x94 && c&0xff != 9 && c&0xff != 13:
		return eperm
	case c>>8&0xff == 0xf5:
		return eperm
	}
	return allow
}

// TestFileIoctlArguments runs random requests through the filter and
// checks each against the rule restated: refused when its direction,
// type and number (any size) are those of a request that changes a file,
// or its type is btrfs's (but FICLONE, FICLONERANGE) or f2fs's.
func TestFileIoctlArguments(t *testing.T) {
	arch, _ := native(t)
	v := vm(t, sandbox.SeccompPolicy{})
	ioctl, _ := nr(t, "ioctl")
	rnd := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		x := rnd.Uint64()
		switch rnd.IntN(4) {
		case 0: // a known request, another size, junk above
			x = uint64(changingIoctls[rnd.IntN(len(changingIoctls))])&0xc000ffff | uint64(rnd.IntN(1<<14))<<16 | rnd.Uint64()<<32
		case 1: // a file system type, any number
			x = uint64([]uint32{'f', 'v', 'X', 0x94, 0xf5}[rnd.IntN(5)])<<8 | uint64(rnd.IntN(256)) | uint64(rnd.IntN(4))<<30
		case 2:
			x &= 0xffffffff
		}
		d := seccompData{nr: ioctl, arch: arch, args: [6]uint64{3, x}}
		if got, w := run(t, v, d), wantIoctl(x); got != w {
			t.Errorf("ioctl(%#x): got %s, want %s", x, actionName(got), actionName(w))
		}
	}
}
