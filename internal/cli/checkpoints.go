package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/checkpoint"
	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/rules"
)

const checkpointsUsage = `Usage: guardrun checkpoints [--json] [-n N] [--all] [--reset]

Lists the checkpoints guardrun took of the writable zones before
requests ran: each one's number, time and zone, the requests that ran
from that state, and what changed after it (files added, modified and
deleted up to the zone's next checkpoint, or up to now for the newest).
guardrun undo N puts a zone back as it was at checkpoint N.

By default only the zones of the config in force here are listed; --all
lists every zone's. -n N shows the last N. --reset moves the damaged
checkpoint store of a zone here aside (kept, for recovery with git) and
starts a new one.
`

const undoUsage = `Usage: guardrun undo [N] [--dry-run] [--yes]

Restores each zone of checkpoint N (default: the newest of the zones
here) to what it was before the requests of N ran: every file's content
and permissions, every link's target; files created since are removed,
deleted ones recreated. Ignored files, .git and everything outside the
zones are left as they are. Undoing N also undoes what ran after it.

The changes are shown first and confirmed on the terminal (or under
guardrun supervise, on the supervisor's); --yes confirms without asking,
--dry-run only shows them. The zone's state before the undo is itself
checkpointed, so an undo can be undone.
`

// checkpointScope is the zones listed and undone by default: those the
// config in force here checkpoints. nil (with --all): every zone.
func checkpointScope(l *config.Loaded, all bool) []string {
	if all {
		return nil
	}
	roots := []string{}
	for _, z := range request.CheckpointZones(l) {
		roots = append(roots, z.Root)
	}
	return roots
}

// requestInfo is one request of a checkpoint as the audit log tells it.
type requestInfo struct {
	Run       string `json:"run,omitempty"`
	Summary   string `json:"summary"`
	Cwd       string `json:"cwd,omitempty"`
	DecidedBy string `json:"decided_by,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
	Exit      *int   `json:"exit,omitempty"`
	Undo      int    `json:"undo,omitempty"`
}

func (r requestInfo) String() string {
	s := request.OneLineDisplay(r.Summary)
	var how []string
	if r.DecidedBy != "" {
		how = append(how, r.DecidedBy)
	}
	switch {
	case r.Exit != nil:
		how = append(how, "exit "+strconv.Itoa(*r.Exit))
	case r.Outcome == approval.OutcomeStarted:
		how = append(how, "unfinished")
	case r.Outcome != "":
		how = append(how, r.Outcome)
	}
	if len(how) > 0 {
		s += " (" + strings.Join(how, ", ") + ")"
	}
	return s
}

// checkpointLine is one zone of one checkpoint, as listed.
type checkpointLine struct {
	N        int                `json:"n"`
	Time     time.Time          `json:"time"`
	Zone     string             `json:"zone"`
	Name     string             `json:"name,omitempty"`
	Files    int                `json:"files"`
	Bytes    int64              `json:"bytes"`
	Changed  *checkpoint.Counts `json:"changed,omitempty"`
	Until    int                `json:"changed_until,omitempty"`
	Error    string             `json:"changed_error,omitempty"`
	Requests []requestInfo      `json:"requests"`
}

// auditRuns are the audit log's records by run, ends over starts.
func auditRuns(l *config.Loaded) map[string]approval.Record {
	recs, _ := approval.ReadAudit(l.Cfg.Audit.Path, approval.Filter{})
	out := map[string]approval.Record{}
	for _, r := range approval.JoinRuns(recs) {
		if r.Run != "" {
			out[r.Run] = r
		}
	}
	return out
}

// requestsOf are the requests that ran from checkpoint c, with what
// the audit log says of each.
func requestsOf(c checkpoint.Checkpoint, runs map[string]approval.Record) []requestInfo {
	var out []requestInfo
	for _, p := range c.Requests {
		ri := requestInfo{Run: p.Run, Summary: p.Summary, Cwd: p.Cwd, Undo: p.Undo}
		if r, ok := runs[p.Run]; ok {
			ri.DecidedBy, ri.Outcome, ri.Exit = r.DecidedBy, r.Outcome, r.Exit
		}
		out = append(out, ri)
	}
	return out
}

func cmdCheckpoints(g *global, args []string, io IO) error {
	vf, help, err := verbStart(g, args, checkpointsUsage, []string{"-n"}, []string{"--all", "--reset"}, io)
	if err != nil || help {
		return err
	}
	if len(vf.args) > 0 || vf.dashes {
		return usagef("checkpoints takes no arguments")
	}
	n := 0
	if s, ok := vf.values["-n"]; ok {
		if n, err = strconv.Atoi(s); err != nil || n < 0 {
			return usagef("-n wants a number of checkpoints, got %q", s)
		}
	}
	e, l, err := config.LoadProcess(g.ConfigFlags())
	if err != nil {
		return err
	}
	st, err := request.CheckpointStore(l, e)
	if err != nil {
		return err
	}
	scope := checkpointScope(l, vf.bools["--all"])
	if vf.bools["--reset"] {
		roots := scope
		if roots == nil {
			return usagef("--reset takes the zones here, not --all")
		}
		done := false
		for _, root := range roots {
			if st.Damaged(root) == "" {
				continue
			}
			moved, err := st.Reset(root)
			if err != nil {
				return err
			}
			for _, m := range moved {
				fmt.Fprintf(io.Stdout, "moved the damaged checkpoint store of %s to %s\n", root, m)
				done = true
			}
		}
		if !done {
			fmt.Fprintln(io.Stdout, "no damaged checkpoint store among the zones here")
		}
		return nil
	}
	for _, root := range scope {
		if why := st.Damaged(root); why != "" {
			fmt.Fprintf(io.Stderr, "guardrun: warning: %s: %s\n", root, why)
		}
	}
	cps, err := st.Checkpoints(scope)
	if err != nil {
		return err
	}
	if len(cps) == 0 {
		if !g.json {
			fmt.Fprintln(io.Stdout, noCheckpoints(scope))
		}
		return nil
	}
	shown := cps
	if n > 0 && len(shown) > n {
		shown = shown[len(shown)-n:]
	}
	runs := auditRuns(l)
	ctx := context.Background()
	var lines []checkpointLine
	for _, c := range shown {
		for _, z := range c.Zones {
			line := checkpointLine{N: c.N, Time: c.Time, Zone: z.Zone, Name: z.Name, Files: z.Files, Bytes: z.Bytes, Requests: requestsOf(c, runs)}
			after, err := st.ChangedAfter(ctx, cps, z)
			if err != nil {
				line.Error = err.Error()
			} else {
				counts := checkpoint.CountChanges(after.Changes)
				line.Changed, line.Until = &counts, after.Next
			}
			lines = append(lines, line)
		}
	}
	if g.json {
		enc := json.NewEncoder(io.Stdout)
		for _, l := range lines {
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
		return nil
	}
	for _, l := range lines {
		changed := "?"
		if l.Changed != nil {
			changed = fmt.Sprintf("+%d ~%d -%d", l.Changed.Added, l.Changed.Modified, l.Changed.Deleted)
			if l.Until == 0 {
				changed += " until now"
			} else {
				changed += fmt.Sprintf(" until %d", l.Until)
			}
		}
		zone := l.Name
		if zone == "" {
			zone = l.Zone
		}
		var reqs []string
		for _, r := range l.Requests {
			reqs = append(reqs, r.String())
		}
		fmt.Fprintf(io.Stdout, "%4d  %s  %-10s %-18s %s\n", l.N, l.Time.Local().Format(time.DateTime), approval.Sanitize(zone), changed, strings.Join(reqs, "; "))
		if l.Error != "" {
			fmt.Fprintf(io.Stdout, "      (what changed after it cannot be told: %s)\n", approval.Sanitize(l.Error))
		}
	}
	return nil
}

func noCheckpoints(scope []string) string {
	if scope == nil {
		return "no checkpoints yet"
	}
	if len(scope) == 0 {
		return "no checkpoints: the config here has no writable zone (guardrun checkpoints --all lists every zone's)"
	}
	return fmt.Sprintf("no checkpoints of %s yet (guardrun checkpoints --all lists every zone's)", strings.Join(scope, ", "))
}

func cmdUndo(g *global, args []string, io IO) error {
	vf, help, err := verbStart(g, args, undoUsage, nil, []string{"--dry-run", "--yes", "-y"}, io)
	if err != nil || help {
		return err
	}
	if len(vf.args) > 1 || vf.dashes {
		return usagef("undo takes at most one checkpoint number")
	}
	start := time.Now()
	e, l, err := config.LoadProcess(g.ConfigFlags())
	if err != nil {
		return err
	}
	st, err := request.CheckpointStore(l, e)
	if err != nil {
		return err
	}
	n := 0
	if len(vf.args) == 1 {
		if n, err = strconv.Atoi(vf.args[0]); err != nil || n <= 0 {
			return usagef("undo wants a checkpoint number (see guardrun checkpoints), got %q", vf.args[0])
		}
	} else {
		scope := checkpointScope(l, false)
		cps, err := st.Checkpoints(scope)
		if err != nil {
			return err
		}
		if len(cps) == 0 {
			return fmt.Errorf("nothing to undo: %s", noCheckpoints(scope))
		}
		n = cps[len(cps)-1].N
	}
	ctx := context.Background()
	plan, err := st.Plan(ctx, n)
	if errors.Is(err, checkpoint.ErrNoCheckpoint) {
		return fmt.Errorf("nothing to undo: %v", err)
	}
	if err != nil {
		return err
	}
	style := approval.Style{Color: approval.ColorWanted(e.Getenv) && isTerminal(io.Stdout)}
	text, changes := describeUndo(st, plan, style)
	fmt.Fprint(io.Stdout, text)
	if changes == 0 {
		fmt.Fprintln(io.Stdout, "nothing to undo: the zone is as checkpoint", n, "recorded it")
		return nil
	}
	if vf.bools["--dry-run"] {
		return nil
	}
	decided := "--yes"
	if !vf.bools["--yes"] && !vf.bools["-y"] {
		plain, _ := describeUndo(st, plan, approval.Style{Color: approval.ColorWanted(e.Getenv)})
		req := &approval.Request{
			Display: fmt.Sprintf("guardrun undo %d", n),
			Cwd:     e.Cwd,
			Decision: &rules.Decision{Decision: rules.Ask, Parts: []rules.Part{{
				Kind: "finding", Text: fmt.Sprintf("undo checkpoint %d", n), Decision: rules.Ask,
				Reason: fmt.Sprintf("restores %s as checkpoint %d recorded it: %d %s", zonesOf(plan), n, changes, approval.Plural(changes, "file changes", "files change")),
			}}},
			Detail: plain,
		}
		a, err := request.Confirm(ctx, e, req)
		if errors.Is(err, approval.ErrNoPerson) {
			return &refusal{Line: "guardrun: undo needs a person to confirm it and there is no terminal to ask on; run it on a terminal, or pass --yes; nothing was changed"}
		}
		if err != nil {
			return err
		}
		if !a.Approve {
			return &refusal{Line: "guardrun: undo not confirmed; nothing was changed"}
		}
		decided = "confirmed"
	}
	pre, err := st.Apply(ctx, plan, checkpoint.Request{Run: request.RunID(start), Summary: fmt.Sprintf("guardrun undo %d", n), Cwd: e.Cwd})
	rec := approval.Record{
		Time: start.UTC(), Cwd: e.Cwd, Op: "undo", Path: zonesOf(plan), Verdict: "allow", DecidedBy: "person",
		Reason: decided, Undo: n, Checkpoint: pre, Outcome: "ran", Run: request.RunID(start),
		DurationMS: float64(time.Since(start).Microseconds()) / 1000,
	}
	if id, ok := approval.SessionID(g.Session, e.Getenv); ok {
		rec.Session = id
	}
	if err != nil {
		rec.Outcome, rec.Note = "failed", err.Error()
	}
	if aerr := approval.OpenAudit(l.Cfg.Audit.Path).Append(rec); aerr != nil {
		fmt.Fprintf(io.Stderr, "guardrun: warning: audit log: %v\n", aerr)
	}
	if err != nil {
		if pre > 0 {
			return fmt.Errorf("undo of checkpoint %d: %w (guardrun undo %d puts back the state before this undo)", n, err, pre)
		}
		return fmt.Errorf("undo of checkpoint %d: %w", n, err)
	}
	fmt.Fprintf(io.Stdout, "undone: %s %s as checkpoint %d recorded it; guardrun undo %d undoes this\n", zonesOf(plan), approval.Plural(len(plan.Zones), "is", "are"), n, pre)
	return nil
}

func zonesOf(p *checkpoint.Plan) string {
	var zs []string
	for _, z := range p.Zones {
		if z.Target.Name != "" {
			zs = append(zs, fmt.Sprintf("zone %s (%s)", z.Target.Name, z.Target.Zone))
		} else {
			zs = append(zs, z.Target.Zone)
		}
	}
	return approval.Sanitize(strings.Join(zs, ", "))
}

// describeUndo is what an undo would do, as the person reads it before
// confirming: per zone, what it undoes, then each file's change from
// now to the checkpoint (a diff, a file recreated, one deleted).
func describeUndo(st *checkpoint.Store, p *checkpoint.Plan, style approval.Style) (string, int) {
	var b strings.Builder
	total := 0
	for _, z := range p.Zones {
		name := z.Target.Zone
		if z.Target.Name != "" {
			name = fmt.Sprintf("zone %s (%s)", z.Target.Name, z.Target.Zone)
		}
		fmt.Fprintf(&b, "undo checkpoint %d of %s, taken %s before: %s\n", p.N, approval.Sanitize(name), z.Target.Time.Local().Format(time.DateTime), request.OneLineDisplay(z.Target.Summary))
		b.WriteString("  it puts back every file of the zone as it was then, whatever changed it since\n")
		if len(z.Later) > 0 {
			var later []string
			for _, c := range z.Later {
				var reqs []string
				for _, r := range c.Requests {
					reqs = append(reqs, request.OneLineDisplay(r.Summary))
				}
				later = append(later, fmt.Sprintf("%d (%s)", c.N, strings.Join(reqs, "; ")))
			}
			fmt.Fprintf(&b, "  this also undoes what ran after it, from checkpoints %s\n", strings.Join(later, ", "))
		}
		for _, s := range z.Skipped {
			fmt.Fprintf(&b, "  %s is larger than checkpoints.max_file_bytes: its content now is not recorded, so undoing this undo cannot bring it back\n", approval.Sanitize(s))
		}
		if len(z.Changes) == 0 {
			continue
		}
		c := checkpoint.CountChanges(z.Changes)
		fmt.Fprintf(&b, "  %d %s: %d deleted since (recreated), %d modified (put back), %d created since (removed)\n",
			len(z.Changes), approval.Plural(len(z.Changes), "file", "files"), c.Deleted, c.Modified, c.Added)
		for _, ch := range z.Changes {
			b.WriteString(describeChange(st, z, ch, style))
		}
		total += len(z.Changes)
	}
	return b.String(), total
}

func describeChange(st *checkpoint.Store, z checkpoint.ZonePlan, c checkpoint.Change, style approval.Style) string {
	content := func(e checkpoint.Entry) ([]byte, bool) {
		b, err := st.Content(z, e, approval.MaxShownBytes)
		return b, err == nil
	}
	kind := func(e checkpoint.Entry) string {
		if e.Symlink() {
			return "symbolic link"
		}
		return "regular file"
	}
	switch {
	case !c.To.Exists():
		if c.From.Unrecorded {
			return approval.InfoDetail("delete", c.Path, "regular file, not recorded", 0, style)
		}
		return approval.InfoDetail("delete", c.Path, kind(c.From), st.Size(z, c.From), style)
	case c.To.Symlink():
		target, _ := content(c.To)
		return fmt.Sprintf("link %s -> %s\n", approval.Sanitize(c.Path), approval.Sanitize(string(target)))
	case !c.From.Exists() || c.From.Symlink() || c.From.Unrecorded:
		if b, ok := content(c.To); ok {
			return approval.NewFileDetail(c.Path, b, style) + permNote(c)
		}
		return approval.InfoDetail("recreate", c.Path, kind(c.To), st.Size(z, c.To), style)
	case c.From.OID == c.To.OID:
		return fmt.Sprintf("chmod %s: %04o → %04o\n", approval.Sanitize(c.Path), uint32(c.From.Perm.Perm())|setID(c.From), uint32(c.To.Perm.Perm())|setID(c.To))
	}
	old, ok1 := content(c.From)
	new, ok2 := content(c.To)
	if !ok1 || !ok2 {
		return approval.InfoDetail("replace", c.Path, "regular file (too large to show)", st.Size(z, c.To), style)
	}
	return approval.DiffDetail(c.Path, old, new, style) + permNote(c)
}

func permNote(c checkpoint.Change) string {
	if !c.To.Exists() || c.To.Symlink() || (c.From.Exists() && c.From.Perm == c.To.Perm) {
		return ""
	}
	return fmt.Sprintf("  mode %04o\n", uint32(c.To.Perm.Perm())|setID(c.To))
}

func setID(e checkpoint.Entry) uint32 {
	var p uint32
	if e.Perm&os.ModeSetuid != 0 {
		p |= 0o4000
	}
	if e.Perm&os.ModeSetgid != 0 {
		p |= 0o2000
	}
	if e.Perm&os.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}
