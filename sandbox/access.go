package sandbox

import (
	"path/filepath"
	"slices"
)

// Access reports what a process inside the sandbox may do with path,
// computed from the profile's lists alone (no file system access), with
// the precedence every renderer must reproduce:
//
//   - a path under a Deny entry is neither readable nor writable;
//   - otherwise the deepest ReadOnly or ReadWrite entry that contains the
//     path decides (ReadOnly wins a tie);
//   - a ReadOnlyOver entry makes everything beneath it read-only.
//
// A path under one of Symlinks is first rewritten to its target, as the
// kernel would inside the sandbox. A relative path has no access.
func (p *Profile) Access(path string) (read, write bool) {
	if !filepath.IsAbs(path) {
		return false, false
	}
	path = filepath.Clean(path)
	for _, s := range p.Symlinks {
		if Within(path, s.Path) {
			path = filepath.Join(s.Target, path[len(s.Path):])
			break
		}
	}
	if withinAny(path, p.Deny) {
		return false, false
	}
	read, write = listAccess(p, path)
	if write && withinAny(path, p.ReadOnlyOver) {
		write = false
	}
	return read, write
}

// listAccess is the access the ReadOnly and ReadWrite lists alone give
// path: the deepest entry containing it decides.
func listAccess(p *Profile, path string) (read, write bool) {
	best := -1
	for _, r := range p.ReadOnly {
		if Within(path, r) && Depth(r) > best {
			best, read, write = Depth(r), true, false
		}
	}
	for _, r := range p.ReadWrite {
		// Strictly deeper: at equal depth (the same path in both lists)
		// read-only wins, so a conflict fails closed.
		if Within(path, r) && Depth(r) > best {
			best, read, write = Depth(r), true, true
		}
	}
	return read, write
}

// overAccess is listAccess with ReadOnlyOver applied (Deny left out).
func overAccess(p *Profile, path string) (read, write bool) {
	read, write = listAccess(p, path)
	return read, write && !withinAny(path, p.ReadOnlyOver)
}

func withinAny(path string, roots []string) bool {
	for _, r := range roots {
		if Within(path, r) {
			return true
		}
	}
	return false
}

// Intersect returns the profile that allows only what both p and op allow:
// readable where both are readable, writable where both are writable,
// denied where either denies, network only if both allow it. It is how an
// explicit operator profile narrows a derived one; the result never grants
// anything that either input refuses. Cwd and Home come from p. A nil
// argument leaves the other unchanged.
func Intersect(p, op *Profile) *Profile {
	if p == nil && op == nil {
		return nil
	}
	if op == nil {
		return p.clone()
	}
	if p == nil {
		return op.clone()
	}
	out := &Profile{
		Network:    p.Network && op.Network,
		Proxy:      (p.Network || p.Proxy) && (op.Network || op.Proxy) && !(p.Network && op.Network),
		Cwd:        p.Cwd,
		Home:       p.Home,
		PrivateTmp: p.PrivateTmp || op.PrivateTmp,
		Seccomp: SeccompPolicy{
			AllowNetwork: p.Seccomp.AllowNetwork && op.Seccomp.AllowNetwork,
			AllowUnix:    p.Seccomp.AllowUnix && op.Seccomp.AllowUnix,
		},
	}
	// Access is piecewise constant between list entries: for any path,
	// each profile's answer is the answer at the deepest entry (of
	// either profile) above it. So deciding at every entry of both
	// profiles decides everywhere. An entry that neither profile makes
	// readable is simply left out; it can never sit below a readable one,
	// because lists only grant.
	// ReadOnlyOver entries are breakpoints too: below one, a writable
	// entry of either input comes out read-only.
	var points []string
	for _, x := range []*Profile{p, op} {
		points = append(points, x.ReadOnly...)
		points = append(points, x.ReadWrite...)
		points = append(points, x.ReadOnlyOver...)
	}
	slices.Sort(points)
	points = slices.Compact(points)
	for _, b := range points {
		rp, wp := overAccess(p, b)
		ro, wo := overAccess(op, b)
		switch {
		case rp && ro && wp && wo:
			out.ReadWrite = append(out.ReadWrite, b)
		case rp && ro:
			out.ReadOnly = append(out.ReadOnly, b)
		}
	}
	out.Deny = union(p.Deny, op.Deny)
	for _, o := range union(p.ReadOnlyOver, op.ReadOnlyOver) {
		// A read-only overlay outside every exposed tree would expose
		// it; inside, it only narrows.
		if r, _ := listAccess(out, o); r {
			out.ReadOnlyOver = append(out.ReadOnlyOver, o)
		}
	}
	for _, s := range p.Symlinks {
		if slices.Contains(op.Symlinks, s) {
			out.Symlinks = append(out.Symlinks, s)
		}
	}
	out.Protected = union(p.Protected, op.Protected)
	out.ProtectNames = union(p.ProtectNames, op.ProtectNames)
	for _, d := range union(p.Pinned, op.Pinned) {
		// A pin is a writable bind: only where the result is writable.
		if _, w := out.Access(d); w {
			out.Pinned = append(out.Pinned, d)
		}
	}
	if out.Seccomp.AllowUnix && !out.Proxy {
		for _, s := range p.UnixSockets {
			if slices.Contains(op.UnixSockets, s) {
				out.UnixSockets = append(out.UnixSockets, s)
			}
		}
	}
	out.Seccomp.AllowUnix = len(out.UnixSockets) > 0
	out.EnvDeny = union(p.EnvDeny, op.EnvDeny)
	out.Warnings = union(p.Warnings, op.Warnings)
	out.normalize()
	return out
}

// union returns a sorted, duplicate-free union; nil when both are empty.
func union(a, b []string) []string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make([]string, 0, len(a)+len(b))
	out = append(out, a...)
	out = append(out, b...)
	slices.Sort(out)
	return slices.Compact(out)
}

func (p *Profile) clone() *Profile {
	c := *p
	c.ReadOnly = slices.Clone(p.ReadOnly)
	c.ReadWrite = slices.Clone(p.ReadWrite)
	c.Deny = slices.Clone(p.Deny)
	c.ReadOnlyOver = slices.Clone(p.ReadOnlyOver)
	c.EnvDeny = slices.Clone(p.EnvDeny)
	c.Symlinks = slices.Clone(p.Symlinks)
	c.Protected = slices.Clone(p.Protected)
	c.ProtectNames = slices.Clone(p.ProtectNames)
	c.Pinned = slices.Clone(p.Pinned)
	c.UnixSockets = slices.Clone(p.UnixSockets)
	c.Warnings = slices.Clone(p.Warnings)
	return &c
}

// normalize sorts the lists, removes duplicates and drops entries that
// change nothing: a ReadOnly entry whose nearest enclosing entry is
// already ReadOnly, a ReadWrite entry inside ReadWrite, a Deny or
// ReadOnlyOver entry inside another of its kind. Access is unchanged; the
// rendered argv gets shorter and never mounts into a masked directory.
func (p *Profile) normalize() {
	for _, l := range []*[]string{&p.ReadOnly, &p.ReadWrite, &p.Deny, &p.ReadOnlyOver, &p.Protected, &p.EnvDeny, &p.Pinned, &p.UnixSockets} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	// A path in both lists is read-only (see listAccess).
	p.ReadWrite = slices.DeleteFunc(p.ReadWrite, func(w string) bool {
		return slices.Contains(p.ReadOnly, w)
	})
	type entry struct {
		path string
		rw   bool
	}
	var all []entry
	for _, r := range p.ReadOnly {
		all = append(all, entry{r, false})
	}
	for _, r := range p.ReadWrite {
		all = append(all, entry{r, true})
	}
	var ro, rw []string
	for _, e := range all {
		if withinAny(e.path, p.Deny) {
			continue // masked entirely; mounting it would be wasted
		}
		// The nearest strict ancestor entry decides what e inherits.
		best, parentRW, found := -1, false, false
		for _, a := range all {
			if a.path != e.path && Within(e.path, a.path) && Depth(a.path) > best {
				best, parentRW, found = Depth(a.path), a.rw, true
			}
		}
		if found && parentRW == e.rw {
			continue
		}
		if e.rw {
			rw = append(rw, e.path)
		} else {
			ro = append(ro, e.path)
		}
	}
	p.ReadOnly, p.ReadWrite = ro, rw
	p.Deny = dropNested(p.Deny)
	p.ReadOnlyOver = slices.DeleteFunc(dropNested(p.ReadOnlyOver), func(o string) bool {
		return withinAny(o, p.Deny)
	})
	p.Pinned = slices.DeleteFunc(p.Pinned, func(d string) bool {
		return withinAny(d, p.Deny) || withinAny(d, p.ReadOnlyOver)
	})
	p.UnixSockets = slices.DeleteFunc(p.UnixSockets, func(s string) bool {
		return withinAny(s, p.Deny)
	})
	slices.SortFunc(p.Symlinks, func(a, b Symlink) int {
		if a.Path < b.Path {
			return -1
		}
		if a.Path > b.Path {
			return 1
		}
		return 0
	})
	p.Symlinks = slices.Compact(p.Symlinks)
}

// dropNested removes paths that lie inside another path of the same
// sorted, duplicate-free list.
func dropNested(l []string) []string {
	var out []string
	for _, x := range l {
		nested := false
		for _, y := range l {
			if x != y && Within(x, y) {
				nested = true
				break
			}
		}
		if !nested {
			out = append(out, x)
		}
	}
	return out
}
