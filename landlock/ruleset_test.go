package landlock

import (
	"errors"
	"fmt"
	"github.com/google/go-cmp/cmp"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/guardrun/guardrun/rules"
	"github.com/guardrun/guardrun/sandbox"
)

// fakeFS is a host file system for Build: path -> 'd' (directory), 'f'
// (file) or 'l' (symlink). Parents of every entry exist as directories.
// fakeFS maps paths to kinds: 'f' an empty file, 'F' a file of
// MaxWatchBytes, 'd' a directory, 'l' a symbolic link.
type fakeFS map[string]byte

type fakeInfo struct {
	name string
	kind byte
}

func (i fakeInfo) Name() string { return i.name }
func (i fakeInfo) Size() int64 {
	if i.kind == 'F' {
		return MaxWatchBytes
	}
	return 0
}
func (i fakeInfo) Mode() fs.FileMode {
	switch i.kind {
	case 'd':
		return fs.ModeDir | 0o755
	case 'l':
		return fs.ModeSymlink | 0o777
	}
	return 0o644
}
func (i fakeInfo) ModTime() time.Time { return time.Time{} }
func (i fakeInfo) IsDir() bool        { return i.kind == 'd' }
func (i fakeInfo) Sys() any           { return nil }

func (f fakeFS) kind(p string) (byte, bool) {
	if p == "/" {
		return 'd', true
	}
	if k, ok := f[p]; ok {
		return k, true
	}
	for q := range f {
		if strings.HasPrefix(q, p+"/") {
			return 'd', true
		}
	}
	return 0, false
}

func (f fakeFS) lstat(p string) (os.FileInfo, error) {
	k, ok := f.kind(p)
	if !ok {
		return nil, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
	}
	return fakeInfo{path.Base(p), k}, nil
}

func (f fakeFS) readDir(p string) ([]os.DirEntry, error) {
	names := map[string]bool{}
	for q := range f {
		if rest, ok := strings.CutPrefix(q, p+"/"); ok {
			names[strings.SplitN(rest, "/", 2)[0]] = true
		}
	}
	var out []os.DirEntry
	for n := range names {
		k, _ := f.kind(p + "/" + n)
		out = append(out, fs.FileInfoToDirEntry(fakeInfo{n, k}))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (f fakeFS) opts(abi int, accept ...string) Options {
	return Options{ABI: abi, Accept: accept, Lstat: f.lstat, ReadDir: f.readDir}
}

// world is a small host: /usr, /etc with a secret, a workspace.
var world = fakeFS{
	"/usr/bin/sh":     'f',
	"/etc/passwd":     'f',
	"/etc/shadow":     'f',
	"/w/src/main.c":   'f',
	"/w/Makefile":     'f',
	"/w/.env":         'f',
	"/w/deep/a/.env":  'f',
	"/w/deep/a/x.c":   'f',
	"/w/deep/b/y.c":   'f',
	"/w/vendor/lib.c": 'f',
	"/w/cfg.yaml":     'f',
	"/w/link":         'l',
	"/clean/file":     'f',
	"/dev/null":       'f',
	"/proc/self":      'd',
}

func profile(mod func(p *sandbox.Profile)) *sandbox.Profile {
	p := &sandbox.Profile{
		ReadOnly:  []string{"/usr"},
		ReadWrite: []string{"/clean"},
		Cwd:       "/clean",
	}
	if mod != nil {
		mod(p)
	}
	return p
}

func rulesByPath(rs *Ruleset) map[string]Rule {
	m := map[string]Rule{}
	for _, r := range rs.Rules {
		m[r.Path] = r
	}
	return m
}

const (
	roAll = FSExecute | FSReadFile | FSReadDir
	abi7  = uint64(1<<16 - 1)
	rwAll = abi7 &^ (FSMakeChar | FSMakeBlock)
)

func TestPlainTrees(t *testing.T) {
	rs, err := Build(profile(nil), world.opts(7))
	if err != nil {
		t.Fatal(err)
	}
	if rs.HandledFS != abi7 {
		t.Errorf("handled fs %#x, want every right of ABI 7 (%#x)", rs.HandledFS, abi7)
	}
	if rs.HandledNet != NetBindTCP|NetConnectTCP {
		t.Errorf("network off: TCP should be handled (refused), got %#x", rs.HandledNet)
	}
	if rs.Scoped != ScopeSignal|ScopeAbstractUnix {
		t.Errorf("scoped %#x", rs.Scoped)
	}
	m := rulesByPath(rs)
	if r := m["/usr"]; r.Access != roAll || !r.Dir {
		t.Errorf("/usr: %+v, want read-only tree", r)
	}
	if r := m["/clean"]; r.Access != rwAll {
		t.Errorf("/clean: %#x, want every right but device nodes (%#x)", r.Access, rwAll)
	}
	if r, ok := m["/dev/null"]; !ok || r.Access&FSWriteFile == 0 || r.Access&FSReadDir != 0 {
		t.Errorf("/dev/null: %+v", r)
	}
	if r := m["/proc"]; r.Access != FSReadFile|FSReadDir {
		t.Errorf("/proc: %+v", r)
	}
	if _, ok := m["/etc"]; ok {
		t.Error("/etc is granted but not in the profile")
	}
	if len(rs.Fixed) != 0 || len(rs.Lost) != 0 {
		t.Errorf("fixed %v lost %v", rs.Fixed, rs.Lost)
	}
}

func TestDeniedFileGrantsSiblings(t *testing.T) {
	p := profile(func(p *sandbox.Profile) {
		p.ReadOnly = append(p.ReadOnly, "/etc")
		p.ReadWrite = []string{"/w"}
		p.Cwd = "/w"
		p.Deny = []string{"/etc/shadow", "/w/.env", "/w/deep/a/.env"}
	})
	rs, err := Build(p, world.opts(7))
	if err != nil {
		t.Fatal(err)
	}
	m := rulesByPath(rs)
	for _, denied := range []string{"/etc/shadow", "/w/.env", "/w/deep/a/.env", "/w/link"} {
		if _, ok := m[denied]; ok {
			t.Errorf("%s has a rule", denied)
		}
	}
	for _, listOnly := range []string{"/etc", "/w", "/w/deep", "/w/deep/a"} {
		if r := m[listOnly]; r.Access != FSReadDir {
			t.Errorf("%s: %#x, want list only (its entries are granted one by one)", listOnly, r.Access)
		}
	}
	for path, want := range map[string]uint64{
		"/etc/passwd":   roAll &^ FSReadDir,
		"/w/Makefile":   rwAll & fileRights,
		"/w/src":        rwAll,
		"/w/deep/b":     rwAll,
		"/w/deep/a/x.c": rwAll & fileRights,
		"/w/vendor":     rwAll,
	} {
		if r := m[path]; r.Access != want {
			t.Errorf("%s: %#x, want %#x", path, r.Access, want)
		}
	}
	// Only writable directories lose anything by being split.
	if !slices.Equal(rs.Fixed, []string{"/w", "/w/deep", "/w/deep/a"}) {
		t.Errorf("fixed %v", rs.Fixed)
	}
	// Their entries are served, but for the denied names and the
	// directories on the way to one.
	want := []Served{{Dir: "/w", Keep: []string{".env", "deep"}}, {Dir: "/w/deep", Keep: []string{"a"}}, {Dir: "/w/deep/a", Keep: []string{".env"}}}
	if d := cmp.Diff(rs.Served, want); d != "" {
		t.Errorf("served (-got +want):\n%s", d)
	}
	// Every rule grants only what the profile grants.
	for _, r := range rs.Rules {
		if strings.HasPrefix(r.Path, "/dev") || r.Path == "/proc" {
			continue
		}
		read, write := p.Access(r.Path)
		if r.Access&(FSReadFile|FSExecute) != 0 && !read || r.Access&(FSWriteFile|FSMakeReg) != 0 && !write {
			t.Errorf("rule %+v grants more than the profile (read %v write %v)", r, read, write)
		}
	}
}

func TestNestedNarrowerTrees(t *testing.T) {
	p := profile(func(p *sandbox.Profile) {
		p.ReadOnly = append(p.ReadOnly, "/w/vendor")
		p.ReadWrite = []string{"/w"}
		p.ReadOnlyOver = []string{"/w/cfg.yaml"}
		p.Protected = []string{"/w/cfg.yaml"} // guardrun's own: kept by rules
		p.Deny = []string{"/w/.env"}
		p.Cwd = "/w"
	})
	rs, err := Build(p, world.opts(7))
	if err != nil {
		t.Fatal(err)
	}
	m := rulesByPath(rs)
	if r := m["/w/vendor"]; r.Access != roAll {
		t.Errorf("read-only zone inside a writable one: %#x", r.Access)
	}
	if r := m["/w/cfg.yaml"]; r.Access != FSExecute|FSReadFile {
		t.Errorf("read-only overlay: %#x", r.Access)
	}
	if r := m["/w"]; r.Access != FSReadDir {
		t.Errorf("/w: %#x", r.Access)
	}
	// Wider inside narrower needs no split.
	p2 := profile(func(p *sandbox.Profile) {
		p.ReadOnly = append(p.ReadOnly, "/w")
		p.ReadWrite = []string{"/w/src"}
		p.Cwd = "/w/src"
	})
	rs, err = Build(p2, world.opts(7))
	if err != nil {
		t.Fatal(err)
	}
	m = rulesByPath(rs)
	if m["/w"].Access != roAll || m["/w/src"].Access != rwAll || len(rs.Fixed) != 0 {
		t.Errorf("rw inside ro: %+v fixed %v", rs.Rules, rs.Fixed)
	}
}

func TestMissingDenied(t *testing.T) {
	p := profile(func(p *sandbox.Profile) {
		p.ReadOnly = append(p.ReadOnly, "/etc")
		p.Deny = []string{"/clean/.env", "/clean/new/deeper", "/etc/missing"}
	})
	_, err := Build(p, world.opts(7))
	var ue *UnenforceableError
	if !errors.As(err, &ue) {
		t.Fatalf("want a refusal, got %v", err)
	}
	var paths []string
	for _, pt := range ue.Parts {
		paths = append(paths, pt.Path)
		if pt.Kind != AcceptDenyCreate {
			t.Errorf("part %+v", pt)
		}
	}
	// Missing in a read-only tree: nothing can create it; not a part.
	if !slices.Equal(paths, []string{"/clean/.env", "/clean/new/deeper"}) {
		t.Errorf("parts %v", paths)
	}
	if !strings.Contains(err.Error(), "sandbox.landlock_accept: [deny_create]") {
		t.Errorf("the refusal does not say how to accept: %v", err)
	}

	rs, err := Build(p, world.opts(7, AcceptDenyCreate))
	if err != nil {
		t.Fatal(err)
	}
	if m := rulesByPath(rs); m["/clean"].Access != rwAll {
		t.Errorf("accepted: /clean should stay writable, got %#x", m["/clean"].Access)
	}
	if len(rs.Lost) != 2 {
		t.Errorf("lost %v", rs.Lost)
	}

	// In a directory whose entries are fixed anyway, a missing name
	// cannot be created: enforced, no part.
	p3 := profile(func(p *sandbox.Profile) {
		p.ReadWrite = []string{"/w"}
		p.Cwd = "/w"
		p.Deny = []string{"/w/.env", "/w/.npmrc"}
	})
	if _, err := Build(p3, world.opts(7)); err != nil {
		t.Errorf("missing name next to an existing one: %v", err)
	}
}

func TestABIParts(t *testing.T) {
	for _, tc := range []struct {
		abi     int
		handled uint64
		parts   []string
	}{
		{1, 1<<13 - 1, []string{AcceptTruncate, AcceptScope}},
		{2, 1<<14 - 1, []string{AcceptTruncate, AcceptScope}},
		{3, 1<<15 - 1, []string{AcceptScope}},
		{5, 1<<16 - 1, []string{AcceptScope}},
		{6, 1<<16 - 1, nil},
	} {
		_, err := Build(profile(nil), world.opts(tc.abi))
		var kinds []string
		var ue *UnenforceableError
		if errors.As(err, &ue) {
			for _, pt := range ue.Parts {
				kinds = append(kinds, pt.Kind)
			}
		} else if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(kinds, tc.parts) {
			t.Errorf("ABI %d: parts %v, want %v", tc.abi, kinds, tc.parts)
		}
		rs, err := Build(profile(nil), world.opts(tc.abi, AcceptNames...))
		if err != nil {
			t.Fatalf("ABI %d, all accepted: %v", tc.abi, err)
		}
		if rs.HandledFS != tc.handled {
			t.Errorf("ABI %d: handled %#x, want %#x", tc.abi, rs.HandledFS, tc.handled)
		}
		if (tc.abi >= 6) != (rs.Scoped != 0) {
			t.Errorf("ABI %d: scoped %#x", tc.abi, rs.Scoped)
		}
		if (tc.abi >= 4) != (rs.HandledNet != 0) {
			t.Errorf("ABI %d: handled net %#x", tc.abi, rs.HandledNet)
		}
	}
	if _, err := Build(profile(nil), world.opts(0)); err == nil {
		t.Error("ABI 0 (no Landlock) built a ruleset")
	}
}

// TestConnectTCPHook: the proxy's hook. With ports, TCP is handled and
// only connecting to them is granted; without, the profile decides.
func TestConnectTCPHook(t *testing.T) {
	o := world.opts(7)
	o.ConnectTCP = []uint16{8080, 3128, 8080}
	rs, err := Build(profile(nil), o)
	if err != nil {
		t.Fatal(err)
	}
	if rs.HandledNet != NetBindTCP|NetConnectTCP || !slices.Equal(rs.ConnectTCP, []uint16{3128, 8080}) {
		t.Errorf("net %#x ports %v", rs.HandledNet, rs.ConnectTCP)
	}
	// Network on, no ports: Landlock leaves TCP alone.
	on := profile(func(p *sandbox.Profile) { p.Network, p.Seccomp.AllowNetwork = true, true })
	rs, err = Build(on, world.opts(7))
	if err != nil {
		t.Fatal(err)
	}
	if rs.HandledNet != 0 {
		t.Errorf("network on: handled net %#x", rs.HandledNet)
	}
	// Before ABI 4 ports cannot be enforced.
	o = world.opts(3, AcceptScope)
	o.ConnectTCP = []uint16{3128}
	_, err = Build(profile(nil), o)
	var ue *UnenforceableError
	if !errors.As(err, &ue) || ue.Parts[0].Kind != AcceptTCPPorts {
		t.Errorf("ABI 3 with ports: %v", err)
	}
}

func TestTmpDir(t *testing.T) {
	o := world.opts(7)
	o.TmpDir = "/tmp/guardrun-tmp-1"
	rs, err := Build(profile(func(p *sandbox.Profile) { p.PrivateTmp = true }), o)
	if err != nil {
		t.Fatal(err)
	}
	if r := rulesByPath(rs)["/tmp/guardrun-tmp-1"]; r.Access != rwAll {
		t.Errorf("tmpdir: %#x", r.Access)
	}
	if _, ok := rulesByPath(rs)["/tmp"]; ok {
		t.Error("/tmp itself is granted")
	}
}

// The config's names for accepted losses are this package's.
func TestAcceptNamesMatchConfig(t *testing.T) {
	if !slices.Equal(AcceptNames, rules.LandlockAcceptNames) {
		t.Errorf("landlock %v, config %v", AcceptNames, rules.LandlockAcceptNames)
	}
}

// TestProtectedNamesWatched: protected names found in a writable tree do
// not split it (the workspace root and .git keep taking new entries);
// they are watched instead, existing or missing, and so are missing
// denied names. guardrun's own files and the config's denied paths keep
// the rules; a directory beyond the snapshot bound does too.
func TestProtectedNamesWatched(t *testing.T) {
	fsys := fakeFS{
		"/usr/bin/sh":            'f',
		"/r/main.c":              'f',
		"/r/.git/config":         'f',
		"/r/.git/HEAD":           'f',
		"/r/.git/hooks/a.sample": 'f',
		"/r/.guardrun.yaml":      'f',
		"/q/.git/config":         'f',
		"/dev/null":              'f',
	}
	for i := range MaxWatchEntries + 1 {
		fsys[fmt.Sprintf("/q/.vscode/f%d", i)] = 'f'
	}
	p := profile(func(p *sandbox.Profile) {
		p.ReadWrite = []string{"/r", "/q"}
		p.Cwd = "/r"
		p.ProtectNames = []string{".bashrc", ".git/config", ".git/hooks", ".guardrun.yaml", ".vscode"}
		p.DenyNames = []string{".env"}
		p.ReadOnlyOver = []string{"/q/.git/config", "/q/.vscode", "/r/.bashrc", "/r/.git/config", "/r/.git/hooks", "/r/.guardrun.yaml"}
		p.Protected = []string{"/r/.guardrun.yaml"}
		p.Deny = []string{"/r/.env", "/r/secrets"}
	})
	rs, err := Build(p, Options{ABI: 7, Accept: []string{AcceptDenyCreate}, Lstat: fsys.lstat, ReadDir: fsys.readDir})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range rs.Watch {
		got = append(got, fmt.Sprintf("%s root=%s missing=%v", w.Path, w.Root, w.Missing))
	}
	want := []string{
		"/q/.git/config root=/q missing=false",
		"/r/.bashrc root=/r missing=true",
		"/r/.env root=/r missing=true",
		"/r/.git/config root=/r missing=false",
		"/r/.git/hooks root=/r missing=false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("watched:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	m := rulesByPath(rs)
	// /r holds guardrun's own config: still split, but .git is not.
	if m["/r"].Access != FSReadDir {
		t.Errorf("/r: %#x (guardrun's config keeps the rules)", m["/r"].Access)
	}
	if m["/r/.git"].Access != rwAll {
		t.Errorf("/r/.git: %#x, want it writable whole", m["/r/.git"].Access)
	}
	if r, ok := m["/r/.guardrun.yaml"]; !ok || r.Access&FSWriteFile != 0 {
		t.Errorf("guardrun's config: %+v", r)
	}
	// The oversized .vscode keeps the rules: /q is split for it.
	if !slices.Contains(rs.Fixed, "/q") || slices.Contains(rs.Fixed, "/r/.git") {
		t.Errorf("fixed %v", rs.Fixed)
	}
	// The config's own missing deny path is not watched; /r is split
	// anyway (guardrun's config), so it cannot be created and is no loss.
	if len(rs.Lost) != 0 {
		t.Errorf("lost %v", rs.Lost)
	}
	if _, ok := m["/r/secrets"]; ok {
		t.Errorf("a rule for the missing denied path")
	}
}

// TestWatchTotal: the protected paths' snapshots together stay within
// MaxWatchTotal; what would go past it keeps the rules (its directory
// is split for it) instead of being read and stored whole.
func TestWatchTotal(t *testing.T) {
	fsys := fakeFS{"/usr/bin/sh": 'f', "/dev/null": 'f'}
	n := MaxWatchTotal/MaxWatchBytes + 2
	var over []string
	for i := range n {
		fsys[fmt.Sprintf("/w%d/.bashrc", i)] = 'F'
		over = append(over, fmt.Sprintf("/w%d/.bashrc", i))
	}
	fsys["/w9/.git/hooks/a"] = 'F'
	over = append(over, "/w9/.git/hooks")
	p := profile(func(p *sandbox.Profile) {
		p.ReadWrite = nil
		for i := range n {
			p.ReadWrite = append(p.ReadWrite, fmt.Sprintf("/w%d", i))
		}
		p.ReadWrite = append(p.ReadWrite, "/w9")
		p.Cwd = "/w0"
		p.ProtectNames = []string{".bashrc", ".git/hooks"}
		p.ReadOnlyOver = over
	})
	rs, err := Build(p, fsys.opts(7))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Watch) != MaxWatchTotal/MaxWatchBytes {
		t.Errorf("%d paths watched, want %d (MaxWatchTotal / MaxWatchBytes): %+v", len(rs.Watch), MaxWatchTotal/MaxWatchBytes, rs.Watch)
	}
	m := rulesByPath(rs)
	for _, x := range over {
		watched := slices.ContainsFunc(rs.Watch, func(w Watch) bool { return w.Path == x })
		if r, ok := m[x]; watched == ok || ok && r.Access&FSWriteFile != 0 {
			t.Errorf("%s: watched %v, rule %+v (present %v); want exactly one of the two, the rule read-only", x, watched, r, ok)
		}
	}
}

// TestMetadataWritable: the judgement on metadata calls, from the
// profile alone: what Landlock would let the command write.
func TestMetadataWritable(t *testing.T) {
	p := &sandbox.Profile{
		ReadOnly:     []string{"/usr", "/home/u"},
		ReadWrite:    []string{"/home/u/proj"},
		Deny:         []string{"/home/u/proj/.env", "/home/u/.ssh"},
		ReadOnlyOver: []string{"/home/u/proj/.guardrun.yml", "/home/u/proj/.git/config"},
		Protected:    []string{"/home/u/proj/.guardrun.yml"},
		Cwd:          "/home/u/proj",
	}
	rs := &Ruleset{TmpDir: "/tmp/guardrun-tmp-1"}
	for path, want := range map[string]bool{
		"/home/u/proj/src/a.c":       true,
		"/home/u/proj":               true,
		"/home/u/proj/.git/HEAD":     true,
		"/home/u/proj/.env":          false, // denied
		"/home/u/proj/.git/config":   false, // protected name
		"/home/u/proj/.guardrun.yml": false, // guardrun's config
		"/home/u/.bashrc":            false, // read-only zone
		"/home/u/.ssh/id_ed25519":    false, // denied
		"/usr/bin/ls":                false, // system
		"/etc/passwd":                false, // in no zone
		"/tmp/guardrun-tmp-1/x":      true,  // the command's $TMPDIR
		"/tmp/guardrun-tmp-10/x":     false, // not it
		"/home/u/proj/../.bashrc":    false, // not clean
		"home/u/proj/a.c":            false, // relative
		"/dev/null":                  false,
		"/home/u/proj/a\x00b":        false,
	} {
		if got := rs.MetadataWritable(p, path); got != want {
			t.Errorf("MetadataWritable(%q) = %v, want %v", path, got, want)
		}
	}
	if !(*Ruleset)(nil).MetadataWritable(p, "/home/u/proj/a.c") {
		t.Error("a nil ruleset does not judge by the profile")
	}
	if rs.MetadataWritable(nil, "/home/u/proj/a.c") {
		t.Error("no profile: writable")
	}
}

// TestUnixSocketsRefused: Landlock cannot keep connect(2) to the listed
// unix sockets, so a profile listing some is refused, naming them, unless
// the loss is accepted.
func TestUnixSocketsRefused(t *testing.T) {
	listed := profile(func(p *sandbox.Profile) {
		p.UnixSockets = []string{"/run/listed.sock"}
		p.Seccomp.AllowUnix = true
	})
	_, err := Build(listed, world.opts(7))
	var ue *UnenforceableError
	if !errors.As(err, &ue) || len(ue.Parts) != 1 || ue.Parts[0].Kind != AcceptUnixSockets || !strings.Contains(err.Error(), "/run/listed.sock") {
		t.Fatalf("want a refusal naming unix_sockets and the socket, got %v", err)
	}
	rs, err := Build(listed, world.opts(7, AcceptUnixSockets))
	if err != nil || len(rs.Lost) != 1 || rs.Lost[0].Kind != AcceptUnixSockets {
		t.Fatalf("accepted: %v, lost %v", err, rs)
	}
}
