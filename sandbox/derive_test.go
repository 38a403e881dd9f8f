package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
		DenyNames:    []string{".env"},
		// The directory holding a denied file, inside the writable
		// tree: it cannot be moved aside with the file.
		Pinned:     []string{d + "/ws/src"},
		Cwd:        d + "/ws/src",
		Home:       d + "/home",
		PrivateTmp: true,
		EnvDeny:    DefaultEnvDeny,
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

// TestDeriveWalkSkipsObjectStore: the loose objects of a repository do
// not use up the walk's bound, so a .env deep in the work tree is still
// masked; a directory named objects that is not in a git directory is
// searched like any other.
func TestDeriveWalkSkipsObjectStore(t *testing.T) {
	entries := []string{"ws/.git/HEAD", "ws/.git/refs/", "ws/.git/objects/pack/", "ws/src/a/b/.env", "ws/data/objects/ab/.env"}
	for i := range 80 {
		entries = append(entries, fmt.Sprintf("ws/.git/objects/%02x/%038x", i%4, i))
	}
	d := tree(t, entries...)
	old := MaxWalkEntries
	MaxWalkEntries = 30
	defer func() { MaxWalkEntries = old }()
	p, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: d + "/ws", Writable: true}}, DenyNames: []string{".env"}, ProtectNames: DefaultProtect})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("Warnings = %q, want none: the object store must not count against the bound", p.Warnings)
	}
	for _, want := range []string{d + "/ws/src/a/b/.env", d + "/ws/data/objects/ab/.env"} {
		if !slices.Contains(p.Deny, want) {
			t.Errorf("%s is not denied; Deny = %q", want, p.Deny)
		}
	}
	if !slices.Contains(p.ReadOnlyOver, d+"/ws/.git/config") {
		t.Errorf(".git/config (missing) is not made uncreatable; ReadOnlyOver = %q", p.ReadOnlyOver)
	}
}

// TestDeriveTooManyProtected: a writable zone holding many repositories
// (each with its hooks, config and missing names to make uncreatable) is
// refused with the count and where they are, instead of costing a mount
// each on every command; one repository is fine.
func TestDeriveTooManyProtected(t *testing.T) {
	old := MaxProtectedOver
	MaxProtectedOver = 40
	defer func() { MaxProtectedOver = old }()
	var entries []string
	for _, r := range []string{"a", "b", "c"} {
		entries = append(entries, "ws/"+r+"/.git/HEAD", "ws/"+r+"/.git/config", "ws/"+r+"/.git/hooks/", "ws/"+r+"/.git/objects/", "ws/"+r+"/.git/refs/")
	}
	entries = append(entries, "ws/c/.vscode/", "ws/c/.envrc")
	d := tree(t, entries...)
	spec := func(root string) Spec {
		return Spec{Zones: []Zone{{Name: "ws", Root: root, Writable: true}}, ProtectNames: DefaultProtect}
	}
	if _, err := Derive(spec(d + "/ws/a")); err != nil {
		t.Fatalf("one repository: %v", err)
	}
	_, err := Derive(spec(d + "/ws"))
	if err == nil {
		t.Fatal("three repositories with more than 40 protected paths: want a refusal")
	}
	for _, want := range []string{"more than 40 protected paths", d + "/ws/a (24)", "run guardrun in one project"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
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

func TestDeriveProtect(t *testing.T) {
	d := tree(t,
		"ws/.git/config", "ws/.git/hooks/", "ws/.git/objects/",
		"ws/nested/.git/config", // a repository without hooks
		"ws/plain/sub/",         // no repository: nothing missing is masked here
		"ws/deep/x/.envrc",
		"docs/.bashrc", // a read-only zone: nothing to protect
	)
	ws := d + "/ws"
	p, err := Derive(Spec{
		Zones: []Zone{
			{Name: "ws", Root: ws, Writable: true},
			{Name: "docs", Root: d + "/docs"},
		},
		ProtectNames: []string{".git/hooks", ".git/config", ".envrc", ".bashrc"},
		Cwd:          ws,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		ws + "/.bashrc", // missing, at the zone root: uncreatable
		ws + "/.envrc",
		ws + "/.git/config",
		ws + "/.git/hooks",
		ws + "/deep/x/.envrc",
		ws + "/nested/.bashrc", // missing, at a repository's root
		ws + "/nested/.envrc",
		ws + "/nested/.git/config",
		ws + "/nested/.git/hooks", // missing, inside an existing .git
	}
	if diff := cmp.Diff(p.ReadOnlyOver, want); diff != "" {
		t.Errorf("ReadOnlyOver (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(p.Pinned, []string{ws + "/.git", ws + "/deep", ws + "/deep/x", ws + "/nested", ws + "/nested/.git"}); diff != "" {
		t.Errorf("Pinned (-got +want):\n%s", diff)
	}
	for _, x := range []string{ws + "/.git/config", ws + "/.git/hooks/pre-commit", ws + "/nested/.git/hooks/x", ws + "/.bashrc"} {
		if _, w := p.Access(x); w {
			t.Errorf("%s is writable", x)
		}
	}
	for _, x := range []string{ws + "/.git/objects/ab", ws + "/.git/index", ws + "/plain/sub/.bashrc", ws + "/plain/.git"} {
		if _, w := p.Access(x); !w {
			t.Errorf("%s is not writable (git and ordinary files must stay writable)", x)
		}
	}
	if slices.Contains(p.ReadOnlyOver, d+"/docs/.bashrc") {
		t.Error("a name in a read-only zone needs no overlay")
	}
	if diff := cmp.Diff(p.ProtectNames, []string{".bashrc", ".envrc", ".git/config", ".git/hooks"}); diff != "" {
		t.Errorf("ProtectNames (-got +want):\n%s", diff)
	}
}

// A zone root without .git: .git/hooks is not masked there (its parent is
// missing), so `git init` inside still works.
func TestDeriveProtectLeavesGitInit(t *testing.T) {
	d := tree(t, "ws/")
	p, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: d + "/ws", Writable: true}}, ProtectNames: DefaultProtect})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range p.ReadOnlyOver {
		if Within(o, d+"/ws/.git") {
			t.Errorf("%s is masked: git init could not make .git", o)
		}
	}
}

func TestDeriveProtectBadNames(t *testing.T) {
	for _, n := range []string{"", "/abs", "a//b", "../x", "a/./b", ".git/"} {
		if _, err := Derive(Spec{ProtectNames: []string{n}}); err == nil || !strings.Contains(err.Error(), "want a relative name") {
			t.Errorf("protect name %q: err = %v", n, err)
		}
	}
}

func TestDeriveUnixSockets(t *testing.T) {
	d := tree(t, "ws/", "run/")
	ws, sock := d+"/ws", d+"/run/d.sock"
	for _, s := range []string{sock, ws + "/other.sock"} {
		// A socket file is all Derive looks at; nothing listens.
		if err := mkSocket(s); err != nil {
			t.Skipf("cannot make a unix socket here: %v", err)
		}
	}
	zones := []Zone{{Name: "ws", Root: ws, Writable: true}}
	p, err := Derive(Spec{Zones: zones, UnixSockets: []string{sock}})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Seccomp.AllowUnix || !slices.Equal(p.UnixSockets, []string{sock}) {
		t.Errorf("AllowUnix %v, UnixSockets %q", p.Seccomp.AllowUnix, p.UnixSockets)
	}
	if !slices.Contains(p.Deny, ws+"/other.sock") {
		t.Errorf("an unlisted socket in a zone is not masked: Deny = %q", p.Deny)
	}
	p, err = Derive(Spec{Zones: zones, UnixSockets: []string{sock}, Network: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Seccomp.AllowUnix || len(p.UnixSockets) != 0 || len(p.Warnings) != 1 {
		t.Errorf("with the network on: AllowUnix %v, UnixSockets %q, Warnings %q; want none honoured and a warning",
			p.Seccomp.AllowUnix, p.UnixSockets, p.Warnings)
	}
	p, err = Derive(Spec{Zones: zones})
	if err != nil {
		t.Fatal(err)
	}
	if p.Seccomp.AllowUnix {
		t.Error("AllowUnix without unix_sockets")
	}
}

// mkSocket leaves a unix socket file at path.
func mkSocket(path string) error {
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return err
	}
	l.SetUnlinkOnClose(false)
	return l.Close()
}

func TestCreatedProtected(t *testing.T) {
	d := tree(t, "ws/.git/config", "ws/old/")
	ws := d + "/ws"
	p, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: ws, Writable: true}}, ProtectNames: DefaultProtect, Cwd: ws})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.CreatedProtected(); len(got) != 0 {
		t.Errorf("nothing created yet, got %q", got)
	}
	// What a command could do where nothing was masked: a new repository
	// with a hook, and an .envrc in a directory that was no repository.
	for _, f := range []string{"new/.git/hooks/pre-commit", "old/.envrc"} {
		os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755)
		os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644)
	}
	want := []string{ws + "/new/.git/hooks", ws + "/old/.envrc"}
	if diff := cmp.Diff(p.CreatedProtected(), want); diff != "" {
		t.Errorf("CreatedProtected (-got +want):\n%s", diff)
	}
}

// TestDeriveProtectGitDir: what else in a repository makes git run a
// program is protected too: the hooks directory its config names (husky's
// .husky), included config files, submodules' and worktrees' git
// directories.
func TestDeriveProtectGitDir(t *testing.T) {
	d := tree(t,
		"ws/.husky/pre-commit", "ws/extra.gitconfig", "ws/src/a.go",
		"ws/.git/modules/lib/config", "ws/.git/modules/lib/hooks/",
		"ws/.git/worktrees/wt/config.worktree",
	)
	ws := d + "/ws"
	cfg := "[core]\n\trepositoryformatversion = 0\n\thooksPath = .husky ; set by husky\n[include]\n\tpath = ../extra.gitconfig\n"
	if err := os.WriteFile(ws+"/.git/config", []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: ws, Writable: true}}, ProtectNames: DefaultProtect, Cwd: ws})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []string{
		ws + "/.husky/pre-commit", ws + "/extra.gitconfig",
		ws + "/.git/modules/lib/config", ws + "/.git/modules/lib/hooks/post-checkout",
		ws + "/.git/worktrees/wt/config.worktree",
	} {
		if _, w := p.Access(x); w {
			t.Errorf("%s is writable", x)
		}
	}
	if _, w := p.Access(ws + "/src/a.go"); !w {
		t.Error("an ordinary file is not writable")
	}
}

// TestDeriveProtectOtherGitDirs: git directories not named .git are
// protected as .git is: a bare repository inside the tree (git uses it
// when run there), the directory a .git file points to (and the file),
// and the common directory a commondir file names.
func TestDeriveProtectOtherGitDirs(t *testing.T) {
	d := tree(t,
		"ws/bare/HEAD", "ws/bare/config", "ws/bare/objects/", "ws/bare/refs/", "ws/bare/hooks/",
		"ws/sub/.git", "ws/store/HEAD", "ws/store/config", "ws/store/objects/", "ws/store/refs/",
		"ws/.git/HEAD", "ws/.git/config", "ws/.git/objects/", "ws/.git/refs/", "ws/.git/commondir",
		"ws/common/config", "ws/common/objects/", "ws/common/refs/",
		"ws/notgit/config", "ws/notgit/HEAD",
	)
	ws := d + "/ws"
	os.WriteFile(ws+"/sub/.git", []byte("gitdir: ../store\n"), 0o644)
	os.WriteFile(ws+"/.git/commondir", []byte("../common\n"), 0o644)
	p, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: ws, Writable: true}}, ProtectNames: DefaultProtect, Cwd: ws})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []string{
		ws + "/bare/config", ws + "/bare/hooks/pre-receive", ws + "/sub/.git", ws + "/store/config",
		ws + "/.git/commondir", ws + "/common/config",
	} {
		if _, w := p.Access(x); w {
			t.Errorf("%s is writable", x)
		}
	}
	for _, x := range []string{ws + "/notgit/config", ws + "/bare/objects/x", ws + "/store/refs/x"} {
		if _, w := p.Access(x); !w {
			t.Errorf("%s is not writable", x)
		}
	}
	if got := p.CreatedProtected(); len(got) != 0 {
		t.Errorf("nothing created yet, got %q", got)
	}
}

// TestCreatedOtherGitDirs: what a command can create mid-run to send a
// later git elsewhere, where nothing was masked in advance, is reported:
// a .git file in a subdirectory, a bare repository. A commondir in an
// existing .git is moved aside after the command (Profile.MoveAfter), so
// it is not among them; TestMoveAsideCreated moves it.
func TestCreatedOtherGitDirs(t *testing.T) {
	d := tree(t, "ws/.git/HEAD", "ws/.git/config", "ws/.git/objects/", "ws/.git/refs/", "ws/sub/")
	ws := d + "/ws"
	p, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: ws, Writable: true}}, ProtectNames: DefaultProtect, Cwd: ws})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.MoveAfter, ws+"/.git/commondir") {
		t.Errorf("MoveAfter = %q, want the missing .git/commondir (no placeholder can stand for it)", p.MoveAfter)
	}
	for _, f := range []string{".git/commondir", "sub/.git", "bare/HEAD", "bare/config", "bare/objects/", "bare/refs/"} {
		path := filepath.Join(ws, f)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if strings.HasSuffix(f, "/") {
			os.MkdirAll(path, 0o755)
		} else {
			os.WriteFile(path, []byte("x"), 0o644)
		}
	}
	want := []string{ws + "/bare/config", ws + "/sub/.git"}
	if diff := cmp.Diff(p.CreatedProtected(), want); diff != "" {
		t.Errorf("CreatedProtected (-got +want):\n%s", diff)
	}
}

// TestDeriveProtectGlobalHooksPath: a relative core.hooksPath in the
// person's global git config names a directory in every work tree; it is
// protected in each repository found.
func TestDeriveProtectGlobalHooksPath(t *testing.T) {
	d := tree(t, "home/.gitconfig", "ws/.git/config", "ws/.githooks/pre-commit", "ws/src/a.go")
	os.WriteFile(d+"/home/.gitconfig", []byte("[core]\n\thooksPath = .githooks\n"), 0o644)
	ws := d + "/ws"
	p, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: ws, Writable: true}}, ProtectNames: DefaultProtect, Cwd: ws, Home: d + "/home"})
	if err != nil {
		t.Fatal(err)
	}
	if _, w := p.Access(ws + "/.githooks/pre-commit"); w {
		t.Error("the hooks directory the global config names is writable")
	}
	if _, w := p.Access(ws + "/src/a.go"); !w {
		t.Error("an ordinary file is not writable")
	}
}

func TestGitConfigPaths(t *testing.T) {
	f := filepath.Join(t.TempDir(), "config")
	os.WriteFile(f, []byte(`[Core]
	hooksPath = "hooks dir" # comment
[includeIf "gitdir:~/w/"]
	path = ~/w.gitconfig
[alias]
	path = not-an-include
[core] hookspath=x
`), 0o644)
	hooks, inc := gitConfigPaths(f)
	if diff := cmp.Diff(hooks, []string{"hooks dir", "x"}); diff != "" {
		t.Errorf("hooks (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(inc, []string{"~/w.gitconfig"}); diff != "" {
		t.Errorf("includes (-got +want):\n%s", diff)
	}
}

// Packages under node_modules ship protected names by the hundred; they
// are not bound read-only (nothing outside runs them there), and the
// walk still masks denied names inside.
func TestDeriveProtectSkipsDependencies(t *testing.T) {
	d := tree(t, "ws/node_modules/p/.vscode/s.json", "ws/node_modules/p/.env", "ws/.vscode/s.json")
	ws := d + "/ws"
	p, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: ws, Writable: true}}, ProtectNames: []string{".vscode"}, DenyNames: []string{".env"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p.ReadOnlyOver, []string{ws + "/.vscode"}); diff != "" {
		t.Errorf("ReadOnlyOver (-got +want):\n%s", diff)
	}
	if !slices.Contains(p.Deny, ws+"/node_modules/p/.env") {
		t.Error("a denied name under node_modules is not masked")
	}
	os.MkdirAll(ws+"/node_modules/q/.vscode", 0o755)
	if got := p.CreatedProtected(); len(got) != 0 {
		t.Errorf("CreatedProtected reports dependencies: %q", got)
	}
}

// TestDeriveProxy: with the proxy and no network, the profile has no
// network of its own, inet sockets for the loopback route, and unix
// sockets refused (listed ones are not honoured, with a warning); with
// the network on, the proxy is moot.
func TestDeriveProxy(t *testing.T) {
	d := tree(t, "ws/", "run/")
	ws, sock := d+"/ws", d+"/run/d.sock"
	zones := []Zone{{Name: "ws", Root: ws, Writable: true}}
	p, err := Derive(Spec{Zones: zones, Proxy: true})
	if err != nil {
		t.Fatal(err)
	}
	want := SeccompPolicy{AllowNetwork: true}
	if !p.Proxy || p.Network || p.Seccomp != want {
		t.Errorf("Proxy %v Network %v Seccomp %+v", p.Proxy, p.Network, p.Seccomp)
	}
	if err := mkSocket(sock); err != nil {
		t.Skipf("cannot make a unix socket here: %v", err)
	}
	p, err = Derive(Spec{Zones: zones, Proxy: true, UnixSockets: []string{sock}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Seccomp != want || len(p.UnixSockets) != 0 || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "proxy") {
		t.Errorf("proxy with unix_sockets: Seccomp %+v, UnixSockets %q, Warnings %q; want none honoured and a warning",
			p.Seccomp, p.UnixSockets, p.Warnings)
	}
	p, err = Derive(Spec{Zones: zones, Proxy: true, Network: true})
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
	if !in.Proxy || in.Network || in.Seccomp != want {
		t.Errorf("intersect: Proxy %v Network %v Seccomp %+v", in.Proxy, in.Network, in.Seccomp)
	}
	if err := in.Validate(); err != nil {
		t.Error(err)
	}
	// Unix sockets allowed on both sides do not survive the proxy.
	p, err = Derive(Spec{Zones: zones, UnixSockets: []string{sock}})
	if err != nil {
		t.Fatal(err)
	}
	in = Intersect(p, op)
	if in.Proxy || in.Seccomp.AllowUnix {
		t.Errorf("no network with unix sockets and the proxy: Proxy %v AllowUnix %v", in.Proxy, in.Seccomp.AllowUnix)
	}
}

// TestMoveAsideCreated: a commondir the command created in an existing
// .git is moved aside after it, and nothing else is touched.
func TestMoveAsideCreated(t *testing.T) {
	d := tree(t, "ws/.git/HEAD", "ws/.git/config", "ws/.git/objects/", "ws/.git/refs/")
	ws := d + "/ws"
	p, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: ws, Writable: true}}, ProtectNames: DefaultProtect, Cwd: ws})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.MoveAsideCreated(time.Now()); len(got) != 0 {
		t.Fatalf("nothing created yet, got %q", got)
	}
	cd := ws + "/.git/commondir"
	if err := os.WriteFile(cd, []byte("../elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := p.MoveAsideCreated(time.Now())
	if len(got) != 1 || !strings.Contains(got[0], "moved aside to "+cd+".guardrun-quarantine-") {
		t.Fatalf("MoveAsideCreated = %q", got)
	}
	if _, err := os.Lstat(cd); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s still there: %v", cd, err)
	}
}
