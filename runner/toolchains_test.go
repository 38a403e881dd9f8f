//go:build linux

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/sandbox"
)

// toolHome lays out a home directory with the person's toolchains, as
// pyenv, nvm, rustup and pipx-like installers leave them, each program a
// shell script that says who it is; pyenv's shim execs pyenv, which
// execs the version's interpreter under the same root, as the real ones
// do. Next to them, the credentials tools keep there.
func toolHome(t *testing.T, base string) string {
	t.Helper()
	home := filepath.Join(base, "toolhome")
	script := func(say string) string { return "#!/bin/sh\necho \"" + say + " $*\"\n" }
	files := map[string]string{
		".pyenv/shims/fakepy":                     "#!/bin/sh\nexec \"$HOME/.pyenv/libexec/pyenv\" exec fakepy \"$@\"\n",
		".pyenv/libexec/pyenv":                    "#!/bin/sh\n[ \"$1\" = exec ] || exit 9\nv=$(cat \"$HOME/.pyenv/version\")\nprog=$2\nshift 2\nexec \"$HOME/.pyenv/versions/$v/bin/$prog\" \"$@\"\n",
		".pyenv/version":                          "9.9.9\n",
		".pyenv/versions/9.9.9/bin/fakepy":        script("fakepy 9.9.9"),
		".pyenv/versions/9.9.9/pip.conf":          "[global]\nindex-url = https://user:secret@pypi.example/simple\n",
		".nvm/nvm.sh":                             "nvm() { :; }\n",
		".nvm/versions/node/v20.0.0/bin/fakenode": script("fakenode v20"),
		".nvm/versions/node/v20.0.0/etc/npmrc":    "//registry.npmjs.org/:_authToken=secret\n",
		".cargo/bin/fakecargo":                    script("fakecargo"),
		".cargo/credentials.toml":                 "[registry]\ntoken = \"secret\"\n",
		".rustup/settings.toml":                   "default_toolchain = \"stable\"\n",
		".local/share/faketool/faketool-1.0":      script("faketool 1.0"),
		".npmrc":                                  "//registry.npmjs.org/:_authToken=secret\n",
		".ssh/id_ed25519":                         "PRIVATE KEY\n",
	}
	for rel, c := range files {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(c, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(c), mode); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		".local/bin/faketool": "../share/faketool/faketool-1.0",
		".local/bin/leak":     "../../.npmrc",
	} {
		p := filepath.Join(home, link)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// TestToolchains: with system_read: default, the person's toolchains in
// the home directory are found through PATH inside the sandbox as
// outside it (pyenv's shim runs the version's interpreter under the same
// root; nvm's node; ~/.cargo/bin; a program linked into ~/.local/bin),
// read-only; the credentials next to and inside them stay unreadable.
func TestToolchains(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	home := toolHome(t, f.base)
	h := func(rel string) string { return filepath.Join(home, rel) }
	path := strings.Join([]string{h(".pyenv/shims"), h(".nvm/versions/node/v20.0.0/bin"), h(".cargo/bin"), h(".local/bin"), "/usr/local/bin", "/usr/bin", "/bin"}, ":")
	derive := func(home, path string) *sandbox.Profile {
		t.Helper()
		p, err := sandbox.Derive(sandbox.Spec{
			Zones:      []sandbox.Zone{{Name: "ws", Root: f.ws, Writable: true}, {Name: "probe", Root: filepath.Dir(probePath)}},
			SystemRead: sandbox.DefaultSystemPaths, Toolchains: true, Path: path,
			ProtectNames: sandbox.DefaultProtect, DenyNames: []string{".env"},
			Deny:    []string{filepath.Join(home, ".ssh")},
			Protect: []sandbox.Protected{{Path: f.config}, {Path: f.state, Hide: true}},
			Cwd:     f.ws, Home: home, AccountHome: home,
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	f.profile = derive(home, path)
	if landlockTest() {
		// The workspace's root has fixed entries under landlock; run one
		// level down, where a created .env would be moved aside.
		f.profile.Cwd = filepath.Join(f.ws, "sub")
	}
	env := append(f.env, "PATH="+path)
	run := func(t *testing.T, argv ...string) (int, string) {
		t.Helper()
		saved := f.env
		f.env = env
		defer func() { f.env = saved }()
		return f.run(t, nil, argv...)
	}
	for _, tc := range []struct{ name, script, want string }{
		{"pyenv's shim runs the version's interpreter", "fakepy -V", "fakepy 9.9.9 -V"},
		{"nvm's node", "fakenode -v", "fakenode v20 -v"},
		{"a program in ~/.cargo/bin", "fakecargo build", "fakecargo build"},
		{"a program linked into ~/.local/bin", "faketool", "faketool 1.0"},
		{"where they are found", "command -v fakepy; command -v fakenode", h(".pyenv/shims/fakepy") + "\n" + h(".nvm/versions/node/v20.0.0/bin/fakenode")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := run(t, "/bin/sh", "-c", tc.script)
			if status != 0 || !strings.Contains(out, tc.want) {
				t.Errorf("status %d, want %q in:\n%s", status, tc.want, out)
			}
		})
	}
	// The escapes: credentials inside and next to the toolchains, and
	// writes into them, from the probe, which proves it is inside first.
	for _, tc := range []struct {
		name string
		args []string
		keep string // unchanged on the host, "" for a read
	}{
		{"read a pyenv version's pip.conf", []string{"read", h(".pyenv/versions/9.9.9/pip.conf")}, ""},
		{"read an nvm version's global npmrc", []string{"read", h(".nvm/versions/node/v20.0.0/etc/npmrc")}, ""},
		{"read ~/.cargo/credentials.toml", []string{"read", h(".cargo/credentials.toml")}, ""},
		{"read ~/.rustup's neighbour ~/.npmrc", []string{"read", h(".npmrc")}, ""},
		{"read ~/.npmrc through a link in ~/.local/bin", []string{"read", h(".local/bin/leak")}, ""},
		{"read ~/.ssh", []string{"read", h(".ssh/id_ed25519")}, ""},
		{"replace pyenv's shim", []string{"write", h(".pyenv/shims/fakepy")}, h(".pyenv/shims/fakepy")},
		{"append to a version's interpreter", []string{"append", h(".pyenv/versions/9.9.9/bin/fakepy")}, h(".pyenv/versions/9.9.9/bin/fakepy")},
		{"plant a program in ~/.cargo/bin", []string{"write", h(".cargo/bin/planted")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before []byte
			if tc.keep != "" {
				before, _ = os.ReadFile(tc.keep)
			}
			status, out := run(t, append([]string{probePath}, tc.args...)...)
			m := probeResult(t, status, out)
			switch {
			case !strings.HasPrefix(m[2], "refused"):
				t.Errorf("NOT REFUSED: %s", strings.TrimSpace(m[0]))
			}
			if tc.keep != "" {
				if now, _ := os.ReadFile(tc.keep); string(now) != string(before) {
					t.Errorf("%s changed on the host", tc.keep)
				}
			}
			absent(h(".cargo/bin/planted"))(t)
		})
	}

	// The real pyenv of this machine, where there is one for this user.
	t.Run("this machine's pyenv", func(t *testing.T) {
		real, err := os.UserHomeDir()
		if err != nil {
			t.Skip(err)
		}
		version, err := os.ReadFile(filepath.Join(real, ".pyenv/version"))
		if err != nil {
			t.Skipf("no pyenv in %s for uid %d (%v)", real, os.Geteuid(), err)
		}
		v := strings.TrimSpace(strings.Split(string(version), "\n")[0])
		shims := filepath.Join(real, ".pyenv/shims")
		f.profile = derive(real, shims+":/usr/bin:/bin")
		saved := env
		env = append(f.env, "PATH="+shims+":/usr/bin:/bin")
		defer func() { env = saved }()
		status, out := run(t, "/bin/sh", "-c", `command -v python3 && python3 -c 'import sys; print(sys.version.split()[0], sys.executable)'`)
		want := v + " " + filepath.Join(real, ".pyenv/versions", v, "bin/python3")
		if status != 0 || !strings.Contains(out, shims+"/python3") || !strings.Contains(out, want) {
			t.Errorf("status %d, want python3 from %s and %q in:\n%s", status, shims, want, out)
		}
	})
}
