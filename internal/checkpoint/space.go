package checkpoint

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A zone's store keeps its size in the file "size": the bytes of the
// files recorded since it was last measured (an upper bound, since git
// compresses them) plus what it measured then. Pruning measures it.

func (s *Store) storeSize(sp zoneSpec) int64 {
	b, err := os.ReadFile(filepath.Join(sp.dir, "size"))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

func (s *Store) setSize(sp zoneSpec, n int64) {
	writeFileAtomic(filepath.Join(sp.dir, "size"), []byte(strconv.FormatInt(n, 10)+"\n"), 0o600)
}

func (s *Store) grow(sp zoneSpec, n int64) { s.setSize(sp, s.storeSize(sp)+n) }

// roomFor makes sure the store can take pending more bytes, removing
// old checkpoints if that makes room; a store still too full is an
// *Error.
func (s *Store) roomFor(ctx context.Context, r *repo, sp zoneSpec, pending int64) error {
	if s.storeSize(sp)+pending <= s.limits.MaxStoreBytes {
		return nil
	}
	// Old checkpoints go first: those beyond checkpoints.keep, then all
	// but a quarter of them, then all but the newest.
	for _, keep := range []int{s.limits.Keep, max(1, s.limits.Keep/4), 1} {
		if err := s.prune(ctx, r, sp, keep); err != nil {
			return err
		}
		if s.storeSize(sp)+pending <= s.limits.MaxStoreBytes {
			return nil
		}
	}
	if size := s.storeSize(sp); size+pending > s.limits.MaxStoreBytes {
		return &Error{Zone: sp.Root, Reason: fmt.Sprintf(
			"its checkpoint store is full: it holds %s and the changes need up to %s more, beyond checkpoints.max_store_bytes (%s); raise the limit, or lower checkpoints.keep",
			sizeText(size), sizeText(pending), sizeText(s.limits.MaxStoreBytes))}
	}
	return nil
}

// checkpointRefs are the numbers of a zone's kept checkpoints, oldest
// first.
func checkpointRefs(gitDir string) ([]int, error) {
	des, err := os.ReadDir(filepath.Join(gitDir, "refs", "checkpoints"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ns []int
	for _, de := range des {
		if n, err := strconv.Atoi(de.Name()); err == nil && n > 0 {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns, nil
}

// prune removes the oldest checkpoints beyond the newest keep, and the
// objects only they held, then measures the store.
func (s *Store) prune(ctx context.Context, r *repo, sp zoneSpec, keep int) error {
	ns, err := checkpointRefs(r.gitDir)
	if err != nil {
		return &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
	}
	if len(ns) > keep {
		for _, n := range ns[:len(ns)-keep] {
			os.Remove(filepath.Join(r.gitDir, "refs", "checkpoints", strconv.Itoa(n)))
			os.Remove(filepath.Join(r.gitDir, "refs", "perms", strconv.Itoa(n)))
		}
	}
	if _, _, err := r.run(ctx, nil, "prune", "--expire=now"); err != nil {
		return s.gitFailed(sp, err)
	}
	size, err := dirSize(filepath.Join(r.gitDir, "objects"))
	if err != nil {
		return &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
	}
	s.setSize(sp, size)
	return nil
}

// maybePrune prunes when a zone keeps a quarter more checkpoints than
// checkpoints.keep, so that pruning's walk of the store is paid once
// every keep/4 checkpoints, not at each.
func (s *Store) maybePrune(ctx context.Context, r *repo, sp zoneSpec) {
	ns, err := checkpointRefs(r.gitDir)
	if err != nil || len(ns) <= s.limits.Keep+max(1, s.limits.Keep/4) {
		return
	}
	s.prune(ctx, r, sp, s.limits.Keep)
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n, err
}

// scrubBatch is how many objects each snapshot checks.
const scrubBatch = 16

// scrub checks a few of the store's objects at each snapshot, from an
// object directory picked at random, so that a damaged object (a disk
// error, an edit, a crash before it reached the disk) is found without
// reading the whole store at once. A damaged one marks the store
// damaged. Objects a snapshot reads anyway (the newest commit and its
// trees) are checked there.
func (s *Store) scrub(r *repo, sp zoneSpec) error {
	var b [1]byte
	rand.Read(b[:])
	for round := 0; round < 256; round++ {
		fan := fmt.Sprintf("%02x", (int(b[0])+round)%256)
		des, _ := os.ReadDir(filepath.Join(r.gitDir, "objects", fan))
		checked := 0
		for _, de := range des {
			if len(de.Name()) != 38 || checked == scrubBatch {
				continue
			}
			checked++
			err := r.obj.verify(fan + de.Name())
			var oe *objectError
			if errors.As(err, &oe) && errors.Is(err, errCorrupt) {
				return s.damage(sp, err.Error())
			}
		}
		if checked > 0 {
			return nil
		}
	}
	return nil
}
