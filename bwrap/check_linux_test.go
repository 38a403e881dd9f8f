package bwrap

import (
	"errors"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		stderr string
		want   []string
	}{
		{"bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.", []string{"user namespaces", "kernel.unprivileged_userns_clone=1", "user.max_user_namespaces", "kernel.apparmor_restrict_unprivileged_userns=0"}},
		{"bwrap: Creating new namespace failed: No space left on device", []string{"user.max_user_namespaces"}},
		{"bwrap: setting up uid map: Permission denied", []string{"AppArmor"}},
		{"bwrap: Unknown option --disable-userns", []string{"too old", "0.8"}},
		{"bwrap: Can't mount proc on /newroot/proc: Operation not permitted", []string{"/proc", "container"}},
		{"bwrap: something else", []string{"does not work here", "something else"}},
	} {
		err := explain(tc.stderr, errors.New("exit status 1"))
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("explain(%q) = %q, want it to mention %q", tc.stderr, err, w)
			}
		}
	}
}

func TestCheck(t *testing.T) {
	err := Check()
	if err != nil {
		if testenv.Required() {
			t.Errorf("bwrap unavailable (GUARDRUN_REQUIRE_SANDBOX=1): %v", err)
		}
		if _, lerr := lookBwrap(); lerr == nil && !strings.Contains(err.Error(), "bwrap said") && !strings.Contains(err.Error(), "does not work") {
			t.Errorf("with bwrap installed, the error should quote it: %v", err)
		}
	}
	if again := Check(); (again == nil) != (err == nil) {
		t.Error("Check is not cached")
	}
}
