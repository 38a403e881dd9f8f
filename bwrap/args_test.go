package bwrap

import (
	"flag"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/sandbox"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// fakeFS is a Stat over a fixed set of paths: names ending in / are
// directories, the rest files; every ancestor of a listed path is a
// directory.
func fakeFS(paths ...string) func(string) (bool, bool) {
	kind := map[string]bool{"/": true}
	for _, p := range paths {
		isDir := strings.HasSuffix(p, "/")
		p = filepath.Clean(p)
		kind[p] = isDir
		for d := filepath.Dir(p); ; d = filepath.Dir(d) {
			kind[d] = true
			if d == "/" {
				break
			}
		}
	}
	return func(p string) (bool, bool) {
		isDir, ok := kind[p]
		return isDir, ok
	}
}

// base is a profile like the one Derive makes for a project at
// /home/u/proj with the default config.
func base() *sandbox.Profile {
	return &sandbox.Profile{
		ReadOnly:     []string{"/etc", "/usr"},
		ReadWrite:    []string{"/home/u/proj"},
		Deny:         []string{"/etc/shadow", "/home/u/.ssh", "/home/u/proj/.env", "/home/u/proj/src/.env", "/home/u/.local/state/guardrun"},
		ReadOnlyOver: []string{"/home/u/proj/.guardrun.yaml"},
		Protected:    []string{"/home/u/proj/.guardrun.yaml", "/home/u/.local/state/guardrun"},
		Symlinks: []sandbox.Symlink{
			{Path: "/bin", Target: "/usr/bin"},
			{Path: "/lib", Target: "/usr/lib"},
			{Path: "/lib64", Target: "/usr/lib64"},
			{Path: "/sbin", Target: "/usr/sbin"},
		},
		Cwd:        "/home/u/proj/src",
		Home:       "/home/u",
		PrivateTmp: true,
		EnvDeny:    sandbox.DefaultEnvDeny,
	}
}

var baseFS = []string{
	"/usr/bin/", "/usr/lib/", "/usr/lib64/", "/usr/sbin/", "/etc/shadow",
	"/home/u/.ssh/id_ed25519", "/home/u/proj/src/", "/home/u/proj/.guardrun.yaml",
	"/home/u/proj/.env", "/home/u/.local/state/guardrun/",
}

func TestArgsGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*sandbox.Profile)
		fs   []string
	}{
		{"default", func(*sandbox.Profile) {}, nil},
		{"network", func(p *sandbox.Profile) {
			p.Network = true
			p.Seccomp.AllowNetwork = true
		}, nil},
		{"proxy", func(p *sandbox.Profile) {
			p.Proxy = true
			p.Seccomp = sandbox.SeccompPolicy{AllowNetwork: true}
		}, nil},
		{"deny-in-zone", func(p *sandbox.Profile) {
			p.Deny = append(p.Deny, "/home/u/proj/secrets", "/home/u/proj/src/key.pem")
		}, []string{"/home/u/proj/secrets/", "/home/u/proj/src/key.pem"}},
		{"deny-missing", func(p *sandbox.Profile) {
			p.Deny = append(p.Deny,
				"/home/u/proj/creds/deep/token", // creds is missing: mask creds
				"/home/u/proj/creds/other",      // same first missing component: one mask
				"/usr/share/secret",             // read-only tree: cannot be created
				"/opt/elsewhere/.env",           // not exposed at all
			)
			p.ReadOnlyOver = append(p.ReadOnlyOver, "/home/u/proj/.guardrun.local.yaml")
		}, nil},
		{"ro-over-in-rw", func(p *sandbox.Profile) {
			p.ReadWrite = append(p.ReadWrite, "/home/u/proj/build", "/srv/cache")
			p.ReadOnly = append(p.ReadOnly, "/home/u/proj/vendor")
			p.ReadOnlyOver = append(p.ReadOnlyOver, "/home/u/proj/.guardrun")
		}, []string{"/home/u/proj/build/", "/home/u/proj/vendor/", "/home/u/proj/.guardrun/"}},
		{"protect", func(p *sandbox.Profile) {
			// .git/config exists, .git/hooks and .bashrc do not (masked
			// by empty read-only directories); .git and nested are
			// pinned; one unix socket outside every tree is bound in.
			p.ReadOnlyOver = append(p.ReadOnlyOver, "/home/u/proj/.git/config", "/home/u/proj/.git/hooks",
				"/home/u/proj/.bashrc", "/home/u/proj/nested/.git/config")
			p.Pinned = []string{"/home/u/proj/.git", "/home/u/proj/nested", "/home/u/proj/nested/.git"}
			p.UnixSockets = []string{"/run/user/1/daemon.sock"}
			p.Seccomp.AllowUnix = true
		}, []string{"/home/u/proj/.git/", "/home/u/proj/.git/config", "/home/u/proj/nested/.git/config"}},
		{"spaces", func(p *sandbox.Profile) {
			p.ReadWrite = []string{"/home/u/My Project"}
			p.Deny = []string{"/home/u/My Project/.env", "/home/u/My Project/new dir/x"}
			p.ReadOnlyOver = []string{"/home/u/My Project/.guardrun.yaml"}
			p.Protected = p.ReadOnlyOver
			p.Cwd = "/home/u/My Project"
		}, []string{"/home/u/My Project/.env", "/home/u/My Project/.guardrun.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := base()
			tc.edit(p)
			fs := fakeFS(append(slices.Clone(baseFS), tc.fs...)...)
			route := &ProxyRoute{Exe: "/usr/local/bin/guardrun", Socket: "/run/user/1000/guardrun-proxy-x/proxy.sock"}
			args, err := Args(p, Options{SeccompFD: 3, StatusFD: 4, Stat: fs, Proxy: route})
			if err != nil {
				t.Fatal(err)
			}
			got := render(args)
			file := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(got, string(want)); diff != "" {
				t.Errorf("argv (-got +want):\n%s", diff)
			}
			// Same inputs, same argv.
			again, _ := Args(p, Options{SeccompFD: 3, StatusFD: 4, Stat: fs, Proxy: route})
			if !slices.Equal(args, again) {
				t.Error("Args is not deterministic")
			}
		})
	}
}

// render puts each option and its operands on one line, quoting operands
// that hold spaces, so golden files read like a command line.
func render(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if strings.HasPrefix(a, "--") && i > 0 {
			b.WriteByte('\n')
		} else if i > 0 {
			b.WriteByte(' ')
		}
		if strings.ContainsAny(a, " \t\n\"'\\") {
			a = strconv.Quote(a)
		}
		b.WriteString(a)
	}
	b.WriteByte('\n')
	return b.String()
}

func TestArgsRefuses(t *testing.T) {
	fs := fakeFS(baseFS...)
	if _, err := Args(base(), Options{Stat: fs}); err == nil || !strings.Contains(err.Error(), "seccomp") {
		t.Errorf("no seccomp fd: err = %v", err)
	}
	bad := base()
	bad.ReadWrite = append(bad.ReadWrite, "/")
	if _, err := Args(bad, Options{SeccompFD: 3, Stat: fs}); err == nil {
		t.Error("invalid profile rendered")
	}
}

// TestArgsOrder checks the ordering rules on the argv itself: every mount
// comes after the mounts of its ancestors, masks come after all binds,
// and / is made read-only last.
func TestArgsOrder(t *testing.T) {
	p := base()
	p.ReadOnly = append(p.ReadOnly, "/home/u/proj/vendor", "/tmp/ro")
	p.ReadWrite = append(p.ReadWrite, "/home/u/proj/vendor/patched")
	devices := [][2]string{{"/state/.guardrun-dev-1/null", "/dev/null"}, {"/state/.guardrun-dev-1/tty", "/dev/tty"}, {"/state/x", "/etc/passwd"}}
	args, err := Args(p, Options{SeccompFD: 3, Stat: fakeFS(append(baseFS, "/home/u/proj/vendor/patched/", "/tmp/ro/")...), Devices: devices})
	if err != nil {
		t.Fatal(err)
	}
	// The copies of the device nodes go over bwrap's (after its --dev,
	// checked below with the other mounts), and nothing outside /dev is
	// bound with devices.
	joined := strings.Join(args, " ")
	for _, want := range []string{"--dev-bind /state/.guardrun-dev-1/null /dev/null", "--dev-bind /state/.guardrun-dev-1/tty /dev/tty"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %q in %q", want, args)
		}
	}
	if strings.Contains(joined, "/etc/passwd") {
		t.Errorf("a device bind outside /dev was rendered: %q", args)
	}
	type mount struct {
		flag, dest string
		at         int
	}
	var ms []mount
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--bind", "--ro-bind", "--ro-bind-try", "--symlink", "--dev-bind":
			ms = append(ms, mount{args[i], args[i+2], i})
			i += 2
		case "--proc", "--dev", "--tmpfs", "--remount-ro":
			ms = append(ms, mount{args[i], args[i+1], i})
			i++
		}
	}
	lastBind, firstMask := -1, len(args)
	for _, m := range ms {
		if m.flag == "--bind" || m.flag == "--ro-bind-try" {
			lastBind = max(lastBind, m.at)
		}
		if m.flag == "--ro-bind" && strings.HasPrefix(m.dest, "/home/u/proj/.env") {
			firstMask = min(firstMask, m.at)
		}
	}
	if lastBind > firstMask {
		t.Errorf("a mask comes before a bind: %q", args)
	}
	for i, m := range ms {
		for _, n := range ms[i+1:] {
			if n.dest != m.dest && sandbox.Within(m.dest, n.dest) && m.flag != "--remount-ro" && n.flag != "--remount-ro" {
				t.Errorf("%s %s comes before its ancestor %s %s", m.flag, m.dest, n.flag, n.dest)
			}
		}
	}
	if l := ms[len(ms)-1]; l.flag != "--remount-ro" || l.dest != "/" {
		t.Errorf("last mount = %+v, want --remount-ro /", l)
	}
}

func TestPlaceholders(t *testing.T) {
	p := base()
	p.Deny = append(p.Deny, "/home/u/proj/creds/x", "/home/u/proj/creds/y", "/usr/share/x", "/home/u/proj/src/.env")
	p.ReadOnlyOver = append(p.ReadOnlyOver, "/home/u/proj/.guardrun.local.yaml")
	got := Placeholders(p, fakeFS(baseFS...))
	want := []string{"/home/u/proj/.guardrun.local.yaml", "/home/u/proj/creds", "/home/u/proj/src/.env"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Placeholders (-got +want):\n%s", diff)
	}
}

// TestPlaceholdersMatchArgs: the mount points Placeholders lists are
// exactly the masks Args puts on paths that do not exist, so that Command
// creates (and later removes) every one bwrap would otherwise create.
func TestPlaceholdersMatchArgs(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	parts := []string{"a", "b", ".env", "x"}
	rel := func() string {
		n := 1 + r.Intn(3)
		var p []string
		for range n {
			p = append(p, parts[r.Intn(len(parts))])
		}
		return strings.Join(p, "/")
	}
	roots := []string{"/home/u/proj", "/usr", "/opt"}
	withMasks := 0
	for iter := range 500 {
		p := base()
		fs := slices.Clone(baseFS)
		for range r.Intn(6) {
			fs = append(fs, roots[r.Intn(2)]+"/"+rel()+[]string{"", "/"}[r.Intn(2)])
		}
		for range 1 + r.Intn(4) {
			p.Deny = append(p.Deny, roots[r.Intn(len(roots))]+"/"+rel())
		}
		if r.Intn(2) == 0 {
			p.ReadOnly = append(p.ReadOnly, "/home/u/proj/"+rel())
		}
		stat := fakeFS(fs...)
		args, err := Args(p, Options{SeccompFD: 3, Stat: stat})
		if err != nil {
			continue // e.g. a read-only entry equal to a denied one's parent
		}
		var masks []string
		for i := 0; i+2 < len(args); i++ {
			if args[i] == "--tmpfs" && args[i+2] == "--remount-ro" {
				if _, ok := stat(args[i+1]); !ok {
					masks = append(masks, args[i+1])
				}
			}
		}
		slices.Sort(masks)
		masks = slices.Compact(masks)
		if len(masks) > 0 {
			withMasks++
		}
		if diff := cmp.Diff(Placeholders(p, stat), masks); diff != "" {
			t.Fatalf("iter %d: Placeholders vs missing masks (-placeholders +masks):\n%s\ndeny %q", iter, diff, p.Deny)
		}
	}
	if withMasks < 100 {
		t.Errorf("only %d of 500 cases had a missing mask: the generator tests too little", withMasks)
	}
}

// TestArgsProxyNeedsRoute: a profile with the proxy is not rendered
// without a route to it (no silent sandbox without network or with a
// dangling bridge).
func TestArgsProxyNeedsRoute(t *testing.T) {
	p := base()
	p.Proxy = true
	p.Seccomp = sandbox.SeccompPolicy{AllowNetwork: true}
	for _, route := range []*ProxyRoute{nil, {Exe: "guardrun", Socket: "/s"}, {Exe: "/g", Socket: ""}} {
		if _, err := Args(p, Options{SeccompFD: 3, Stat: fakeFS(baseFS...), Proxy: route}); err == nil || !strings.Contains(err.Error(), "no route") {
			t.Errorf("route %+v: err = %v", route, err)
		}
	}
}
