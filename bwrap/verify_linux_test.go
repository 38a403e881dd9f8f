package bwrap

import (
	"testing"

	"github.com/guardrun/guardrun/sandbox"
)

// TestPrivateTmp: what a verified command may always write in /tmp is
// the sandbox's own tmpfs there, never a zone bound inside it.
func TestPrivateTmp(t *testing.T) {
	p := &sandbox.Profile{PrivateTmp: true, ReadWrite: []string{"/tmp/work"}, ReadOnly: []string{"/usr", "/tmp/ro"}}
	for path, want := range map[string]bool{
		"/tmp":          true,
		"/tmp/x":        true,
		"/tmp/workx":    true,
		"/tmp/work":     false,
		"/tmp/work/a/b": false,
		"/tmp/ro/x":     false,
		"/var/tmp/x":    false,
		"/usr/bin":      false,
	} {
		if got := privateTmp(p, path); got != want {
			t.Errorf("privateTmp(%q) = %v, want %v", path, got, want)
		}
	}
	if privateTmp(&sandbox.Profile{}, "/tmp/x") {
		t.Error("a profile without a private /tmp has one")
	}
}
