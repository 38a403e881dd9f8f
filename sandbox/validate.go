package sandbox

import (
	"errors"
	"fmt"
	"path"
)

// check is one named validation rule. Each is small and tested alone, so
// a new renderer or a new field comes with the rule that keeps it safe.
type check struct {
	name string
	fn   func(*Profile) error
}

// checks are run in order by Validate; keep in sync with validate_test.go.
var checks = []check{
	{"clean-paths", checkCleanPaths},
	{"root-not-writable", checkRootNotWritable},
	{"no-kernel-fs", checkNoKernelFS},
	{"no-ro-rw-conflict", checkNoConflict},
	{"deny-not-root", checkDenyNotRoot},
	{"read-only-over-exposed", checkReadOnlyOverExposed},
	{"protected-not-writable", checkProtectedNotWritable},
	{"cwd-visible", checkCwdVisible},
	{"symlinks", checkSymlinks},
	{"network-consistent", checkNetworkConsistent},
	{"pinned-writable", checkPinnedWritable},
	{"unix-sockets", checkUnixSockets},
	{"env-deny-patterns", checkEnvDenyPatterns},
}

// Validate reports every rule the profile breaks: a profile that would be
// unsafe (grant more than intended) or that a renderer could not express
// faithfully. Renderers call it before producing anything.
func (p *Profile) Validate() error {
	if p == nil {
		return errors.New("sandbox: no profile")
	}
	var errs []error
	for _, c := range checks {
		if err := c.fn(p); err != nil {
			errs = append(errs, fmt.Errorf("sandbox: %s: %w", c.name, err))
		}
	}
	return errors.Join(errs...)
}

// checkCleanPaths: renderers compare paths as strings, so every path must
// be absolute and clean; `..`, `//` or a trailing slash would defeat
// Within and let a mask miss.
func checkCleanPaths(p *Profile) error {
	var errs []error
	lists := []struct {
		name  string
		paths []string
	}{
		{"read_only", p.ReadOnly},
		{"read_write", p.ReadWrite},
		{"deny", p.Deny},
		{"read_only_over", p.ReadOnlyOver},
		{"protected", p.Protected},
		{"pinned", p.Pinned},
		{"unix_sockets", p.UnixSockets},
	}
	for _, l := range lists {
		for _, x := range l.paths {
			if !isClean(x) {
				errs = append(errs, fmt.Errorf("%s %q is not an absolute clean path", l.name, x))
			}
		}
	}
	for _, s := range p.Symlinks {
		if !isClean(s.Path) || !isClean(s.Target) {
			errs = append(errs, fmt.Errorf("symlink %q -> %q: want absolute clean paths", s.Path, s.Target))
		}
	}
	for _, x := range []struct{ name, v string }{{"cwd", p.Cwd}, {"home", p.Home}} {
		if x.v != "" && !isClean(x.v) {
			errs = append(errs, fmt.Errorf("%s %q is not an absolute clean path", x.name, x.v))
		}
	}
	return errors.Join(errs...)
}

// checkRootNotWritable: a writable / is the whole machine.
func checkRootNotWritable(p *Profile) error {
	for _, w := range p.ReadWrite {
		if w == "/" {
			return errors.New("/ is writable")
		}
	}
	return nil
}

// kernelFS are replaced by fresh, sandbox-local mounts. Binding the host's
// would show host processes (/proc), devices (/dev) or kernel knobs (/sys).
var kernelFS = []string{"/proc", "/dev", "/sys"}

// checkNoKernelFS: no exposed path at or under /proc, /dev or /sys. (An
// ancestor such as / is allowed; renderers mount the fresh /proc and /dev
// after it.)
func checkNoKernelFS(p *Profile) error {
	var errs []error
	for _, l := range [][]string{p.ReadOnly, p.ReadWrite, p.ReadOnlyOver} {
		for _, x := range l {
			for _, k := range kernelFS {
				if Within(x, k) {
					errs = append(errs, fmt.Errorf("%s would expose the host's %s", x, k))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// checkNoConflict: a path listed both read-only and writable is ambiguous.
func checkNoConflict(p *Profile) error {
	for _, w := range p.ReadWrite {
		for _, r := range p.ReadOnly {
			if w == r {
				return fmt.Errorf("%s is both read-only and writable", w)
			}
		}
	}
	return nil
}

// checkDenyNotRoot: masking / leaves nothing to run; it is a mistake, not
// a policy.
func checkDenyNotRoot(p *Profile) error {
	for _, d := range p.Deny {
		if d == "/" {
			return errors.New("/ is denied: nothing could run")
		}
	}
	return nil
}

// checkReadOnlyOverExposed: a read-only overlay is a bind mount of the
// host path. Outside every exposed tree it would expose the path instead
// of narrowing it.
func checkReadOnlyOverExposed(p *Profile) error {
	for _, o := range p.ReadOnlyOver {
		if r, _ := listAccess(p, o); !r {
			return fmt.Errorf("read_only_over %s is not inside an exposed tree", o)
		}
	}
	return nil
}

// checkProtectedNotWritable: guardrun's own config, state and socket are
// never writable inside (SPEC §5).
func checkProtectedNotWritable(p *Profile) error {
	var errs []error
	for _, x := range p.Protected {
		if _, w := p.Access(x); w {
			errs = append(errs, fmt.Errorf("protected path %s would be writable", x))
		}
		// A protected directory must have nothing writable beneath it.
		for _, rw := range p.ReadWrite {
			if Within(rw, x) {
				if _, w := p.Access(rw); w {
					errs = append(errs, fmt.Errorf("%s inside protected path %s would be writable", rw, x))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// checkCwdVisible: the command starts in Cwd; if it is not visible the
// sandbox cannot start there.
func checkCwdVisible(p *Profile) error {
	if p.Cwd == "" {
		return nil
	}
	if r, _ := p.Access(p.Cwd); !r {
		return fmt.Errorf("working directory %s is not visible inside the sandbox (not in any zone, or denied)", p.Cwd)
	}
	return nil
}

// checkSymlinks: a link is created in the sandbox's empty root, so its
// location must not be inside an exposed or denied tree, nothing may be
// exposed beneath it, and its target must not lead through another link.
func checkSymlinks(p *Profile) error {
	for _, s := range p.Symlinks {
		if s.Path == "/" {
			return errors.New("symlink at /")
		}
		for _, l := range [][]string{p.ReadOnly, p.ReadWrite, p.Deny} {
			for _, x := range l {
				if Within(s.Path, x) || Within(x, s.Path) {
					return fmt.Errorf("symlink %s overlaps %s", s.Path, x)
				}
			}
		}
		for _, t := range p.Symlinks {
			if Within(s.Target, t.Path) {
				return fmt.Errorf("symlink %s leads through symlink %s", s.Path, t.Path)
			}
		}
	}
	return nil
}

// checkNetworkConsistent: the seccomp filter may be stricter than the
// namespace setup, never looser.
func checkNetworkConsistent(p *Profile) error {
	if p.Network && p.Proxy {
		return errors.New("the profile has both the network and the proxy")
	}
	if p.Proxy && (p.Seccomp.AllowUnix || len(p.UnixSockets) > 0) {
		return errors.New("the proxy needs unix sockets refused, or the command could reach the proxy's socket directly")
	}
	if p.Seccomp.AllowNetwork && !p.Network && !p.Proxy {
		return errors.New("seccomp allows network sockets but the profile has no network")
	}
	return nil
}

// checkEnvDenyPatterns: a malformed glob would match nothing and let a
// secret through.
func checkEnvDenyPatterns(p *Profile) error {
	for _, g := range p.EnvDeny {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("env_deny %q: %w", g, err)
		}
	}
	return nil
}

// checkPinnedWritable: a pin is a writable bind of a directory onto
// itself; anywhere the profile does not already allow writing it would
// widen the sandbox.
func checkPinnedWritable(p *Profile) error {
	for _, d := range p.Pinned {
		if _, w := p.Access(d); !w {
			return fmt.Errorf("pinned %s is not writable", d)
		}
	}
	return nil
}

// checkUnixSockets: the filter opens socket(AF_UNIX) exactly when sockets
// are listed, never with the network on (the host's abstract sockets),
// and a listed socket is never a denied one.
func checkUnixSockets(p *Profile) error {
	if p.Seccomp.AllowUnix != (len(p.UnixSockets) > 0) {
		return errors.New("seccomp allow_unix must be set exactly when unix_sockets are listed")
	}
	if p.Seccomp.AllowUnix && p.Network {
		return errors.New("unix sockets with the network on would expose the host's abstract unix sockets")
	}
	for _, s := range p.UnixSockets {
		if withinAny(s, p.Deny) {
			return fmt.Errorf("unix socket %s is denied", s)
		}
	}
	return nil
}
