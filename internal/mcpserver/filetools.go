package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/guardrun/guardrun/approval"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrun/guardrun/internal/files"
	"github.com/guardrun/guardrun/internal/fsop"
	"github.com/guardrun/guardrun/shellparse"
)

// Bounds of the file tools. Keep in sync with their descriptions and
// schemas.
const (
	defaultReadBytes = 100000
	maxReadBytes     = 1 << 20
	// MaxWriteBytes bounds write_file's content and edit_file's texts.
	MaxWriteBytes = 8 << 20
	defaultDepth  = 1
	maxDepth      = 5
	maxListed     = 2000
)

// files opens the request session of a file tool and the files front on
// it, in the directory the server works in.
func (s *Server) files(req *mcp.CallToolRequest, tool string) (*files.Files, error) {
	sess, err := s.open(req, s.cfg.Env.Cwd)
	if err != nil {
		return nil, errors.New(oneLine(err))
	}
	return &files.Files{S: sess, Stderr: s.warned, Via: Via, Show: func(op, path string) string {
		// The person sees the tool the agent called, and the path as it
		// gave it.
		return tool + " " + shellparse.QuoteArgv([]string{path}, sess.Loaded.Engine.Dialect())
	}}, nil
}

// fileError is the tool error of a file operation not done: a refusal's
// line as it is, a failure's as one line.
func fileError(err error) error {
	var ref *files.Refused
	if errors.As(err, &ref) {
		return errors.New(ref.Line)
	}
	return errors.New(oneLine(err))
}

type readIn struct {
	Path      string `json:"path" jsonschema:"The file: absolute, or relative to the directory guardrun mcp works in."`
	StartLine int    `json:"start_line,omitempty" jsonschema:"First line to return, counting from 1. Default 1."`
	EndLine   int    `json:"end_line,omitempty" jsonschema:"Last line to return, inclusive. Default: to the end of the file, as far as max_bytes allows."`
	MaxBytes  int    `json:"max_bytes,omitempty" jsonschema:"At most this many bytes are returned, ending at a line's end where one fits. Default 100000, at most 1048576."`
}

type readOut struct {
	Path       string `json:"path" jsonschema:"The file as resolved (links and .. followed): what was read."`
	Content    string `json:"content" jsonschema:"The lines from start_line to end_line, as they are in the file."`
	StartLine  int    `json:"start_line" jsonschema:"The first line returned."`
	EndLine    int    `json:"end_line" jsonschema:"The last line returned (start_line-1 when none was)."`
	More       bool   `json:"more" jsonschema:"The file goes on after end_line: read on from next_line."`
	NextLine   int    `json:"next_line,omitempty" jsonschema:"Where to read on, when more."`
	Cut        bool   `json:"cut" jsonschema:"The last line returned was cut at max_bytes; next_line is that line again."`
	TotalBytes int64  `json:"total_bytes" jsonschema:"The file's size."`
}

func (s *Server) readFile(ctx context.Context, req *mcp.CallToolRequest, in readIn) (*mcp.CallToolResult, readOut, error) {
	if in.EndLine != 0 && in.EndLine < in.StartLine {
		return nil, readOut{}, fmt.Errorf("guardrun: end_line %d is before start_line %d", in.EndLine, in.StartLine)
	}
	ctx, end := s.runs.start(ctx, req.Session.ID())
	defer end()
	f, err := s.files(req, "read_file")
	if err != nil {
		return nil, readOut{}, err
	}
	out := readOut{StartLine: max(in.StartLine, 1)}
	limit := orDefault(in.MaxBytes, defaultReadBytes)
	r, err := f.Read(ctx, in.Path, func(r io.Reader, info fsop.Info) (int64, error) {
		out.TotalBytes = info.Size
		return readLines(r, &out, in.EndLine, limit)
	})
	if err != nil {
		return nil, readOut{}, fileError(err)
	}
	out.Path = r.Path
	content := []mcp.Content{&mcp.TextContent{Text: out.Content}}
	switch {
	case out.EndLine < out.StartLine && !out.More:
		content = append(content, &mcp.TextContent{Text: fmt.Sprintf("[guardrun: %s (%d bytes) ends before line %d]", out.Path, out.TotalBytes, out.StartLine)})
	case out.More || out.StartLine > 1:
		note := fmt.Sprintf("[guardrun: lines %d-%d of %s (%d bytes)", out.StartLine, out.EndLine, out.Path, out.TotalBytes)
		switch {
		case out.Cut:
			note += fmt.Sprintf("; line %d was cut at max_bytes: read on with start_line=%d and a larger max_bytes]", out.EndLine, out.NextLine)
		case out.More:
			note += fmt.Sprintf("; the file goes on: read on with start_line=%d]", out.NextLine)
		default:
			note += "; to the end]"
		}
		content = append(content, &mcp.TextContent{Text: note})
	}
	return &mcp.CallToolResult{Content: content}, out, nil
}

// readLines reads r's lines from out.StartLine to end (0: the last) into
// out.Content, at most limit bytes of them, ending at a line's end unless
// the first line alone is longer (out.Cut), and says whether the file
// goes on. It returns the bytes read. Content that is not text (a NUL
// byte, invalid UTF-8) is an error: the tool returns text only.
func readLines(r io.Reader, out *readOut, end, limit int) (int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var read int64
	var b bytes.Buffer
	line, lastEnd := 1, 0 // the line being read; b's length at the last line's end
	out.EndLine = out.StartLine - 1
	for {
		chunk, err := br.ReadSlice('\n')
		read += int64(len(chunk))
		if len(chunk) > 0 {
			if end > 0 && line > end {
				out.More, out.NextLine = true, line
				break
			}
			if line >= out.StartLine {
				if b.Len()+len(chunk) > limit {
					out.More, out.NextLine = true, line
					if lastEnd > 0 {
						// The line does not fit: it is where to read on.
						b.Truncate(lastEnd)
						break
					}
					// The first line alone is longer than limit: its start.
					room := limit - b.Len()
					for room > 0 && !utf8.RuneStart(chunk[room]) {
						room--
					}
					b.Write(chunk[:room])
					out.Cut, out.EndLine = true, line
					break
				}
				b.Write(chunk)
			}
			if chunk[len(chunk)-1] == '\n' {
				if line >= out.StartLine {
					out.EndLine, lastEnd = line, b.Len()
				}
				line++
			} else if err == io.EOF && line >= out.StartLine {
				out.EndLine = line // the last line, without a line end
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return read, err
		}
	}
	content := b.Bytes()
	if bytes.IndexByte(content, 0) >= 0 || !utf8.Valid(content) {
		return read, fmt.Errorf("is not text (a NUL byte or invalid UTF-8); read_file returns text only")
	}
	out.Content = string(content)
	return read, nil
}

type writeIn struct {
	Path    string `json:"path" jsonschema:"The file: absolute, or relative to the directory guardrun mcp works in. Missing directories above it are created, inside its zone."`
	Content string `json:"content" jsonschema:"The whole new content of the file (text, at most 8 MiB)."`
}

type writeOut struct {
	Path    string `json:"path" jsonschema:"The file as resolved: what was written."`
	Bytes   int64  `json:"bytes" jsonschema:"Bytes written."`
	Created bool   `json:"created" jsonschema:"The file did not exist before."`
}

func (s *Server) writeFile(ctx context.Context, req *mcp.CallToolRequest, in writeIn) (*mcp.CallToolResult, writeOut, error) {
	if len(in.Content) > MaxWriteBytes {
		return nil, writeOut{}, fmt.Errorf("guardrun: content of %d bytes is more than write_file takes (%d MiB)", len(in.Content), MaxWriteBytes>>20)
	}
	ctx, end := s.runs.start(ctx, req.Session.ID())
	defer end()
	f, err := s.files(req, "write_file")
	if err != nil {
		return nil, writeOut{}, err
	}
	r, err := f.Write(ctx, in.Path, []byte(in.Content))
	if err != nil {
		return nil, writeOut{}, fileError(err)
	}
	what := "wrote"
	if r.Created {
		what = "created"
	}
	out := writeOut{Path: r.Path, Bytes: r.Bytes, Created: r.Created}
	return textResult(fmt.Sprintf("%s %s (%d bytes)", what, r.Path, r.Bytes)), out, nil
}

type editIn struct {
	Path       string `json:"path" jsonschema:"The file: absolute, or relative to the directory guardrun mcp works in."`
	OldString  string `json:"old_string" jsonschema:"The exact text to replace, whitespace and line ends included (no patterns). It must occur exactly once unless replace_all: include enough of the lines around it to make it unique."`
	NewString  string `json:"new_string" jsonschema:"The text to put in its place (may be empty)."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_string instead of exactly one."`
}

type editOut struct {
	Path         string `json:"path" jsonschema:"The file as resolved: what was edited."`
	Replacements int    `json:"replacements" jsonschema:"How many times old_string was replaced."`
	Bytes        int64  `json:"bytes" jsonschema:"The file's size afterwards."`
}

func (s *Server) editFile(ctx context.Context, req *mcp.CallToolRequest, in editIn) (*mcp.CallToolResult, editOut, error) {
	if in.OldString == "" {
		return nil, editOut{}, errors.New("guardrun: old_string is empty; to write a whole file use write_file")
	}
	if len(in.OldString) > MaxWriteBytes || len(in.NewString) > MaxWriteBytes {
		return nil, editOut{}, fmt.Errorf("guardrun: old_string and new_string may be at most %d MiB each", MaxWriteBytes>>20)
	}
	ctx, end := s.runs.start(ctx, req.Session.ID())
	defer end()
	f, err := s.files(req, "edit_file")
	if err != nil {
		return nil, editOut{}, err
	}
	r, err := f.Edit(ctx, in.Path, files.Edit{Old: in.OldString, New: in.NewString, All: in.ReplaceAll, OldName: "old_string"})
	if err != nil {
		return nil, editOut{}, fileError(err)
	}
	out := editOut{Path: r.Path, Replacements: r.Replaced, Bytes: r.Bytes}
	return textResult(fmt.Sprintf("edited %s: %d %s (%d bytes now)", r.Path, r.Replaced, approval.Plural(r.Replaced, "replacement", "replacements"), r.Bytes)), out, nil
}

type listIn struct {
	Path  string `json:"path,omitempty" jsonschema:"The directory: absolute, or relative to the directory guardrun mcp works in (the default)."`
	Depth int    `json:"depth,omitempty" jsonschema:"Levels to list: 1 is the directory's own entries (the default), at most 5. .git is listed but not entered."`
}

type listEntry struct {
	Path   string `json:"path" jsonschema:"Below the listed directory, with slashes."`
	Type   string `json:"type" jsonschema:"file, dir, symlink, fifo, socket, device or other."`
	Size   int64  `json:"size"`
	Target string `json:"target,omitempty" jsonschema:"Where a symlink points (it is never followed)."`
}

type listOut struct {
	Path      string      `json:"path" jsonschema:"The directory as resolved."`
	Entries   []listEntry `json:"entries"`
	Skipped   int         `json:"skipped" jsonschema:"Entries left out: denied, outside every zone, or in a zone that asks before each read."`
	Truncated bool        `json:"truncated" jsonschema:"The listing stopped at 2000 entries."`
}

func (s *Server) listDirectory(ctx context.Context, req *mcp.CallToolRequest, in listIn) (*mcp.CallToolResult, listOut, error) {
	ctx, end := s.runs.start(ctx, req.Session.ID())
	defer end()
	f, err := s.files(req, "list_directory")
	if err != nil {
		return nil, listOut{}, err
	}
	path := in.Path
	if path == "" {
		path = "."
	}
	out := listOut{Entries: []listEntry{}}
	w, err := f.Walk(ctx, "ls", path, files.WalkOptions{Depth: orDefault(in.Depth, defaultDepth), MaxEntries: maxListed, Prune: isGitDir},
		func(e files.WalkEntry) (int64, error) {
			out.Entries = append(out.Entries, listEntry{Path: e.Rel, Type: string(e.Kind), Size: e.Size, Target: e.Target})
			return 0, nil
		})
	if err != nil {
		return nil, listOut{}, fileError(err)
	}
	out.Path, out.Skipped, out.Truncated = w.Path, w.Skipped, w.Truncated
	var b strings.Builder
	width := 1
	for _, e := range out.Entries {
		width = max(width, len(fmt.Sprint(e.Size)))
	}
	for _, e := range out.Entries {
		name := e.Path
		switch {
		case e.Type == string(fsop.Dir):
			name += "/"
		case e.Target != "":
			name += " -> " + e.Target
		}
		fmt.Fprintf(&b, "%-7s %*d %s\n", e.Type, width, e.Size, name)
	}
	if out.Skipped > 0 {
		fmt.Fprintf(&b, "[guardrun: %d %s left out: denied, outside every zone, or in a zone that asks before each read]\n", out.Skipped, approval.Plural(out.Skipped, "entry", "entries"))
	}
	if out.Truncated {
		fmt.Fprintf(&b, "[guardrun: the listing stopped at %d entries: list a subdirectory, or less deep]\n", maxListed)
	}
	if len(out.Entries) == 0 && out.Skipped == 0 {
		b.WriteString("(empty)\n")
	}
	return textResult(b.String()), out, nil
}

func isGitDir(name string) bool { return name == ".git" }

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
