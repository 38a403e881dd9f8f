//go:build cgo && linux

package seccomp

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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

// A program with calls routed to user space is cached under its own
// name, and a hit gives the same program and call numbers as a build.
func TestBuildRoutesCachedNames(t *testing.T) {
	pol := sandbox.SeccompPolicy{}
	dir := filepath.Join(t.TempDir(), "cache")
	names := []string{"chmod", "fchmodat2"}
	plain, err := BuildCached(pol, dir)
	if err != nil {
		t.Fatal(err)
	}
	plainProg, _ := plain.BPF()
	var progs [][]byte
	var maps []map[int32]string
	for range 2 {
		f, nrs, err := BuildRoutesCached(pol, Routes(names...), dir)
		if err != nil {
			t.Fatal(err)
		}
		prog, _ := f.BPF()
		progs, maps = append(progs, prog), append(maps, nrs)
	}
	if !bytes.Equal(progs[0], progs[1]) {
		t.Fatal("the cached program differs from the built one")
	}
	if bytes.Equal(progs[0], plainProg) {
		t.Fatal("the program routing calls to user space was served from the plain program's cache entry")
	}
	if len(maps[0]) != 2 || len(maps[1]) != 2 {
		t.Fatalf("call numbers on a hit: %v, on a build: %v", maps[1], maps[0])
	}
	for nr, name := range maps[0] {
		if maps[1][nr] != name {
			t.Fatalf("call numbers on a hit: %v, on a build: %v", maps[1], maps[0])
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "seccomp-*.bpf"))
	if len(files) != 2 {
		t.Fatalf("cache holds %v, want two programs", files)
	}
}

// TestAppendRulesCoversEveryField: the cache key must change with every
// field of every rule, or a changed rule could be served a stale program.
func TestAppendRulesCoversEveryField(t *testing.T) {
	fields := func(v any) []string {
		var out []string
		ty := reflect.TypeOf(v)
		for i := range ty.NumField() {
			out = append(out, ty.Field(i).Name)
		}
		return out
	}
	if got, want := fields(rule{}), []string{"name", "errno", "cond", "any", "with", "nr"}; !slices.Equal(got, want) {
		t.Fatalf("rule has fields %v; appendRules writes %v: write the new ones into the key", got, want)
	}
	if got, want := fields(match{}), []string{"arg", "op", "mask", "val"}; !slices.Equal(got, want) {
		t.Fatalf("match has fields %v; appendRules writes %v: write the new ones into the key", got, want)
	}
	m := match{arg: 1, op: opMaskedEq, mask: 0xff, val: 2}
	base := []rule{{name: "a", errno: 1, cond: "c", any: []match{m}, with: []match{m}, nr: 3}}
	changes := []func(r *rule){
		func(r *rule) { r.name = "b" },
		func(r *rule) { r.errno = 2 },
		func(r *rule) { r.cond = "d" },
		func(r *rule) { r.nr = 4 },
		func(r *rule) { r.any = nil },
		func(r *rule) { r.with = nil },
		func(r *rule) { r.any = []match{m, m} },
		func(r *rule) { r.any[0].arg = 2 },
		func(r *rule) { r.any[0].op = opNotEqual },
		func(r *rule) { r.any[0].mask = 0xf },
		func(r *rule) { r.any[0].val = 3 },
		func(r *rule) { r.with[0].val = 3 },
		// A string's end must not run into the next field.
		func(r *rule) { r.name, r.cond = "a 1 ", "" },
	}
	seen := map[string]int{string(appendRules(nil, base)): -1}
	for i, ch := range changes {
		r := base[0]
		r.any, r.with = slices.Clone(r.any), slices.Clone(r.with)
		ch(&r)
		k := string(appendRules(nil, []rule{r}))
		if j, dup := seen[k]; dup {
			t.Errorf("change %d gives the key of change %d: %q", i, j, k)
		}
		seen[k] = i
	}
	// Rule lists: where one rule ends is part of the key.
	if a, b := appendRules(nil, append(slices.Clone(base), base...)), appendRules(nil, base); string(a) == string(b) {
		t.Error("two rules and one give the same key")
	}
}
