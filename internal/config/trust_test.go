package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestTrustRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := OpenTrustStore(filepath.Join(dir, "state", "guardrun"))
	file := filepath.Join(dir, "proj", ".guardrun.yaml")
	content := []byte("mode: interactive\n")

	if ok, err := s.Trusted(file, content); err != nil || ok {
		t.Fatalf("before Trust: Trusted = %v, %v; want false, nil", ok, err)
	}
	if list, err := s.List(); err != nil || len(list) != 0 {
		t.Fatalf("empty store: List = %v, %v", list, err)
	}
	if _, err := os.Stat(s.Path()); !os.IsNotExist(err) {
		t.Fatalf("reading an absent store created it: %v", err)
	}
	if err := s.Trust(file, content); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Trusted(file, content); err != nil || !ok {
		t.Fatalf("after Trust: Trusted = %v, %v; want true, nil", ok, err)
	}
	// Another path with the same content is not trusted: the store is by path.
	if ok, _ := s.Trusted(filepath.Join(dir, "other", ".guardrun.yaml"), content); ok {
		t.Fatal("a different path with the same content is trusted")
	}
	// A reopened store sees the entry.
	list, err := OpenTrustStore(filepath.Dir(s.Path())).List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Path != file || list[0].SHA256 != TrustHash(content) || list[0].Trusted.IsZero() {
		t.Fatalf("List = %+v", list)
	}
	found, err := s.Revoke(file)
	if err != nil || !found {
		t.Fatalf("Revoke = %v, %v; want true, nil", found, err)
	}
	if ok, _ := s.Trusted(file, content); ok {
		t.Fatal("still trusted after Revoke")
	}
	if found, err := s.Revoke(file); err != nil || found {
		t.Fatalf("second Revoke = %v, %v; want false, nil", found, err)
	}
	if list, err := s.List(); err != nil || len(list) != 0 {
		t.Fatalf("after Revoke: List = %v, %v", list, err)
	}
}

func TestTrustHashChangeUntrusts(t *testing.T) {
	s := OpenTrustStore(t.TempDir())
	file := "/p/.guardrun.yaml"
	content := []byte("shell:\n  default: {allowed: true, approval: false}\n")
	if err := s.Trust(file, content); err != nil {
		t.Fatal(err)
	}
	for i := range content {
		changed := append([]byte(nil), content...)
		changed[i] ^= 1
		if ok, err := s.Trusted(file, changed); err != nil || ok {
			t.Fatalf("byte %d changed: Trusted = %v, %v; want false, nil", i, ok, err)
		}
	}
	if ok, _ := s.Trusted(file, append(append([]byte(nil), content...), '\n')); ok {
		t.Fatal("appended newline: still trusted")
	}
	if ok, _ := s.Trusted(file, content[:len(content)-1]); ok {
		t.Fatal("truncated: still trusted")
	}
	if ok, _ := s.Trusted(file, content); !ok {
		t.Fatal("the original content is no longer trusted")
	}
}

func TestTrustStoreDamagedFailsClosed(t *testing.T) {
	for name, data := range map[string]string{
		"garbage":   "not json",
		"truncated": `[{"path": "/p/.guardrun.yaml", "sha256": "`,
		"object":    `{"path": "/p/.guardrun.yaml"}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := OpenTrustStore(dir)
			if err := os.WriteFile(s.Path(), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			content := []byte("x: 1\n")
			if ok, err := s.Trusted("/p/.guardrun.yaml", content); err == nil || ok {
				t.Fatalf("Trusted = %v, %v; want false and an error", ok, err)
			}
			if _, err := s.List(); err == nil {
				t.Fatal("List of a damaged store: no error")
			}
			// Trust and Revoke refuse too rather than overwrite what they cannot read.
			if err := s.Trust("/p/.guardrun.yaml", content); err == nil {
				t.Fatal("Trust over a damaged store: no error")
			}
			if _, err := s.Revoke("/p/.guardrun.yaml"); err == nil {
				t.Fatal("Revoke on a damaged store: no error")
			}
			got, _ := os.ReadFile(s.Path())
			if string(got) != data {
				t.Fatalf("damaged store was rewritten: %q", got)
			}
		})
	}
}

func TestTrustStoreMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "guardrun")
	s := OpenTrustStore(dir)
	if err := s.Trust("/p/.guardrun.yaml", []byte("a")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Fatalf("store mode %o, want 600", m)
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m := di.Mode().Perm(); m&0o077 != 0 {
		t.Fatalf("state dir mode %o is open to others", m)
	}
	// Rewriting keeps the mode, and leaves no temporary files behind.
	if err := s.Trust("/q/.guardrun.yaml", []byte("b")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(s.Path()); fi.Mode().Perm() != 0o600 {
		t.Fatalf("after rewrite: mode %o", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "trusted.json" && e.Name() != "trusted.json.lock" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestConcurrentTrust(t *testing.T) {
	dir := t.TempDir()
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// Each goroutine opens its own Store, as separate processes would.
			s := OpenTrustStore(dir)
			errs <- s.Trust(fmt.Sprintf("/p%02d/.guardrun.yaml", i), []byte(fmt.Sprint(i)))
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := OpenTrustStore(dir)
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n {
		t.Fatalf("%d entries after %d concurrent Trust calls, want %d", len(list), n, n)
	}
	for i := 0; i < n; i++ {
		if ok, err := s.Trusted(fmt.Sprintf("/p%02d/.guardrun.yaml", i), []byte(fmt.Sprint(i))); err != nil || !ok {
			t.Errorf("entry %d: Trusted = %v, %v", i, ok, err)
		}
	}
}
