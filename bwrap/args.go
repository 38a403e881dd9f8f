package bwrap

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/guardrun/guardrun/sandbox"
)

// The descriptors Command hands bwrap (ExtraFiles[0] and [1]); pass them
// to Args to render the argv Command runs. CommandFilterFD (ExtraFiles[2])
// is the command's own seccomp program with the proxy, which the bridge
// applies; bwrap passes it through.
const (
	SeccompFD       = 3
	StatusFD        = 4
	CommandFilterFD = 5
)

// Where a sandbox with the proxy finds the bridge, inside. /.guardrun is
// made on the sandbox's own root, which bwrap builds on a tmpfs; a zone
// rooted at / (read-only) leaves no room for it and bwrap then fails.
const (
	// BridgeExe is the guardrun binary, bound read-only.
	BridgeExe = "/.guardrun/guardrun"
	// BridgeSocket is the proxy's unix socket, bound read-only (connect
	// does not need a writable mount).
	BridgeSocket = "/.guardrun/proxy.sock"
	// ProxyAddr is where the command finds the proxy: loopback in the
	// sandbox's own network namespace, so the port is always free.
	ProxyAddr = "127.0.0.1:3128"
)

// ProxyRoute is what a profile with Proxy needs from the host: the
// guardrun binary to run the bridge and the proxy's unix socket.
type ProxyRoute struct {
	// Exe is the guardrun binary on the host.
	Exe string
	// Socket is the proxy's unix socket on the host, in a directory only
	// this user can enter.
	Socket string
	// Token, for a proxy shared by several commands (the supervisor's),
	// names the command the bridge hands its listener over for.
	Token string
}

// BridgeArgv is the command line that runs argv behind the bridge: the
// guardrun binary inside, its verb that runs the bridge
// (netproxy.BridgeVerb), and token ("" for none) from the route.
func BridgeArgv(verb, token string, argv []string) []string {
	out := []string{BridgeExe, verb, "--socket", BridgeSocket, "--listen", ProxyAddr}
	if token != "" {
		out = append(out, "--token", token)
	}
	out = append(out, "--filter-fd", strconv.Itoa(CommandFilterFD), "--")
	return append(out, argv...)
}

// Options are the parts of a bwrap invocation that are not policy: the
// descriptors the caller passes and how to look at the host file system.
type Options struct {
	// SeccompFD is the descriptor (as bwrap sees it) holding the BPF
	// program. It is required: Args refuses to render a sandbox without
	// its system call filter.
	SeccompFD int
	// StatusFD, when above 2, is passed as --json-status-fd: bwrap writes
	// the sandbox's init pid when it starts and the command's exit code
	// when it ends, which tells a command that exited 1 from a sandbox
	// that never started.
	StatusFD int
	// Stat reports whether a host path exists and whether it is a
	// directory, following symlinks. Args uses it to choose how to mask a
	// denied path; tests pass a fake so the argv is deterministic. Nil
	// means HostStat.
	Stat func(path string) (isDir, exists bool)
	// Proxy is required for a profile with Proxy and ignored otherwise.
	Proxy *ProxyRoute
	// Helper, when set, is guardrun's binary on the host, bound
	// read-only at BridgeExe for a verified command's helper (with the
	// proxy, the bridge's binary is the same one).
	Helper string
	// Devices are device nodes bound over the ones bwrap's --dev binds
	// from the host: a host path and the path in /dev.
	Devices [][2]string
}

// Args renders p as bwrap options, in order, without the program name and
// without the command. It validates p first and never emits anything the
// profile does not allow. The same inputs always give the same argv.
//
// Mount order is what makes the argv correct: bwrap applies options in
// sequence and a later mount hides an earlier one at or below it. So:
// fresh /proc, /dev and /tmp and the exposed trees, parents before
// children (by depth); then the read-only overlays; then the masks for
// denied paths, which therefore beat everything; then / itself is made
// read-only, so that nothing can be created outside the writable binds.
func Args(p *sandbox.Profile, opts Options) ([]string, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("bwrap: %w", err)
	}
	if opts.SeccompFD <= 2 {
		return nil, errors.New("bwrap: no seccomp filter descriptor (Options.SeccompFD)")
	}
	if p.Proxy && (opts.Proxy == nil || !filepath.IsAbs(opts.Proxy.Exe) || !filepath.IsAbs(opts.Proxy.Socket)) {
		return nil, errors.New("bwrap: the profile reaches the network through the proxy, but no route to it was given (Options.Proxy)")
	}
	stat := opts.Stat
	if stat == nil {
		stat = HostStat
	}

	a := []string{
		"--unshare-user",
		// Belt and braces with the seccomp filter: nested user
		// namespaces are where most kernel privilege escalations start.
		"--disable-userns",
		"--unshare-pid",
		"--unshare-ipc",
		"--unshare-uts",
		"--unshare-cgroup",
	}
	if !p.Network {
		a = append(a, "--unshare-net")
	}
	a = append(a,
		"--die-with-parent",
		// No controlling terminal inside: TIOCSTI and job-control
		// signals cannot reach the user's terminal.
		"--new-session",
		"--cap-drop", "ALL",
	)

	type op struct {
		path  string
		prio  int // at equal depth: fresh mounts, then links, then binds, then pins and sockets
		words []string
	}
	var ops []op
	ops = append(ops,
		op{"/proc", 0, []string{"--proc", "/proc"}},
		op{"/dev", 0, []string{"--dev", "/dev"}},
	)
	if p.PrivateTmp {
		ops = append(ops, op{"/tmp", 0, []string{"--tmpfs", "/tmp"}})
	}
	for _, l := range p.Symlinks {
		ops = append(ops, op{l.Path, 1, []string{"--symlink", l.Target, l.Path}})
	}
	for _, r := range p.ReadOnly {
		// -try: a system directory such as /lib32 may not exist, and a
		// tree that vanished cannot leak anything.
		ops = append(ops, op{r, 2, []string{"--ro-bind-try", r, r}})
	}
	for _, w := range p.ReadWrite {
		if _, ok := stat(w); ok {
			ops = append(ops, op{w, 2, []string{"--bind", w, w}})
		}
	}
	for _, d := range p.Pinned {
		// A directory leading to a read-only path, bound onto itself: a
		// mount point cannot be renamed, removed or replaced, so the
		// read-only path below it stays where it is.
		if isDir, ok := stat(d); ok && isDir {
			ops = append(ops, op{d, 3, []string{"--bind", d, d}})
		}
	}
	for _, s := range p.UnixSockets {
		// Connecting to a socket needs no write access to its mount.
		ops = append(ops, op{s, 3, []string{"--ro-bind-try", s, s}})
	}
	if p.Proxy {
		ops = append(ops,
			op{BridgeExe, 2, []string{"--ro-bind", opts.Proxy.Exe, BridgeExe}},
			op{BridgeSocket, 2, []string{"--ro-bind", opts.Proxy.Socket, BridgeSocket}},
		)
	} else if opts.Helper != "" {
		if !filepath.IsAbs(opts.Helper) {
			return nil, errors.New("bwrap: the verified command's helper is not an absolute path (Options.Helper)")
		}
		ops = append(ops, op{BridgeExe, 2, []string{"--ro-bind", opts.Helper, BridgeExe}})
	}
	for _, d := range opts.Devices {
		if sandbox.Within(d[1], "/dev") && d[1] != "/dev" {
			ops = append(ops, op{d[1], 2, []string{"--dev-bind", d[0], d[1]}})
		}
	}
	slices.SortStableFunc(ops, func(x, y op) int {
		if d := sandbox.Depth(x.path) - sandbox.Depth(y.path); d != 0 {
			return d
		}
		if d := x.prio - y.prio; d != 0 {
			return d
		}
		if x.path < y.path {
			return -1
		}
		if x.path > y.path {
			return 1
		}
		return 0
	})
	for _, o := range ops {
		a = append(a, o.words...)
	}

	masked := map[string]bool{}
	for _, o := range byDepth(p.ReadOnlyOver) {
		if _, ok := stat(o); ok {
			a = append(a, "--ro-bind", o, o)
			continue
		}
		a = appendMissingMask(a, p, o, stat, masked)
	}
	for _, d := range byDepth(p.Deny) {
		if r, _ := listReadable(p, d); !r {
			// Not inside any exposed tree: it does not exist in the
			// sandbox and cannot be created there (/ is read-only).
			continue
		}
		isDir, ok := stat(d)
		switch {
		case ok && isDir:
			a = append(a, "--tmpfs", d, "--remount-ro", d)
			masked[d] = true
		case ok:
			a = append(a, "--ro-bind", "/dev/null", d)
			masked[d] = true
		default:
			a = appendMissingMask(a, p, d, stat, masked)
		}
	}
	a = append(a, "--remount-ro", "/")

	if p.Cwd != "" {
		a = append(a, "--chdir", p.Cwd)
	}
	if p.Home != "" {
		a = append(a, "--setenv", "HOME", p.Home)
	}
	if p.Proxy {
		for _, kv := range sandbox.ProxyEnv(ProxyAddr) {
			k, v, _ := strings.Cut(kv, "=")
			a = append(a, "--setenv", k, v)
		}
	}
	a = append(a, "--seccomp", strconv.Itoa(opts.SeccompFD))
	if opts.StatusFD > 2 {
		a = append(a, "--json-status-fd", strconv.Itoa(opts.StatusFD))
	}
	return a, nil
}

// appendMissingMask masks a path that does not exist on the host so that
// it cannot be created inside either. A mount needs an existing mount
// point, so the mask goes on the first missing component, as an empty
// read-only directory: neither the path nor anything below it can then be
// created, nothing can be read from it, and tools that walk the tree
// (git add ., find) pass over it as an empty directory, where a device
// node or an empty file would make them fail or pick it up. bwrap creates
// the mount point on the host (Placeholders lists them so that the caller
// can create and later remove them).
//
// Where the parent is not writable inside (a read-only tree), nothing can
// be created there from inside and no mount point can be made either, so
// there is nothing to do.
func appendMissingMask(a []string, p *sandbox.Profile, path string, stat func(string) (bool, bool), masked map[string]bool) []string {
	fm, ok := firstMissing(p, path, stat)
	if !ok || masked[fm] {
		return a
	}
	masked[fm] = true
	return append(a, "--tmpfs", fm, "--remount-ro", fm)
}

// firstMissing returns the first component of path that does not exist,
// if its parent exists and is writable inside the sandbox (so that a
// sandboxed process could create it).
func firstMissing(p *sandbox.Profile, path string, stat func(string) (bool, bool)) (string, bool) {
	fm := path
	for {
		parent := filepath.Dir(fm)
		if parent == fm {
			return "", false // even / is missing: a broken Stat
		}
		isDir, ok := stat(parent)
		if ok {
			if !isDir {
				return "", false // cannot be created under a file
			}
			break
		}
		fm = parent
	}
	if _, w := p.Access(filepath.Dir(fm)); !w {
		return "", false
	}
	return fm, true
}

// Placeholders lists the mount points Args will ask bwrap to create on
// the host: the first missing component of each missing denied or
// protected path inside a writable tree. The caller may create them first
// (and remove them after the sandbox ends) so that no empty files are
// left behind in the user's trees. Each is an empty directory.
func Placeholders(p *sandbox.Profile, stat func(string) (bool, bool)) []string {
	if stat == nil {
		stat = HostStat
	}
	var out []string
	for _, x := range append(slices.Clone(p.ReadOnlyOver), p.Deny...) {
		// Only a path below a writable tree can need one (its first
		// missing component must be creatable): look at the file system
		// only for those.
		if !slices.ContainsFunc(p.ReadWrite, func(w string) bool { return sandbox.Within(x, w) }) {
			continue
		}
		if r, _ := listReadable(p, x); !r {
			continue
		}
		if _, ok := stat(x); ok {
			continue
		}
		if fm, ok := firstMissing(p, x, stat); ok && !slices.Contains(out, fm) {
			out = append(out, fm)
		}
	}
	slices.Sort(out)
	return out
}

// listReadable is whether path lies inside an exposed tree, ignoring
// masks (a profile with only this path's own mask removed).
func listReadable(p *sandbox.Profile, path string) (bool, bool) {
	q := *p
	q.Deny = nil
	q.ReadOnlyOver = nil
	return q.Access(path)
}

func byDepth(l []string) []string {
	out := slices.Clone(l)
	slices.SortStableFunc(out, func(x, y string) int {
		if d := sandbox.Depth(x) - sandbox.Depth(y); d != 0 {
			return d
		}
		if x < y {
			return -1
		}
		if x > y {
			return 1
		}
		return 0
	})
	return out
}
