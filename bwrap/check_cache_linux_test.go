package bwrap

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

func TestCheckCached(t *testing.T) {
	if err := Check(); err != nil {
		testenv.Missing(t, "no usable bubblewrap: %v", err)
	}
	path := filepath.Join(t.TempDir(), "state", "sandbox-ok")
	failing := errors.New("seccomp unavailable")
	if err := CheckCached(path, func() error { return failing }); !errors.Is(err, failing) {
		t.Fatalf("a failing rest of the check passed: %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("a failed check was remembered")
	}
	if err := CheckCached(path, nil); err != nil {
		t.Fatal(err)
	}
	key, _ := cacheKey()
	if b, err := os.ReadFile(path); err != nil || string(b) != key {
		t.Fatalf("remembered %q, want %q (%v)", b, key, err)
	}
	// A remembered success answers without running the rest again.
	if err := CheckCached(path, func() error { return failing }); err != nil {
		t.Fatalf("remembered success not used: %v", err)
	}
	// A different binary, boot or user is a miss.
	os.WriteFile(path, []byte("bwrap-ok v1 /other ino=1\n"), 0o600)
	if err := CheckCached(path, func() error { return failing }); !errors.Is(err, failing) {
		t.Fatalf("a stale memory was trusted: %v", err)
	}
}
