package files

import (
	"context"
	"errors"
	"path"
	"path/filepath"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/fsop"
	"github.com/guardrun/guardrun/rules"
)

// WalkOptions bound a walk.
type WalkOptions struct {
	// Depth is how many levels below the directory the walk reaches: 1
	// is the directory's own entries. At least 1.
	Depth int
	// MaxEntries stops the walk after it has reached that many entries
	// (Walked.Truncated); 0 means no bound.
	MaxEntries int
	// Prune, when set, keeps the walk out of a directory it names
	// (a .git): the directory itself is still visited.
	Prune func(name string) bool
}

// WalkEntry is one entry a walk reached.
type WalkEntry struct {
	// Path is the entry's absolute path, as judged.
	Path string
	// Rel is the path below the walked directory, with slashes.
	Rel string
	fsop.Entry
	// Depth is 1 for the directory's own entries.
	Depth int
}

// Walked is what a walk did.
type Walked struct {
	Result
	// Skipped counts the entries left out: denied, outside every zone,
	// guardrun's own state, in another zone that asks before a read, or
	// unreadable. The walk never descends into one.
	Skipped int
	// Truncated is set when the walk stopped at MaxEntries (or visit
	// asked it to stop).
	Truncated bool
}

// ErrStop, returned by a walk's visit, ends the walk early; it is not an
// error of the walk.
var ErrStop = errors.New("stop the walk")

// Walk goes through the tree under dir for verb (ls, search), depth
// first, in name order, calling visit with each entry it may show. dir
// is judged as a read and asked about where its zone asks, once for the
// whole walk; then every entry is judged as a read on its own, and left
// out (Walked.Skipped) where it is blocked — denied, outside every zone,
// guardrun's own state — or where it asks in a zone other than the one
// the walk was let into (a nested zone with read_approval): each such
// file would need its own approval, which a walk never asks for.
// Symbolic links are reported as they are, never followed. A dir that is
// not a directory is walked as its one entry.
//
// What visit reads of an entry it opens itself (fsop.Open on the
// entry's Path, which follows no link). The walk is audited as one
// record of verb on dir.
func (f *Files) Walk(ctx context.Context, verb, dir string, o WalkOptions, visit func(WalkEntry) (read int64, err error)) (*Walked, error) {
	op := f.newOp(verb, dir)
	if err := op.refuseWithoutSandbox(); err != nil {
		return nil, err
	}
	top := op.judge(rules.OpRead)
	op.decide(top)
	if err := op.blocked(); err != nil {
		return nil, err
	}
	info, err := fsop.Lstat(op.path)
	if err != nil {
		return nil, op.failEarly(err)
	}
	out, err := op.gate(ctx, func(st approval.Style) string {
		return approval.InfoDetail(verb, op.path, info.Kind.Describe(), info.Size, st)
	})
	if err != nil {
		return nil, err
	}
	if !out.Run {
		return nil, op.refuse(out)
	}
	w := &walker{f: f, ctx: ctx, o: o, visit: visit, zone: top.Zone, res: &Walked{},
		approveAll: f.S.Loaded.Cfg.Mode == rules.ModeApproveAll}
	if o.Depth < 1 {
		w.o.Depth = 1
	}
	if info.Kind != fsop.Dir {
		err = w.entry(op.path, filepath.Base(op.path), fsop.Entry{Name: filepath.Base(op.path), Kind: info.Kind, Size: info.Size}, 1)
	} else {
		err = w.dir(op.path, "", 1)
	}
	switch {
	case errors.Is(err, ErrStop):
		w.res.Truncated = true
	case err != nil:
		return nil, op.fail(out, err)
	}
	w.res.Result = *op.done(out, w.read)
	return w.res, nil
}

type walker struct {
	f     *Files
	ctx   context.Context
	o     WalkOptions
	visit func(WalkEntry) (int64, error)
	// zone is the zone of the walked directory: its entries are in what
	// the walk was let into, even where that zone asks before a read.
	zone string
	// approveAll runs what asks, as the mode does for every request.
	approveAll bool
	res        *Walked
	seen       int
	read       int64
}

// dir walks the entries of the directory at abs (rel below the top).
func (w *walker) dir(abs, rel string, depth int) error {
	entries, _, err := fsop.List(abs)
	if err != nil {
		w.res.Skipped++
		return nil
	}
	for _, e := range entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		r := e.Name
		if rel != "" {
			r = path.Join(rel, e.Name)
		}
		if err := w.entry(filepath.Join(abs, e.Name), r, e, depth); err != nil {
			return err
		}
	}
	return nil
}

// entry judges one entry, visits it where it may be shown, and descends
// into a directory.
func (w *walker) entry(abs, rel string, e fsop.Entry, depth int) error {
	if w.o.MaxEntries > 0 && w.seen >= w.o.MaxEntries {
		return ErrStop
	}
	p := w.f.S.DecideFile(rules.OpRead, abs)
	switch {
	case p.Decision == rules.Block:
		w.res.Skipped++
		return nil
	case p.Decision == rules.Ask && !w.approveAll && (p.Zone == "" || p.Zone != w.zone):
		w.res.Skipped++
		return nil
	}
	w.seen++
	n, err := w.visit(WalkEntry{Path: abs, Rel: rel, Entry: e, Depth: depth})
	w.read += n
	if err != nil {
		return err
	}
	if e.Kind != fsop.Dir || depth >= w.o.Depth || (w.o.Prune != nil && w.o.Prune(e.Name)) {
		return nil
	}
	return w.dir(abs, rel, depth+1)
}
