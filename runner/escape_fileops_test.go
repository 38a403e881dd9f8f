//go:build linux

package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFileOpEscapes: a command may open a read-only zone's files, and
// guardrun's config, for reading. Through such a descriptor it must not
// change the file: not its inode flags or generation by ioctl (spelled
// with junk in the request's upper bits, in its 32-bit size, on a
// directory), nor its data by the calls that write without write(2)
// (copy_file_range, sendfile, splice, fallocate, the clone and dedupe
// ioctls, XFS's space ioctls), nor reach a file by handle, nor watch a
// whole file system, nor hold a lease with junk in fcntl's upper bits;
// nor open the host's POSIX shared memory in /dev/shm. Each attempt is
// made by the probe inside the sandbox; the host side is checked after.
func TestFileOpEscapes(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	ro := filepath.Join(f.home, ".bashrc")
	src := filepath.Join(f.ws, "hello.c")
	sysFile := filepath.Join(f.sys, "keep")
	// Content, flags and generation of each target, as the host sees them.
	type state struct {
		data         string
		flags, gener uint32
	}
	stateOf := func(t *testing.T, p string) state {
		t.Helper()
		var s state
		if fi, err := os.Stat(p); err != nil {
			t.Fatal(err)
		} else if !fi.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			s.data = string(b)
		}
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		s.flags, _ = unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
		s.gener, _ = unix.IoctlGetUint32(fd, 0x80087601) // FS_IOC_GETVERSION
		return s
	}
	targets := []string{ro, f.config, sysFile, f.home}
	before := map[string]state{}
	for _, p := range targets {
		before[p] = stateOf(t, p)
	}
	same := func(t *testing.T) {
		for _, p := range targets {
			if now := stateOf(t, p); now != before[p] {
				t.Errorf("%s changed on the host: %+v, was %+v", p, now, before[p])
			}
		}
	}
	// A host POSIX shared memory object, the user's only.
	shm := "/dev/shm/guardrun-shm-" + f.marker
	const shmText = "host shared memory\n"
	if err := os.WriteFile(shm, []byte(shmText), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(shm) })

	ioctl := func(p string, req uint64, dir ...string) []string {
		return append([]string{"ioctl-ro", p, fmt.Sprintf("%#x", req)}, dir...)
	}
	const (
		fsIocSetflags    = 0x40086602 // FS_IOC_SETFLAGS, _IOW('f', 2, long)
		fsIoc32Setflags  = 0x40046602 // FS_IOC32_SETFLAGS, _IOW('f', 2, int)
		ext4IocSetver    = 0x40086604 // EXT4_IOC_SETVERSION, _IOW('f', 4, long)
		fsIocSetver      = 0x40087602 // FS_IOC_SETVERSION, _IOW('v', 2, long)
		ext4IocMigrate   = 0x6609     // EXT4_IOC_MIGRATE, _IO('f', 9)
		ext4IocAllocDA   = 0x660c     // EXT4_IOC_ALLOC_DA_BLKS, _IO('f', 12)
		ext4IocClearES   = 0x6628     // EXT4_IOC_CLEAR_ES_CACHE, _IO('f', 40)
		fsIocFssetxattr  = 0x401c5820 // FS_IOC_FSSETXATTR
		fsIocSetfslabel  = 0x41009432 // FS_IOC_SETFSLABEL, _IOW(0x94, 50, char[256])
		fsIocSetEncPol   = 0x800c6613 // FS_IOC_SET_ENCRYPTION_POLICY, _IOR('f', 19, v1 policy)
		fsIocEnableVer   = 0x40806685 // FS_IOC_ENABLE_VERITY, _IOW('f', 133, 128 bytes)
		fitrim           = 0xc0185879 // FITRIM
		ext4IocSwapBoot  = 0x6611     // EXT4_IOC_SWAP_BOOT, _IO('f', 17)
		upperJunk        = 0xdead0000_00000000
		fsIocGetEncPwsal = 0x40106614 // FS_IOC_GET_ENCRYPTION_PWSALT, _IOW('f', 20, 16 bytes)
	)
	var summary []string
	defer func() { t.Logf("summary (uid %d):\n%s", os.Geteuid(), strings.Join(summary, "\n")) }()
	type row struct {
		name  string
		args  []string
		errno string // the refusal expected, "" for any
		host  func(*testing.T)
	}
	// The file system's own requests, where the fixtures lie on one
	// (GUARDRUN_TEST_FIXTURES on a btrfs or XFS mount).
	var fsRows []row
	var st unix.Statfs_t
	if err := unix.Statfs(f.base, &st); err != nil {
		t.Fatal(err)
	}
	homeEntries, _ := os.ReadDir(f.home)
	entries := func(t *testing.T) {
		t.Helper()
		same(t)
		if names, _ := os.ReadDir(f.home); len(names) != len(homeEntries) {
			t.Errorf("%s now holds %d entries, not its %d", f.home, len(names), len(homeEntries))
		}
	}
	switch st.Type {
	case unix.BTRFS_SUPER_MAGIC:
		t.Log("the fixtures lie on btrfs")
		fsRows = []row{
			// struct btrfs_ioctl_vol_args: fd, then the name.
			{"create a btrfs subvolume in a read-only zone's directory", ioctl(f.home, 0x5000940e, "dir", "vol-args:sub"), "EPERM", entries},
			{"snapshot a subvolume into a read-only zone's directory", ioctl(f.home, 0x50009401, "dir", "vol-args:snap"), "EPERM", entries},
			{"defragment a read-only zone's file", ioctl(ro, 0x50009402), "EPERM", same},
		}
	case unix.XFS_SUPER_MAGIC:
		t.Log("the fixtures lie on XFS")
		fsRows = []row{
			// struct xfs_fs_eofblocks (version 1): every file of the
			// caller's.
			{"free every file's speculative preallocation (XFS_IOC_FREE_EOFBLOCKS)", ioctl(ro, 0x8080583a, "file", "u32:1"), "", same},
		}
	}
	for _, tc := range append(fsRows, []row{
		{"chattr a read-only zone's file, junk in the request's upper 32 bits", ioctl(ro, fsIocSetflags|upperJunk), "EPERM", same},
		{"chattr guardrun's config through the 32-bit request", ioctl(f.config, fsIoc32Setflags), "EPERM", same},
		{"chattr a read-only zone's directory", ioctl(f.home, fsIocSetflags, "dir"), "EPERM", same},
		{"chattr a system_read file through FS_IOC_FSSETXATTR", ioctl(sysFile, fsIocFssetxattr), "EPERM", same},
		{"set a read-only zone file's generation (ext4's request)", ioctl(ro, ext4IocSetver), "EPERM", same},
		{"set a read-only zone file's generation (the generic request)", ioctl(ro, fsIocSetver), "EPERM", same},
		{"migrate guardrun's config to extents", ioctl(f.config, ext4IocMigrate), "EPERM", same},
		{"allocate a read-only zone file's delayed blocks", ioctl(ro, ext4IocAllocDA), "EPERM", same},
		{"clear a read-only zone file's extent cache", ioctl(ro, ext4IocClearES), "EPERM", same},
		{"swap a read-only zone file with the boot loader inode", ioctl(ro, ext4IocSwapBoot), "EPERM", same},
		{"label the file system through a read-only zone's file", ioctl(ro, fsIocSetfslabel), "EPERM", same},
		{"set an encryption policy on a read-only zone's directory", ioctl(f.home, fsIocSetEncPol, "dir"), "EPERM", same},
		{"write an encryption salt to the superblock", ioctl(ro, fsIocGetEncPwsal), "EPERM", same},
		{"enable verity on guardrun's config", ioctl(f.config, fsIocEnableVer), "EPERM", same},
		{"trim the file system through a read-only zone's file", ioctl(ro, fitrim), "EPERM", same},
		{"copy_file_range into a read-only descriptor", []string{"fd-write", ro, src, "copy_file_range"}, "", same},
		{"sendfile into a read-only descriptor", []string{"fd-write", ro, src, "sendfile"}, "", same},
		{"splice into a read-only descriptor", []string{"fd-write", f.config, src, "splice"}, "", same},
		{"punch a hole through a read-only descriptor", []string{"fd-write", ro, src, "punch-hole"}, "", same},
		{"zero a range through a read-only descriptor", []string{"fd-write", f.config, src, "zero-range"}, "", same},
		{"FS_IOC_ZERO_RANGE through a read-only descriptor", []string{"fd-write", ro, src, "zero-range-ioctl"}, "", same},
		{"FS_IOC_UNRESVSP64 through a read-only descriptor", []string{"fd-write", ro, src, "unresvsp"}, "", same},
		{"FICLONE into a read-only descriptor", []string{"fd-write", ro, src, "ficlone"}, "", same},
		{"FICLONERANGE into a read-only descriptor", []string{"fd-write", f.config, src, "ficlonerange"}, "", same},
		{"FIDEDUPERANGE into a read-only descriptor (the owner may, on btrfs and XFS)", []string{"fd-write", ro, src, "fideduperange"}, "EPERM", same},
		{"open a read-only zone's file by its handle for writing", []string{"handle", ro}, "EPERM", same},
		{"watch the whole file system (fanotify)", []string{"fanotify", f.home}, "EPERM", nil},
		{"lease guardrun's config, junk in fcntl's upper 32 bits", []string{"lease-junk", f.config}, "EPERM", nil},
		{"open the host's POSIX shared memory", []string{"shm-open", shm}, "", func(t *testing.T) { unchanged(shm, shmText)(t) }},
	}...) {
		t.Run(tc.name, func(t *testing.T) {
			status, out := f.run(t, nil, append([]string{probePath}, tc.args...)...)
			m := probeResult(t, status, out)
			switch {
			case strings.HasPrefix(m[2], "SETUP"):
				t.Fatalf("the probe could not set up the attempt: %s", strings.TrimSpace(m[0]))
			case !strings.HasPrefix(m[2], "refused"):
				t.Errorf("NOT REFUSED: %s", strings.TrimSpace(m[0]))
			case tc.errno != "" && m[3] != tc.errno:
				t.Errorf("refused with %s, want %s (the filter's): %s", m[3], tc.errno, strings.TrimSpace(m[0]))
			default:
				summary = append(summary, fmt.Sprintf("  %-60s %s", tc.name, m[3]))
			}
			if tc.host != nil {
				tc.host(t)
			}
		})
	}
}
