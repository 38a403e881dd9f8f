package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree builds files and directories under a fresh temp dir: a name ending
// in / is a directory, "a -> b" a symlink, anything else an empty file.
func tree(t *testing.T, entries ...string) string {
	t.Helper()
	dir := realTemp(t)
	for _, e := range entries {
		name, _, _ := strings.Cut(e, " -> ")
		// The tests run as root: never create anything through a link.
		for d := filepath.Dir(filepath.Join(dir, name)); d != dir; d = filepath.Dir(d) {
			if fi, err := os.Lstat(d); err == nil && !fi.IsDir() {
				t.Fatalf("tree: %s would be created through the symlink %s", e, d)
			}
		}
		if name, target, ok := strings.Cut(e, " -> "); ok {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(strings.ReplaceAll(target, "$T", dir), p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		p := filepath.Join(dir, e)
		if strings.HasSuffix(e, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestDeriveBasics(t *testing.T) {
	d := tree(t, "ws/src/", "ws/.env", "ws/src/.env", "ws/.guardrun.yaml", "home/.ssh/id_rsa", "state/", "docs/")
	s := Spec{
		Zones: []Zone{
			{Name: "ws", Root: d + "/ws", Writable: true},
			{Name: "docs", Root: d + "/docs"},
		},
		Deny:      []string{d + "/home/.ssh"},
		DenyNames: []string{".env"},
		Protect: []Protected{
			{Path: d + "/ws/.guardrun.yaml"},
			{Path: d + "/state", Hide: true},
			{Path: d + "/elsewhere/config.yaml"},
		},
		Cwd:  d + "/ws/src",
		Home: d + "/home",
	}
	p, err := Derive(s)
	if err != nil {
		t.Fatal(err)
	}
	want := &Profile{
		ReadOnly:  []string{d + "/docs"},
		ReadWrite: []string{d + "/ws"},
		Deny: []string{
			d + "/docs/.env", d + "/home/.ssh", d + "/state",
			d + "/ws/.env", d + "/ws/src/.env",
		},
		ReadOnlyOver: []string{d + "/ws/.guardrun.yaml"},
		Protected:    []string{d + "/elsewhere/config.yaml", d + "/state", d + "/ws/.guardrun.yaml"},
		Cwd:          d + "/ws/src",
		Home:         d + "/home",
		PrivateTmp:   true,
		EnvDeny:      DefaultEnvDeny,
	}
	// DefaultSystemDeny entries are always present; compare the rest.
	p.Deny = slices.DeleteFunc(p.Deny, func(x string) bool { return strings.HasPrefix(x, "/etc/") })
	want.EnvDeny = slices.Clone(DefaultEnvDeny)
	slices.Sort(want.EnvDeny)
	if diff := cmp.Diff(p, want); diff != "" {
		t.Errorf("Derive (-got +want):\n%s", diff)
	}
}

func TestDeriveResolvesRoots(t *testing.T) {
	d := tree(t, "real/", "ws/", "ws/up -> ..", "link -> $T/real", "rootlink -> /")
	for _, tc := range []struct {
		name    string
		root    string
		want    string
		wantErr string
	}{
		{"symlinked zone root", d + "/link", d + "/real", ""},
		{"dot dot through a link is the target's parent", d + "/ws/up/real", d + "/real", ""},
		{"doubled slashes", d + "//real//", d + "/real", ""},
		{"relative root refused", "real", "", "not an absolute path"},
		{"symlink to / cannot become a writable /", d + "/rootlink", "", "/ is writable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Derive(Spec{Zones: []Zone{{Name: "z", Root: tc.root, Writable: true}}})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(p.ReadWrite, []string{tc.want}); diff != "" {
				t.Errorf("ReadWrite (-got +want):\n%s", diff)
			}
		})
	}
}

func TestDeriveSystemSymlinks(t *testing.T) {
	d := tree(t, "usr/bin/sh", "usr/lib/", "bin -> usr/bin", "lib -> usr/lib", "etc/")
	p, err := Derive(Spec{SystemRead: []string{d + "/usr", d + "/bin", d + "/lib", d + "/lib32", d + "/etc"}})
	if err != nil {
		t.Fatal(err)
	}
	wantLinks := []Symlink{{d + "/bin", d + "/usr/bin"}, {d + "/lib", d + "/usr/lib"}}
	if diff := cmp.Diff(p.Symlinks, wantLinks); diff != "" {
		t.Errorf("Symlinks (-got +want):\n%s", diff)
	}
	// The targets are inside /usr: listed once. lib32 does not exist; it
	// stays listed for renderers to bind if present.
	if diff := cmp.Diff(p.ReadOnly, []string{d + "/etc", d + "/lib32", d + "/usr"}); diff != "" {
		t.Errorf("ReadOnly (-got +want):\n%s", diff)
	}
	if r, w := p.Access(d + "/bin/sh"); !r || w {
		t.Errorf("Access(bin/sh) = %v, %v; want readable through the link", r, w)
	}
}

func TestDeriveDenyNames(t *testing.T) {
	d := tree(t,
		"ws/a/b/c/.env", "ws/node_modules/x/.env/", "ws/.git/.env",
		"ws/link.env/", "ws/sub/.env -> $T/secret", "secret",
		"ws/dangling/.env -> $T/out/.env",
		"ro/.env", "out/.env")
	p, err := Derive(Spec{
		Zones: []Zone{
			{Name: "ws", Root: d + "/ws", Writable: true},
			{Name: "ro", Root: d + "/ro"},
		},
		DenyNames: []string{".env"},
		Cwd:       d + "/ws/a",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		d + "/ws/.env",                // root, missing: still denied
		d + "/ws/a/.env",              // cwd, missing
		d + "/ws/a/b/c/.env",          // deep
		d + "/ws/node_modules/x/.env", // never skipped, and a directory
		d + "/ws/.git/.env",
		d + "/secret", // where the link named .env leads
		d + "/ro/.env",
	} {
		if !slices.Contains(p.Deny, want) {
			t.Errorf("Deny lacks %s; have %v", want, p.Deny)
		}
	}
	// Not the links themselves: a mask follows the link, and a link into
	// an unexposed tree (out/) dangles inside anyway. out/.env is listed
	// (it is where ws/dangling/.env leads) but renderers skip it: it is
	// not inside any exposed tree.
	if r, _ := p.Access(d + "/out/.env"); r {
		t.Error("out/.env readable")
	}
	for _, bad := range []string{d + "/ws/sub/.env", d + "/ws/dangling/.env", d + "/ws/link.env"} {
		if slices.Contains(p.Deny, bad) {
			t.Errorf("Deny has %s", bad)
		}
	}
	for _, n := range []string{"", ".", "..", "a/b"} {
		if _, err := Derive(Spec{DenyNames: []string{n}}); err == nil {
			t.Errorf("deny name %q: want an error", n)
		}
	}
}

func TestDeriveWalkBound(t *testing.T) {
	var entries []string
	for i := range 50 {
		entries = append(entries, fmt.Sprintf("ws/d%02d/f", i))
	}
	entries = append(entries, "ws/d49/deeper/.env")
	d := tree(t, entries...)
	old := MaxWalkEntries
	MaxWalkEntries = 20
	defer func() { MaxWalkEntries = old }()
	p, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: d + "/ws", Writable: true}}, DenyNames: []string{".env"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "stopped after 20 entries") {
		t.Errorf("Warnings = %q, want one about the bound", p.Warnings)
	}
	if !slices.Contains(p.Deny, d+"/ws/.env") {
		t.Error("the zone root's name must be denied even when the walk is cut short")
	}
}

func TestDeriveNetworkAndDefaults(t *testing.T) {
	d := tree(t, "ws/")
	for _, network := range []bool{false, true} {
		p, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: d + "/ws", Writable: true}}, Network: network})
		if err != nil {
			t.Fatal(err)
		}
		if p.Network != network || p.Seccomp.AllowNetwork != network {
			t.Errorf("network %v: got Network %v, AllowNetwork %v", network, p.Network, p.Seccomp.AllowNetwork)
		}
		if !p.PrivateTmp {
			t.Error("PrivateTmp must be on")
		}
	}
	p, err := Derive(Spec{EnvDeny: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if p.EnvDeny == nil || len(p.EnvDeny) != 0 {
		t.Errorf("an explicit empty EnvDeny stays empty, got %v", p.EnvDeny)
	}
}

func TestDeriveProtected(t *testing.T) {
	d := tree(t, "ws/cfg.yaml", "ws/.guardrun/", "ro/cfg.yaml")
	p, err := Derive(Spec{
		Zones: []Zone{{Name: "ws", Root: d + "/ws", Writable: true}, {Name: "ro", Root: d + "/ro"}},
		Protect: []Protected{
			{Path: d + "/ws/cfg.yaml"},
			{Path: d + "/ws/new.yaml"}, // does not exist yet
			{Path: d + "/ws/.guardrun", Hide: true},
			{Path: d + "/ro/cfg.yaml"}, // read-only anyway
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p.ReadOnlyOver, []string{d + "/ws/cfg.yaml", d + "/ws/new.yaml"}); diff != "" {
		t.Errorf("ReadOnlyOver (-got +want):\n%s", diff)
	}
	for _, x := range p.Protected {
		if _, w := p.Access(x); w {
			t.Errorf("%s is writable", x)
		}
	}
	if r, _ := p.Access(d + "/ws/.guardrun/audit.jsonl"); r {
		t.Error("hidden state is readable")
	}
}

func TestDeriveCwdMustBeVisible(t *testing.T) {
	d := tree(t, "ws/", "elsewhere/")
	_, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: d + "/ws", Writable: true}}, Cwd: d + "/elsewhere"})
	if err == nil || !strings.Contains(err.Error(), "working directory") {
		t.Errorf("err = %v, want the working directory named", err)
	}
}

// TestDeriveProxy: with the proxy and no network, the profile has no
// network of its own, inet sockets for the loopback route, and unix
// sockets refused; with the network on, the proxy is moot.
func TestDeriveProxy(t *testing.T) {
	d := t.TempDir()
	p, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: d, Writable: true}}, Proxy: true})
	if err != nil {
		t.Fatal(err)
	}
	want := SeccompPolicy{AllowNetwork: true, DenyUnixSockets: true}
	if !p.Proxy || p.Network || p.Seccomp != want {
		t.Errorf("Proxy %v Network %v Seccomp %+v", p.Proxy, p.Network, p.Seccomp)
	}
	p, err = Derive(Spec{Zones: []Zone{{Name: "ws", Root: d, Writable: true}}, Proxy: true, Network: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Proxy || !p.Network {
		t.Errorf("network and proxy: Proxy %v Network %v", p.Proxy, p.Network)
	}
	// An operator profile with the proxy narrows the open network to it.
	op := p.clone()
	op.Network, op.Proxy, op.Seccomp = false, true, want
	in := Intersect(p, op)
	if !in.Proxy || in.Network || !in.Seccomp.DenyUnixSockets {
		t.Errorf("intersect: Proxy %v Network %v Seccomp %+v", in.Proxy, in.Network, in.Seccomp)
	}
	if err := in.Validate(); err != nil {
		t.Error(err)
	}
}
