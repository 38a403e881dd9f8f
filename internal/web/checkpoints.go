package web

import (
	"context"
	"time"
)

// Checkpoints is what the page needs of guardrun's checkpoints (SPEC
// §5): those kept, newest first, and undoing one. The page shows the
// section as not available while Config.Checkpoints is nil; the
// checkpoint store implements this and `guardrun web` passes it in.
type Checkpoints interface {
	List(ctx context.Context) ([]Checkpoint, error)
	// Undo restores the zone to before checkpoint id.
	Undo(ctx context.Context, id string) error
}

// Checkpoint is one checkpoint as the page lists it.
type Checkpoint struct {
	ID   string
	Time time.Time
	// Request is what ran (a script or argv), Zone the zone it
	// changed, Summary what it changed ("3 files changed, 1 created").
	Request string
	Zone    string
	Summary string
}
