package landlock

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
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
