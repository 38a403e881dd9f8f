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
