package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestReplace: a new file and a replaced one get the content and mode
// asked for, and no temporary file stays.
func TestReplace(t *testing.T) {
	for _, durable := range []bool{false, true} {
		dir := t.TempDir()
		p := filepath.Join(dir, "store.json")
		if err := Replace(p, []byte("one\n"), Options{Durable: durable}); err != nil {
			t.Fatal(err)
		}
		if err := Replace(p, []byte("two\n"), Options{Perm: 0o640, Durable: durable}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil || string(b) != "two\n" {
			t.Fatalf("durable=%v: read %q, %v", durable, b, err)
		}
		fi, _ := os.Stat(p)
		if fi.Mode().Perm() != 0o640 {
			t.Errorf("durable=%v: mode %v, want 0640", durable, fi.Mode().Perm())
		}
		if l := leftovers(t, dir); len(l) > 0 {
			t.Errorf("durable=%v: temporary files left: %q", durable, l)
		}
	}
}

// TestReplaceFailsWhole: a rename that cannot happen (a directory at
// path) leaves the directory as it was and no temporary file.
func TestReplaceFailsWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "taken")
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "inside"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Replace(p, []byte("new"), Options{Durable: true}); err == nil {
		t.Fatal("replacing a non-empty directory succeeded")
	}
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		t.Errorf("the directory is gone: %v", err)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %q", l)
	}
	if err := Replace(filepath.Join(dir, "missing", "f"), []byte("x"), Options{}); err == nil {
		t.Error("a file in a missing directory was written")
	}
}
