package sandbox

import (
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/guardrun/guardrun/internal/sys/regfile"
)

// DefaultSystemPaths are the system directories exposed read-only for the
// config's `system_read: default`: enough for git, make, gcc, python3 and
// the shell to run, and no more.
//
//   - /usr holds the programs and libraries; /bin, /sbin and the /lib*
//     directories are symlinks into it on merged-/usr systems and real
//     directories on older ones (missing ones are skipped).
//   - /etc holds what programs read at startup: ld.so.cache, passwd and
//     group for name lookups, /etc/alternatives (cc -> gcc), TLS roots,
//     gitconfig, resolv.conf. Its secrets are masked (DefaultSystemDeny).
//
// Deliberately absent: /opt and /var/lib (application state, databases,
// container images), /home, /root, /run, /srv, /mnt, /media, /sys. A
// config that needs one lists it.
var DefaultSystemPaths = []string{
	"/usr",
	"/bin",
	"/sbin",
	"/lib",
	"/lib32",
	"/lib64",
	"/libx32",
	"/etc",
}

// DefaultSystemDeny are masked whatever the config says: files in the
// system directories that hold credentials. Inside the sandbox the
// process keeps its user id, so when guardrun runs as root these would
// otherwise be readable.
var DefaultSystemDeny = []string{
	"/etc/shadow",
	"/etc/shadow-",
	"/etc/gshadow",
	"/etc/gshadow-",
	"/etc/sudoers",
	"/etc/sudoers.d",
	"/etc/ssh/ssh_host_dsa_key",
	"/etc/ssh/ssh_host_ecdsa_key",
	"/etc/ssh/ssh_host_ed25519_key",
	"/etc/ssh/ssh_host_rsa_key",
	"/etc/ssl/private",
}

// DefaultEnvDeny are the environment variable name globs dropped when the
// config does not list its own (Spec.EnvDeny nil): credentials and the
// agent sockets that would let a sandboxed process act as the user
// elsewhere. Matched with path.Match against the variable's name.
var DefaultEnvDeny = []string{
	"*_TOKEN",
	"*_TOKEN_*",
	"*_SECRET*",
	"*_PASSWORD*",
	"*_API_KEY*",
	"*_APIKEY*",
	"AWS_*",
	"AZURE_*",
	"GOOGLE_APPLICATION_CREDENTIALS",
	"GH_*",
	"GITHUB_TOKEN",
	"NPM_TOKEN",
	"SSH_AUTH_SOCK",
	"GPG_AGENT_INFO",
	"GUARDRUN_SOCKET",
	"GUARDRUN_PROXY",
	"GUARDRUN_SERVER",
}

// MaxWalkEntries bounds the search for DenyNames across all zones of one
// Derive call. Beyond it Derive stops and records a warning rather than
// stalling every command in a huge tree; the names at zone roots and in
// the working directory are masked regardless.
var MaxWalkEntries = 20000

// MaxProtectedOver bounds the protected paths (ReadOnlyOver) inside the
// writable zones. Each is a mount (and, missing, a placeholder) on every
// command, and bubblewrap's cost grows with the number of mounts (about
// 0.3-0.7 ms each here, 2 s for the 1,300 a scratch directory holding 60
// repositories needed): beyond the bound Derive refuses, naming where
// they are, rather than slow down or protect less.
var MaxProtectedOver = 512

// Derive turns what the config allows (Spec) into the sandbox Profile.
// Every path is checked to be absolute, cleaned, and resolved through
// symlinks where it exists, so a zone root such as `/work/link/..` or a
// symlink to / is judged by where it really leads. The result has passed
// Validate.
func Derive(s Spec) (*Profile, error) {
	p := &Profile{
		Network:    s.Network,
		PrivateTmp: true,
		Seccomp:    SeccompPolicy{AllowNetwork: s.Network},
	}
	d := &deriving{Profile: p, res: newResolver()}
	if s.Proxy && !s.Network {
		// TCP to the proxy's loopback port needs inet sockets; what they
		// can reach is the renderer's job (an empty network namespace).
		// Unix sockets stay refused (AllowUnix off): the proxy's own
		// socket is one of them.
		p.Proxy = true
		p.Seccomp = SeccompPolicy{AllowNetwork: true}
	}
	var err error
	if s.Cwd != "" {
		if p.Cwd, err = absClean("cwd", s.Cwd); err != nil {
			return nil, err
		}
		if p.Cwd, err = d.res.resolve(p.Cwd); err != nil {
			return nil, err
		}
	}
	if s.Home != "" {
		// $HOME is a name the command sees, not a mount; only clean it.
		if p.Home, err = absClean("home", s.Home); err != nil {
			return nil, err
		}
	}
	if s.EnvDeny == nil {
		p.EnvDeny = slices.Clone(DefaultEnvDeny)
	} else {
		p.EnvDeny = slices.Clone(s.EnvDeny)
	}

	for _, sp := range s.SystemRead {
		c, err := absClean("system_read", sp)
		if err != nil {
			return nil, err
		}
		r, err := d.res.resolve(c)
		if err != nil {
			return nil, err
		}
		if r != c && exists(r) {
			// Recreate the link instead of binding the target a second
			// time under the link's name: one name per file keeps Deny
			// complete.
			p.Symlinks = append(p.Symlinks, Symlink{Path: c, Target: r})
		}
		p.ReadOnly = append(p.ReadOnly, r)
	}
	var zoneRoots []string
	for _, z := range s.Zones {
		c, err := absClean("zone "+z.Name+" root", z.Root)
		if err != nil {
			return nil, err
		}
		r, err := d.res.resolve(c)
		if err != nil {
			return nil, err
		}
		if z.Writable {
			p.ReadWrite = append(p.ReadWrite, r)
		} else {
			p.ReadOnly = append(p.ReadOnly, r)
		}
		zoneRoots = append(zoneRoots, r)
	}
	for _, w := range p.ReadWrite {
		if slices.Contains(p.ReadOnly, w) {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s is both a read-only and a writable zone; it is read-only", w))
		}
	}
	// A symlink's own location must not also be inside an exposed tree
	// (it would already exist there, and could not be created).
	p.Symlinks = slices.DeleteFunc(p.Symlinks, func(l Symlink) bool {
		return withinAny(l.Path, p.ReadOnly) || withinAny(l.Path, p.ReadWrite)
	})

	for _, x := range s.Deny {
		c, err := absClean("deny", x)
		if err != nil {
			return nil, err
		}
		r, err := d.res.resolve(c)
		if err != nil {
			return nil, err
		}
		p.Deny = append(p.Deny, r)
	}
	for _, x := range DefaultSystemDeny {
		if r, err := d.res.resolve(x); err == nil {
			p.Deny = append(p.Deny, r)
		}
	}
	if s.Toolchains {
		d.toolchains(p.Home, s.AccountHome, s.Path)
	}
	if err := p.unixSockets(s.UnixSockets); err != nil {
		return nil, err
	}
	if err := d.findNames(s.DenyNames, s.ProtectNames, zoneRoots); err != nil {
		return nil, err
	}
	p.ProtectNames = slices.Clone(s.ProtectNames)
	slices.Sort(p.ProtectNames)
	p.ProtectNames = slices.Compact(p.ProtectNames)
	p.DenyNames = slices.Clone(s.DenyNames)
	slices.Sort(p.DenyNames)
	p.DenyNames = slices.Compact(p.DenyNames)
	for _, x := range s.ProtectPaths {
		c, err := absClean("protect", x)
		if err != nil {
			return nil, err
		}
		if _, err := os.Lstat(c); err == nil {
			d.protectAt(c)
		} else if fi, err := os.Stat(filepath.Dir(c)); err == nil && fi.IsDir() {
			d.protectAt(c)
		}
	}

	// Protected paths: hidden ones are denied; the others are listed,
	// and re-exposed read-only where a writable tree would cover them.
	var protect []string
	for _, pr := range s.Protect {
		c, err := absClean("protected path", pr.Path)
		if err != nil {
			return nil, err
		}
		r, err := d.res.resolve(c)
		if err != nil {
			return nil, err
		}
		p.Protected = append(p.Protected, r)
		if pr.Hide {
			p.Deny = append(p.Deny, r)
		} else {
			protect = append(protect, r)
		}
	}
	for _, r := range protect {
		if _, w := p.Access(r); w {
			p.ReadOnlyOver = append(p.ReadOnlyOver, r)
		}
		// A writable zone inside a protected directory (a zone in
		// guardrun's config directory) is read-only.
		for i := 0; i < len(p.ReadWrite); i++ {
			if w := p.ReadWrite[i]; Within(w, r) {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s is inside guardrun's own %s; it is read-only", w, r))
				p.ReadOnly = append(p.ReadOnly, w)
				p.ReadWrite = slices.Delete(p.ReadWrite, i, i+1)
				i--
			}
		}
	}

	if s.Network {
		p.exposeResolver()
	}
	p.normalize()
	p.pin()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// DefaultProtect are the names read-only at any depth inside writable
// trees whatever the config says (SPEC §2, sandbox.protect): what a
// program outside the sandbox later runs or obeys when the person works
// in the same tree. Git runs hooks and obeys its config (core.fsmonitor,
// core.hooksPath, diff.external, filter drivers) and .gitmodules; shells
// source their startup files; direnv loads .envrc on cd; Gemini CLI
// loads the .env of its project (and of each directory above it) into
// its own environment, which every command it starts then gets before
// guardrun does (BASH_ENV, LD_PRELOAD, GUARDRUN_SOCKET); editors and
// agents load their workspace settings (.vscode, .idea, .zed, .mcp.json,
// and the agents' own .claude, .codex, .cursor and .gemini, whose hooks
// and MCP servers run in the agent's process, outside every sandbox); VS Code
// runs a dev container's initializeCommand on the host; and guardrun
// reads .guardrun.yaml.
var DefaultProtect = []string{
	".git/hooks",
	".git/config",
	// A commondir file makes git take config and hooks from the
	// directory it names (any directory the command can write).
	".git/commondir",
	".gitmodules",
	".guardrun.yaml",
	".bashrc",
	".bash_profile",
	".bash_login",
	".bash_logout",
	".profile",
	".zshrc",
	".zshenv",
	".zprofile",
	".zlogin",
	".envrc",
	".env",
	".vscode",
	".idea",
	".mcp.json",
	".claude",
	".codex",
	".cursor",
	".gemini",
	".zed",
	".devcontainer",
}

// checkNames refuses names that are not bare file names (deny names) or
// relative, clean, slash-separated names (protect names).
func checkNames(what string, names []string, slash bool) error {
	for _, n := range names {
		bad := n == "" || strings.ContainsRune(n, 0) || strings.HasPrefix(n, "/")
		if !slash {
			bad = bad || strings.Contains(n, "/")
		}
		for _, c := range strings.Split(n, "/") {
			bad = bad || c == "" || c == "." || c == ".."
		}
		if bad {
			if slash {
				return fmt.Errorf("sandbox: %s name %q: want a relative name such as .git/hooks", what, n)
			}
			return fmt.Errorf("sandbox: %s name %q: want a bare file name", what, n)
		}
	}
	return nil
}

// walkTrees visits every entry of the trees under roots breadth-first (so
// the shallow ones, the likely ones, are found first when the bound cuts
// the walk short), once per tree even where roots nest. visit returns
// whether to descend into a directory. It stops after MaxWalkEntries
// entries and returns the directory it stopped in ("" when it finished).
// Unreadable directories are skipped: the sandbox runs with the same
// user id and fewer privileges, so they are unreadable inside too.
func walkTrees(roots []string, visit func(dir string, e fs.DirEntry) bool) (stoppedAt string) {
	roots = slices.Clone(roots)
	slices.Sort(roots)
	roots = dropNested(slices.Compact(roots))
	budget := MaxWalkEntries
	queue := roots
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if budget == 0 {
				return dir
			}
			budget--
			if visit(dir, e) && e.IsDir() {
				queue = append(queue, filepath.Join(dir, e.Name()))
			}
		}
	}
	return ""
}

// findNames runs the one bounded walk over the zones for both kinds of
// name: denied names (masked wherever found, and at each zone root and
// the working directory whether or not they exist) and protected names
// (read-only inside writable trees; see protectAt). When unix sockets are
// allowed, it also masks every socket it meets that is not listed.
func (p *deriving) findNames(denyNames, protectNames, roots []string) error {
	if err := checkNames("deny", denyNames, false); err != nil {
		return err
	}
	if err := checkNames("protect", protectNames, true); err != nil {
		return err
	}
	// Resolved, like every denied path: a mask follows symlinks, so a
	// link named .env is masked where it leads (or not at all when that is
	// outside every exposed tree, where it dangles inside).
	denyAt := func(path string) {
		if r, err := p.res.resolve(path); err == nil {
			p.Deny = append(p.Deny, r)
		}
	}
	for _, r := range roots {
		for _, n := range denyNames {
			denyAt(filepath.Join(r, n))
		}
		// A zone that is itself inside something with a denied name
		// (~/.env/proj) is denied whole, as the rules deny any path with
		// such a component.
		for a := r; a != "/"; a = filepath.Dir(a) {
			if slices.Contains(denyNames, filepath.Base(a)) {
				p.Deny = append(p.Deny, a)
			}
		}
		p.protectIn(r, protectNames, true)
	}
	if p.Cwd != "" && !slices.Contains(roots, p.Cwd) {
		for _, n := range denyNames {
			denyAt(filepath.Join(p.Cwd, n))
		}
		p.protectIn(p.Cwd, protectNames, true)
	}
	if len(denyNames) == 0 && len(protectNames) == 0 && !p.Seccomp.AllowUnix {
		return nil
	}
	// The first component of every protected name: a directory entry
	// with one of these names may start a protected path.
	first := map[string]bool{}
	for _, n := range protectNames {
		first[strings.SplitN(n, "/", 2)[0]] = true
	}
	stores := map[string]bool{}
	stopped := walkTrees(roots, func(dir string, e fs.DirEntry) bool {
		if len(p.ReadOnlyOver) > MaxProtectedOver {
			return false // refused below; no use looking further
		}
		full := filepath.Join(dir, e.Name())
		if slices.Contains(denyNames, e.Name()) {
			denyAt(full)
			return false // masked: nothing inside it is visible
		}
		if p.Seccomp.AllowUnix && e.Type()&fs.ModeSocket != 0 && !slices.Contains(p.UnixSockets, full) {
			// With socket(AF_UNIX) open for the listed sockets, every
			// other one found in a zone is masked.
			denyAt(full)
			return false
		}
		if objectFanOut(dir, e, stores) {
			return false // git's object store: see objectFanOut
		}
		if inDependencies(dir) {
			return true // see dependencyDirs; deny names still apply
		}
		isGit := e.Name() == ".git" && e.IsDir()
		if first[e.Name()] {
			// A directory holding a repository is where the
			// top-level names matter (its .envrc, .vscode,
			// .gitmodules): make the missing ones uncreatable there
			// as at a zone root.
			p.protectIn(dir, protectNames, isGit)
		}
		if isGit && len(protectNames) > 0 {
			p.protectGitDir(full, dir, 0)
		}
		if len(protectNames) > 0 {
			p.protectOtherGitDir(dir, e)
		}
		// Below a protected name everything is read-only already; a
		// directory that only starts a longer name (docs of docs/x)
		// may hold other names deeper.
		return !slices.Contains(protectNames, e.Name())
	})
	if len(p.ReadOnlyOver) > MaxProtectedOver {
		return p.tooManyProtected(roots)
	}
	if stopped != "" {
		p.Warnings = append(p.Warnings, fmt.Sprintf(
			"deny and protect names: stopped after %d entries (next directory %s); deeper files named %s are not masked or protected",
			MaxWalkEntries, stopped, strings.Join(append(slices.Clone(denyNames), protectNames...), ", ")))
	}
	return nil
}

// deriving is a Profile being derived, with what Derive remembers while
// it looks at the file system.
type deriving struct {
	*Profile
	res *resolver
	// searched are the directories protectIn has looked in, and
	// whether it made the missing names uncreatable there.
	searched map[string]bool
}

// protectIn protects every name under dir that exists, and, when missing
// is set, makes the missing ones uncreatable where their parent exists.
// A missing name whose parent is missing too (.git/hooks where there is
// no .git) is left alone: masking the parent would break `git init`.
func (p *deriving) protectIn(dir string, names []string, missing bool) {
	// Once per directory: each protected name met in it calls again.
	if done, ok := p.searched[dir]; ok && (done || !missing) {
		return
	}
	if p.searched == nil {
		p.searched = map[string]bool{}
	}
	p.searched[dir] = missing
	isDir := map[string]bool{} // most names share dir as their parent
	for _, n := range names {
		path := filepath.Join(dir, n)
		if _, err := os.Lstat(path); err == nil {
			p.protectAt(path)
			continue
		}
		if !missing {
			continue
		}
		parent := filepath.Dir(path)
		d, ok := isDir[parent]
		if !ok {
			fi, err := os.Stat(parent)
			d = err == nil && fi.IsDir()
			isDir[parent] = d
		}
		if d && unmaskable[n] {
			if r, err := p.res.resolve(path); err == nil {
				if _, w := p.Access(r); w {
					p.MoveAfter = append(p.MoveAfter, r)
				}
			}
		} else if d {
			p.protectAt(path)
		}
	}
}

// unmaskable are protected names that must stay missing rather than be
// masked while missing (see Profile.MoveAfter).
var unmaskable = map[string]bool{".git/commondir": true}

// protectAt makes path read-only (or, missing, uncreatable) if a writable
// tree covers it. It is resolved like a denied path, since a bind follows
// symlinks; the link itself, in a writable directory, can still be
// replaced (see Limitations).
func (p *deriving) protectAt(path string) {
	r, err := p.res.resolve(path)
	if err != nil {
		return
	}
	if _, w := p.Access(r); w {
		p.ReadOnlyOver = append(p.ReadOnlyOver, r)
	}
}

// pin lists the directories between each ReadOnlyOver or Deny entry and
// the writable tree holding it (its nearest ReadWrite entry, already a
// mount point of its own), so that none of them can be renamed away. A
// denied file is found before the sandbox is built and masked by its
// path: a command that kept moving its directory aside, with an empty
// decoy at its name, would have the next sandbox mask the decoy and
// leave the file, moved, readable.
func (p *Profile) pin() {
	for _, o := range append(slices.Clone(p.ReadOnlyOver), p.Deny...) {
		top := ""
		for _, w := range p.ReadWrite {
			if Within(o, w) && len(w) > len(top) {
				top = w
			}
		}
		if top == "" {
			continue
		}
		for a := filepath.Dir(o); a != top && Within(a, top); a = filepath.Dir(a) {
			if _, w := p.Access(a); w {
				p.Pinned = append(p.Pinned, a)
			}
		}
	}
	slices.Sort(p.Pinned)
	p.Pinned = slices.Compact(p.Pinned)
}

// unixSockets exposes the sockets a command may connect to and opens
// socket(AF_UNIX) for them. With the network on, the sandbox shares the
// host's network namespace, whose abstract unix sockets (no path, no
// mount to hide them) a filter that cannot read the address would let
// through: there the list is not honoured, AF_UNIX stays refused, and a
// warning says so.
func (p *Profile) unixSockets(socks []string) error {
	if len(socks) == 0 {
		return nil
	}
	if p.Network {
		p.Warnings = append(p.Warnings, "sandbox.unix_sockets is not honoured with the network on "+
			"(the host's abstract unix sockets would be reachable): unix sockets stay refused")
		return nil
	}
	if p.Proxy {
		p.Warnings = append(p.Warnings, "sandbox.unix_sockets is not honoured with network: proxy "+
			"(the proxy's own socket would be reachable past its loopback route): unix sockets stay refused")
		return nil
	}
	for _, x := range socks {
		c, err := absClean("unix socket", x)
		if err != nil {
			return err
		}
		r, err := Resolve(c)
		if err != nil {
			return err
		}
		if withinAny(r, p.Deny) {
			p.Warnings = append(p.Warnings, fmt.Sprintf("unix socket %s is denied; it is not exposed", r))
			continue
		}
		p.UnixSockets = append(p.UnixSockets, r)
	}
	p.Seccomp.AllowUnix = len(p.UnixSockets) > 0
	return nil
}

// exposeResolver makes name resolution work with the network on: on
// systemd systems /etc/resolv.conf is a symlink into /run, which the
// sandbox does not otherwise show.
func (p *Profile) exposeResolver() {
	const conf = "/etc/resolv.conf"
	if r, _ := p.Access(conf); !r {
		return
	}
	t, err := Resolve(conf)
	if err != nil || t == conf || !exists(t) {
		return
	}
	if r, _ := p.Access(t); !r {
		p.ReadOnly = append(p.ReadOnly, t)
	}
}

// CreatedProtected lists the protected names (ProtectNames) that exist
// now inside the writable trees but are not among the profile's
// read-only overlays: created after Derive, where nothing made them
// uncreatable (the hooks of a repository the command itself initialised,
// an .envrc in a directory that was not a repository's root). The sandbox
// could not keep them read-only; the caller tells the person. It walks
// the trees with the same bound as Derive.
func (p *Profile) CreatedProtected() []string {
	if len(p.ProtectNames) == 0 || len(p.ReadWrite) == 0 {
		return nil
	}
	first := map[string][]string{}
	for _, n := range p.ProtectNames {
		f := strings.SplitN(n, "/", 2)[0]
		first[f] = append(first[f], n)
	}
	var out []string
	rs := newResolver()
	stores := map[string]bool{}
	walkTrees(p.ReadWrite, func(dir string, e fs.DirEntry) bool {
		full := filepath.Join(dir, e.Name())
		if withinAny(full, p.Deny) || withinAny(full, p.ReadOnlyOver) || slices.Contains(p.MoveAfter, full) || e.Name() == dependencyDir || objectFanOut(dir, e, stores) {
			return false
		}
		names := first[e.Name()]
		switch {
		case e.Name() == ".git" && e.Type().IsRegular():
			// A .git file sends git elsewhere (see protectOtherGitDir).
			names = append(slices.Clone(names), ".git")
		case e.Name() == "HEAD" && e.Type().IsRegular() && isGitDir(dir):
			// A git directory's config, hooks and commondir, under any
			// name: a bare repository, or a .git given a commondir.
			// dir is itself the git directory here.
			names = append(slices.Clone(names), gitDirCode...)
		}
		for _, n := range names {
			path := filepath.Join(dir, n)
			if _, err := os.Lstat(path); err != nil || slices.Contains(p.MoveAfter, path) {
				continue // MoveAfter: moved aside, see MoveAsideCreated
			}
			if r, err := rs.resolve(path); err == nil && !withinAny(r, p.ReadOnlyOver) {
				if _, w := p.Access(r); w {
					out = append(out, path)
				}
			}
		}
		return true
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// protectGitDir protects what else in a git directory makes git run a
// program, beyond its hooks and config (which the names cover where the
// directory is called .git): the per-worktree config, the git directories
// of submodules (.git/modules/NAME, each with hooks and config of its
// own) and of linked worktrees, and the places its config points to for
// hooks (core.hooksPath, as husky sets it: .husky inside the work tree)
// and for more config (include.path, includeIf.*.path). depth bounds the
// submodule recursion.
func (p *deriving) protectGitDir(gitDir, workTree string, depth int) {
	for _, n := range gitDirCode {
		if _, err := os.Lstat(filepath.Join(gitDir, n)); err == nil {
			p.protectAt(filepath.Join(gitDir, n))
		}
	}
	if c := readGitPointer(filepath.Join(gitDir, "commondir"), ""); c != "" && depth < 3 {
		// Git takes the config and hooks from the common directory.
		p.protectGitDir(expandGitPath(c, gitDir, ""), workTree, depth+1)
	}
	// The person's global config counts too: a relative core.hooksPath
	// there (.githooks) names a directory in every work tree.
	files := []string{filepath.Join(gitDir, "config")}
	if filepath.IsAbs(p.Home) {
		files = append(files, filepath.Join(p.Home, ".gitconfig"), filepath.Join(p.Home, ".config", "git", "config"))
	}
	for i, file := range files {
		hooks, includes := gitConfigPaths(file)
		for _, h := range hooks {
			switch h = expandGitPath(h, workTree, p.Home); {
			case h == "":
			case Within(workTree, h):
				// The work tree itself (hooksPath = .) cannot be made
				// read-only without stopping all work; say so.
				p.Warnings = append(p.Warnings, fmt.Sprintf(
					"%s sets core.hooksPath to %s, which holds the work tree: hooks there are not protected", file, h))
			default:
				p.protectAt(h)
			}
		}
		base := gitDir
		if i > 0 {
			base = filepath.Dir(file)
		}
		for _, inc := range includes {
			if inc = expandGitPath(inc, base, p.Home); inc != "" {
				p.protectAt(inc)
			}
		}
	}
	if depth >= 3 {
		return
	}
	for _, sub := range []string{"modules", "worktrees"} {
		entries, err := os.ReadDir(filepath.Join(gitDir, sub))
		if err != nil {
			continue
		}
		for i, e := range entries {
			if i >= 100 || !e.IsDir() {
				break
			}
			// A submodule's git directory may nest further modules;
			// its work tree is not known here, so a relative
			// hooksPath in it is taken against the git directory.
			d := filepath.Join(gitDir, sub, e.Name())
			p.protectGitDir(d, d, depth+1)
		}
	}
}

// gitDirCode are the entries of a git directory that make git run a
// program or take its config from elsewhere: its config (and the
// per-worktree one), its hooks, and commondir, which sends git to another
// directory for both.
var gitDirCode = []string{"config", "config.worktree", "hooks", "commondir"}

// isGitDir says whether git would take dir for a git directory: a HEAD
// file and either objects/ and refs/ (a repository, bare or not) or a
// commondir file (a linked worktree's).
func isGitDir(dir string) bool {
	if fi, err := os.Lstat(filepath.Join(dir, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if _, err := os.Lstat(filepath.Join(dir, "commondir")); err == nil {
		return true
	}
	o, err1 := os.Stat(filepath.Join(dir, "objects"))
	r, err2 := os.Stat(filepath.Join(dir, "refs"))
	return err1 == nil && err2 == nil && o.IsDir() && r.IsDir()
}

// readGitPointer reads a one-line pointer file git follows: a commondir
// (prefix "") or a .git file ("gitdir: "); "" when it is not one.
func readGitPointer(file, prefix string) string {
	fi, err := os.Lstat(file)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return ""
	}
	b, ok := readSmall(file, 4096)
	if !ok {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), prefix)
	if !ok {
		return ""
	}
	return strings.TrimSpace(v)
}

// protectOtherGitDir protects the git directories git finds other than
// a directory named .git, where a program outside the sandbox would run
// git: a .git file (a submodule's or linked worktree's checkout; git
// follows its "gitdir:" line anywhere, so a command could point it at a
// directory of its own with a config) is read-only, as is what it points
// to; and a directory shaped like a git directory (a bare repository
// inside the tree, which git uses when run in it) has its config and
// hooks protected as .git's are. e is an entry of dir met on the walk.
func (p *deriving) protectOtherGitDir(dir string, e fs.DirEntry) {
	switch {
	case e.Name() == ".git" && e.Type().IsRegular():
		full := filepath.Join(dir, e.Name())
		p.protectAt(full)
		if g := readGitPointer(full, "gitdir: "); g != "" {
			if g = expandGitPath(g, dir, ""); isGitDir(g) {
				p.protectGitDir(g, dir, 1)
			}
		}
	case e.Name() == "HEAD" && e.Type().IsRegular() && filepath.Base(dir) != ".git" && isGitDir(dir):
		p.protectGitDir(dir, dir, 1)
	}
}

// expandGitPath turns a path from a git config into an absolute one as git
// would: ~/ is the home directory, a relative path is relative to base.
func expandGitPath(v, base, home string) string {
	switch {
	case v == "":
		return ""
	case strings.HasPrefix(v, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, v[2:])
	case filepath.IsAbs(v):
		return filepath.Clean(v)
	}
	return filepath.Join(base, v)
}

// gitConfigPaths reads core.hooksPath and include paths from a git config
// file: enough of git's syntax for these keys ([section], [section
// "sub"], key = value, quotes, comments); anything it cannot read it
// skips, which leaves that path unprotected, never less protected than
// without the lookup.
func gitConfigPaths(file string) (hooks, includes []string) {
	b, ok := readSmall(file, 1<<20)
	if !ok {
		return nil, nil
	}
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimSpace(line[1:end]), " ")
			section = strings.ToLower(name)
			if rest := strings.TrimSpace(line[end+1:]); rest != "" {
				line = rest // [core] hooksPath = x on one line
			} else {
				continue
			}
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if q, ok := strings.CutPrefix(v, "\""); ok {
			v, _, _ = strings.Cut(q, "\"")
		} else if i := strings.IndexAny(v, "#;"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		switch {
		case section == "core" && k == "hookspath":
			hooks = append(hooks, v)
		case (section == "include" || section == "includeif") && k == "path":
			includes = append(includes, v)
		}
	}
	return hooks, includes
}

// dependencyDir holds installed packages (npm's node_modules). Protected
// names inside it are not made read-only: packages ship .vscode, .idea
// and .git directories by the hundred, and each would cost a bind mount
// plus one per directory above it on every command (200 packages with a
// .vscode: about 140 ms of CPU per command), while nothing outside the
// sandbox runs or obeys them there. Writes to them still ask in the
// policy where it sees them.
const dependencyDir = "node_modules"

func inDependencies(dir string) bool {
	return filepath.Base(dir) == dependencyDir || strings.Contains(dir+"/", "/"+dependencyDir+"/")
}

// objectFanOut reports whether e is one of the 256 directories of a git
// object store (objects/00 to objects/ff in a git directory), which hold
// only the loose objects git names by their hash: thousands of files in
// an active repository, none of them a denied or protected name, and
// nothing git or a shell runs or obeys. The walk does not list them, so
// that it costs per command what the work tree costs and its bound is
// spent on the work tree. The entries of objects/ itself (and its pack
// and info directories) are still looked at.
// stores remembers the answer for each objects directory.
func objectFanOut(dir string, e fs.DirEntry, stores map[string]bool) bool {
	n := e.Name()
	if len(n) != 2 || !isHex(n[0]) || !isHex(n[1]) || !e.IsDir() || filepath.Base(dir) != "objects" {
		return false
	}
	is, ok := stores[dir]
	if !ok {
		is = isGitDir(filepath.Dir(dir))
		stores[dir] = is
	}
	return is
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// tooManyProtected is the refusal of a profile with more than
// MaxProtectedOver protected paths: it names the directories (just below
// a zone root) that hold the most.
func (p *deriving) tooManyProtected(roots []string) error {
	count := map[string]int{}
	for _, o := range p.ReadOnlyOver {
		for _, r := range roots {
			if Within(o, r) && o != r {
				rel, _ := filepath.Rel(r, o)
				top, _, _ := strings.Cut(rel, string(filepath.Separator))
				count[filepath.Join(r, top)]++
				break
			}
		}
	}
	dirs := slices.Collect(maps.Keys(count))
	slices.SortFunc(dirs, func(a, b string) int { return cmp.Or(count[b]-count[a], strings.Compare(a, b)) })
	var most []string
	for _, d := range dirs[:min(3, len(dirs))] {
		most = append(most, fmt.Sprintf("%s (%d)", d, count[d]))
	}
	return fmt.Errorf("sandbox: more than %d protected paths (git hooks and config, shell and editor files of each repository) in the writable zones, each a mount on every command; most are in %s: "+
		"run guardrun in one project rather than a directory holding many, or make that directory a read-only zone",
		MaxProtectedOver, strings.Join(most, ", "))
}

// readSmall reads file (links followed) if it is a regular file of at
// most max bytes; ok false otherwise. The files it reads lie in rw
// zones, where a command may have put something else in a file's
// place: a link to a device such as /dev/zero, which a read to the end
// would never finish, or a FIFO, whose open would wait for a writer
// forever. A path that is not a regular file when looked at is not
// opened (regfile), and at most max+1 bytes are read.
func readSmall(file string, max int64) ([]byte, bool) {
	b, err := regfile.ReadFile(file, max)
	return b, err == nil
}
