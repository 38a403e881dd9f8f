package approval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Record is one line of the audit log: one decision and, when something
// ran, how it ended. Fields are only ever added, never renamed, because
// `guardrun log` and people's own scripts read old logs.
type Record struct {
	Time    time.Time `json:"time"`
	Session string    `json:"session"`
	Cwd     string    `json:"cwd"`
	// Script is the script of `-c`; Argv the command of `-- CMD`.
	Script string   `json:"script,omitempty"`
	Argv   []string `json:"argv,omitempty"`
	// Op, Path and Bytes describe a file operation (read, write, edit,
	// ls or rm) of `guardrun fs`.
	Op    string `json:"op,omitempty"`
	Path  string `json:"path,omitempty"`
	Bytes int64  `json:"bytes,omitempty"`
	// Host, Port, Addr and Method describe a connection through the
	// network proxy (Op "connect"; Path is host:port); BytesOut went from
	// the command to the host, BytesIn back, Bytes is both.
	Host     string `json:"host,omitempty"`
	Port     int    `json:"port,omitempty"`
	Addr     string `json:"addr,omitempty"`
	Method   string `json:"method,omitempty"`
	BytesIn  int64  `json:"bytes_in,omitempty"`
	BytesOut int64  `json:"bytes_out,omitempty"`
	// Verdict is policy's verdict: allow, ask or block.
	Verdict string `json:"verdict"`
	// Outcome is ran, refused or failed; started on the record written
	// as a command starts, before its end (with the same Run) is known.
	Outcome string `json:"outcome"`
	// DecidedBy is rule, project-rule, person, session, mode, policy,
	// sandbox or broker (the broker holding the request went away).
	DecidedBy string `json:"decided_by"`
	Rule      string `json:"rule,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// Note is what the person typed with a denial or an approval.
	Note string `json:"note,omitempty"`
	// Via is "server" for a command `guardrun serve` ran for a client
	// guardrun (PID is then the client's), "mcp" for a request that came
	// through a tool of `guardrun mcp`; empty otherwise.
	Via string `json:"via,omitempty"`
	// Sandbox is bwrap, seatbelt or none.
	Sandbox string `json:"sandbox,omitempty"`
	// Verified is set when the command ran verified against the
	// analysis's prediction (SPEC §3, "Run-time verification").
	Verified   bool    `json:"verified,omitempty"`
	Exit       *int    `json:"exit,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	PID        int     `json:"pid"`
	// Run ties a command's started record to the record of its end.
	Run string `json:"run,omitempty"`
	// Zones is the sandbox the command ran in: its zones and network.
	Zones string `json:"zones,omitempty"`
	// Checkpoint is the checkpoint of the writable zones taken before
	// the request ran (`guardrun undo N` restores it); NoCheckpoint why
	// none could be taken where one was wanted.
	Checkpoint   int    `json:"checkpoint,omitempty"`
	NoCheckpoint string `json:"no_checkpoint,omitempty"`
	// Undo is the checkpoint an undo (Op "undo") restored.
	Undo int `json:"undo,omitempty"`
	// Front is where the person answered when an approval broker
	// offered the request in several places: web, terminal, supervisor.
	Front string `json:"front,omitempty"`
	// ProjectRule is an "always in this project" rule: the one the
	// person added with this answer (DecidedBy person), or the one that
	// pre-approved the request (DecidedBy project-rule). Project is the
	// project it is kept for.
	ProjectRule string `json:"project_rule,omitempty"`
	Project     string `json:"project,omitempty"`
}

// Audit appends records to a JSON-lines log that any number of guardrun
// processes share. It holds no open file: each Append opens, locks,
// writes and closes, so an Audit is safe for concurrent use and costs
// nothing until the first record.
type Audit struct {
	path string
}

// OpenAudit returns the log at path. Nothing is created until the first
// Append, so commands that are never decided leave no trace on disk.
func OpenAudit(path string) *Audit {
	return &Audit{path: path}
}

// Append writes r as one line. A zero Time is set to now and a zero PID to
// this process's.
//
// The line is written by a single write(2) while holding flock(LOCK_EX)
// on the file: O_APPEND alone keeps small writes whole on local file
// systems, but not lines longer than PIPE_BUF on every file system (NFS,
// FUSE), and a 64 KiB script is an ordinary record. If the file does not
// end in a newline (a writer died mid-line, or the disk filled) the
// record starts on a fresh line, so one torn record never swallows the
// next.
//
// Append refuses a symlink at the path, anything but a regular file, and
// a file owned by another user or writable by group or others: an audit
// log someone else can edit or redirect is not an audit log.
func (a *Audit) Append(r Record) error {
	if a.path == "" {
		return errors.New("audit: no log path")
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	if r.PID == 0 {
		r.PID = os.Getpid()
	}
	line, err := marshalRecord(r)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(a.path), 0o700); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	// O_RDWR rather than O_WRONLY: the torn-line check reads the last byte.
	f, err := os.OpenFile(a.path, os.O_RDWR|os.O_APPEND|os.O_CREATE|openFlags, 0o600)
	if err != nil {
		return openError("audit log", a.path, err)
	}
	defer f.Close()
	if err := checkRegularPrivate("audit log", f); err != nil {
		return err
	}
	if err := lockFile(f, true); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	werr := writeLine(f, line)
	uerr := unlockFile(f)
	cerr := f.Close()
	if err := errors.Join(werr, uerr, cerr); err != nil {
		return fmt.Errorf("audit: %s: %w", a.path, err)
	}
	return nil
}

// marshalRecord encodes r as one line ending in '\n'. HTML escaping is
// off so that `ls > f` reads as itself in the log; encoding/json still
// escapes control characters and U+2028/U+2029, so a record is always
// exactly one line.
func marshalRecord(r Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeLine appends line to f, which must be locked, starting a new line
// first if the file ends mid-line.
func writeLine(f *os.File, line []byte) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if size := fi.Size(); size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			return err
		}
		if last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	_, err = f.Write(line)
	return err
}

// Filter selects records to read.
type Filter struct {
	// Session keeps only the records of this session; empty keeps all.
	Session string
	// Last keeps only the last N records that match; 0 keeps all.
	Last int
}

// MalformedError reports lines of the audit log that are not records.
// ReadAudit returns it together with every good record, so `guardrun log`
// can show the history and warn about the damage.
type MalformedError struct {
	Path string
	// Lines are the first malformed lines, at most maxMalformed of them.
	Lines []LineError
	// Count is how many lines were malformed in all.
	Count int
}

// LineError is one malformed line; Line counts from 1.
type LineError struct {
	Line int
	Err  error
}

// maxMalformed bounds what a MalformedError keeps, so a log overwritten
// with garbage does not cost memory per line.
const maxMalformed = 20

func (e *MalformedError) Error() string {
	if len(e.Lines) == 0 {
		return fmt.Sprintf("audit: %s: %d malformed lines", e.Path, e.Count)
	}
	first := e.Lines[0]
	msg := fmt.Sprintf("audit: %s:%d: malformed record: %v", e.Path, first.Line, first.Err)
	if more := e.Count - 1; more == 1 {
		msg += " (and 1 more malformed line)"
	} else if more > 1 {
		msg += fmt.Sprintf(" (and %d more malformed lines)", more)
	}
	return msg
}

// ReadAudit reads the records of the log at path that match f, oldest
// first. Malformed lines are skipped and reported by a *MalformedError
// returned along with the good records; any other error returns no
// records. A missing log is an error that wraps fs.ErrNotExist, which
// callers may show as an empty history.
//
// The log is read under flock(LOCK_SH), so a record being appended is
// seen whole or not at all. Like Append, ReadAudit refuses a symlink, a
// foreign file or one others can write: guardrun never wrote to it.
func ReadAudit(path string, f Filter) ([]Record, error) {
	file, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, openError("audit log", path, err)
	}
	defer file.Close()
	if err := checkRegularPrivate("audit log", file); err != nil {
		return nil, err
	}
	if err := lockFile(file, false); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer unlockFile(file)

	var (
		recs []Record
		bad  = &MalformedError{Path: path}
		br   = bufio.NewReaderSize(file, 64<<10)
	)
	for n := 1; ; n++ {
		// ReadBytes, not a Scanner: a Scanner stops at 64 KiB lines,
		// and long scripts make long lines.
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			r, perr := parseRecord(line)
			switch {
			case perr != nil:
				bad.Count++
				if len(bad.Lines) < maxMalformed {
					bad.Lines = append(bad.Lines, LineError{Line: n, Err: perr})
				}
			case r == nil:
				// A blank line carries no record.
			case f.Session == "" || r.Session == f.Session:
				recs = append(recs, *r)
				// Keep memory bounded by Last, not by the log.
				if f.Last > 0 && len(recs) >= 2*f.Last {
					recs = append(recs[:0], recs[len(recs)-f.Last:]...)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("audit: read %s: %w", path, err)
		}
	}
	if f.Last > 0 && len(recs) > f.Last {
		recs = recs[len(recs)-f.Last:]
	}
	if bad.Count > 0 {
		return recs, bad
	}
	return recs, nil
}

// parseRecord decodes one line; nil, nil for a blank line.
func parseRecord(line []byte) (*Record, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if line[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	var r Record
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// openError turns the errors of opening a private file into sentences.
func openError(what, path string, err error) error {
	if isSymlinkErr(err) {
		return fmt.Errorf("%s %s is a symlink: refusing to follow it", what, path)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// checkRegularPrivate checks an open file: a regular file, ours, not
// writable by others. Checking the open descriptor rather than the path
// leaves no window to swap the file between check and use.
func checkRegularPrivate(what string, f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s %s is not a regular file (%s): refusing to use it", what, f.Name(), fi.Mode().Type())
	}
	return checkPrivate(what, f.Name(), fi)
}
