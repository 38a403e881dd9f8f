package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Checkpoint is one number of the log: the state of one or more zones,
// and the requests that ran from it.
type Checkpoint struct {
	N    int
	Time time.Time
	// Zones are the zones' states (one point each).
	Zones []Point
	// Requests are every request that ran from this state, in order
	// (one point per request and zone).
	Requests []Point
}

// Checkpoints lists the checkpoints whose zone is one of roots (every
// zone when roots is nil) and which the store still keeps, oldest
// first.
func (s *Store) Checkpoints(roots []string) ([]Checkpoint, error) {
	log, err := s.Log()
	if err != nil {
		return nil, err
	}
	byN := map[int]*Checkpoint{}
	var order []int
	kept := map[string]map[int]bool{}
	isKept := func(p Point) bool {
		m, ok := kept[p.ID]
		if !ok {
			m = map[int]bool{}
			ns, _ := checkpointRefs(filepath.Join(s.dir, "zones", p.ID, "git"))
			for _, n := range ns {
				m[n] = true
			}
			kept[p.ID] = m
		}
		return m[p.N]
	}
	for _, p := range log {
		if roots != nil && !slices.Contains(roots, p.Zone) {
			continue
		}
		if !isKept(p) {
			continue
		}
		c, ok := byN[p.N]
		if !ok {
			c = &Checkpoint{N: p.N, Time: p.Time}
			byN[p.N] = c
			order = append(order, p.N)
		}
		if !slices.ContainsFunc(c.Zones, func(z Point) bool { return z.ID == p.ID }) {
			c.Zones = append(c.Zones, p)
		}
		if !slices.ContainsFunc(c.Requests, func(r Point) bool { return r.Run == p.Run && r.Run != "" }) {
			c.Requests = append(c.Requests, p)
		}
	}
	slices.Sort(order)
	out := make([]Checkpoint, 0, len(order))
	for _, n := range order {
		out = append(out, *byN[n])
	}
	return out, nil
}

// After is what changed in a zone after a checkpoint: from its state
// to the zone's next checkpoint (Next, its number) or, for the newest,
// to the zone's files now (Next 0).
type After struct {
	Next    int
	Changes []Change
}

// ChangedAfter compares a zone's state at point p with the next
// checkpoint of the same zone among cps (as Checkpoints lists them),
// or with the zone's files now, which it snapshots (without recording
// a checkpoint).
func (s *Store) ChangedAfter(ctx context.Context, cps []Checkpoint, p Point) (After, error) {
	sp, err := s.specOf(p.ID)
	if err != nil {
		return After{}, err
	}
	r := newRepo(s.git, sp.dir, sp.top)
	defer r.obj.close()
	var next *Point
	for _, c := range cps {
		if c.N <= p.N {
			continue
		}
		for i := range c.Zones {
			if c.Zones[i].ID == p.ID {
				next = &c.Zones[i]
				break
			}
		}
		if next != nil {
			break
		}
	}
	to := state{}
	out := After{}
	if next != nil {
		to.tree, to.perms = next.Tree, next.Perms
		out.Next = next.N
	} else {
		unlock, err := s.lockZone(ctx, sp)
		if err != nil {
			return After{}, err
		}
		to, err = s.snapshot(ctx, sp, snapOpts{})
		unlock()
		if err != nil {
			return After{}, err
		}
	}
	a, err := r.obj.side(p.Tree, p.Perms)
	if err != nil {
		return After{}, err
	}
	b, err := r.obj.side(to.tree, to.perms)
	if err != nil {
		return After{}, err
	}
	out.Changes, err = r.obj.diff(a, b)
	return out, err
}

// Reset moves the store of the zone at root aside (to a name it
// returns, with the time), so that checkpoints start again in a new
// one: for a store found damaged. The old one is kept for whoever wants
// to recover from it with git.
func (s *Store) Reset(root string) ([]string, error) {
	des, err := os.ReadDir(filepath.Join(s.dir, "zones"))
	if err != nil {
		return nil, err
	}
	var moved []string
	for _, de := range des {
		sp, err := s.specOf(de.Name())
		if err != nil || sp.Root != root {
			continue
		}
		unlock, err := s.lockZone(context.Background(), sp)
		if err != nil {
			return moved, err
		}
		to := filepath.Join(s.dir, "damaged", de.Name()+"."+s.now().UTC().Format("20060102T150405"))
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			unlock()
			return moved, err
		}
		err = os.Rename(sp.dir, to)
		unlock()
		if err != nil {
			return moved, err
		}
		moved = append(moved, to)
	}
	return moved, nil
}

// Damaged says, for the zone at root, why its store is damaged; "" when
// it is not.
func (s *Store) Damaged(root string) string {
	des, err := os.ReadDir(filepath.Join(s.dir, "zones"))
	if err != nil {
		return ""
	}
	for _, de := range des {
		sp, err := s.specOf(de.Name())
		if err != nil || sp.Root != root {
			continue
		}
		if why, ok := s.damaged(sp); ok {
			return why
		}
	}
	return ""
}
