package request

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/checkpoint"
	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/sys/trace"
	"github.com/guardrun/guardrun/rules"
)

// Checkpoints (SPEC §5): before a request that may write a rw zone
// runs, Run records the zones' state, so that `guardrun undo` can put
// it back.
//
// When: before every request that may write (Decision.Checkpoint is not
// none) and runs — pre-approved by a rule, by approve-all, by a session
// grant, or by a person just now. The contract asks for one where no
// person is asked; one is taken where a person approved too, since it
// costs a git status beside the person's answer and lets undo reach
// back past an approved command.
//
// What a checkpoint that cannot be taken changes: where the request is
// allowed by a rule that relies on undo (checkpoint: required), the
// allow becomes ask, with "not checkpointed: why" as its reason, so a
// person decides (strict mode refuses it: 77). Everywhere else the
// request runs, with a warning naming why: a best-effort checkpoint
// that failed never turns a plain pre-approval into a prompt, which
// would change every pre-approved command of a zone too large to
// record.

// CheckpointStore opens the checkpoint store of config l in guardrun's
// state directory, which every sandbox hides.
func CheckpointStore(l *config.Loaded, e *config.Env) (*checkpoint.Store, error) {
	if !l.Cfg.Checkpoints.Enabled {
		return nil, errors.New("checkpoints are off (checkpoints.enabled: false)")
	}
	if e.StateDir == "" {
		return nil, errors.New("there is no state directory to keep checkpoints in (no home directory, no $XDG_STATE_HOME)")
	}
	c := l.Cfg.Checkpoints
	return checkpoint.Open(filepath.Join(e.StateDir, "checkpoints"), checkpoint.Limits{
		MaxFiles: c.MaxFiles, MaxBytes: c.MaxBytes, MaxFileBytes: c.MaxFileBytes, MaxStoreBytes: c.MaxStoreBytes, Keep: c.Keep,
	})
}

// CheckpointZones are the zones a request's sandbox makes writable:
// config l's rw zones that are directories, each without the zones
// inside it and the paths and names sandbox.deny hides.
func CheckpointZones(l *config.Loaded) []checkpoint.Zone {
	type root struct {
		name, path string
		rw         bool
	}
	var roots []root
	for _, z := range l.Cfg.Sandbox.Zones {
		r := rules.Resolve(z.Root, "/")
		roots = append(roots, root{z.Name, r, z.Mode == rules.ReadWrite})
	}
	var names, deny []string
	for _, d := range l.Cfg.Sandbox.Deny {
		if strings.Contains(d, "/") {
			deny = append(deny, rules.Resolve(d, "/"))
		} else {
			names = append(names, d)
		}
	}
	var out []checkpoint.Zone
	for _, r := range roots {
		if !r.rw || slices.ContainsFunc(out, func(z checkpoint.Zone) bool { return z.Root == r.path }) {
			continue
		}
		if fi, err := os.Stat(r.path); err != nil || !fi.IsDir() {
			continue // nothing there yet to record
		}
		z := checkpoint.Zone{Name: r.name, Root: r.path, ExcludeNames: names}
		for _, o := range roots {
			if o.path != r.path && rules.Within(o.path, r.path) {
				z.Exclude = append(z.Exclude, o.path)
			}
		}
		for _, d := range deny {
			if d != r.path && rules.Within(d, r.path) {
				z.Exclude = append(z.Exclude, d)
			}
		}
		out = append(out, z)
	}
	return out
}

// checkpointing is the checkpoint of one request.
type checkpointing struct {
	need  rules.Checkpoint
	taken bool
	n     int
	why   string
}

// checkpointAllowed takes the checkpoint now for a request allowed by a
// rule that relies on undo, and where it cannot be taken returns the
// decision turned into ask, saying why. Every other decision is
// returned as it is, its checkpoint left to checkpointBefore.
func (s *Session) checkpointAllowed(ctx context.Context, j *Job, d *rules.Decision, cwd string, start time.Time) (*checkpointing, *rules.Decision) {
	cp := &checkpointing{need: d.Checkpoint}
	if d.Decision != rules.Allow || d.Checkpoint != rules.CheckpointRequired {
		return cp, d
	}
	s.takeCheckpoint(ctx, cp, j, cwd, start)
	if cp.why == "" {
		return cp, d
	}
	asks := *d
	asks.Parts = append(slices.Clone(d.Parts), rules.Part{
		Kind: "finding", Text: "not checkpointed", Decision: rules.Ask, Pos: "1:1",
		Reason: "not checkpointed: " + cp.why + " (" + reliesOnUndo(d) + " only where undo can take it back)",
	})
	asks.Decision = rules.Ask
	asks.Reason = asks.Parts[len(asks.Parts)-1].Reason
	return cp, &asks
}

// reliesOnUndo says which rules pre-approve which parts of d because
// undo can take them back: `rule "node" lets node x.js run unasked`.
func reliesOnUndo(d *rules.Decision) string {
	var says []string
	for _, p := range d.Parts {
		if p.Decision == rules.Allow && p.Checkpoint == rules.CheckpointRequired {
			s := fmt.Sprintf("rule %q lets %s run unasked", p.Rule, p.Text)
			if !slices.Contains(says, s) {
				says = append(says, s)
			}
		}
	}
	if len(says) > 2 {
		says = append(says[:2], fmt.Sprintf("%d more", len(says)-2))
	}
	return strings.Join(says, ", ")
}

// checkpointBefore takes the checkpoint of a request about to run
// where checkpointAllowed did not, and fills the audit record: a
// checkpoint that cannot be taken is a warning.
func (s *Session) checkpointBefore(ctx context.Context, cp *checkpointing, j *Job, cwd string, start time.Time, rec *approval.Record, io IO) {
	if !cp.taken && cp.need != rules.CheckpointNone {
		s.takeCheckpoint(ctx, cp, j, cwd, start)
	}
	if cp.why != "" {
		fmt.Fprintf(io.Stderr, "guardrun: warning: not checkpointed: %s; guardrun undo will not cover this command\n", cp.why)
	}
	rec.Checkpoint, rec.NoCheckpoint = cp.n, cp.why
}

// takeCheckpoint records the writable zones' state for j.
func (s *Session) takeCheckpoint(ctx context.Context, cp *checkpointing, j *Job, cwd string, start time.Time) {
	cp.taken = true
	zones := CheckpointZones(s.Loaded)
	if len(zones) == 0 {
		return
	}
	defer trace.Phase("checkpoint")()
	st, err := CheckpointStore(s.Loaded, s.Env)
	if err != nil {
		cp.why = err.Error()
		return
	}
	n, err := st.Take(ctx, zones, checkpoint.Request{Run: runID(j.PID, start), Summary: OneLineDisplay(s.Display(j)), Cwd: cwd})
	cp.n = n
	if err != nil {
		cp.why = checkpointWhy(err)
	}
}

// checkpointWhy is a checkpoint's failure in one line: each zone's
// reason.
func checkpointWhy(err error) string {
	var parts []string
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		parts = append(parts, err.Error())
	}
	walk(err)
	return strings.Join(parts, "; ")
}

// Confirm asks a person to confirm req, as Run's prompts ask (the
// supervisor's terminal when one runs, else this terminal, never an
// agent's pty): approval.ErrNoPerson when nobody can be asked.
// `guardrun undo` asks this way before it changes the zone.
func Confirm(ctx context.Context, e *config.Env, req *approval.Request) (approval.Answer, error) {
	p, closeP := prompterFor(e, false)
	if closeP != nil {
		defer closeP()
	}
	if p == nil {
		return approval.Answer{}, approval.ErrNoPerson
	}
	return p.Prompt(ctx, req)
}

// RunID names a run of this process that started at start, as the
// audit records of commands name theirs.
func RunID(start time.Time) string { return runID(0, start) }
