//go:build !(cgo && linux)

package seccomp

import (
	"strings"
	"testing"

	"github.com/guardrun/guardrun/sandbox"
)

func TestStub(t *testing.T) {
	if _, err := Build(sandbox.SeccompPolicy{}); err == nil || !strings.Contains(err.Error(), "requires linux and cgo") {
		t.Errorf("Build: %v, want the requires-linux-and-cgo error", err)
	}
	if err := Supported(); err == nil {
		t.Error("Supported: nil, want an error")
	}
	var f Filter
	if _, err := f.File(); err == nil {
		t.Error("File: nil error")
	}
	if _, err := f.BPF(); err == nil {
		t.Error("BPF of a zero Filter: nil error")
	}
}
