package checkpoint

import (
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Entry is one file of a zone's state: a regular file (Mode 0100644 or
// 0100755, with its permissions) or a symbolic link (0120000). The zero
// Entry is no file.
type Entry struct {
	Mode uint32
	OID  string
	Perm fs.FileMode
	// Unrecorded is a file the state does not hold (larger than
	// max_file_bytes): present, its content unknown.
	Unrecorded bool
}

// Exists reports whether the entry is a file.
func (e Entry) Exists() bool { return e.Mode != 0 }

// Symlink reports whether the entry is a symbolic link.
func (e Entry) Symlink() bool { return e.Mode == modeSymlink }

// Change is one path that differs between two states: From in the one,
// To in the other.
type Change struct {
	Path     string
	From, To Entry
}

// Kind is "added", "deleted" or "modified" (content, type or
// permissions).
func (c Change) Kind() string {
	switch {
	case !c.From.Exists():
		return "added"
	case !c.To.Exists():
		return "deleted"
	}
	return "modified"
}

// Counts are how many files a change list adds, modifies and deletes.
type Counts struct {
	Added    int `json:"added"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
}

// CountChanges sums a change list.
func CountChanges(cs []Change) Counts {
	var c Counts
	for _, ch := range cs {
		switch ch.Kind() {
		case "added":
			c.Added++
		case "deleted":
			c.Deleted++
		default:
			c.Modified++
		}
	}
	return c
}

// side is a state as a diff reads it: a tree and its permissions.
type side struct {
	tree  string
	perms map[string]fs.FileMode
}

func (o *objects) side(tree, perms string) (side, error) {
	sd := side{tree: tree, perms: map[string]fs.FileMode{}}
	if perms == "" {
		return sd, nil
	}
	b, err := o.read(perms, "blob")
	if err != nil {
		return sd, err
	}
	sd.perms, err = decodePerms(perms, b)
	return sd, err
}

func (sd side) entry(p string, te treeEntry) Entry {
	e := Entry{Mode: te.mode, OID: te.oid}
	if te.mode != modeSymlink {
		e.Perm = defaultPerm(te.mode)
		if perm, ok := sd.perms[p]; ok {
			e.Perm = perm
		}
	}
	return e
}

// diff lists what differs from state a to state b, sorted by path.
func (o *objects) diff(a, b side) ([]Change, error) {
	var out []Change
	if err := o.diffTree("", a, b, a.tree, b.tree, &out); err != nil {
		return nil, err
	}
	// Permissions can differ where content does not (the walk skips
	// equal trees and blobs).
	seen := map[string]bool{}
	for _, c := range out {
		seen[c.Path] = true
	}
	var moreperm []string
	for p, m := range a.perms {
		if b.perms[p] != m {
			moreperm = append(moreperm, p)
		}
	}
	for p := range b.perms {
		if _, ok := a.perms[p]; !ok {
			moreperm = append(moreperm, p)
		}
	}
	slices.Sort(moreperm)
	for _, p := range slices.Compact(moreperm) {
		if seen[p] {
			continue
		}
		te, ok, err := o.lookup(a.tree, p)
		if err != nil {
			return nil, err
		}
		tb, okb, err := o.lookup(b.tree, p)
		if err != nil {
			return nil, err
		}
		if !ok || !okb {
			continue // a permission for a file not there: nothing to do
		}
		ea, eb := a.entry(p, te), b.entry(p, tb)
		if ea != eb {
			out = append(out, Change{Path: p, From: ea, To: eb})
		}
	}
	slices.SortFunc(out, func(x, y Change) int { return strings.Compare(x.Path, y.Path) })
	return out, nil
}

func (o *objects) diffTree(dir string, a, b side, ta, tb string, out *[]Change) error {
	if ta == tb {
		return nil
	}
	ea, err := o.tree(ta)
	if err != nil {
		return err
	}
	eb, err := o.tree(tb)
	if err != nil {
		return err
	}
	byName := map[string][2]*treeEntry{}
	var names []string
	for i := range ea {
		byName[ea[i].name] = [2]*treeEntry{&ea[i], nil}
		names = append(names, ea[i].name)
	}
	for i := range eb {
		v, ok := byName[eb[i].name]
		if !ok {
			names = append(names, eb[i].name)
		}
		v[1] = &eb[i]
		byName[eb[i].name] = v
	}
	slices.Sort(names)
	for _, name := range names {
		v := byName[name]
		x, y := v[0], v[1]
		p := path.Join(dir, name)
		xt := x != nil && x.mode == modeTree
		yt := y != nil && y.mode == modeTree
		switch {
		case xt && yt:
			if err := o.diffTree(p, a, b, x.oid, y.oid, out); err != nil {
				return err
			}
			continue
		case xt:
			if err := o.allFiles(p, a, x.oid, true, out); err != nil {
				return err
			}
			x = nil
		case yt:
			if err := o.allFiles(p, b, y.oid, false, out); err != nil {
				return err
			}
			y = nil
		}
		var c Change
		c.Path = p
		if x != nil {
			c.From = a.entry(p, *x)
		}
		if y != nil {
			c.To = b.entry(p, *y)
		}
		if c.From != c.To {
			*out = append(*out, c)
		}
	}
	return nil
}

// allFiles lists every file below a tree as deleted (from set) or added.
func (o *objects) allFiles(dir string, sd side, tree string, from bool, out *[]Change) error {
	es, err := o.tree(tree)
	if err != nil {
		return err
	}
	for _, e := range es {
		p := path.Join(dir, e.name)
		if e.mode == modeTree {
			if err := o.allFiles(p, sd, e.oid, from, out); err != nil {
				return err
			}
			continue
		}
		c := Change{Path: p}
		if from {
			c.From = sd.entry(p, e)
		} else {
			c.To = sd.entry(p, e)
		}
		*out = append(*out, c)
	}
	return nil
}

// lookup finds the entry at a slash-separated path below a tree.
func (o *objects) lookup(tree, p string) (treeEntry, bool, error) {
	dir, name := path.Split(p)
	sub, err := o.subtree(tree, strings.TrimSuffix(dir, "/"))
	if err != nil {
		return treeEntry{}, false, err
	}
	es, err := o.tree(sub)
	if err != nil {
		return treeEntry{}, false, err
	}
	for _, e := range es {
		if e.name == name {
			return e, e.mode != modeTree, nil
		}
	}
	return treeEntry{}, false, nil
}

// hasDir reports whether a tree holds a directory at p.
func (o *objects) hasDir(tree, p string) (bool, error) {
	if p == "" {
		return true, nil
	}
	dir, name := path.Split(p)
	sub, err := o.subtree(tree, strings.TrimSuffix(dir, "/"))
	if err != nil {
		return false, err
	}
	es, err := o.tree(sub)
	if err != nil {
		return false, err
	}
	for _, e := range es {
		if e.name == name && e.mode == modeTree {
			return true, nil
		}
	}
	return false, nil
}
