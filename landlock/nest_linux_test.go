package landlock

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// TestTrampolineNests runs this test binary as the trampoline: the
// command it starts is in a Landlock domain of its own, so it cannot
// signal the test process (outside that domain), which the same command
// started directly can.
func TestTrampolineNests(t *testing.T) {
	if !nestAvailable {
		t.Skip("built without cgo: no trampoline")
	}
	if os.Getenv("GUARDRUN_NEST_TEST_CHILD") != "" {
		t.Fatal("the trampoline did not run: the test binary started instead")
	}
	if abi, err := ABI(); err != nil || abi < 6 {
		if os.Getenv("GUARDRUN_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("Landlock ABI 6 needed (GUARDRUN_REQUIRE_SANDBOX=1): %d, %v", abi, err)
		}
		t.Skipf("Landlock ABI 6 needed for scoped signals: %d, %v", abi, err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := "kill -0 " + strconv.Itoa(os.Getpid()) + " && echo reached"
	out, err := exec.Command("/bin/sh", "-c", script).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "reached") {
		t.Fatalf("direct: the command cannot signal the test process (%v): %s", err, out)
	}
	child := append(os.Environ(), "GUARDRUN_NEST_TEST_CHILD=1")
	cmd := exec.Command(self, nestArg, "/bin/sh", "sh", "-c", script)
	cmd.Env = child
	out, err = cmd.CombinedOutput()
	if strings.Contains(string(out), "reached") || err == nil || !strings.Contains(string(out), "not permitted") {
		t.Fatalf("through the trampoline the command signalled the test process (%v): %s", err, out)
	}
	// A command that cannot be run: 127, never the test binary's own
	// main.
	cmd = exec.Command(self, nestArg, "/nonexistent/guardrun-test", "x")
	cmd.Env = child
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 127 || !strings.Contains(string(out), "/nonexistent/guardrun-test") {
		t.Fatalf("missing command: %v, %s", err, out)
	}
}

// TestGoOffMain: the function goOffMain runs is never on the main thread
// (whose id is the pid, what kill PPID aims at).
func TestGoOffMain(t *testing.T) {
	for range 50 {
		tid := make(chan int)
		goOffMain(func() { tid <- unix.Gettid() })
		if <-tid == unix.Getpid() {
			t.Fatal("ran on the main thread")
		}
	}
}

// TestTrampolineOrphanedOutsideDomain: the trampoline started outside
// any Landlock domain (by anyone: nothing stops a user or a command under
// another sandbox from running guardrun with the marker), whose parent
// then dies, must not kill(-1): without the scope that reaches every
// process of the user. Contained: a pid namespace of bwrap's, whose init
// is root, and an unprivileged user whose other process there (a sleep)
// must survive the keeper's parent-death path; the keeper's own child
// still ends with it.
func TestTrampolineOrphanedOutsideDomain(t *testing.T) {
	if !nestAvailable {
		t.Skip("built without cgo: no trampoline")
	}
	if os.Getenv("GUARDRUN_NEST_TEST_CHILD") != "" {
		t.Fatal("the trampoline did not run: the test binary started instead")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: an init of another user than the keeper's")
	}
	for _, tool := range []string{"bwrap", "runuser"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	if out, err := exec.Command("bwrap", "--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "true").CombinedOutput(); err != nil {
		if os.Getenv("GUARDRUN_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("bwrap cannot make a pid namespace (GUARDRUN_REQUIRE_SANDBOX=1): %v\n%s", err, out)
		}
		t.Skipf("bwrap cannot make a pid namespace: %v\n%s", err, out)
	}
	const user = "guardrun-test"
	testenv.User(t, user)
	// The user must be able to run this binary.
	dir, err := os.MkdirTemp("/var/tmp", "guardrun-nest-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := dir + "/nest.test"
	if b, err := os.ReadFile(self); err != nil || os.WriteFile(bin, b, 0o755) != nil {
		t.Fatalf("copy the test binary: %v", err)
	}
	// The user's sleep 7.77, then the keeper (its child sleep 8.88)
	// started by a shell that exits at once.
	script := `runuser -u ` + user + ` -- env GUARDRUN_NEST_TEST_CHILD=1 sh -c 'sleep 7.77 & sh -c "\"$0\" \"$1\" /bin/sleep sleep 8.88 & sleep 0.3; exit 0" "$0" "$1"; exit 0' "$0" "$1"
sleep 1.5
ps -eo user,args | grep "^` + user[:7] + `"
echo listed`
	out, err := exec.Command("bwrap", "--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "--die-with-parent",
		"--", "/bin/sh", "-c", script, bin, nestArg).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "listed") {
		t.Fatalf("bwrap with a pid namespace: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "sleep 7.77") {
		t.Errorf("the orphaned keeper, outside any domain, killed another process of its user:\n%s", out)
	}
	if strings.Contains(string(out), "sleep 8.88") {
		t.Errorf("the orphaned keeper's child outlived it:\n%s", out)
	}
}
