package rules

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fullConfig sets every list a config has, so that the clone test sees
// each one.
const fullConfig = `mode: interactive
shell:
  program: /bin/bash
  rules:
    - {pattern: pytest, approval: false, sandbox_paths: [workspace], code_in: [workspace]}
    - {pattern: "git status", approval: false}
  examples:
    allow: ["git status -s"]
    ask: ["git commit -m x"]
    block: ["rm -rf /"]
sandbox:
  paths:
    workspace: {root: ./ws, mode: rw, suffixes: [.txt]}
  system_read: [/usr, /etc]
  deny: [~/.ssh, .env]
  protect: [Justfile]
  unix_sockets: [/run/x.sock]
  env_deny: ["*_TOKEN"]
  network: proxy
  domains:
    allow: [github.com]
    deny: ["*.pastebin.com"]
    loopback: [8081]
  landlock_accept: [deny_create]
`

// TestDecodedConfigsAreCopies: a config parsed again from the same
// bytes is a copy of the first: changing one (as --mode and Tighten's
// callers do) leaves the next load alone, and no list is shared.
func TestDecodedConfigsAreCopies(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir, Home: dir, StateDir: filepath.Join(dir, "state")}
	file := filepath.Join(dir, "cfg.yaml")
	first, err := Parse(file, []byte(fullConfig), dir, env)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse(file, []byte(fullConfig), dir, env)
	if err != nil {
		t.Fatal(err)
	}
	first.Mode = ModeStrict
	first.Sandbox.Zones[0].Root = "/"
	first.Shell.Rules[0].Description = "changed"
	first.Sandbox.Deny = append(first.Sandbox.Deny[:0], "/nothing")
	again, err := Parse(file, []byte(fullConfig), dir, env)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, want) || again.Mode != ModeInteractive || again.Sandbox.Zones[0].Root != filepath.Join(dir, "ws") {
		t.Fatalf("a change to one parse reached the next:\n%+v\nwant\n%+v", again, want)
	}
	// Other bytes, directory or environment: decoded anew.
	other, err := Parse(file, []byte(strings.Replace(fullConfig, "./ws", "./other", 1)), dir, env)
	if err != nil {
		t.Fatal(err)
	}
	if other.Sandbox.Zones[0].Root != filepath.Join(dir, "other") {
		t.Errorf("new bytes gave root %s", other.Sandbox.Zones[0].Root)
	}
	env2 := env
	env2.Home = filepath.Join(dir, "home2")
	if h, err := Parse(file, []byte(fullConfig), dir, env2); err != nil || h.Sandbox.Deny[0] != filepath.Join(env2.Home, ".ssh") {
		t.Errorf("another home: deny %v, %v", h.Sandbox.Deny, err)
	}

	// Every list of a config (Tightening after Tighten) is set here and
	// not shared by the clone.
	proj, err := Parse(filepath.Join(dir, "proj.yaml"), []byte("shell:\n  rules:\n    - {pattern: make, allowed: false, sandbox_paths: [workspace], code_in: [workspace]}\nsandbox:\n  paths:\n    workspace: {root: ./ws, mode: rw}\n"), dir, env)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := Tighten(want, proj)
	notShared(t, "Config", reflect.ValueOf(*full), reflect.ValueOf(*full.clone()))
}

// notShared fails for every slice under a and b (the same type) that is
// empty in a (the test's config misses it) or has the same backing
// array in both.
func notShared(t *testing.T, path string, a, b reflect.Value) {
	t.Helper()
	switch a.Kind() {
	case reflect.Struct:
		if a.Type() == reflect.TypeOf(netip.Prefix{}) {
			return // a value
		}
		for i := range a.NumField() {
			notShared(t, path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
		}
	case reflect.Slice:
		if a.Len() == 0 {
			t.Errorf("%s is empty in the test's config: set it, so that clone is checked for it", path)
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s is shared by a config and its clone", path)
		}
		notShared(t, path+"[0]", a.Index(0), b.Index(0))
	case reflect.Map, reflect.Pointer, reflect.Interface, reflect.Chan, reflect.Func:
		t.Errorf("%s: clone does not know %s", path, a.Kind())
	}
}

// TestDecodedMemoryIsBounded: a project file within every limit on a
// file (128 KiB, aliases expanding to at most 4 MiB) decodes to tens of
// megabytes when it lies in a deep directory, since each of its items
// carries the file's name. A long-lived guardrun that loads a few of
// them (from other directories, or rewritten between commands) keeps
// none of that: what decoded remembers stays within maxDecodedBytes.
func TestDecodedMemoryIsBounded(t *testing.T) {
	// Parse looks at no file: the directory need not exist, and may be
	// as deep as a path can be.
	dir := filepath.Join(t.TempDir(), strings.Repeat("d/", 1900))
	var b strings.Builder
	b.WriteString("shell:\n  examples:\n    allow: &l [&a a")
	for range maxLocated/2 - 1 {
		b.WriteString(",*a")
	}
	b.WriteString("]\n    ask: *l\n")
	data := []byte(b.String())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const configs = 4
	big := int64(0)
	for i := range configs {
		env := Env{Cwd: filepath.Join(dir, fmt.Sprint(i)), Home: dir, StateDir: dir}
		c, err := Parse(filepath.Join(dir, ProjectFileForTest), data, dir, env)
		if err != nil {
			t.Fatal(err)
		}
		big = configBytes(c)
	}
	if big <= 2*maxDecodedBytes {
		t.Fatalf("the test's config is %d bytes: make it larger than the memo's bound", big)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	kept := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	decoded.Lock()
	held := decoded.bytes
	decoded.Unlock()
	if kept > 2*maxDecodedBytes || held > maxDecodedBytes {
		t.Errorf("after %d configs of %d MiB each, the heap grew by %d MiB (decoded holds %d MiB); want at most %d MiB",
			configs, big>>20, kept>>20, held>>20, 2*maxDecodedBytes>>20)
	}
}

// ProjectFileForTest is a project file's name (config.ProjectFile).
const ProjectFileForTest = ".guardrun.yaml"

// TestDefaultIsRemembered: the embedded default, decoded for every new
// working directory, fits the memo many times over.
func TestDefaultIsRemembered(t *testing.T) {
	dir := t.TempDir()
	c, err := LoadDefault(Env{Cwd: filepath.Join(dir, "ws"), Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	if n := configBytes(c); n > maxDecodedBytes/maxDecoded {
		t.Errorf("the embedded default holds %d bytes, more than a %d-th of the memo's %d", n, maxDecoded, maxDecodedBytes)
	} else {
		t.Logf("the embedded default holds %d bytes", n)
	}
}

// TestPatternMemoryIsBounded: the words of rule patterns are remembered
// for the process's life (parsed.words); project files with long
// patterns, each rewritten between commands of a long-lived guardrun,
// must not make it keep them all.
func TestPatternMemoryIsBounded(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir, Home: dir, StateDir: dir}
	long := strings.Repeat("a", 32<<10)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const configs = 600
	for i := range configs {
		data := fmt.Appendf(nil, "shell:\n  rules:\n    - {pattern: 'echo %d%s', allowed: false}\n", i, long)
		if _, err := Parse(filepath.Join(dir, ProjectFileForTest), data, dir, env); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	// The memo of decoded configs keeps up to maxDecodedBytes of them.
	if kept := int64(after.HeapAlloc) - int64(before.HeapAlloc); kept > maxDecodedBytes+4<<20 {
		t.Errorf("after %d configs with a pattern of %d KiB each, the heap grew by %d MiB; want at most %d MiB",
			configs, len(long)>>10, kept>>20, (maxDecodedBytes+4<<20)>>20)
	}
}

// TestPatternWordsAreCopies: the words of a pattern are remembered for
// the process (parsed.words); a config's rules get their own copy, so
// that a change to one config's words (none is made today) cannot reach
// another config with the same pattern, decoded later from other bytes,
// nor two rules of one config made from one anchor.
func TestPatternWordsAreCopies(t *testing.T) {
	dir := t.TempDir()
	env := Env{Cwd: dir, Home: dir, StateDir: dir}
	const pat = "frobnicate --all *"
	first, err := Parse(filepath.Join(dir, "a.yaml"), []byte("shell:\n  rules:\n    - &r {pattern: '"+pat+"', allowed: false}\n    - *r\n"), dir, env)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(first.Shell.Rules[0].Words)
	first.Shell.Rules[0].Words[0] = "changed"
	if got := first.Shell.Rules[1].Words; !slices.Equal(got, want) {
		t.Errorf("two rules from one anchor share their words: %q", got)
	}
	later, err := Parse(filepath.Join(dir, "b.yaml"), []byte("shell:\n  rules:\n    - {pattern: '"+pat+"', allowed: false}\n"), dir, env)
	if err != nil {
		t.Fatal(err)
	}
	if got := later.Shell.Rules[0].Words; !slices.Equal(got, want) {
		t.Errorf("a change to one config's words reached a later one: %q, want %q", got, want)
	}
}

// TestDecodedConcurrently: many loads at once (a server's concurrent
// requests) of more distinct configs than the memo keeps, each changing
// what it got, each get their own file's config.
func TestDecodedConcurrently(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				n := (g*7 + i) % (2 * maxDecoded)
				sub := filepath.Join(dir, fmt.Sprint(n))
				env := Env{Cwd: sub, Home: dir, StateDir: dir}
				data := fmt.Appendf(nil, "mode: strict\nshell:\n  rules:\n    - {pattern: 'tool%d *', allowed: false}\nsandbox:\n  paths:\n    w: {root: ., mode: rw}\n", n)
				c, err := Parse(filepath.Join(sub, ProjectFileForTest), data, sub, env)
				if err != nil {
					t.Error(err)
					return
				}
				if c.Mode != ModeStrict || c.Sandbox.Zones[0].Root != sub || len(c.Shell.Rules) != 1 || c.Shell.Rules[0].Words[0] != fmt.Sprint("tool", n) {
					t.Errorf("config %d: mode %s, root %s, rules %+v", n, c.Mode, c.Sandbox.Zones[0].Root, c.Shell.Rules)
					return
				}
				c.Mode = ModeApproveAll
				c.Sandbox.Zones[0].Root = "/"
				c.Shell.Rules[0].Words[0] = "*"
				c.Shell.Rules = append(c.Shell.Rules[:0], Rule{Pattern: "*"})
			}
		}()
	}
	wg.Wait()
	decoded.Lock()
	defer decoded.Unlock()
	sum := int64(0)
	for _, e := range decoded.m {
		sum += e.bytes
	}
	if len(decoded.m) > maxDecoded || decoded.bytes > maxDecodedBytes || sum != decoded.bytes {
		t.Errorf("decoded holds %d configs, %d bytes, counted as %d", len(decoded.m), sum, decoded.bytes)
	}
}
