package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestToolchainsLinksStayPut: the toolchain search follows a link only
// at a layout's own name in the account's home directory, once: never
// one an earlier command could have made (in a project a link of the
// person's leads into, in a writable zone, under a $HOME that is not the
// account's), so what it shows is never a secret a command pointed it
// to. A link in a bin directory shows only a program (an executable
// file).
func TestToolchainsLinksStayPut(t *testing.T) {
	d := tree(t,
		"home/.kube/config", "home/.ssh/id_ed25519", "home/.aws/credentials",
		"home/.local/share/tool/tool-1", "home/.local/share/dot/.local-bin-x",
		"home/.local/bin/tool -> ../share/tool/tool-1",
		"home/.local/bin/proj -> $T/other/scripts/proj",
		"home/.local/bin/kube -> ../../.kube/config",
		"home/.local/bin/zone -> $T/ws/bin/zone",
		"home/.local/bin/twice -> ../share/dot/twice",
		"home/.local/share/dot/twice -> ../../../.aws/credentials",
		"home/go -> $T/other/gopath",
		"home/.asdf/shims/node", "home/.tool-versions -> $T/other/dotfiles/.tool-versions",
		// What earlier commands made where they could write.
		"other/scripts/proj -> $T/home/.kube/config",
		"other/gopath/bin/leak -> $T/home/.kube/config",
		"other/dotfiles/.tool-versions -> $T/home/.kube/config",
		"ws/bin/zone -> $T/home/.ssh/id_ed25519",
		"fake/.pyenv -> $T/home/.kube",
		"fake/.cargo/bin/cargo",
		"fake/.local/bin/key -> $T/home/.ssh/id_ed25519",
		"fake/.local/lib/python3.11 -> $T/home/.aws",
	)
	if err := os.Chmod(filepath.Join(d, "home/.local/share/tool/tool-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	home, fake := filepath.Join(d, "home"), filepath.Join(d, "fake")
	h := func(rel string) string { return filepath.Join(home, rel) }
	secrets := []string{h(".kube/config"), h(".ssh/id_ed25519"), h(".aws/credentials")}
	for _, tc := range []struct {
		name, home, path string
		shown            []string
		warn             []string // substrings of the warnings, in order
	}{
		{name: "~/.local/bin: a program's link is followed; links past it, into a project, to a credential or in the workspace are not",
			home: home, path: h(".local/bin"),
			shown: []string{h(".local/bin"), h(".local/share/tool/tool-1")},
			warn: []string{
				h(".local/bin/proj") + " leads through the link " + filepath.Join(d, "other/scripts/proj") + ", past the layout's own name",
				h(".local/bin/twice") + " leads through the link " + h(".local/share/dot/twice") + ", past the layout's own name",
				h(".local/bin/zone") + " leads through the link " + filepath.Join(d, "ws/bin/zone") + ", in a writable zone",
			}},
		{name: "~/go linked to a GOPATH elsewhere: shown, the links in its bin are not followed",
			home: home, path: h("go/bin"),
			shown: []string{filepath.Join(d, "other/gopath/bin")},
			warn:  []string{h("go/bin/leak") + " leads through the link " + filepath.Join(d, "other/gopath/bin/leak") + ", past the layout's own name"}},
		{name: "asdf's ~/.tool-versions linked into dotfiles that a command made a link",
			home: home, path: h(".asdf/shims"),
			shown: []string{h(".asdf")},
			warn:  []string{h(".tool-versions") + " leads through the link " + filepath.Join(d, "other/dotfiles/.tool-versions") + ", past the layout's own name"}},
		{name: "a $HOME that is not the account's: its layouts are shown where they are, no link is followed",
			home: fake, path: strings.Join([]string{filepath.Join(fake, ".pyenv/shims"), filepath.Join(fake, ".cargo/bin"), filepath.Join(fake, ".local/bin")}, ":"),
			shown: []string{filepath.Join(fake, ".cargo/bin"), filepath.Join(fake, ".local/bin")},
			warn: []string{
				filepath.Join(fake, ".pyenv") + " leads through the link " + filepath.Join(fake, ".pyenv") + ", under a home directory that is not the account's",
				filepath.Join(fake, ".local/lib/python3.11") + " leads through the link " + filepath.Join(fake, ".local/lib/python3.11") + ", under a home directory that is not the account's",
			}},
		{name: "a $HOME under /proc (the command's own working directory, as guardrun's) shows nothing and does not fail",
			home: "/proc/self/cwd", path: "/proc/self/cwd/go/bin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Derive(Spec{
				Zones:      []Zone{{Name: "ws", Root: filepath.Join(d, "ws"), Writable: true}},
				SystemRead: DefaultSystemPaths, Toolchains: true, Path: tc.path,
				Home: tc.home, AccountHome: home, Cwd: filepath.Join(d, "ws"),
				Deny: []string{filepath.Join(tc.home, ".ssh"), filepath.Join(tc.home, ".aws")},
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			var shown []string
			for _, hr := range p.HomeRead {
				shown = append(shown, hr.Path)
			}
			if diff := cmp.Diff(shown, tc.shown); diff != "" {
				t.Errorf("shown (-got +want):\n%s", diff)
			}
			for _, s := range secrets {
				if r, _ := p.Access(s); r {
					t.Errorf("%s is readable inside", s)
				}
			}
			var warned []string
			for _, w := range tc.warn {
				if !slices.ContainsFunc(p.Warnings, func(g string) bool { return strings.Contains(g, w) }) {
					warned = append(warned, w)
				}
			}
			if len(warned) > 0 {
				t.Errorf("no warning %q in %q", warned, p.Warnings)
			}
		})
	}
}
