package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// last is the newest point of a zone, kept in its store so that a
// checkpoint of an unchanged zone can reuse its number without reading
// the log.
type last struct {
	N      int    `json:"n"`
	Tree   string `json:"tree"`
	Perms  string `json:"perms,omitempty"`
	Commit string `json:"commit"`
}

func readLast(sp zoneSpec) (last, bool) {
	b, err := os.ReadFile(filepath.Join(sp.dir, "last.json"))
	if err != nil {
		return last{}, false
	}
	var l last
	if json.Unmarshal(b, &l) != nil || l.N <= 0 {
		return last{}, false
	}
	return l, true
}

// Take records the state of zones before a request, and returns the
// checkpoint's number: one for all the zones, the same as the previous
// checkpoint's when none of them changed since. Zones that cannot be
// checkpointed are *Errors, joined; the others are recorded all the
// same (n is 0 when none was).
func (s *Store) Take(ctx context.Context, zones []Zone, req Request) (int, error) {
	var errs []error
	var specs []zoneSpec
	for _, z := range zones {
		sp, err := s.spec(z)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !slices.ContainsFunc(specs, func(o zoneSpec) bool { return o.id == sp.id }) {
			specs = append(specs, sp)
		}
	}
	if len(specs) == 0 {
		return 0, errors.Join(errs...)
	}
	unlock, err := s.lockZones(ctx, specs)
	if err != nil {
		return 0, errors.Join(append(errs, err)...)
	}
	defer unlock()
	var got []zoneSpec
	var states []state
	for _, sp := range specs {
		st, err := s.snapshot(ctx, sp, snapOpts{})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, sp)
		states = append(states, st)
	}
	if len(got) == 0 {
		return 0, errors.Join(errs...)
	}
	n, err := s.record(ctx, got, states, req)
	if err != nil {
		for _, sp := range got {
			errs = append(errs, &Error{Zone: sp.Root, Reason: "checkpoint store: " + err.Error()})
		}
		return 0, errors.Join(errs...)
	}
	for _, sp := range got {
		s.maybePrune(ctx, newRepo(s.git, sp.dir, sp.top), sp)
	}
	return n, errors.Join(errs...)
}

// lockZones takes the locks of zones in the order of their stores, so
// that two guardruns taking the same zones never wait for each other
// crosswise.
func (s *Store) lockZones(ctx context.Context, specs []zoneSpec) (func(), error) {
	order := slices.Clone(specs)
	slices.SortFunc(order, func(a, b zoneSpec) int { return strings.Compare(a.id, b.id) })
	var unlocks []func()
	release := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	for _, sp := range order {
		u, err := s.lockZone(ctx, sp)
		if err != nil {
			release()
			return nil, err
		}
		unlocks = append(unlocks, u)
	}
	return release, nil
}

// record gives the states a number and writes them to the log; the
// caller holds the zones' locks.
func (s *Store) record(ctx context.Context, specs []zoneSpec, states []state, req Request) (int, error) {
	unlock, err := s.lockLog(ctx)
	if err != nil {
		return 0, err
	}
	defer unlock()
	// The same number as before when every zone is as its last
	// checkpoint left it, and those share one.
	n := 0
	for i, sp := range specs {
		l, ok := readLast(sp)
		if !ok || l.Tree != states[i].tree || l.Perms != states[i].perms || len(states[i].skipped) > 0 || (n != 0 && l.N != n) {
			n = 0
			break
		}
		n = l.N
	}
	fresh := n == 0
	if fresh {
		top, err := s.lastN()
		if err != nil {
			return 0, err
		}
		n = top + 1
	}
	now := s.now().UTC()
	var points []Point
	for i, sp := range specs {
		st := states[i]
		gitDir := filepath.Join(sp.dir, "git")
		if fresh {
			if err := writeRef(gitDir, "refs/checkpoints/"+strconv.Itoa(n), st.commit); err != nil {
				return 0, err
			}
			if st.perms != "" {
				if err := writeRef(gitDir, "refs/perms/"+strconv.Itoa(n), st.perms); err != nil {
					return 0, err
				}
			}
		}
		points = append(points, Point{
			N: n, Time: now, Zone: sp.Root, Name: sp.Name, ID: sp.id,
			Tree: st.tree, Perms: st.perms, Commit: st.commit, Files: st.files, Bytes: st.bytes,
			Skipped: st.skipped, Run: req.Run, Summary: clip(req.Summary, 200), Cwd: clip(req.Cwd, 1024), Undo: req.Undo,
		})
	}
	if err := s.appendLog(points); err != nil {
		return 0, err
	}
	if fresh {
		for i, sp := range specs {
			b, _ := json.Marshal(last{N: n, Tree: states[i].tree, Perms: states[i].perms, Commit: states[i].commit})
			writeFileAtomic(filepath.Join(sp.dir, "last.json"), b, 0o600)
		}
	}
	return n, nil
}
