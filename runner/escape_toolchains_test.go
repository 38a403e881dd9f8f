//go:build linux

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/sandbox"
)

// TestToolchainEscapes: the toolchains system_read: default shows under
// the home directory are chosen by PATH and $HOME, which what ran before
// can set (a Makefile's export, with SHELL=guardrun), and followed
// through their links. None of that may show a file outside every zone
// that is not a toolchain's: a link an earlier command made in a
// writable zone is never followed out of it, and what is shown stays
// read-only. Each row derives the profile as guardrun would for that
// $HOME and PATH (the default config's deny paths under that $HOME) and
// makes the attempt from the probe inside the sandbox.
func TestToolchainEscapes(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	home := filepath.Join(f.base, "thome") // the person's, outside every zone
	fake := filepath.Join(f.ws, "fh")      // a $HOME inside the workspace
	h := func(rel string) string { return filepath.Join(home, rel) }
	w := func(rel string) string { return filepath.Join(f.ws, rel) }
	files := map[string]string{
		h(".kube/config"):                              "kube token\n",
		h(".aws/credentials"):                          "aws secret\n",
		h(".ssh/id_ed25519"):                           "PRIVATE KEY\n",
		h(".npmrc"):                                    "//registry.npmjs.org/:_authToken=secret\n",
		h(".pyenv/shims/fakepy"):                       "#!/bin/sh\necho fakepy\n",
		h(".pyenv/versions/9.9.9/pip.conf"):            "[global]\nindex-url = https://user:secret@pypi.example/simple\n",
		h(".pyenv/versions/9.9.9/bin/fakepy"):          "#!/bin/sh\necho fakepy 9.9.9\n",
		h(".local/share/faketool/faketool-1"):          "#!/bin/sh\necho faketool\n",
		h(".local/lib/python3.11/site-packages/ok.py"): "x = 1\n",
		w("gopath/bin/gopls"):                          "#!/bin/sh\necho gopls\n",
		w("fh/.pyenv2/shims/fakepy"):                   "#!/bin/sh\necho fakepy\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		// The person's own links: a project's script in ~/.local/bin,
		// GOPATH kept in the workspace, a pipx-like program.
		h(".local/bin/tool"):     w("scripts/tool"),
		h("go"):                  w("gopath"),
		h(".local/bin/faketool"): "../share/faketool/faketool-1",
		h(".local/bin/leak"):     "../../.npmrc",
		// What an earlier command made in the workspace.
		w("scripts/tool"):              h(".kube/config"),
		w("gopath/bin/leak"):           h(".kube/config"),
		w("fh/.pyenv"):                 h(".kube"),
		w("fh/.local/bin/key"):         h(".ssh/id_ed25519"),
		w("fh/.local/lib/python3.11"):  h(".ssh"),
		w("fh/.cargo/bin"):             h(".aws"),
		w("fh/.pyenv2/shims/kube"):     h(".kube/config"),
		w("fh/.local/share/pipx"):      h(".aws"),
		w("fh/.asdf"):                  home,
		w("fh/.tool-versions"):         h(".kube/config"),
		w("fh/go/bin"):                 h(".ssh"),
		w("fh/.bun/bin"):               h(".kube"),
		w("fh/.bun/install/global"):    h(".aws"),
		w("fh/.deno/bin/deno"):         h(".aws/credentials"),
		w("fh/.local/share/mise"):      h(".kube"),
		w("fh/.local/share/uv/tools"):  h(".ssh"),
		w("fh/.local/share/uv/python"): h(".aws"),
		w("fh/.rustup"):                h(".kube"),
		w("fh/.npm-global"):            h(".aws"),
		w("fh/.sdkman"):                h(".ssh"),
		w("fh/.volta"):                 h(".kube"),
		w("fh/.nvm"):                   h(".aws"),
		w("fh/.rbenv"):                 h(".ssh"),
		w("fh/.nodenv"):                h(".kube"),
		w("fh/.goenv"):                 h(".aws"),
		w("fh/.local/pipx"):            h(".kube"),
	} {
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	fakePath := strings.Join([]string{
		filepath.Join(fake, ".pyenv/shims"), filepath.Join(fake, ".pyenv2/shims"), filepath.Join(fake, ".local/bin"),
		filepath.Join(fake, ".cargo/bin"), filepath.Join(fake, "go/bin"), filepath.Join(fake, ".bun/bin"),
		filepath.Join(fake, ".deno/bin"), filepath.Join(fake, ".local/share/mise/shims"), filepath.Join(fake, ".asdf/shims"),
		filepath.Join(fake, ".npm-global/bin"), filepath.Join(fake, ".sdkman/candidates/java/current/bin"),
		filepath.Join(fake, ".volta/bin"), filepath.Join(fake, ".nvm/versions/node/v1/bin"), filepath.Join(fake, ".rbenv/shims"),
		filepath.Join(fake, ".nodenv/shims"), filepath.Join(fake, ".goenv/shims"),
		"/usr/bin", "/bin",
	}, ":")
	realPath := strings.Join([]string{h(".pyenv/shims"), h(".local/bin"), h("go/bin"), "/usr/bin", "/bin"}, ":")
	localBin := h(".local/bin") + ":/usr/bin:/bin"
	goBin := h("go/bin") + ":/usr/bin:/bin"
	account := home
	derive := func(t *testing.T, home, path, zone string) *sandbox.Profile {
		t.Helper()
		p, err := sandbox.Derive(sandbox.Spec{
			Zones:      []sandbox.Zone{{Name: "ws", Root: zone, Writable: true}, {Name: "probe", Root: filepath.Dir(probePath)}},
			SystemRead: sandbox.DefaultSystemPaths, Toolchains: true, Path: path,
			ProtectNames: sandbox.DefaultProtect, DenyNames: []string{".env"},
			// The default config's deny paths, under this $HOME.
			Deny:    []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".aws"), filepath.Join(home, ".gnupg")},
			Protect: []sandbox.Protected{{Path: f.config}, {Path: f.state, Hide: true}},
			Cwd:     zone, Home: home, AccountHome: account,
		})
		if err != nil {
			t.Fatal(err)
		}
		if landlockTest() {
			// The zone's root has fixed entries under landlock (its
			// .env); run one level down.
			p.Cwd = filepath.Join(zone, map[bool]string{true: "sub", false: "dir"}[zone == f.ws])
		}
		return p
	}
	for _, tc := range []struct {
		name       string
		home, path string
		// zone is the command's writable zone: the workspace, or for a
		// later command in its subdirectory (make -C sub) sub alone,
		// where the earlier command's links lie outside every zone.
		zone   string
		args   []string
		keep   string // unchanged on the host, "" for a read
		absent string // does not exist on the host after the attempt
	}{
		{name: "a link in ~/.local/bin to a project's script, which the project made a link to ~/.kube/config",
			home: home, path: localBin, args: []string{"read", h(".kube/config")}},
		{name: "the same, read through the link in ~/.local/bin",
			home: home, path: localBin, args: []string{"read", h(".local/bin/tool")}},
		{name: "~/go linked into the workspace, whose bin holds a link to ~/.kube/config",
			home: home, path: goBin, args: []string{"read", h(".kube/config")}},
		{name: "a $HOME in the workspace whose ~/.pyenv leads to ~/.kube",
			home: fake, path: fakePath, args: []string{"read", h(".kube/config")}},
		{name: "a $HOME in the workspace whose ~/.local/bin holds a link to the real ~/.ssh's key",
			home: fake, path: fakePath, args: []string{"read", h(".ssh/id_ed25519")}},
		{name: "a $HOME in the workspace whose pip user site leads to the real ~/.ssh",
			home: fake, path: fakePath, args: []string{"read", h(".ssh/id_ed25519")}},
		{name: "a $HOME in the workspace whose ~/.cargo/bin (and pipx, bun's globals, uv's Pythons, nvm, npm's prefix, goenv) lead to the real ~/.aws",
			home: fake, path: fakePath, args: []string{"read", h(".aws/credentials")}},
		{name: "a $HOME in the workspace whose asdf is the real home and whose .tool-versions leads to ~/.kube/config",
			home: fake, path: fakePath, args: []string{"read", h(".npmrc")}},
		{name: "a $HOME in the workspace whose shims, mise, rustup, volta, nodenv and bun lead to ~/.kube",
			home: fake, path: fakePath, args: []string{"read", h(".kube/config")}},
		{name: "a later command in a subdirectory: the link in ~/.local/bin to the project's script, now a link to ~/.kube/config",
			home: home, path: localBin, zone: w("sub"), args: []string{"read", h(".kube/config")}},
		{name: "a later command in a subdirectory: ~/go's bin in the project holds a link to ~/.kube/config",
			home: home, path: goBin, zone: w("sub"), args: []string{"read", h(".kube/config")}},
		{name: "a later command in a subdirectory with $HOME exported into the project: its ~/.pyenv leads to ~/.kube",
			home: fake, path: fakePath, zone: w("sub"), args: []string{"read", h(".kube/config")}},
		{name: "a later command in a subdirectory with $HOME exported into the project: its ~/.local/bin leads to the real ~/.ssh's key",
			home: fake, path: fakePath, zone: w("sub"), args: []string{"read", h(".ssh/id_ed25519")}},
		{name: "a later command in a subdirectory with $HOME exported into the project: its layouts lead to the real ~/.aws",
			home: fake, path: fakePath, zone: w("sub"), args: []string{"read", h(".aws/credentials")}},
		{name: "a later command in a subdirectory with $HOME exported into the project: its asdf is the real home",
			home: fake, path: fakePath, zone: w("sub"), args: []string{"read", h(".npmrc")}},
		{name: "the real ~/.npmrc through a link in ~/.local/bin",
			home: home, path: realPath, args: []string{"read", h(".local/bin/leak")}},
		{name: "hard-link a pyenv version's denied pip.conf into the workspace",
			home: home, path: realPath, args: []string{"link", h(".pyenv/versions/9.9.9/pip.conf"), w("sub/pip.conf")}, absent: w("sub/pip.conf")},
		{name: "hard-link ~/.npmrc, which a link in ~/.local/bin leads to, into the workspace",
			home: home, path: realPath, args: []string{"link", h(".npmrc"), w("sub/npmrc")}, absent: w("sub/npmrc")},
		{name: "plant a .pth file in pip's user site",
			home: home, path: realPath, args: []string{"write", h(".local/lib/python3.11/site-packages/zz.pth")}, absent: h(".local/lib/python3.11/site-packages/zz.pth")},
		{name: "plant sitecustomize.py in a pyenv version",
			home: home, path: realPath, args: []string{"write", h(".pyenv/versions/9.9.9/bin/sitecustomize.py")}, absent: h(".pyenv/versions/9.9.9/bin/sitecustomize.py")},
		{name: "rewrite the program a link in ~/.local/bin leads to",
			home: home, path: realPath, args: []string{"append", h(".local/bin/faketool")}, keep: h(".local/share/faketool/faketool-1")},
		{name: "rewrite pyenv's shim",
			home: home, path: realPath, args: []string{"append", h(".pyenv/shims/fakepy")}, keep: h(".pyenv/shims/fakepy")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			zone := f.ws
			if tc.zone != "" {
				zone = tc.zone
			}
			f.profile = derive(t, tc.home, tc.path, zone)
			f.accept = nil
			if tc.home == fake {
				// Its deny paths do not exist inside the workspace:
				// a config that accepts that under landlock.
				f.accept = []string{"deny_create"}
			}
			saved := f.env
			f.env = append(f.env, "PATH="+tc.path, "HOME="+tc.home)
			defer func() { f.env = saved }()
			var before []byte
			if tc.keep != "" {
				before, _ = os.ReadFile(tc.keep)
			}
			status, out := f.run(t, nil, append([]string{probePath}, tc.args...)...)
			m := probeResult(t, status, out)
			switch {
			case !strings.HasPrefix(m[2], "refused"):
				t.Errorf("NOT REFUSED: %s (shown: %v)", strings.TrimSpace(m[0]), f.profile.HomeRead)
			}
			if tc.keep != "" {
				if now, _ := os.ReadFile(tc.keep); string(now) != string(before) {
					t.Errorf("%s changed on the host", tc.keep)
				}
			}
			if tc.absent != "" {
				absent(tc.absent)(t)
			}
		})
	}
}
