package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// HomeRead is a path under the home directory that the profile shows
// read-only because a toolchain lives there (system_read: default), and
// why: the person's interpreters and version managers, found through
// PATH inside the sandbox as outside it.
type HomeRead struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

// toolchain is where one kind of interpreter or version manager installs
// itself in a home directory, by its default layout. Every path is
// relative to the home directory. What is shown holds programs and
// libraries, never the tool's own credentials: a layout whose top
// directory keeps tokens (~/.cargo: credentials.toml, config.toml) is
// shown by its bin directory alone.
type toolchain struct {
	name string
	// root is shown when PATH names a directory inside it.
	root string
	// also are shown with it (globs): what its programs exec, import or
	// read to pick a version.
	also []string
	// with are other layouts shown with it (rustup's toolchains, which
	// cargo's proxies in ~/.cargo/bin run).
	with []string
	// deny are globs of files inside what is shown that can hold
	// credentials: a prefix's global npmrc (an _authToken that `npm
	// config set -g` writes there), a site-wide pip.conf (an index URL
	// with a password).
	deny []string
	// links: root is a bin directory whose symbolic links may lead to
	// programs elsewhere in the home directory (pipx, uv, installers
	// that link their binary there); the file each leads to is shown.
	links bool
}

// homeToolchains are the layouts guardrun knows. Keep README's "Your
// toolchains" section in sync.
var homeToolchains = []toolchain{
	{name: "pyenv", root: ".pyenv", deny: []string{".pyenv/versions/*/pip.conf", ".pyenv/versions/*/envs/*/pip.conf"}},
	{name: "rbenv", root: ".rbenv"},
	{name: "nodenv", root: ".nodenv", deny: []string{".nodenv/versions/*/etc/npmrc"}},
	{name: "goenv", root: ".goenv"},
	{name: "nvm", root: ".nvm", deny: []string{".nvm/versions/node/*/etc/npmrc", ".nvm/versions/io.js/*/etc/npmrc"}},
	{name: "volta", root: ".volta", deny: []string{".volta/tools/image/node/*/etc/npmrc"}},
	{name: "npm prefix ~/.npm-global", root: ".npm-global", deny: []string{".npm-global/etc/npmrc"}},
	{name: "cargo", root: ".cargo/bin", with: []string{"rustup"}, links: true},
	{name: "rustup", root: ".rustup"},
	{name: "go", root: "go/bin", links: true},
	{name: "sdkman", root: ".sdkman"},
	{name: "bun", root: ".bun/bin", also: []string{".bun/install/global"}, links: true},
	{name: "deno", root: ".deno/bin", links: true},
	{name: "~/.local/bin", root: ".local/bin", links: true,
		// pip --user's libraries, pipx's and uv's tool environments
		// and uv's Pythons (not ~/.local/share/uv itself: its
		// credentials directory).
		also: []string{".local/lib/python*", ".local/share/pipx", ".local/pipx", ".local/share/uv/tools", ".local/share/uv/python"},
		deny: []string{".local/share/pipx/venvs/*/pip.conf", ".local/share/pipx/shared/pip.conf", ".local/pipx/venvs/*/pip.conf", ".local/share/uv/tools/*/pip.conf"}},
	{name: "mise", root: ".local/share/mise", deny: []string{".local/share/mise/installs/node/*/etc/npmrc", ".local/share/mise/installs/python/*/pip.conf"}},
	{name: "asdf", root: ".asdf", also: []string{".tool-versions"}, deny: []string{".asdf/installs/nodejs/*/etc/npmrc", ".asdf/installs/python/*/pip.conf"}},
}

// HomeCredentials are files under the home directory where tools keep
// tokens and passwords. None lies in what the toolchain layouts show;
// any that a layout's link or glob would show is denied all the same.
var HomeCredentials = []string{
	".cargo/credentials", ".cargo/credentials.toml", ".cargo/config", ".cargo/config.toml",
	".npmrc", ".yarnrc", ".yarnrc.yml", ".bunfig.toml",
	".pypirc", ".pip/pip.conf", ".config/pip/pip.conf", ".config/pypoetry/auth.toml",
	".netrc", ".git-credentials", ".gem/credentials", ".docker/config.json",
	".config/gh/hosts.yml", ".local/share/uv/credentials",
}

// maxToolLinks bounds the links followed in one bin directory.
const maxToolLinks = 64

// toolchains adds to the profile, read-only, the toolchain layouts under
// home that exist and that PATH uses (with what they need), and denies
// the credential files inside them. A layout already visible (a zone
// covers it) or denied is left as it is; one that resolves to the home
// directory itself or above it is not shown (a link ~/.local/bin -> ~
// would show everything), and a warning says so. PATH only chooses
// among the known layouts: a directory it names elsewhere in the home
// directory is never shown because of it.
//
// Links are followed only where an earlier command cannot have made
// them: a layout's own name in the account's home directory (~/.pyenv
// -> /opt/pyenv, ~/.local/bin/black -> ../share/pipx/...), one link
// and no further (resolveShown). A home directory that is not the
// account's ($HOME exported by a Makefile into the project) may be the
// command's own making, so nothing under it is followed at all.
func (d *deriving) toolchains(home, accountHome, path string) {
	if home == "" || home == "/" || path == "" {
		return
	}
	realHome, err := d.res.resolve(home)
	if err != nil {
		return
	}
	h := homeSearch{home: home, realHome: realHome}
	if accountHome != "" {
		if ra, err := d.res.resolve(accountHome); err == nil && ra == realHome {
			h.follow = true
		}
	}
	var dirs []string // PATH's directories, as named and as resolved
	for _, e := range filepath.SplitList(path) {
		if !filepath.IsAbs(e) {
			continue // relative entries name the command's own directory
		}
		e = filepath.Clean(e)
		dirs = append(dirs, e)
		if Within(e, "/usr") || Within(e, "/bin") || Within(e, "/sbin") {
			continue // the system's, never a link into the home directory
		}
		if r, err := d.res.resolve(e); err == nil && r != e {
			dirs = append(dirs, r)
		}
	}
	byName := map[string]toolchain{}
	for _, t := range homeToolchains {
		byName[t.name] = t
	}
	shown := map[string]bool{}
	var show func(t toolchain, why string)
	show = func(t toolchain, why string) {
		if shown[t.name] {
			return
		}
		shown[t.name] = true
		if !d.showHome(h, filepath.Join(home, t.root), t.name+": "+why) {
			return
		}
		for _, g := range t.also {
			matches, _ := filepath.Glob(filepath.Join(home, g))
			for _, m := range matches {
				d.showHome(h, m, fmt.Sprintf("%s: used by its programs (%s)", t.name, why))
			}
		}
		for _, w := range t.with {
			show(byName[w], "used by "+t.name+"'s programs")
		}
		for _, g := range t.deny {
			matches, _ := filepath.Glob(filepath.Join(home, g))
			for _, m := range matches {
				if r, err := d.res.resolve(m); err == nil {
					d.Deny = append(d.Deny, r)
				}
			}
		}
		if t.links && h.follow {
			d.showLinkTargets(h, filepath.Join(home, t.root))
		}
	}
	for _, t := range homeToolchains {
		root := filepath.Join(home, t.root)
		if _, err := os.Lstat(root); err != nil {
			continue // not installed (the common case: one lstat)
		}
		realRoot, err := d.res.resolve(root)
		if err != nil {
			continue
		}
		for _, e := range dirs {
			if Within(e, root) || Within(e, realRoot) {
				show(t, "PATH has "+e)
				break
			}
		}
	}
	if len(d.HomeRead) == 0 {
		return
	}
	// Credentials a link target or glob above might have brought in.
	for _, c := range HomeCredentials {
		p := filepath.Join(home, c)
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if r, err := d.res.resolve(p); err == nil {
			for _, h := range d.HomeRead {
				if Within(r, h.Path) {
					d.Deny = append(d.Deny, r)
					break
				}
			}
		}
	}
}

// homeSearch is the home directory the toolchains are looked for in: as
// $HOME names it, resolved, and whether links under it are followed
// (it is the account's).
type homeSearch struct {
	home, realHome string
	follow         bool
}

// showHome shows path (under home, resolved through links) read-only
// for why, unless it does not exist, is visible or denied already, or
// resolves to the home directory or one above it. It reports whether
// path is visible now.
func (d *deriving) showHome(h homeSearch, path, why string) bool {
	if _, err := os.Stat(path); err != nil {
		return false
	}
	r, ok := d.resolveShown(h, path, why)
	if !ok {
		return false
	}
	if Within(h.home, r) || Within(h.realHome, r) {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s resolves to %s, which holds the home directory: not shown (%s)", path, r, why))
		return false
	}
	if withinAny(r, d.Deny) {
		return false
	}
	if read, _ := d.Access(r); read {
		return true // a zone or a system directory shows it already
	}
	if r != path && !withinAny(path, d.ReadOnly) && !withinAny(path, d.ReadWrite) {
		// As for system_read: the link is recreated, its target bound
		// once under its own name.
		d.Symlinks = append(d.Symlinks, Symlink{Path: path, Target: r})
	}
	d.ReadOnly = append(d.ReadOnly, r)
	d.HomeRead = append(d.HomeRead, HomeRead{Path: r, Why: why})
	return true
}

// showLinkTargets shows the file each symbolic link in dir leads to,
// where that is a program (a regular file with an execute bit) in the
// home directory that nothing shows yet: a tool that installs its binary
// elsewhere and links it into a bin directory on PATH. A credential is
// no program: ~/.kube/config, a key, an npmrc are not shown whatever
// links to them.
func (d *deriving) showLinkTargets(h homeSearch, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	n := 0
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if n++; n > maxToolLinks {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s: more than %d links; the programs the others lead to are not shown", dir, maxToolLinks))
			return
		}
		link := filepath.Join(dir, e.Name())
		r, ok := d.resolveShown(h, link, "the program "+link+" leads to")
		if !ok || !(Within(r, h.home) || Within(r, h.realHome)) {
			continue
		}
		if fi, err := os.Stat(r); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		if read, _ := d.Access(r); read || withinAny(r, d.Deny) {
			continue
		}
		if slices.ContainsFunc(HomeCredentials, func(c string) bool {
			return r == filepath.Join(h.home, c) || r == filepath.Join(h.realHome, c)
		}) {
			continue
		}
		d.ReadOnly = append(d.ReadOnly, r)
		d.HomeRead = append(d.HomeRead, HomeRead{Path: r, Why: "the program " + link + " leads to"})
	}
}

// resolveShown resolves path, a name under the home directory that the
// toolchain search would show, and reports whether it may be shown. A
// symbolic link on the way is followed only where an earlier command
// cannot have made it: under the account's home directory, at path
// itself or a directory above it (the layout's own name: ~/.pyenv,
// ~/.local/bin/black), once, and not in a writable zone. So a link in
// ~/.local/bin to a project's script, which a command in that project
// replaced by a link to ~/.kube/config, is not followed past the
// project; nor is ~/.tool-versions linked into a dotfiles repository
// that a command there made a link. Links at or above the home
// directory itself (/home -> /usr/home) are the system's. What leads
// into /proc, /dev or /sys (names that mean another thing to each
// process) is not shown either. Every refusal is a warning.
func (d *deriving) resolveShown(h homeSearch, path, why string) (string, bool) {
	r, err := d.res.resolve(path)
	if err != nil {
		return "", false
	}
	for _, k := range kernelFS {
		if Within(r, k) || Within(path, k) {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s leads into %s: not shown (%s)", path, k, why))
			return "", false
		}
	}
	if r == path {
		return r, true // no link on the way
	}
	r, links, err := ResolveLinks(path)
	if err != nil {
		return "", false
	}
	// The names at and above path under the home directory, as the
	// resolution names a link: by its resolved directory.
	own := map[string]bool{}
	if rel, ok := strings.CutPrefix(path, h.home+"/"); ok {
		at := h.realHome
		for _, c := range strings.Split(rel, "/") {
			at = filepath.Join(at, c)
			own[at] = true
		}
	}
	followed := 0
	for _, l := range links {
		if Within(h.home, l) || Within(h.realHome, l) {
			continue // the home directory's own
		}
		because := ""
		switch _, w := listAccess(d.Profile, l); {
		case w:
			because = "in a writable zone"
		case !h.follow:
			because = "under a home directory that is not the account's"
		case !own[l] || followed > 0:
			because = "past the layout's own name"
		}
		if because != "" {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s leads through the link %s, %s: not shown (%s)", path, l, because, why))
			return "", false
		}
		followed++
	}
	return r, true
}
