//go:build cgo && linux

package seccomp

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
)

// retNotify is SECCOMP_RET_USER_NOTIF.
const retNotify = 0x7fc00000

var notifyRet = uint32(retNotify)

// writeOpen are the open flags that make an open a write.
const writeOpen = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC | unix.O_TMPFILE&^unix.O_DIRECTORY

// TestRoutes: a route with conditions sends only the calls that meet one
// to user space; the others are the rest of the filter's (an open for
// reading stays in the kernel, a device node stays refused).
func TestRoutes(t *testing.T) {
	arch, _ := native(t)
	notIFMT := []Cond{}
	for _, v := range []uint64{0, unix.S_IFREG, unix.S_IFIFO, unix.S_IFSOCK} {
		notIFMT = append(notIFMT, Cond{Arg: 2, Mask: unix.S_IFMT, Val: v})
	}
	routes := []Route{
		{Name: "openat", Any: AnyBit(2, writeOpen)},
		{Name: "mknodat", Any: notIFMT},
		{Name: "unlinkat"},
	}
	f, nrs, err := BuildRoutes(sandbox.SeccompPolicy{Verify: true}, routes)
	if err != nil {
		t.Fatal(err)
	}
	prog, _ := f.BPF()
	v := vmProg(t, prog)
	if len(nrs) != 3 {
		t.Errorf("numbers %v, want the three routed calls", nrs)
	}
	for _, c := range []struct {
		name string
		sys  string
		args []uint64
		want uint32
	}{
		{"openat for reading stays in the kernel", "openat", []uint64{0, 0, unix.O_RDONLY | unix.O_CLOEXEC}, allow},
		{"openat of a directory stays in the kernel", "openat", []uint64{0, 0, unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NONBLOCK | unix.O_CLOEXEC}, allow},
		{"openat O_PATH stays in the kernel", "openat", []uint64{0, 0, unix.O_PATH}, allow},
		{"openat for writing is routed", "openat", []uint64{0, 0, unix.O_WRONLY}, notifyRet},
		{"openat read-write is routed", "openat", []uint64{0, 0, unix.O_RDWR}, notifyRet},
		{"openat O_CREAT is routed", "openat", []uint64{0, 0, unix.O_RDONLY | unix.O_CREAT}, notifyRet},
		{"openat O_RDONLY|O_TRUNC is routed (Linux truncates)", "openat", []uint64{0, 0, unix.O_TRUNC}, notifyRet},
		{"openat O_TMPFILE is routed", "openat", []uint64{0, 0, unix.O_TMPFILE | unix.O_RDWR}, notifyRet},
		{"openat with junk above the flags and no write bit stays", "openat", []uint64{0, 0, 0xffffffff00000000}, allow},
		{"mknodat of a regular file is routed", "mknodat", []uint64{0, 0, unix.S_IFREG | 0o644}, notifyRet},
		{"mknodat of a FIFO is routed", "mknodat", []uint64{0, 0, unix.S_IFIFO | 0o644}, notifyRet},
		{"mknodat with no type is routed", "mknodat", []uint64{0, 0, 0o644}, notifyRet},
		{"mknodat of a character device stays refused", "mknodat", []uint64{0, 0, unix.S_IFCHR | 0o644}, eperm},
		{"mknodat of a block device stays refused", "mknodat", []uint64{0, 0, unix.S_IFBLK | 0o644}, eperm},
		{"unlinkat is routed", "unlinkat", []uint64{0, 0, 0}, notifyRet},
		{"a thread", "clone", []uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD | unix.CLONE_SYSVSEM}, allow},
		{"fork", "clone", []uint64{uint64(unix.SIGCHLD)}, allow},
		{"vfork (posix_spawn)", "clone", []uint64{unix.CLONE_VM | unix.CLONE_VFORK | uint64(unix.SIGCHLD)}, allow},
		{"shared memory without a thread or vfork", "clone", []uint64{unix.CLONE_VM | uint64(unix.SIGCHLD)}, eperm},
		{"a vfork child under the caller's parent", "clone", []uint64{unix.CLONE_VM | unix.CLONE_VFORK | unix.CLONE_PARENT}, eperm},
		{"a child under the caller's parent that shares nothing", "clone", []uint64{unix.CLONE_PARENT | uint64(unix.SIGCHLD)}, allow},
		{"a shared working directory without a thread", "clone", []uint64{unix.CLONE_FS | uint64(unix.SIGCHLD)}, eperm},
		{"a shared descriptor table without a thread", "clone", []uint64{unix.CLONE_FILES | uint64(unix.SIGCHLD)}, eperm},
		{"vfork that shares the descriptor table", "clone", []uint64{unix.CLONE_VM | unix.CLONE_VFORK | unix.CLONE_FILES}, eperm},
		{"memfd_create", "memfd_create", nil, enosys},
		{"openat2 (flags in memory)", "openat2", nil, enosys},
		{"shmget", "shmget", nil, enosys},
		{"Linux AIO (a read the kernel completes later)", "io_setup", nil, enosys},
		{"io_submit", "io_submit", nil, enosys},
		{"madvise MADV_FREE (a page reclaimed to zeros)", "madvise", []uint64{0, 4096, 8}, uint32(retErrno | unix.EINVAL)},
		{"madvise MADV_DONTNEED stays", "madvise", []uint64{0, 4096, 4}, allow},
		{"execve is not routed here", "execve", nil, allow},
	} {
		n, ok := nr(t, c.sys)
		if !ok {
			t.Fatalf("%s does not exist", c.sys)
		}
		d := seccompData{nr: n, arch: arch}
		copy(d.args[:], c.args)
		if got := run(t, v, d); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, actionName(got), actionName(c.want))
		}
	}
}

// TestRoutesNotBothRefusedAndServed: a call the deny rules refuse cannot
// be routed where a refused call would match the route.
func TestRoutesNotBothRefusedAndServed(t *testing.T) {
	for _, c := range []struct {
		name  string
		route Route
	}{
		{"every mknodat", Route{Name: "mknodat"}},
		{"the devices mknodat refuses", Route{Name: "mknodat", Any: []Cond{{Arg: 2, Mask: unix.S_IFMT, Val: unix.S_IFCHR}}}},
		{"another argument of mknodat", Route{Name: "mknodat", Any: []Cond{{Arg: 1, Mask: 1, Val: 1}}}},
		{"another mask", Route{Name: "mknodat", Any: []Cond{{Arg: 2, Mask: 0o777, Val: 0o644}}}},
		{"ptrace", Route{Name: "ptrace"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := BuildRoutes(sandbox.SeccompPolicy{}, []Route{c.route})
			if err == nil || !strings.Contains(err.Error(), "cannot also be routed") {
				t.Fatalf("BuildRoutes: %v, want a refusal", err)
			}
		})
	}
}

// TestBindRoute: a verified command's binds are routed wherever the
// filter lets one through (an AF_UNIX address on a path creates a file),
// and only there: with the network on under bwrap, the lengths the rule
// on abstract names leaves; the others stay refused, and an address no
// unix path fits (autobind, sockaddr_storage) stays in the kernel.
func TestBindRoute(t *testing.T) {
	arch, _ := native(t)
	bind, _ := nr(t, "bind")
	type call struct {
		addrlen uint64
		want    uint32
	}
	for _, c := range []struct {
		name   string
		policy sandbox.SeccompPolicy
		routed bool
		calls  []call
	}{
		{name: "no network, no unix sockets: every bind refused", policy: sandbox.SeccompPolicy{}},
		{name: "network on (bwrap)", policy: sandbox.SeccompPolicy{AllowNetwork: true}, routed: true,
			calls: []call{{12, notifyRet}, {16, notifyRet}, {24, notifyRet}, {28, notifyRet}, {13, eperm}, {110, eperm}, {2, allow}, {128, allow}}},
		{name: "network on through the proxy: every bind refused", policy: sandbox.SeccompPolicy{AllowNetwork: true, InetStreamOnly: true}},
		{name: "network on (landlock)", policy: sandbox.SeccompPolicy{AllowNetwork: true, HostShared: true}, routed: true,
			calls: []call{{13, notifyRet}, {16, notifyRet}, {2, notifyRet}}},
		{name: "a unix socket listed", policy: sandbox.SeccompPolicy{AllowUnix: true}, routed: true,
			calls: []call{{13, notifyRet}, {110, notifyRet}, {2, notifyRet}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.policy.Verify = true
			r, ok := BindRoute(c.policy)
			if ok != c.routed {
				t.Fatalf("routed %v, want %v", ok, c.routed)
			}
			if !ok {
				return
			}
			f, _, err := BuildRoutes(c.policy, []Route{r})
			if err != nil {
				t.Fatal(err)
			}
			prog, _ := f.BPF()
			v := vmProg(t, prog)
			for _, k := range c.calls {
				d := seccompData{nr: bind, arch: arch, args: [6]uint64{3, 0, k.addrlen}}
				if got := run(t, v, d); got != k.want {
					t.Errorf("bind with an address of %d bytes: got %s, want %s", k.addrlen, actionName(got), actionName(k.want))
				}
			}
		})
	}
}

// TestVerifyOff: without Verify the filter shares memory freely (threads
// of a runtime that uses clone with CLONE_VM alone stay possible).
func TestVerifyOff(t *testing.T) {
	arch, _ := native(t)
	v := vm(t, sandbox.SeccompPolicy{})
	n, _ := nr(t, "clone")
	d := seccompData{nr: n, arch: arch, args: [6]uint64{unix.CLONE_VM}}
	if got := run(t, v, d); got != allow {
		t.Errorf("clone(CLONE_VM) without Verify: %s", actionName(got))
	}
	n, _ = nr(t, "memfd_create")
	if got := run(t, v, seccompData{nr: n, arch: arch}); got != allow {
		t.Errorf("memfd_create without Verify: %s", actionName(got))
	}
}

// TestBuildRoutesCached: a route's conditions are part of the cached
// program's name: the same names with and without conditions are two
// programs, and a hit gives the numbers of the routed calls.
func TestBuildRoutesCached(t *testing.T) {
	dir := t.TempDir()
	pol := sandbox.SeccompPolicy{}
	plain, _, err := BuildRoutesCached(pol, Routes("openat"), dir)
	if err != nil {
		t.Fatal(err)
	}
	cond := []Route{{Name: "openat", Any: AnyBit(2, unix.O_WRONLY)}}
	first, _, err := BuildRoutesCached(pol, cond, dir)
	if err != nil {
		t.Fatal(err)
	}
	hit, nrs, err := BuildRoutesCached(pol, cond, dir)
	if err != nil {
		t.Fatal(err)
	}
	p0, _ := plain.BPF()
	p1, _ := first.BPF()
	p2, _ := hit.BPF()
	if string(p0) == string(p1) {
		t.Error("the conditional route was served the unconditional one's program")
	}
	if string(p1) != string(p2) {
		t.Error("the cached program differs from the built one")
	}
	if n, _ := nr(t, "openat"); nrs[int32(n)] != "openat" {
		t.Errorf("numbers on a hit: %v", nrs)
	}
}
