package sockdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeAttacks: what an environment can name as the base
// ($XDG_RUNTIME_DIR, $TMPDIR). A base that does not exist, or is
// longer than a path may be, is an error (nothing is made elsewhere
// silently); a deep base falls back to a fresh private directory in
// /tmp, never one that already exists.
func TestMakeAttacks(t *testing.T) {
	short, deep := deepBase(t)
	for _, base := range []string{filepath.Join(short, "missing"), "/" + strings.Repeat("x/", 3000)} {
		if dir, err := Make(base, "sockdir-test-", "control.sock"); err == nil {
			os.Remove(dir)
			t.Errorf("Make(%.40q...) = %q; want an error", base, dir)
		}
	}
	seen := map[string]bool{}
	for range 20 {
		dir, err := Make(deep, "sockdir-test-", "control.sock")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(dir)
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || seen[dir] || !strings.HasPrefix(dir, "/tmp/") {
			t.Fatalf("Make(deep) = %q (%v, %v): want a fresh private directory in /tmp", dir, fi, err)
		}
		seen[dir] = true
	}
}
