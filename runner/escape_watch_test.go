//go:build linux

package runner

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// watchRows are TestEscapesAtGuardrun's rows on inotify_add_watch, which the
// landlock backend has guardrun serve: watches on what the command may
// not read (outside, denied, guardrun's state), reached through names
// guardrun resolves in its own process or in another mount namespace,
// and calls meant to make guardrun's server watch something else, fail
// or stall. self is guardrun's pid (this process); metaSame checks the
// host's file outside (keep) unchanged.
func watchRows(t *testing.T, f *fixture, self string, metaSame func(*testing.T)) []attack {
	zone := filepath.Join(f.ws, "sub/dir")
	outRoot := "/root" + f.outside // after /proc/PID
	const selfOnly = "under bwrap /proc/self and a relative proc/self are the command's own, whose cwd is in the zone"
	// guardrun's working directory (this process's) is aimed at only
	// where the command may not read it (the unprivileged run works in
	// the probe's directory, a zone).
	cwds := func(paths ...string) []string {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := f.profile.Access(wd); r {
			return nil
		}
		return paths
	}
	rows := []attack{
		{escape: escape{name: "watch denied names, guardrun's state and audit log, a denied directory, a file outside",
			args: []string{"watch", "paths", f.secret, filepath.Join(f.ws, "sub/.env"), f.state, filepath.Join(f.state, "audit.jsonl"),
				filepath.Join(f.home, ".ssh"), filepath.Join(f.home, ".ssh/id_ed25519"), filepath.Join(f.outside, "keep"),
				"/proc/self/cwd/.env", "/proc/self/root" + f.outside, "/dev/fd/../cwd/.env"}},
			onlyLL: "under bwrap a denied or hidden name is an empty mount (/dev/null, a tmpfs) over it: a watch there watches the mask, not the file"},
		{escape: escape{name: "watch outside through guardrun's /proc/PID (root, cwd, fds 0-9) and /proc/1/root",
			args: append(append([]string{"watch", "paths", "/proc/" + self + outRoot, "/proc/1" + outRoot}, cwds("/proc/"+self+"/cwd")...),
				procFDs("/proc/"+self+"/fd/", 10)...)}},
		{escape: escape{name: "watch outside through spellings of /proc/self the rewrite to the caller's misses (//proc, /proc/./self, /proc/self/../self, /dev/./fd)",
			args: []string{"watch", "paths", "//proc/self" + outRoot, "/proc/./self" + outRoot, "/proc//self" + outRoot,
				"/./proc/self" + outRoot, "/proc/self/../self" + outRoot, "/proc/thread-self/../self" + outRoot,
				"/dev/./fd/../root" + f.outside, "/dev//fd/../root" + f.outside}}},
		{escape: escape{name: "watch guardrun's working directory and open files through spellings of /proc/self the rewrite misses",
			args: append(append([]string{"watch", "paths", "//proc/self" + outRoot}, cwds("//proc/self/cwd", "/proc/./self/cwd", "/proc/self/../self/cwd",
				"/proc/thread-self/../self/cwd", "/dev/./fd/../cwd")...), procFDs("//proc/self/fd/", 10)...)},
			onlyLL: selfOnly},
		{escape: escape{name: "watch guardrun's working directory and outside through proc/self relative to /",
			args: append([]string{"watch", "rel", "/", "proc/self" + outRoot, strings.TrimPrefix(f.outside, "/")},
				cwds("proc/self/cwd", "proc/thread-self/cwd", "proc/"+self+"/cwd", "dev/fd/../cwd")...)},
			onlyLL: selfOnly},
		{escape: escape{name: "watch the keeper's root and open files (/proc/PPID)",
			args: append([]string{"watch", "paths", "/proc/PPID" + outRoot, "/proc/PPID/root/"}, procFDs("/proc/PPID/fd/", 10)...)},
			onlyLL: noKeeper},
		{escape: escape{name: "watch outside from a thread with a working directory of its own (unshare CLONE_FS) there",
			args: []string{"watch", "thread-cwd", f.outside, zone}}},
		{escape: escape{name: "watch outside with odd masks (IN_MASK_CREATE, IN_MASK_ADD, IN_ONLYDIR, IN_EXCL_UNLINK, 0, ~0)",
			args: []string{"watch", "masks", f.outside, zone}}},
		{escape: escape{name: "watch the zone through descriptors that are not inotify instances, then keep being served",
			args: []string{"watch", "badfd", zone}}},
		{escape: escape{name: "watch with unmapped and unterminated path memory, then outside, then keep being served",
			args: []string{"watch", "badaddr", f.outside, zone}}},
		{escape: escape{name: "watch a zone name flipped between a zone directory and a link outside",
			args: []string{"watch", "flip", f.outside, zone}}},
		{escape: escape{name: "watch a link in the zone with IN_DONT_FOLLOW (the link, not where it leads; IN_ONLYDIR on a link to outside)",
			args: []string{"watch", "dontfollow", f.outside, zone}}},
		{escape: escape{name: "watch outside through paths of PATH_MAX-1 and PATH_MAX bytes",
			args: []string{"watch", "long", f.outside, zone}}},
		{escape: escape{name: "64 processes adding watches at once, half outside (guardrun answers all, right, and keeps serving)",
			args: []string{"watch", "storm", f.outside, zone}}},
		{escape: escape{name: "inotify through int 0x80 and the x32 ABI, fanotify_init, userfaultfd",
			args: []string{"watch", "abi", f.outside}}},
	}
	// Another mount namespace (a container's, a service's private
	// /tmp) where the outside directory is mounted at a zone path: the
	// kernel names its objects by their path there, which looks like
	// the zone's.
	pid, why := otherMountNS(t, f.outside, zone)
	ns := []attack{
		{escape: escape{name: "watch a directory outside through another mount namespace where it is mounted at a zone path (/proc/PID/root, cwd)",
			args: []string{"watch", "paths", "/proc/" + pid + "/root" + zone, "/proc/" + pid + "/cwd", "/proc/" + pid + "/root" + zone + "/keep"}}},
		{escape: escape{name: "metadata of a file outside through another mount namespace where it is mounted at a zone path",
			args: []string{"meta", "path", filepath.Join(f.outside, "keep"), "/proc/" + pid + "/root" + zone + "/keep"}, host: metaSame}},
	}
	for i := range ns {
		ns[i].skip = why
	}
	return append(rows, ns...)
}

func procFDs(prefix string, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, prefix+strconv.Itoa(i))
	}
	return out
}

// otherMountNS starts a process in a user and mount namespace of its own where from is bind-mounted onto
// onto and which works in onto there; the host's mounts do not change.
// It returns the process's pid, or "" and why it could not be made: only
// where namespaces cannot be made at all (TestLandlockWithoutNamespaces's
// wrapper); anywhere else that fails the test.
func otherMountNS(t *testing.T, from, onto string) (string, string) {
	t.Helper()
	// A user namespace too, as rootless containers have: the process's
	// capabilities are then its namespace's, which its owner (this
	// user) holds from outside without any of its own.
	args := []string{"-r", "-m", "--propagation", "private"}
	args = append(args, "sh", "-c", `mount --bind "$1" "$2" && cd "$2" && echo ready && exec sleep 300`, "sh", from, onto)
	c := exec.Command("unshare", args...)
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatalf("unshare: %v", err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	ready := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- line == "ready\n"
	}()
	ok := false
	select {
	case ok = <-ready:
	case <-time.After(10 * time.Second):
	}
	if !ok {
		c.Process.Kill()
		c.Wait()
		why := "no mount namespace of another process here (unshare: " + strings.TrimSpace(stderr.String()) + ")"
		if os.Getenv("GUARDRUN_TEST_NONS") == "1" {
			return "", why
		}
		t.Fatal(why)
	}
	return strconv.Itoa(c.Process.Pid), ""
}
