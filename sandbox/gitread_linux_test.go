package sandbox

import (
	"os"
	"syscall"
	"testing"
)

// TestDeriveGitConfigKernelFile: a command makes a git directory's
// config in the workspace a link to one of the kernel's files, or holds
// a write lease on it from a process that outlives it. Deriving the next
// command's profile reads that config for its hooks path, unsandboxed:
// as root /proc/kmsg waits for the kernel's next message (and takes it
// from the log), and an open under a lease waits up to lease-break-time
// (45 s). Derive returns at once, the git directory still protected.
func TestDeriveGitConfigKernelFile(t *testing.T) {
	d := tree(t, "ws/kmsg/HEAD", "ws/kmsg/objects/", "ws/kmsg/refs/", "ws/kmsg/hooks/",
		"ws/env/HEAD", "ws/env/objects/", "ws/env/refs/", "ws/env/hooks/",
		"ws/lease/HEAD", "ws/lease/objects/", "ws/lease/refs/", "ws/lease/hooks/")
	ws := d + "/ws"
	if err := os.Symlink("/proc/self/environ", ws+"/env/config"); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Symlink("/proc/kmsg", ws+"/kmsg/config"); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(ws+"/lease/config", []byte("[core]\n\thooksPath = h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(ws + "/lease/config")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	leased := true
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_SETLEASE, syscall.F_WRLCK); e != 0 {
		leased = false
		t.Logf("no lease: %v", e)
	}
	deriveReturns(t, ws, func() {
		if leased {
			syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_SETLEASE, syscall.F_UNLCK)
		}
	}, ws+"/kmsg/hooks/pre-commit", ws+"/env/hooks/pre-commit", ws+"/lease/hooks/pre-commit")
}
