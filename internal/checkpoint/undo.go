package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Plan is an undo worked out but not done: for each zone of a
// checkpoint, what restoring it changes now.
type Plan struct {
	N     int
	Zones []ZonePlan
}

// ZonePlan is the undo of one zone.
type ZonePlan struct {
	// Target is the zone's state to restore.
	Target Point
	// Changes turn the zone's files now (From) into the target (To).
	Changes []Change
	// Later are the zone's checkpoints after Target: undoing it undoes
	// what ran from them too.
	Later []Checkpoint
	// Skipped are files of the zone now that are too large to record:
	// undoing deletes them or puts the target's back, and they cannot
	// be brought back by undoing the undo.
	Skipped []string

	spec zoneSpec
	now  state
}

// ErrNoCheckpoint is Plan's error for a number the store does not keep.
var ErrNoCheckpoint = errors.New("no such checkpoint")

// Plan works out the undo of checkpoint n: every zone it recorded, as
// the zone is now. Nothing is changed but the store's index.
func (s *Store) Plan(ctx context.Context, n int) (*Plan, error) {
	cps, err := s.Checkpoints(nil)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(cps, func(c Checkpoint) bool { return c.N == n })
	if i < 0 {
		return nil, fmt.Errorf("%w: %d (guardrun checkpoints lists those kept)", ErrNoCheckpoint, n)
	}
	p := &Plan{N: n}
	for _, target := range cps[i].Zones {
		sp, err := s.specOf(target.ID)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %d of %s: %w", n, target.Zone, err)
		}
		unlock, err := s.lockZone(ctx, sp)
		if err != nil {
			return nil, err
		}
		now, err := s.snapshot(ctx, sp, snapOpts{forUndo: true})
		unlock()
		if err != nil {
			return nil, err
		}
		zp := ZonePlan{Target: target, spec: sp, now: now, Skipped: now.skipped}
		if zp.Changes, err = s.changes(sp, now, target); err != nil {
			return nil, s.damageIf(sp, err)
		}
		if zp.Changes, err = s.keepIgnored(ctx, sp, target, zp.Changes); err != nil {
			return nil, s.damageIf(sp, err)
		}
		zp.Skipped = slices.DeleteFunc(zp.Skipped, func(p string) bool {
			return !slices.ContainsFunc(zp.Changes, func(c Change) bool { return c.Path == p })
		})
		for _, c := range cps[i+1:] {
			if slices.ContainsFunc(c.Zones, func(z Point) bool { return z.ID == target.ID }) {
				zp.Later = append(zp.Later, c)
			}
		}
		p.Zones = append(p.Zones, zp)
	}
	return p, nil
}

// changes are what turns the state now into target: the diff of the
// two, and the files now too large to record, deleted where the target
// has none.
func (s *Store) changes(sp zoneSpec, now state, target Point) ([]Change, error) {
	r := newRepo(s.git, sp.dir, sp.top)
	defer r.obj.close()
	a, err := r.obj.side(now.tree, now.perms)
	if err != nil {
		return nil, err
	}
	b, err := r.obj.side(target.Tree, target.Perms)
	if err != nil {
		return nil, err
	}
	cs, err := r.obj.diff(a, b)
	if err != nil {
		return nil, err
	}
	for _, p := range now.skipped {
		i := slices.IndexFunc(cs, func(c Change) bool { return c.Path == p })
		if i >= 0 {
			cs[i].From = Entry{Mode: modeFile, Unrecorded: true}
			continue
		}
		te, ok, err := r.obj.lookup(target.Tree, p)
		if err != nil {
			return nil, err
		}
		c := Change{Path: p, From: Entry{Mode: modeFile, Unrecorded: true}}
		if ok {
			c.To = b.entry(p, te)
		}
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(x, y Change) int { return strings.Compare(x.Path, y.Path) })
	return cs, nil
}

// keepIgnored drops from cs the files the undo would remove that the
// target's .gitignore files ignore: ignored files are never the undo's
// to touch, and a command that emptied or removed a .gitignore (or made
// it unreadable) made them look like files it created. The undo puts
// the .gitignore back and leaves them as they are. The target's
// .gitignore files above each such file are written into an empty
// directory of the store, where git check-ignore reads them.
func (s *Store) keepIgnored(ctx context.Context, sp zoneSpec, target Point, cs []Change) ([]Change, error) {
	r := newRepo(s.git, sp.dir, sp.top)
	defer r.obj.close()
	var removed []string
	ignores := map[string]string{} // the target's .gitignore blobs, by directory
	for _, c := range cs {
		if !c.From.Exists() || c.To.Exists() {
			continue
		}
		removed = append(removed, c.Path)
		for _, d := range append(parents(c.Path), "") {
			if _, seen := ignores[d]; seen {
				continue
			}
			ignores[d] = ""
			te, ok, err := r.obj.lookup(target.Tree, path.Join(d, ".gitignore"))
			if err != nil {
				return nil, err
			}
			if ok && te.mode != modeSymlink {
				ignores[d] = te.oid
			}
		}
	}
	tmp := ""
	for d, oid := range ignores {
		if oid == "" {
			continue
		}
		if tmp == "" {
			var err error
			if tmp, err = os.MkdirTemp(sp.dir, "ignores-"); err != nil {
				return nil, &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
			}
			defer os.RemoveAll(tmp)
		}
		b, err := r.obj.read(oid, "blob")
		if err != nil {
			return nil, err
		}
		p := filepath.Join(tmp, "w", filepath.FromSlash(d), ".gitignore")
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			return nil, &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
		}
	}
	if tmp == "" {
		return cs, nil
	}
	ig := &repo{git: s.git, gitDir: filepath.Join(tmp, "git"), index: filepath.Join(tmp, "index"), top: filepath.Join(tmp, "w"), home: r.home}
	if _, _, err := ig.run(ctx, nil, "init", "-q", "--template="); err != nil {
		return nil, s.gitFailed(sp, err)
	}
	// Each path after ./, so that none reads as pathspec magic (:(glob)x).
	var in []byte
	for _, p := range removed {
		in = append(append(append(in, "./"...), p...), 0)
	}
	out, _, err := ig.run(ctx, in, "check-ignore", "--no-index", "-z", "--stdin")
	var ge *gitError
	if err != nil && !(errors.As(err, &ge) && exitCode(ge.err) == 1) {
		// 1: none is ignored.
		return nil, s.gitFailed(sp, err)
	}
	ignored := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p, ok := strings.CutPrefix(p, "./"); ok {
			ignored[p] = true
		}
	}
	return slices.DeleteFunc(cs, func(c Change) bool { return ignored[c.Path] && c.From.Exists() && !c.To.Exists() }), nil
}

// exitCode is a finished program's exit status, -1 for another error.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// damageIf marks the store damaged when err is a damaged object.
func (s *Store) damageIf(sp zoneSpec, err error) error {
	var oe *objectError
	if errors.As(err, &oe) {
		return s.damage(sp, err.Error())
	}
	return err
}

// ChangedError is Apply's error when a zone changed after its plan was
// made: the person agreed to another change than the one it would now
// make.
type ChangedError struct{ Zone string }

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s changed after the undo was shown; nothing was undone: run it again to see what it would do now", e.Zone)
}

// Apply carries out a plan: with each zone locked, it checks that the
// zone is as the plan found it, records that state as a checkpoint (so
// that the undo can itself be undone; its number is returned), reads
// every object the undo needs (a damaged one stops it before any file
// is touched), and then restores the zone. Files neither the plan's
// states hold (ignored ones, sockets, FIFOs) are never touched, nor
// anything outside the zone.
func (s *Store) Apply(ctx context.Context, p *Plan, req Request) (int, error) {
	specs := make([]zoneSpec, len(p.Zones))
	for i, zp := range p.Zones {
		specs[i] = zp.spec
	}
	unlock, err := s.lockZones(ctx, specs)
	if err != nil {
		return 0, err
	}
	defer unlock()
	states := make([]state, len(p.Zones))
	for i, zp := range p.Zones {
		now, err := s.snapshot(ctx, zp.spec, snapOpts{forUndo: true})
		if err != nil {
			return 0, err
		}
		if !now.same(zp.now) {
			return 0, &ChangedError{Zone: zp.spec.Root}
		}
		states[i] = now
	}
	for _, zp := range p.Zones {
		if err := s.verifyTargets(zp); err != nil {
			return 0, err
		}
	}
	req.Undo = p.N
	pre, err := s.record(ctx, specs, states, req)
	if err != nil {
		return 0, fmt.Errorf("checkpoint before the undo: %w", err)
	}
	var errs []error
	for _, zp := range p.Zones {
		r := newRepo(s.git, zp.spec.dir, zp.spec.top)
		err := restore(zp.spec.Root, zp.Target.Tree, zp.Changes, r.obj)
		r.obj.close()
		if err != nil {
			errs = append(errs, err)
		}
	}
	return pre, errors.Join(errs...)
}

// verifyTargets reads every object a zone's undo writes, so that a
// damaged one is found before the first file is changed.
func (s *Store) verifyTargets(zp ZonePlan) error {
	r := newRepo(s.git, zp.spec.dir, zp.spec.top)
	defer r.obj.close()
	for _, c := range zp.Changes {
		if !c.To.Exists() || c.To.OID == c.From.OID {
			continue
		}
		if err := r.obj.verify(c.To.OID); err != nil {
			return s.damage(zp.spec, fmt.Sprintf("%s: %v", c.Path, err))
		}
	}
	return nil
}

// Content reads a file's content as a state holds it, up to max bytes
// (more is an error): for showing a change before an undo.
func (s *Store) Content(zp ZonePlan, e Entry, max int64) ([]byte, error) {
	if !e.Exists() || e.Unrecorded {
		return nil, nil
	}
	r := newRepo(s.git, zp.spec.dir, zp.spec.top)
	defer r.obj.close()
	rd, _, err := r.obj.open(e.OID)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	if rd.left > max {
		return nil, fmt.Errorf("%d bytes", rd.left)
	}
	return io.ReadAll(rd)
}

// Size is a file's size as a state holds it.
func (s *Store) Size(zp ZonePlan, e Entry) int64 {
	if !e.Exists() || e.Unrecorded {
		return 0
	}
	r := newRepo(s.git, zp.spec.dir, zp.spec.top)
	defer r.obj.close()
	rd, _, err := r.obj.open(e.OID)
	if err != nil {
		return 0
	}
	defer rd.Close()
	return rd.left
}

// parents are the directories above a slash-separated path, deepest
// first ("a/b/c" gives "a/b", "a").
func parents(p string) []string {
	var out []string
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		out = append(out, d)
	}
	return out
}
