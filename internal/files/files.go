package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/fsop"
	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/rules"
	"github.com/guardrun/guardrun/shellparse"
)

// Limits of what an operation holds in memory.
const (
	// MaxEditBytes bounds a file an edit loads, changes and shows.
	MaxEditBytes = 16 << 20
	// MaxSnapshotBytes bounds the old content kept to show a diff and to
	// check, before replacing a file, that it is still what was shown.
	MaxSnapshotBytes = 16 << 20
)

// Files does file operations for one front, in one session.
type Files struct {
	S *request.Session
	// Stderr takes warnings: a session grant that could not be stored,
	// an audit log that cannot be written.
	Stderr io.Writer
	// Via names the front in the audit records ("" for guardrun fs).
	Via string
	// Show is the operation as the person reads it in a prompt, given
	// the operation and the path as the caller gave it; nil shows it as
	// the guardrun fs command that does it.
	Show func(op, path string) string
	// Decided, when set, is the answer already given for every
	// operation these Files do (one prompt for a whole tool call, which
	// showed them all): an operation that would ask takes it instead of
	// asking again. One that blocks is still refused.
	Decided *approval.Outcome
	// Check, when set, may tighten policy's verdict on each path an
	// operation judges, given the operation, the path as given and the
	// part as judged now: a caller that judged the paths itself before
	// (the hook, for a whole tool call) refuses one that resolves
	// elsewhere now, through a link made or changed since.
	Check func(op rules.Op, arg string, p rules.Part) rules.Part
}

// Result is what an operation did.
type Result struct {
	Op string
	// Path is the path as resolved: what policy judged, what was
	// touched.
	Path string
	// Bytes are the bytes read, written, or the size of the file
	// removed.
	Bytes int64
	// Created is set when a write made a new file.
	Created bool
	// Replaced is how many times an edit replaced its text.
	Replaced int
	// Removed is what a remove removed.
	Removed fsop.Kind
	// Entries are a list's.
	Entries []fsop.Entry
	// By is who let it happen: rule, person, session or mode.
	By string
	// Note is what the person typed with an approval.
	Note string
}

// Refused is an operation guardrun would not do: blocked by policy,
// denied by the person, refused by strict mode, or a symbolic link that
// appeared on the path after it was judged. Nothing was touched. As an
// error it is a *request.Refusal too (errors.As), with the same line.
type Refused struct {
	Op, Path string
	// Line is the one line an agent reads: "guardrun: blocked: ...".
	Line     string
	Decision rules.Verdict
	// Reason is policy's reason for a block, else the refusal line
	// without its "guardrun: " prefix.
	Reason string
	// By is who decided (policy, person, mode, sandbox), Note what the
	// person typed.
	By, Note string
}

func (r *Refused) Error() string { return r.Line }

// Unwrap makes a Refused a *request.Refusal to errors.As.
func (r *Refused) Unwrap() error { return &request.Refusal{Line: r.Line} }

// Failed is an operation that was allowed but could not be done (a
// missing file, text to replace not found, the disk full); it may have
// been audited as failed.
type Failed struct {
	Op, Path string
	Err      error
}

func (e *Failed) Error() string { return e.Err.Error() }
func (e *Failed) Unwrap() error { return e.Err }

// op is one operation: decided, asked about, done and audited.
type op struct {
	f     *Files
	verb  string // read, write, edit, ls, rm or search
	arg   string // the path as given
	path  string // the path as resolved
	start time.Time
	d     *rules.Decision
	// mkdirs are the missing directories a write creates first.
	mkdirs []string
}

func (f *Files) newOp(verb, arg string) *op {
	return &op{f: f, verb: verb, arg: arg, start: time.Now()}
}

// refuseWithoutSandbox refuses every operation, as every command is
// refused, when no OS sandbox works here and the config says
// os_sandbox_fallback: refuse_tools.
func (o *op) refuseWithoutSandbox() error {
	s := o.f.S
	err := s.ToolsRefused()
	if err == nil {
		return nil
	}
	o.path = rules.Resolve(o.arg, s.Env.Cwd)
	o.d = &rules.Decision{Decision: rules.Block, Reason: "no OS sandbox is available (os_sandbox_fallback: refuse_tools): " + err.Error()}
	return o.refuse(approval.Outcome{By: "sandbox", Refusal: "guardrun: refused: " + approval.OneLine(o.d.Reason)})
}

// judge decides one operation on the path (request.DecideFile).
func (o *op) judge(r rules.Op) rules.Part {
	p := o.f.S.DecideFile(r, o.arg)
	if o.f.Check != nil {
		p = o.f.Check(r, o.arg, p)
	}
	o.path = p.Path
	return p
}

// decide combines the parts of one operation (edit is a read and a
// write) into one decision: the strictest verdict and its reason.
func (o *op) decide(parts ...rules.Part) *rules.Decision {
	o.d = request.Combine(parts...)
	return o.d
}

// blocked refuses a decision that blocks; nil when it does not.
func (o *op) blocked() error {
	if o.d.Decision != rules.Block {
		return nil
	}
	return o.refuse(approval.Outcome{By: "policy", Refusal: "guardrun: blocked: " + approval.OneLine(o.d.Reason)})
}

// gate resolves the decision as commands are: allow runs, block refuses,
// ask prompts (interactive), runs (approve-all) or refuses (strict).
// detail draws what the prompt shows of the content; it is called only
// when a person will be asked.
func (o *op) gate(ctx context.Context, detail func(approval.Style) string) (approval.Outcome, error) {
	s, d := o.f.S, o.d
	if o.f.Decided != nil && d.Decision == rules.Ask {
		return *o.f.Decided, nil
	}
	summary := fmt.Sprintf("%s %s", o.verb, o.path)
	if len(d.Parts) > 0 && d.Parts[0].Zone != "" {
		summary += fmt.Sprintf(" (zone %s)", d.Parts[0].Zone)
	}
	show := o.f.Show
	if show == nil {
		show = func(verb, path string) string {
			return shellparse.QuoteArgv([]string{"guardrun", "fs", verb, path}, s.Loaded.Engine.Dialect())
		}
	}
	req := &approval.Request{
		Display:  show(o.verb, o.arg),
		Decision: d,
		Cwd:      s.Env.Cwd,
		Summary:  request.OneLineDisplay(summary),
	}
	if s.Store != nil {
		req.Key = request.FileGrantKey(d)
	}
	var prepare func(approval.Style)
	if detail != nil {
		prepare = func(st approval.Style) { req.Detail = detail(st) }
	}
	return s.Ask(ctx, req, request.IO{Stderr: o.f.Stderr}, prepare)
}

// refuse audits and reports an operation that does not happen.
func (o *op) refuse(out approval.Outcome) error {
	o.audit("refused", out.By, out.Note, 0)
	reason := o.d.Reason
	if o.d.Decision != rules.Block {
		reason = strings.TrimPrefix(out.Refusal, "guardrun: ")
	}
	return &Refused{Op: o.verb, Path: o.path, Line: out.Refusal, Decision: o.d.Decision, Reason: reason, By: out.By, Note: out.Note}
}

// fail audits an operation that was allowed but could not be done, and
// returns why. A symbolic link that appeared after the check is a
// refusal: guardrun will not do it, rather than could not.
func (o *op) fail(out approval.Outcome, err error) error {
	o.audit("failed", out.By, out.Note, 0)
	var se *fsop.SymlinkError
	if errors.As(err, &se) {
		line := "guardrun: refused: " + approval.OneLine(err.Error())
		return &Refused{Op: o.verb, Path: o.path, Line: line, Decision: rules.Block, Reason: strings.TrimPrefix(line, "guardrun: "), By: "policy"}
	}
	return &Failed{Op: o.verb, Path: o.path, Err: err}
}

// failEarly reports an operation that cannot be done, found out before
// anyone was asked (a missing file, a directory to read): a rule allowed
// it, or nobody decided yet.
func (o *op) failEarly(err error) error {
	by := ""
	if o.d.Decision == rules.Allow {
		by = "rule"
	}
	return o.fail(approval.Outcome{By: by}, err)
}

func (o *op) audit(outcome, by, note string, n int64) {
	s := o.f.S
	rec := approval.Record{
		Time: o.start.UTC(), Session: s.ID, Cwd: s.Env.Cwd,
		Op: o.verb, Path: o.path, Bytes: n,
		Verdict: o.d.Decision.String(), Outcome: outcome, DecidedBy: by,
		Reason: o.d.Reason, Note: note, Via: o.f.Via,
		DurationMS: float64(time.Since(o.start).Microseconds()) / 1000,
	}
	s.Audit(rec, o.f.Stderr)
}

func (o *op) done(out approval.Outcome, n int64) *Result {
	o.audit("ran", out.By, out.Note, n)
	return &Result{Op: o.verb, Path: o.path, Bytes: n, By: out.By, Note: out.Note}
}

// Read reads the file at path: judged as a read, asked about where its
// zone asks (showing the kind of file and its size), then handed to
// consume, which reads what it wants of it and returns how many bytes
// it took. The file is opened before anyone is asked, so the file read
// is the file the person approved.
func (f *Files) Read(ctx context.Context, path string, consume func(r io.Reader, info fsop.Info) (int64, error)) (*Result, error) {
	o := f.newOp("read", path)
	if err := o.refuseWithoutSandbox(); err != nil {
		return nil, err
	}
	o.decide(o.judge(rules.OpRead))
	if err := o.blocked(); err != nil {
		return nil, err
	}
	file, info, err := fsop.Open(o.path)
	if err != nil {
		return nil, o.failEarly(err)
	}
	defer file.Close()
	out, err := o.gate(ctx, func(st approval.Style) string {
		return approval.InfoDetail("read", o.path, info.Kind.Describe(), info.Size, st)
	})
	if err != nil {
		return nil, err
	}
	if !out.Run {
		return nil, o.refuse(out)
	}
	n, err := consume(file, info)
	if err != nil {
		o.audit("failed", out.By, out.Note, n)
		return nil, &Failed{Op: o.verb, Path: o.path, Err: fmt.Errorf("%s: %w", o.path, err)}
	}
	return o.done(out, n), nil
}

// Write creates or replaces the file at path with data: judged as a
// write, asked about where its zone asks (showing the diff, or a new
// file's content and the directories it creates). Missing directories
// are created only inside the file's own read-write zone.
func (f *Files) Write(ctx context.Context, path string, data []byte) (*Result, error) {
	o := f.newOp("write", path)
	if err := o.refuseWithoutSandbox(); err != nil {
		return nil, err
	}
	o.decide(o.judge(rules.OpWrite))
	if err := o.blocked(); err != nil {
		return nil, err
	}
	snap, err := o.snapshot(MaxSnapshotBytes)
	if err != nil {
		dirs, ok := o.parentsToCreate(err)
		if !ok {
			return nil, o.failEarly(err)
		}
		o.mkdirs, snap = dirs, &fsop.Snapshot{}
	}
	return o.replace(ctx, snap, data, false)
}

// Edit is a replacement of text in the file at path.
type Edit struct {
	Old, New string
	// All replaces every occurrence; without it Old must occur exactly
	// once.
	All bool
	// OldName is how the caller names Old in an error ("--old").
	OldName string
}

// Edit replaces e.Old with e.New in the file at path: judged as a read
// and a write, asked about where either asks (showing the diff).
func (f *Files) Edit(ctx context.Context, path string, e Edit) (*Result, error) {
	o := f.newOp("edit", path)
	if err := o.refuseWithoutSandbox(); err != nil {
		return nil, err
	}
	o.decide(o.judge(rules.OpRead), o.judge(rules.OpWrite))
	if err := o.blocked(); err != nil {
		return nil, err
	}
	if e.Old == "" {
		return nil, o.failEarly(fmt.Errorf("%s must not be empty", e.OldName))
	}
	snap, err := o.snapshot(MaxEditBytes)
	if err != nil {
		return nil, o.failEarly(err)
	}
	switch {
	case !snap.Exists:
		return nil, o.failEarly(fmt.Errorf("%s does not exist (fs write creates files)", o.path))
	case snap.TooLarge:
		return nil, o.failEarly(fmt.Errorf("%s is larger than %d MiB, too large to edit", o.path, MaxEditBytes>>20))
	}
	n := bytes.Count(snap.Data, []byte(e.Old))
	switch {
	case n == 0 && e.All:
		return nil, o.failEarly(fmt.Errorf("%s was not found in %s", e.OldName, o.path))
	case n == 0:
		return nil, o.failEarly(fmt.Errorf("%s was not found in %s; it must occur exactly once", e.OldName, o.path))
	case n > 1 && !e.All:
		return nil, o.failEarly(fmt.Errorf("%s was found %d times in %s; it must occur exactly once (include more of the surrounding text)", e.OldName, n, o.path))
	}
	data := bytes.ReplaceAll(snap.Data, []byte(e.Old), []byte(e.New))
	r, err := o.replace(ctx, snap, data, true)
	if r != nil {
		r.Replaced = n
	}
	return r, err
}

// Change replaces the content of the file at path with what change
// computes from the content of from (path itself when from is ""): an
// update of the file, or, with from, its content moved to path. Judged
// as a read of from and a write of path, asked about where either asks
// (showing the diff, or the new file); from must exist, path must not
// when it differs. The file written must still be what change was given.
func (f *Files) Change(ctx context.Context, path, from string, change func(old []byte) ([]byte, error)) (*Result, error) {
	o := f.newOp("edit", path)
	if err := o.refuseWithoutSandbox(); err != nil {
		return nil, err
	}
	src := o
	if from != "" && from != path {
		src = f.newOp("read", from)
		rd := src.judge(rules.OpRead)
		o.decide(rd, o.judge(rules.OpWrite))
	} else {
		o.decide(o.judge(rules.OpRead), o.judge(rules.OpWrite))
	}
	if err := o.blocked(); err != nil {
		return nil, err
	}
	snap, err := fsop.Load(src.path, MaxEditBytes)
	switch {
	case err != nil:
		return nil, o.failEarly(err)
	case !snap.Exists:
		return nil, o.failEarly(fmt.Errorf("%s does not exist", src.path))
	case snap.TooLarge:
		return nil, o.failEarly(fmt.Errorf("%s is larger than %d MiB, too large to edit", src.path, MaxEditBytes>>20))
	case snap.Info.Kind != fsop.File:
		return nil, o.failEarly(fmt.Errorf("%s is not a regular file", src.path))
	}
	data, err := change(snap.Data)
	if err != nil {
		return nil, o.failEarly(fmt.Errorf("%s: %w", src.path, err))
	}
	if src == o {
		return o.replace(ctx, snap, data, true)
	}
	to, err := o.snapshot(MaxSnapshotBytes)
	if err != nil {
		dirs, ok := o.parentsToCreate(err)
		if !ok {
			return nil, o.failEarly(err)
		}
		o.mkdirs, to = dirs, &fsop.Snapshot{}
	}
	if to.Exists {
		return nil, o.failEarly(fmt.Errorf("%s exists already", o.path))
	}
	return o.replace(ctx, to, data, true)
}

// snapshot loads the file as it is now, for the prompt and for the
// check before it is replaced. Anything but a regular file (or nothing)
// cannot be written.
func (o *op) snapshot(limit int64) (*fsop.Snapshot, error) {
	snap, err := fsop.Load(o.path, limit)
	if err != nil {
		return nil, err
	}
	if snap.Exists && snap.Info.Kind != fsop.File {
		if snap.Info.Kind == fsop.Dir {
			return nil, fmt.Errorf("%s is a directory", o.path)
		}
		return nil, fmt.Errorf("%s is a %s, not a regular file", o.path, snap.Info.Kind.Describe())
	}
	return snap, nil
}

// replace asks about and writes data over the file that snap describes.
// An edit's new content was computed from snap, so the file must still
// be snap when it is replaced; so must a write the person approved
// seeing a diff against it.
func (o *op) replace(ctx context.Context, snap *fsop.Snapshot, data []byte, edit bool) (*Result, error) {
	out, err := o.gate(ctx, func(st approval.Style) string {
		switch {
		case !snap.Exists:
			return mkdirDetail(o.mkdirs, st) + approval.NewFileDetail(o.path, data, st)
		case snap.TooLarge:
			return approval.InfoDetail("replace", o.path, fmt.Sprintf("regular file of %d bytes with %d bytes", snap.Info.Size, len(data)), int64(len(data)), st)
		}
		return approval.DiffDetail(o.path, snap.Data, data, st)
	})
	if err != nil {
		return nil, err
	}
	if !out.Run {
		return nil, o.refuse(out)
	}
	w := fsop.WriteOptions{}
	if edit || out.By == "person" {
		w.Expect = snap
	}
	if err := fsop.MkdirParents(o.mkdirs); err != nil {
		return nil, o.fail(out, err)
	}
	created, err := fsop.WriteFile(o.path, data, w)
	if err != nil {
		return nil, o.fail(out, err)
	}
	r := o.done(out, int64(len(data)))
	r.Created = created
	return r, nil
}

// List lists the directory at path (or, for anything else, the one
// entry for path itself): judged as a read, asked about where its zone
// asks.
func (f *Files) List(ctx context.Context, path string) (*Result, error) {
	o := f.newOp("ls", path)
	if err := o.refuseWithoutSandbox(); err != nil {
		return nil, err
	}
	o.decide(o.judge(rules.OpRead))
	if err := o.blocked(); err != nil {
		return nil, err
	}
	entries, info, err := fsop.List(o.path)
	if err != nil {
		return nil, o.failEarly(err)
	}
	out, err := o.gate(ctx, func(st approval.Style) string {
		what := info.Kind.Describe()
		if info.Kind == fsop.Dir {
			what = fmt.Sprintf("directory of %d %s", len(entries), approval.Plural(len(entries), "entry", "entries"))
		}
		return approval.InfoDetail("list", o.path, what, info.Size, st)
	})
	if err != nil {
		return nil, err
	}
	if !out.Run {
		return nil, o.refuse(out)
	}
	r := o.done(out, 0)
	r.Entries = entries
	return r, nil
}

// Remove removes the regular file or empty directory at path: judged as
// a delete, asked about where its zone asks. A symbolic link is never
// removed (policy judged where it points), nor a zone's root.
func (f *Files) Remove(ctx context.Context, path string) (*Result, error) {
	o := f.newOp("rm", path)
	if err := o.refuseWithoutSandbox(); err != nil {
		return nil, err
	}
	base := filepath.Base(path)
	if base == "." || base == ".." || base == "/" {
		return nil, fmt.Errorf("%s does not name a file", path)
	}
	d := o.decide(o.judge(rules.OpDelete))
	if err := o.blocked(); err != nil {
		return nil, err
	}
	// Policy judged where a link points; rm would remove the link itself.
	// Neither matches what was asked, so a link is not removed at all.
	parent := strings.TrimRight(path, "/")
	if i := strings.LastIndexByte(parent, '/'); i >= 0 {
		parent = parent[:i+1]
	} else {
		parent = "."
	}
	if fi, err := fsop.Lstat(filepath.Join(rules.Resolve(parent, f.S.Env.Cwd), base)); err == nil && fi.Kind == fsop.Symlink {
		return nil, o.failEarly(fmt.Errorf("%s is a symbolic link; fs rm removes files and empty directories, not links", path))
	}
	if z, ok := f.S.Loaded.Cfg.ZoneByName(d.Parts[0].Zone); ok && rules.Resolve(z.Root, "/") == o.path {
		d.Decision = rules.Block
		d.Reason = fmt.Sprintf("delete %s: it is the root of zone %q", path, z.Name)
		d.Parts[0].Decision, d.Parts[0].Reason = d.Decision, d.Reason
		return nil, o.blocked()
	}
	info, err := fsop.Lstat(o.path)
	if err != nil {
		return nil, o.failEarly(err)
	}
	switch info.Kind {
	case fsop.File, fsop.Dir:
	default:
		return nil, o.failEarly(fmt.Errorf("%s is a %s; fs rm removes files and empty directories only", o.path, info.Kind.Describe()))
	}
	out, err := o.gate(ctx, func(st approval.Style) string {
		return approval.InfoDetail("delete", o.path, info.Kind.Describe(), info.Size, st)
	})
	if err != nil {
		return nil, err
	}
	if !out.Run {
		return nil, o.refuse(out)
	}
	var expect *fsop.Info
	if out.By == "person" {
		expect = &info
	}
	removed, err := fsop.Remove(o.path, expect)
	if err != nil {
		return nil, o.fail(out, err)
	}
	n := int64(0)
	if removed.Kind == fsop.File {
		n = removed.Size
	}
	r := o.done(out, n)
	r.Removed = removed.Kind
	return r, nil
}
