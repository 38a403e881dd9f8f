package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/fsop"
	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/rules"
	"github.com/guardrun/guardrun/shellparse"
)

const fsUsage = `Usage:
  guardrun fs read PATH                       print a file
  guardrun fs write PATH < CONTENT            create or replace a file with stdin
  guardrun fs edit PATH --old TEXT --new TEXT replace TEXT, which must occur exactly once
  guardrun fs ls [PATH]                       list a directory: type, size, name
  guardrun fs rm PATH                         remove a file or an empty directory

Each operation is checked against the config's file zones as a read (read,
ls), a write (write; edit is a read and a write) or a delete (rm). Outside
every zone, under sandbox.deny, in a read-only zone or against a zone's
suffixes it is refused; in a zone with read_approval, write_approval or
delete_approval it asks first, showing the diff of the change, the new
file's content, or what would be deleted.

guardrun performs the operation itself, outside the OS sandbox, on the path
as resolved when it was checked: symbolic links are resolved before the
check and never followed after it. Writes are atomic (a reader sees the old
file or the new one, never a mix) and keep the file's mode; a write creates
missing directories only inside the file's own read-write zone, and shows
them in what it asks. fs rm removes regular files and empty
directories only: never a directory tree, never a symbolic link.
guardrun's own config and state cannot be changed through fs.

Flags:
  --json          print one JSON object: {"ok":true,"op":...,"path":...,"bytes":N}
                  or {"ok":false,"decision":...,"reason":...}
  --old TEXT      (edit) the exact text to replace
  --new TEXT      (edit) the text to put in its place
  and the common flags --config, --mode, --approve-all, --strict, --session.
  Put -- before a PATH that starts with '-'.

Exit status: 0 done; 77 refused (blocked, denied by the person, or strict
mode); 125 the operation failed; 2 usage error.
`

// Limits of what guardrun fs holds in memory.
const (
	// maxEditBytes bounds a file fs edit loads, changes and shows.
	maxEditBytes = 16 << 20
	// maxSnapshotBytes bounds the old content kept to show a diff and to
	// check, before replacing a file, that it is still what was shown.
	maxSnapshotBytes = 16 << 20
)

func cmdFS(g *global, args []string, io IO) error {
	vf, help, err := verbStart(g, args, fsUsage, []string{"--old", "--new"}, nil, io)
	if err != nil || help {
		return err
	}
	words := append(append([]string{}, vf.args...), vf.rest...)
	if len(words) == 0 {
		return usagef("fs needs an operation: read, write, edit, ls or rm")
	}
	verb, paths := words[0], words[1:]
	old, hasOld := vf.values["--old"]
	repl, hasNew := vf.values["--new"]
	switch verb {
	case "read", "write", "edit", "rm":
		if len(paths) != 1 {
			return usagef("fs %s takes one PATH", verb)
		}
	case "ls":
		if len(paths) > 1 {
			return usagef("fs ls takes at most one PATH")
		}
		if len(paths) == 0 {
			paths = []string{"."}
		}
	default:
		return usagef("unknown fs operation %q (read, write, edit, ls or rm)", verb)
	}
	if verb != "edit" && (hasOld || hasNew) {
		return usagef("--old and --new are for fs edit")
	}
	if verb == "edit" {
		if !hasOld || !hasNew {
			return usagef("fs edit needs --old TEXT and --new TEXT")
		}
		if old == "" {
			return usagef("fs edit: --old must not be empty")
		}
	}
	if paths[0] == "" {
		return usagef("fs %s: empty PATH", verb)
	}
	s, err := request.OpenForFiles(g.Options, io)
	if err != nil {
		return err
	}
	// A write past the file size limit (ulimit -f) then fails with EFBIG,
	// which is reported and cleaned up, instead of killing guardrun with
	// its temporary file left behind.
	ignoreFileSizeSignal()
	f := &fsRun{g: g, s: s, io: io, verb: verb, arg: paths[0], start: time.Now()}
	if err := f.refuseWithoutSandbox(); err != nil {
		return err
	}
	switch verb {
	case "read":
		return f.read()
	case "write":
		return f.write()
	case "edit":
		return f.edit(old, repl)
	case "ls":
		return f.ls()
	}
	return f.rm()
}

// fsRun is one guardrun fs operation: decided, asked about, done and
// audited.
type fsRun struct {
	g     *global
	s     *request.Session
	io    IO
	verb  string // read, write, edit, ls or rm
	arg   string // the path as given
	path  string // the path as resolved: what policy judged, what is touched
	start time.Time
	d     *rules.Decision
	// mkdirs are the missing directories a write creates first.
	mkdirs []string
}

// fsResult is the --json answer.
type fsResult struct {
	OK   bool   `json:"ok"`
	Op   string `json:"op"`
	Path string `json:"path,omitempty"`
	// Done.
	Bytes         *int64        `json:"bytes,omitempty"`
	Created       *bool         `json:"created,omitempty"`
	Type          fsop.Kind     `json:"type,omitempty"`
	Content       *string       `json:"content,omitempty"`
	ContentBase64 *string       `json:"content_base64,omitempty"`
	Entries       *[]fsop.Entry `json:"entries,omitempty"`
	// Refused.
	Decision  string `json:"decision,omitempty"`
	Reason    string `json:"reason,omitempty"`
	DecidedBy string `json:"decided_by,omitempty"`
	Note      string `json:"note,omitempty"`
	// Failed.
	Error string `json:"error,omitempty"`
}

func (f *fsRun) json() bool { return f.g.json }

func (f *fsRun) printJSON(r fsResult) {
	r.Op = f.verb
	if r.Path == "" {
		r.Path = f.path
	}
	enc := json.NewEncoder(f.io.Stdout)
	enc.SetEscapeHTML(false)
	enc.Encode(r)
}

// judge decides one operation on the path (request.DecideFile).
func (f *fsRun) judge(op rules.Op) rules.Part {
	p := f.s.DecideFile(op, f.arg)
	f.path = p.Path
	return p
}

// decide combines the parts of one operation (edit is a read and a
// write) into one decision: the strictest verdict and its reason.
func (f *fsRun) decide(parts ...rules.Part) *rules.Decision {
	f.d = request.Combine(parts...)
	return f.d
}

// gate resolves the decision as run does for commands: allow runs,
// block refuses, ask prompts (interactive), runs (approve-all) or
// refuses (strict). detail draws what the prompt shows of the content;
// it is called only when a person will be asked.
func (f *fsRun) gate(detail func(approval.Style) string) (approval.Outcome, error) {
	s, d := f.s, f.d
	summary := fmt.Sprintf("%s %s", f.verb, f.path)
	if len(d.Parts) > 0 && d.Parts[0].Zone != "" {
		summary += fmt.Sprintf(" (zone %s)", d.Parts[0].Zone)
	}
	req := &approval.Request{
		Display:  shellparse.QuoteArgv([]string{"guardrun", "fs", f.verb, f.arg}, s.Loaded.Engine.Dialect()),
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
	return s.Ask(context.Background(), req, f.io, prepare)
}

// refuse audits and reports an operation that does not happen.
func (f *fsRun) refuse(out approval.Outcome) error {
	f.audit("refused", out.By, out.Note, 0)
	if f.json() {
		reason := f.d.Reason
		if f.d.Decision != rules.Block {
			reason = strings.TrimPrefix(out.Refusal, "guardrun: ")
		}
		f.printJSON(fsResult{Decision: f.d.Decision.String(), Reason: reason, DecidedBy: out.By, Note: out.Note})
	}
	return &refusal{Line: out.Refusal}
}

// fail audits and reports an operation that was allowed but could not be
// done. A symbolic link that appeared after the check is a refusal:
// guardrun will not do it, rather than could not.
func (f *fsRun) fail(out approval.Outcome, err error) error {
	f.audit("failed", out.By, out.Note, 0)
	var se *fsop.SymlinkError
	if errors.As(err, &se) {
		line := "guardrun: refused: " + oneLine(err.Error())
		if f.json() {
			f.printJSON(fsResult{Decision: "block", Reason: strings.TrimPrefix(line, "guardrun: "), DecidedBy: "policy"})
		}
		return &refusal{Line: line}
	}
	err = fmt.Errorf("fs %s: %w", f.verb, err)
	if f.json() {
		f.printJSON(fsResult{Error: err.Error()})
	}
	return err
}

// failEarly reports an operation that cannot be done, found out before
// anyone was asked (a missing file, a directory to read): a rule allowed
// it, or nobody decided yet.
func (f *fsRun) failEarly(err error) error {
	by := ""
	if f.d.Decision == rules.Allow {
		by = "rule"
	}
	return f.fail(approval.Outcome{By: by}, err)
}

func (f *fsRun) audit(outcome, by, note string, n int64) {
	s := f.s
	d := f.d
	rec := approval.Record{
		Time: f.start.UTC(), Session: s.ID, Cwd: s.Env.Cwd,
		Op: f.verb, Path: f.path, Bytes: n,
		Verdict: d.Decision.String(), Outcome: outcome, DecidedBy: by,
		Reason: d.Reason, Note: note,
		DurationMS: float64(time.Since(f.start).Microseconds()) / 1000,
	}
	s.Audit(rec, f.io.Stderr)
}

func oneLine(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(approval.Sanitize(s), "\n", " ⏎ "))
}

func (f *fsRun) read() error {
	d := f.decide(f.judge(rules.OpRead))
	if d.Decision == rules.Block {
		return f.refuse(approval.Outcome{By: "policy", Refusal: "guardrun: blocked: " + oneLine(d.Reason)})
	}
	// Opened before asking, so the person approves the file that is
	// then read.
	file, info, err := fsop.Open(f.path)
	if err != nil {
		return f.failEarly(err)
	}
	defer file.Close()
	out, err := f.gate(func(st approval.Style) string {
		return approval.InfoDetail("read", f.path, info.Kind.Describe(), info.Size, st)
	})
	if err != nil {
		return err
	}
	if !out.Run {
		return f.refuse(out)
	}
	if f.json() {
		data, err := io.ReadAll(file)
		if err != nil {
			return f.fail(out, err)
		}
		n := int64(len(data))
		r := fsResult{OK: true, Bytes: &n}
		if utf8.Valid(data) {
			c := string(data)
			r.Content = &c
		} else {
			c := base64.StdEncoding.EncodeToString(data)
			r.ContentBase64 = &c
		}
		f.audit("ran", out.By, out.Note, n)
		f.printJSON(r)
		return nil
	}
	n, err := io.Copy(f.io.Stdout, file)
	if err != nil {
		f.audit("failed", out.By, out.Note, n)
		return fmt.Errorf("fs read: %s: %w", f.path, err)
	}
	f.audit("ran", out.By, out.Note, n)
	return nil
}

func (f *fsRun) write() error {
	d := f.decide(f.judge(rules.OpWrite))
	if d.Decision == rules.Block {
		return f.refuse(approval.Outcome{By: "policy", Refusal: "guardrun: blocked: " + oneLine(d.Reason)})
	}
	var data []byte
	if f.io.Stdin != nil {
		var err error
		if data, err = io.ReadAll(f.io.Stdin); err != nil {
			return fmt.Errorf("fs write: reading the content from stdin: %w", err)
		}
	}
	snap, err := f.snapshot(maxSnapshotBytes)
	if err != nil {
		dirs, ok := f.parentsToCreate(err)
		if !ok {
			return f.failEarly(err)
		}
		f.mkdirs, snap = dirs, &fsop.Snapshot{}
	}
	return f.replace(snap, data, false)
}

func (f *fsRun) edit(old, repl string) error {
	d := f.decide(f.judge(rules.OpRead), f.judge(rules.OpWrite))
	if d.Decision == rules.Block {
		return f.refuse(approval.Outcome{By: "policy", Refusal: "guardrun: blocked: " + oneLine(d.Reason)})
	}
	snap, err := f.snapshot(maxEditBytes)
	if err != nil {
		return f.failEarly(err)
	}
	switch {
	case !snap.Exists:
		return f.failEarly(fmt.Errorf("%s does not exist (fs write creates files)", f.path))
	case snap.TooLarge:
		return f.failEarly(fmt.Errorf("%s is larger than %d MiB, too large to edit", f.path, maxEditBytes>>20))
	}
	switch n := bytes.Count(snap.Data, []byte(old)); n {
	case 1:
	case 0:
		return f.failEarly(fmt.Errorf("--old was not found in %s; it must occur exactly once", f.path))
	default:
		return f.failEarly(fmt.Errorf("--old was found %d times in %s; it must occur exactly once (include more of the surrounding text)", n, f.path))
	}
	data := bytes.Replace(snap.Data, []byte(old), []byte(repl), 1)
	return f.replace(snap, data, true)
}

// snapshot loads the file as it is now, for the prompt and for the
// check before it is replaced. Anything but a regular file (or nothing)
// cannot be written.
func (f *fsRun) snapshot(limit int64) (*fsop.Snapshot, error) {
	snap, err := fsop.Load(f.path, limit)
	if err != nil {
		return nil, err
	}
	if snap.Exists && snap.Info.Kind != fsop.File {
		if snap.Info.Kind == fsop.Dir {
			return nil, fmt.Errorf("%s is a directory", f.path)
		}
		return nil, fmt.Errorf("%s is a %s, not a regular file", f.path, snap.Info.Kind.Describe())
	}
	return snap, nil
}

// replace asks about and writes data over the file that snap describes.
// An edit's new content was computed from snap, so the file must still
// be snap when it is replaced; so must a write the person approved
// seeing a diff against it.
func (f *fsRun) replace(snap *fsop.Snapshot, data []byte, edit bool) error {
	out, err := f.gate(func(st approval.Style) string {
		switch {
		case !snap.Exists:
			return mkdirDetail(f.mkdirs, st) + approval.NewFileDetail(f.path, data, st)
		case snap.TooLarge:
			return approval.InfoDetail("replace", f.path, fmt.Sprintf("regular file of %d bytes with %d bytes", snap.Info.Size, len(data)), int64(len(data)), st)
		}
		return approval.DiffDetail(f.path, snap.Data, data, st)
	})
	if err != nil {
		return err
	}
	if !out.Run {
		return f.refuse(out)
	}
	o := fsop.WriteOptions{}
	if edit || out.By == "person" {
		o.Expect = snap
	}
	if err := fsop.MkdirParents(f.mkdirs); err != nil {
		return f.fail(out, err)
	}
	created, err := fsop.WriteFile(f.path, data, o)
	if err != nil {
		return f.fail(out, err)
	}
	n := int64(len(data))
	f.audit("ran", out.By, out.Note, n)
	if f.json() {
		r := fsResult{OK: true, Bytes: &n}
		if !edit {
			r.Created = &created
		}
		f.printJSON(r)
		return nil
	}
	what := "wrote"
	switch {
	case edit:
		what = "edited"
	case created:
		what = "created"
	}
	fmt.Fprintf(f.io.Stdout, "%s %s (%d bytes)\n", what, approval.Sanitize(f.path), n)
	return nil
}

func (f *fsRun) ls() error {
	d := f.decide(f.judge(rules.OpRead))
	if d.Decision == rules.Block {
		return f.refuse(approval.Outcome{By: "policy", Refusal: "guardrun: blocked: " + oneLine(d.Reason)})
	}
	entries, info, err := fsop.List(f.path)
	if err != nil {
		return f.failEarly(err)
	}
	out, err := f.gate(func(st approval.Style) string {
		what := info.Kind.Describe()
		if info.Kind == fsop.Dir {
			what = fmt.Sprintf("directory of %d %s", len(entries), map[bool]string{true: "entry", false: "entries"}[len(entries) == 1])
		}
		return approval.InfoDetail("list", f.path, what, info.Size, st)
	})
	if err != nil {
		return err
	}
	if !out.Run {
		return f.refuse(out)
	}
	f.audit("ran", out.By, out.Note, 0)
	if f.json() {
		f.printJSON(fsResult{OK: true, Entries: &entries})
		return nil
	}
	sizeWidth := 1
	for _, e := range entries {
		sizeWidth = max(sizeWidth, len(fmt.Sprint(e.Size)))
	}
	var b strings.Builder
	for _, e := range entries {
		name := approval.Sanitize(e.Name)
		if e.Target != "" {
			name += " -> " + approval.Sanitize(e.Target)
		}
		fmt.Fprintf(&b, "%-7s %*d %s\n", e.Kind, sizeWidth, e.Size, name)
	}
	_, err = io.WriteString(f.io.Stdout, b.String())
	return err
}

func (f *fsRun) rm() error {
	base := filepath.Base(f.arg)
	if base == "." || base == ".." || base == "/" {
		return usagef("fs rm: %s does not name a file", f.arg)
	}
	d := f.decide(f.judge(rules.OpDelete))
	if d.Decision == rules.Block {
		return f.refuse(approval.Outcome{By: "policy", Refusal: "guardrun: blocked: " + oneLine(d.Reason)})
	}
	// Policy judged where a link points; rm would remove the link itself.
	// Neither matches what was asked, so a link is not removed at all.
	parent := strings.TrimRight(f.arg, "/")
	if i := strings.LastIndexByte(parent, '/'); i >= 0 {
		parent = parent[:i+1]
	} else {
		parent = "."
	}
	if fi, err := fsop.Lstat(filepath.Join(rules.Resolve(parent, f.s.Env.Cwd), base)); err == nil && fi.Kind == fsop.Symlink {
		return f.failEarly(fmt.Errorf("%s is a symbolic link; fs rm removes files and empty directories, not links", f.arg))
	}
	if z, ok := f.s.Loaded.Cfg.ZoneByName(d.Parts[0].Zone); ok && rules.Resolve(z.Root, "/") == f.path {
		d.Decision = rules.Block
		d.Reason = fmt.Sprintf("delete %s: it is the root of zone %q", f.arg, z.Name)
		d.Parts[0].Decision, d.Parts[0].Reason = d.Decision, d.Reason
		return f.refuse(approval.Outcome{By: "policy", Refusal: "guardrun: blocked: " + oneLine(d.Reason)})
	}
	info, err := fsop.Lstat(f.path)
	if err != nil {
		return f.failEarly(err)
	}
	switch info.Kind {
	case fsop.File, fsop.Dir:
	default:
		return f.failEarly(fmt.Errorf("%s is a %s; fs rm removes files and empty directories only", f.path, info.Kind.Describe()))
	}
	out, err := f.gate(func(st approval.Style) string {
		return approval.InfoDetail("delete", f.path, info.Kind.Describe(), info.Size, st)
	})
	if err != nil {
		return err
	}
	if !out.Run {
		return f.refuse(out)
	}
	var expect *fsop.Info
	if out.By == "person" {
		expect = &info
	}
	removed, err := fsop.Remove(f.path, expect)
	if err != nil {
		return f.fail(out, err)
	}
	n := int64(0)
	if removed.Kind == fsop.File {
		n = removed.Size
	}
	f.audit("ran", out.By, out.Note, n)
	if f.json() {
		f.printJSON(fsResult{OK: true, Bytes: &n, Type: removed.Kind})
		return nil
	}
	fmt.Fprintf(f.io.Stdout, "removed %s %s\n", removed.Kind.Describe(), approval.Sanitize(f.path))
	return nil
}
