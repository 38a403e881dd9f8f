package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
}

// MaxWalkEntries bounds the search for DenyNames across all zones of one
// Derive call. Beyond it Derive stops and records a warning rather than
// stalling every command in a huge tree; the names at zone roots and in
// the working directory are masked regardless.
var MaxWalkEntries = 20000

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
	if s.Proxy && !s.Network {
		// TCP to the proxy's loopback port needs inet sockets; what they
		// can reach is the renderer's job (an empty network namespace).
		p.Proxy = true
		p.Seccomp = SeccompPolicy{AllowNetwork: true, DenyUnixSockets: true}
	}
	var err error
	if s.Cwd != "" {
		if p.Cwd, err = absClean("cwd", s.Cwd); err != nil {
			return nil, err
		}
		if p.Cwd, err = Resolve(p.Cwd); err != nil {
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
		r, err := Resolve(c)
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
		r, err := Resolve(c)
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

	for _, d := range s.Deny {
		c, err := absClean("deny", d)
		if err != nil {
			return nil, err
		}
		r, err := Resolve(c)
		if err != nil {
			return nil, err
		}
		p.Deny = append(p.Deny, r)
	}
	for _, d := range DefaultSystemDeny {
		if r, err := Resolve(d); err == nil {
			p.Deny = append(p.Deny, r)
		}
	}
	if len(s.DenyNames) > 0 {
		if err := p.denyNames(s.DenyNames, zoneRoots); err != nil {
			return nil, err
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
		r, err := Resolve(c)
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
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// denyNames denies every file or directory called one of names inside the
// zones, found by a breadth-first walk (so the shallow ones, the likely
// ones, are found first when the bound cuts the walk short), plus the
// names at each zone root and in the working directory whether or not
// they exist yet, so that they cannot be created there either.
func (p *Profile) denyNames(names []string, roots []string) error {
	for _, n := range names {
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\x00") {
			return fmt.Errorf("sandbox: deny name %q: want a bare file name", n)
		}
	}
	// Resolved, like every denied path: a mask follows symlinks, so a
	// link named .env is masked where it leads (or not at all when that is
	// outside every exposed tree, where it dangles inside).
	denyAt := func(path string) {
		if r, err := Resolve(path); err == nil {
			p.Deny = append(p.Deny, r)
		}
	}
	for _, r := range roots {
		for _, n := range names {
			denyAt(filepath.Join(r, n))
		}
		// A zone that is itself inside something with a denied name
		// (~/.env/proj) is denied whole, as the rules deny any path with
		// such a component.
		for a := r; a != "/"; a = filepath.Dir(a) {
			if slices.Contains(names, filepath.Base(a)) {
				p.Deny = append(p.Deny, a)
			}
		}
	}
	if p.Cwd != "" {
		for _, n := range names {
			denyAt(filepath.Join(p.Cwd, n))
		}
	}

	// Walk each tree once: a zone nested in another is covered by it.
	slices.Sort(roots)
	roots = slices.Compact(roots)
	roots = dropNested(roots)
	budget := MaxWalkEntries
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		entries, err := os.ReadDir(dir)
		if err != nil {
			// Unreadable here means unreadable inside too: the sandbox
			// runs with the same user id and fewer privileges.
			continue
		}
		for _, e := range entries {
			if budget == 0 {
				p.Warnings = append(p.Warnings, fmt.Sprintf(
					"deny names: stopped after %d entries (next directory %s); deeper files named %s are not masked",
					MaxWalkEntries, dir, strings.Join(names, ", ")))
				return nil
			}
			budget--
			full := filepath.Join(dir, e.Name())
			if slices.Contains(names, e.Name()) {
				denyAt(full)
				continue // masked: nothing inside it is visible
			}
			if e.IsDir() {
				queue = append(queue, full)
			}
		}
	}
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
