package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// homeLayout is a home directory with the layouts the toolchain table
// knows, the credentials tools keep next to them, and traps.
var homeLayout = []string{
	"home/.pyenv/shims/python3", "home/.pyenv/versions/3.11.7/bin/python3", "home/.pyenv/versions/3.11.7/pip.conf",
	"home/.nvm/nvm.sh", "home/.nvm/versions/node/v20.11.0/bin/node", "home/.nvm/versions/node/v20.11.0/etc/npmrc",
	"home/.cargo/bin/cargo", "home/.cargo/credentials.toml", "home/.cargo/config.toml", "home/.rustup/settings.toml",
	"home/.local/bin/black -> ../share/pipx/venvs/black/bin/black", "home/.local/share/pipx/venvs/black/bin/black",
	"home/.local/bin/claude -> ../share/claude/versions/1.0.0", "home/.local/share/claude/versions/1.0.0",
	"home/.local/bin/leak -> ../../.npmrc", "home/.npmrc", "home/.local/lib/python3.11/site-packages/x.py",
	"home/.local/share/uv/credentials/credentials.toml", "home/.local/share/uv/tools/ruff/bin/ruff",
	"home/.ssh/id_ed25519", "home/.config/gh/hosts.yml", "home/go/bin/gopls", "home/bin/mine",
	"home/.asdf/shims/node", "home/.tool-versions", "home/.sdkman/candidates/java/current/bin/java",
	"ws/",
}

// TestToolchainsShown: with system_read: default the layouts PATH uses
// are shown read-only (with what their programs need), each with why;
// the credentials inside them, next to them or linked from a bin
// directory stay invisible; what PATH names outside the known layouts
// is never shown.
func TestToolchainsShown(t *testing.T) {
	d := tree(t, homeLayout...)
	home := filepath.Join(d, "home")
	h := func(rel string) string { return filepath.Join(home, rel) }
	// The program ~/.local/bin/claude leads to.
	if err := os.Chmod(h(".local/share/claude/versions/1.0.0"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		path     string
		shown    []string // HomeRead paths, in order
		visible  []string // readable inside
		hidden   []string // not readable inside
		warnings int
	}{
		{name: "pyenv's shims on PATH show ~/.pyenv, not its pip.conf",
			path: h(".pyenv/shims") + ":/usr/bin", shown: []string{h(".pyenv")},
			visible: []string{h(".pyenv/versions/3.11.7/bin/python3"), h(".pyenv/shims/python3")},
			hidden:  []string{h(".pyenv/versions/3.11.7/pip.conf"), h(".nvm"), h(".ssh/id_ed25519")}},
		{name: "an nvm version's bin on PATH shows ~/.nvm, not the version's global npmrc",
			path: h(".nvm/versions/node/v20.11.0/bin"), shown: []string{h(".nvm")},
			visible: []string{h(".nvm/nvm.sh"), h(".nvm/versions/node/v20.11.0/bin/node")},
			hidden:  []string{h(".nvm/versions/node/v20.11.0/etc/npmrc")}},
		{name: "~/.cargo/bin shows itself and rustup, never ~/.cargo's credentials or config",
			path: h(".cargo/bin"), shown: []string{h(".cargo/bin"), h(".rustup")},
			visible: []string{h(".cargo/bin/cargo"), h(".rustup/settings.toml")},
			hidden:  []string{h(".cargo/credentials.toml"), h(".cargo/config.toml")}},
		{name: "~/.local/bin shows pip's user site, pipx, uv's tools, and the file a link leads to, not uv's credentials nor a link to ~/.npmrc",
			path:  h(".local/bin"),
			shown: []string{h(".local/bin"), h(".local/lib/python3.11"), h(".local/share/pipx"), h(".local/share/uv/tools"), h(".local/share/claude/versions/1.0.0")},
			visible: []string{h(".local/share/pipx/venvs/black/bin/black"), h(".local/share/uv/tools/ruff/bin/ruff"),
				h(".local/lib/python3.11/site-packages/x.py"), h(".local/share/claude/versions/1.0.0")},
			hidden: []string{h(".npmrc"), h(".local/share/uv/credentials/credentials.toml"), h(".local/share/claude/versions")}},
		{name: "asdf's shims show ~/.asdf and the version file they read",
			path: h(".asdf/shims"), shown: []string{h(".asdf"), h(".tool-versions")}},
		{name: "~/go/bin and sdkman's current version",
			path: h("go/bin") + ":" + h(".sdkman/candidates/java/current/bin"), shown: []string{h("go/bin"), h(".sdkman")}},
		{name: "directories PATH names outside the known layouts are not shown",
			path: h("bin") + ":" + h(".ssh") + ":" + h(".config/gh") + ":" + home, shown: nil,
			hidden: []string{h("bin/mine"), h(".ssh/id_ed25519"), h(".config/gh/hosts.yml")}},
		{name: "relative PATH entries are ignored",
			path: ".pyenv/shims:bin", shown: nil},
		{name: "a layout that exists but PATH does not use is not shown",
			path: "/usr/bin:/bin", shown: nil, hidden: []string{h(".pyenv"), h(".nvm"), h(".cargo/bin")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Derive(Spec{
				Zones:      []Zone{{Name: "ws", Root: filepath.Join(d, "ws"), Writable: true}},
				SystemRead: DefaultSystemPaths, Toolchains: true, Path: tc.path,
				Home: home, AccountHome: home, Cwd: filepath.Join(d, "ws"), Deny: []string{h(".ssh")},
			})
			if err != nil {
				t.Fatal(err)
			}
			var shown []string
			for _, hr := range p.HomeRead {
				shown = append(shown, hr.Path)
				if hr.Why == "" {
					t.Errorf("%s shown without a reason", hr.Path)
				}
				if r, w := p.Access(hr.Path); !r || w {
					t.Errorf("%s: read %v write %v, want read-only", hr.Path, r, w)
				}
			}
			if diff := cmp.Diff(shown, tc.shown); diff != "" {
				t.Errorf("shown (-got +want):\n%s", diff)
			}
			for _, v := range tc.visible {
				if r, w := p.Access(v); !r || w {
					t.Errorf("%s: read %v write %v, want read-only", v, r, w)
				}
			}
			for _, v := range tc.hidden {
				if r, _ := p.Access(v); r {
					t.Errorf("%s is readable inside", v)
				}
			}
		})
	}
}

// TestToolchainsNotShown: only system_read: default shows toolchains; a
// zone that covers one keeps it as the zone says (writable stays
// writable); a denied one stays denied; a layout that leads to the home
// directory itself is refused with a warning.
func TestToolchainsNotShown(t *testing.T) {
	d := tree(t, append(slices.Clone(homeLayout), "trap/.local/bin -> $T/trap", "trap/.local/lib/")...)
	home := filepath.Join(d, "home")
	path := filepath.Join(home, ".pyenv/shims")
	derive := func(s Spec) *Profile {
		t.Helper()
		if s.Home == "" {
			s.Home = home
		}
		s.AccountHome = s.Home
		s.Cwd = filepath.Join(d, "ws")
		s.Zones = append(s.Zones, Zone{Name: "ws", Root: filepath.Join(d, "ws"), Writable: true})
		p, err := Derive(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := derive(Spec{SystemRead: []string{"/usr"}, Path: path}); len(p.HomeRead) != 0 {
		t.Errorf("system_read as a list: shown %v", p.HomeRead)
	}
	p := derive(Spec{SystemRead: DefaultSystemPaths, Toolchains: true, Path: path,
		Zones: []Zone{{Name: "home", Root: home, Writable: true}}})
	if len(p.HomeRead) != 0 {
		t.Errorf("home as a writable zone: shown %v", p.HomeRead)
	}
	if _, w := p.Access(filepath.Join(home, ".pyenv/versions")); !w {
		t.Error("home as a writable zone: ~/.pyenv is no longer writable")
	}
	p = derive(Spec{SystemRead: DefaultSystemPaths, Toolchains: true, Path: path, Deny: []string{filepath.Join(home, ".pyenv")}})
	if r, _ := p.Access(filepath.Join(home, ".pyenv/shims/python3")); r || len(p.HomeRead) != 0 {
		t.Errorf("denied ~/.pyenv: readable %v, shown %v", r, p.HomeRead)
	}
	trap := filepath.Join(d, "trap")
	p = derive(Spec{SystemRead: DefaultSystemPaths, Toolchains: true, Path: filepath.Join(trap, ".local/bin"), Home: trap})
	if len(p.HomeRead) != 0 || !slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "holds the home directory") }) {
		t.Errorf("~/.local/bin linked to ~: shown %v, warnings %q", p.HomeRead, p.Warnings)
	}
	if r, _ := p.Access(filepath.Join(trap, ".local/lib")); r {
		t.Error("~/.local/bin linked to ~: the home directory is readable")
	}
}

// TestToolchainsThroughLinks: a layout that is a link elsewhere (~/.pyenv
// -> /opt/pyenv) is shown under its target, the link recreated; a PATH
// entry that is a link into a layout counts.
func TestToolchainsThroughLinks(t *testing.T) {
	d := tree(t, "opt/pyenv/shims/python3", "home/.pyenv -> $T/opt/pyenv", "links/shims -> $T/home/.pyenv/shims", "ws/")
	home := filepath.Join(d, "home")
	p, err := Derive(Spec{
		Zones:      []Zone{{Name: "ws", Root: filepath.Join(d, "ws"), Writable: true}},
		SystemRead: DefaultSystemPaths, Toolchains: true, Path: filepath.Join(d, "links/shims"),
		Home: home, AccountHome: home, Cwd: filepath.Join(d, "ws"),
	})
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(d, "opt/pyenv")
	if len(p.HomeRead) != 1 || p.HomeRead[0].Path != target {
		t.Fatalf("shown %v, want %s", p.HomeRead, target)
	}
	if !slices.Contains(p.Symlinks, Symlink{Path: filepath.Join(home, ".pyenv"), Target: target}) {
		t.Errorf("the link ~/.pyenv is not recreated: %v", p.Symlinks)
	}
	if r, _ := p.Access(filepath.Join(home, ".pyenv/shims/python3")); !r {
		t.Error("~/.pyenv/shims/python3 is not readable through the link")
	}
}

// BenchmarkDeriveToolchains is what showing the toolchains adds to
// Derive, which runs for every command: a home directory with the layouts
// of homeLayout, all of them, one or none on PATH, against the same
// Derive with system_read as a list.
//
//	go test -run '^$' -bench DeriveToolchains ./sandbox
func BenchmarkDeriveToolchains(b *testing.B) {
	d := b.TempDir()
	for _, e := range homeLayout {
		name, target, link := strings.Cut(e, " -> ")
		p := filepath.Join(d, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		switch {
		case link:
			if err := os.Symlink(target, p); err != nil {
				b.Fatal(err)
			}
		case strings.HasSuffix(e, "/"):
			os.MkdirAll(p, 0o755)
		default:
			os.WriteFile(p, nil, 0o644)
		}
	}
	home := filepath.Join(d, "home")
	system := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	all := system
	for _, t := range homeToolchains {
		all = filepath.Join(home, t.root) + ":" + all
	}
	for _, tc := range []struct {
		name string
		on   bool
		path string
	}{
		{"all-layouts-on-path", true, all},
		{"pyenv-on-path", true, filepath.Join(home, ".pyenv/shims") + ":" + system},
		{"none-on-path", true, system},
		{"system-read-list", false, all},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Derive(Spec{
					Zones:      []Zone{{Name: "ws", Root: filepath.Join(d, "ws"), Writable: true}},
					SystemRead: DefaultSystemPaths, Toolchains: tc.on, Path: tc.path,
					Home: home, AccountHome: home, Cwd: filepath.Join(d, "ws"),
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
