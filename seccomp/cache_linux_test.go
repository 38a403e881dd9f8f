//go:build cgo && linux

package seccomp

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/guardrun/guardrun/sandbox"
)

func TestBuildCached(t *testing.T) {
	pol := sandbox.SeccompPolicy{}
	want := mustBPF(t, pol)
	dir := filepath.Join(t.TempDir(), "cache")

	f, err := BuildCached(pol, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := f.BPF(); !bytes.Equal(got, want) {
		t.Fatal("a built program differs from Build's")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "seccomp-*.bpf"))
	if len(files) != 1 {
		t.Fatalf("cache holds %v, want one program", files)
	}
	path := files[0]
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cached program: %v, mode %v; want 0600", err, fi.Mode())
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("cache directory: %v, mode %v; want 0700", err, fi.Mode())
	}
	other, err := BuildCached(sandbox.SeccompPolicy{AllowNetwork: true}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := other.BPF(); bytes.Equal(got, want) {
		t.Error("the network policy got the other policy's program")
	}

	// What is read back is what was written.
	swapped := append([]byte(nil), want...)
	copy(swapped, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	if err := os.WriteFile(path, swapped, 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ = BuildCached(pol, dir)
	if got, _ := f.BPF(); !bytes.Equal(got, swapped) {
		t.Error("the cached program was not used")
	}

	// Anything else is rebuilt and replaced.
	for name, spoil := range map[string]func(){
		"writable by others": func() { os.WriteFile(path, swapped, 0o600); os.Chmod(path, 0o666) },
		"torn":               func() { os.WriteFile(path, swapped[:len(swapped)-3], 0o600) },
		"empty":              func() { os.WriteFile(path, nil, 0o600) },
		"a symbolic link": func() {
			target := filepath.Join(t.TempDir(), "elsewhere")
			os.WriteFile(target, swapped, 0o600)
			os.Remove(path)
			os.Symlink(target, path)
		},
	} {
		spoil()
		f, err := BuildCached(pol, dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, _ := f.BPF(); !bytes.Equal(got, want) {
			t.Errorf("%s: the cached program was used", name)
		}
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: not replaced: %v %v", name, err, fi.Mode())
		}
	}
}

func mustBPF(t *testing.T, p sandbox.SeccompPolicy) []byte {
	t.Helper()
	f, err := Build(p)
	if err != nil {
		t.Skipf("no seccomp filter here: %v", err)
	}
	b, err := f.BPF()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
