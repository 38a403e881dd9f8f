// Package testenv is for tests that need something the machine may lack:
// a program, a pty, a privilege, the OS sandbox. Where it is missing such
// a test skips, naming what is missing, except under
// GUARDRUN_REQUIRE_SANDBOX=1 (CI sets it), where it fails: a security or
// prompt check that did not run must not pass.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Required reports whether GUARDRUN_REQUIRE_SANDBOX=1 is set: missing
// prerequisites are failures, not skips.
func Required() bool { return os.Getenv("GUARDRUN_REQUIRE_SANDBOX") == "1" }

// Missing ends t because what the message names is missing: a skip, or a
// failure under GUARDRUN_REQUIRE_SANDBOX=1.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("%s (GUARDRUN_REQUIRE_SANDBOX=1: the test cannot be skipped)", msg)
	}
	t.Skipf("%s (skipped; GUARDRUN_REQUIRE_SANDBOX=1 makes this a failure)", msg)
}

// LookPath returns the path of program, or ends t through Missing.
func LookPath(t testing.TB, program string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	if err != nil {
		Missing(t, "no %s: %v", program, err)
	}
	return p
}

// User makes sure the local account name exists (useradd -m when it does
// not), for tests that run guardrun as an unprivileged user through
// runuser; it fails t when the account cannot be made.
func User(t testing.TB, name string) {
	t.Helper()
	if exec.Command("id", "-u", name).Run() == nil {
		return
	}
	if out, err := exec.Command("useradd", "-m", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v\n%s", name, err, out)
	}
}

// SignalledStatus waits, up to 10 s, for the status of a command that was
// just sent a signal (wait gives it) and reports, as run what, one that
// is not want, or a command the signal did not end (which it then ends
// with kill before waiting again).
func SignalledStatus(t testing.TB, what string, want int, wait func() (int, error), kill func()) {
	t.Helper()
	done := make(chan int, 1)
	go func() {
		st, err := wait()
		if err != nil {
			t.Error(err)
		}
		done <- st
	}()
	select {
	case st := <-done:
		if st != want {
			t.Errorf("%s: status %d, want %d", what, st, want)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("%s: the signal did not end the command", what)
		kill()
		<-done
	}
}
