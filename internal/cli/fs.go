package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	goio "io"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/files"
	"github.com/guardrun/guardrun/internal/fsop"
	"github.com/guardrun/guardrun/internal/request"
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
	if base := filepath.Base(paths[0]); verb == "rm" && (base == "." || base == ".." || base == "/") {
		return usagef("fs rm: %s does not name a file", paths[0])
	}
	s, err := request.OpenForFiles(g.Options, io)
	if err != nil {
		return err
	}
	// A write past the file size limit (ulimit -f) then fails with EFBIG,
	// which is reported and cleaned up, instead of killing guardrun with
	// its temporary file left behind.
	ignoreFileSizeSignal()
	f := &fsRun{g: g, io: io, verb: verb, arg: paths[0],
		files: &files.Files{S: s, Stderr: io.Stderr}}
	ctx := context.Background()
	switch verb {
	case "read":
		return f.read(ctx)
	case "write":
		var data []byte
		if io.Stdin != nil {
			if data, err = goio.ReadAll(io.Stdin); err != nil {
				return fmt.Errorf("fs write: reading the content from stdin: %w", err)
			}
		}
		return f.report(f.files.Write(ctx, f.arg, data))
	case "edit":
		return f.report(f.files.Edit(ctx, f.arg, files.Edit{Old: old, New: repl, OldName: "--old"}))
	case "ls":
		return f.report(f.files.List(ctx, f.arg))
	}
	return f.report(f.files.Remove(ctx, f.arg))
}

// fsRun is one guardrun fs operation and how its outcome is printed.
type fsRun struct {
	g     *global
	io    IO
	verb  string // read, write, edit, ls or rm
	arg   string // the path as given
	files *files.Files
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

func (f *fsRun) printJSON(r fsResult) {
	r.Op = f.verb
	enc := json.NewEncoder(f.io.Stdout)
	enc.SetEscapeHTML(false)
	enc.Encode(r)
}

// failed prints (with --json) and returns what kept an operation from
// being done: a refusal (77) or a failure (125).
func (f *fsRun) failed(err error) error {
	var ref *files.Refused
	if errors.As(err, &ref) {
		if f.g.json {
			f.printJSON(fsResult{Path: ref.Path, Decision: ref.Decision.String(), Reason: ref.Reason, DecidedBy: ref.By, Note: ref.Note})
		}
		return err
	}
	var fe *files.Failed
	if !errors.As(err, &fe) {
		return err
	}
	err = fmt.Errorf("fs %s: %w", f.verb, err)
	if f.g.json {
		f.printJSON(fsResult{Path: fe.Path, Error: err.Error()})
	}
	return err
}

// report prints what an operation did, or why it was not done.
func (f *fsRun) report(r *files.Result, err error) error {
	if err != nil {
		return f.failed(err)
	}
	n := r.Bytes
	if f.g.json {
		out := fsResult{OK: true, Path: r.Path, Bytes: &n}
		switch f.verb {
		case "write":
			out.Created = &r.Created
		case "ls":
			out.Bytes = nil
			out.Entries = &r.Entries
		case "rm":
			out.Type = r.Removed
		}
		f.printJSON(out)
		return nil
	}
	switch f.verb {
	case "ls":
		return f.printEntries(r.Entries)
	case "rm":
		fmt.Fprintf(f.io.Stdout, "removed %s %s\n", r.Removed.Describe(), approval.Sanitize(r.Path))
		return nil
	}
	what := "wrote"
	switch {
	case f.verb == "edit":
		what = "edited"
	case r.Created:
		what = "created"
	}
	fmt.Fprintf(f.io.Stdout, "%s %s (%d bytes)\n", what, approval.Sanitize(r.Path), n)
	return nil
}

func (f *fsRun) read(ctx context.Context) error {
	if !f.g.json {
		_, err := f.files.Read(ctx, f.arg, func(file goio.Reader, _ fsop.Info) (int64, error) {
			return goio.Copy(f.io.Stdout, file)
		})
		if err != nil {
			return f.failed(err)
		}
		return nil
	}
	var data []byte
	r, err := f.files.Read(ctx, f.arg, func(file goio.Reader, _ fsop.Info) (int64, error) {
		var err error
		data, err = goio.ReadAll(file)
		return int64(len(data)), err
	})
	if err != nil {
		return f.failed(err)
	}
	n := r.Bytes
	out := fsResult{OK: true, Path: r.Path, Bytes: &n}
	if utf8.Valid(data) {
		c := string(data)
		out.Content = &c
	} else {
		c := base64.StdEncoding.EncodeToString(data)
		out.ContentBase64 = &c
	}
	f.printJSON(out)
	return nil
}

func (f *fsRun) printEntries(entries []fsop.Entry) error {
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
	_, err := goio.WriteString(f.io.Stdout, b.String())
	return err
}
