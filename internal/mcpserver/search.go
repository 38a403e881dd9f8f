package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/files"
	"github.com/guardrun/guardrun/internal/fsop"
)

// Bounds of a search. Keep in sync with the tool's description and
// schema.
const (
	defaultResults = 100
	maxResults     = 1000
	// searchEntries bounds the entries a search walks through.
	searchEntries = 50000
	searchDepth   = 64
	// searchFileBytes is how much of each file a content search reads.
	searchFileBytes = 4 << 20
	// matchBytes bounds the text of a matching line.
	matchBytes = 300
)

type searchIn struct {
	Path            string `json:"path,omitempty" jsonschema:"The directory to search under: absolute, or relative to the directory guardrun mcp works in (the default)."`
	Name            string `json:"name,omitempty" jsonschema:"A glob the names must match (*, ?, [abc]), e.g. *.go; with a / it matches the path below the directory, e.g. cmd/*/main.go. Without content, the matching files and directories are the result."`
	Content         string `json:"content,omitempty" jsonschema:"Text to look for in the files' lines: a plain substring, or a regular expression (RE2 syntax) with regex."`
	Regex           bool   `json:"regex,omitempty" jsonschema:"content is a regular expression (RE2: no lookaround, no backreferences)."`
	CaseInsensitive bool   `json:"case_insensitive,omitempty" jsonschema:"Match content (and name) ignoring case."`
	MaxResults      int    `json:"max_results,omitempty" jsonschema:"Stop after this many results. Default 100, at most 1000."`
}

type searchMatch struct {
	Path string `json:"path" jsonschema:"Below the searched directory, with slashes."`
	Type string `json:"type,omitempty" jsonschema:"For a name search: file, dir, symlink, ..."`
	Line int    `json:"line,omitempty" jsonschema:"For a content search: the line's number, from 1."`
	Text string `json:"text,omitempty" jsonschema:"For a content search: the line (at most 300 bytes of it)."`
}

type searchOut struct {
	Path          string        `json:"path" jsonschema:"The directory as resolved."`
	Matches       []searchMatch `json:"matches"`
	FilesSearched int           `json:"files_searched" jsonschema:"Files whose content was searched."`
	Skipped       int           `json:"skipped" jsonschema:"Entries left out: denied, outside every zone, in a zone that asks before each read, or unreadable; binary files and what lies past 4 MiB of a file are not searched either."`
	Truncated     bool          `json:"truncated" jsonschema:"The search stopped early: at max_results, or after 50000 entries."`
}

func (s *Server) searchFiles(ctx context.Context, req *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
	if in.Name == "" && in.Content == "" {
		return nil, searchOut{}, errors.New("guardrun: search_files needs name, content, or both")
	}
	match, err := contentMatcher(in)
	if err != nil {
		return nil, searchOut{}, err
	}
	name := in.Name
	if in.CaseInsensitive {
		name = strings.ToLower(name)
	}
	if _, err := path.Match(name, ""); err != nil {
		return nil, searchOut{}, fmt.Errorf("guardrun: name %q is not a glob: %v", in.Name, err)
	}
	limit := orDefault(in.MaxResults, defaultResults)
	ctx, end := s.runs.start(ctx, req.Session.ID())
	defer end()
	f, err := s.files(req, "search_files")
	if err != nil {
		return nil, searchOut{}, err
	}
	dir := in.Path
	if dir == "" {
		dir = "."
	}
	out := searchOut{Matches: []searchMatch{}}
	unsearched := 0
	w, err := f.Walk(ctx, "search", dir, files.WalkOptions{Depth: searchDepth, MaxEntries: searchEntries, Prune: isGitDir},
		func(e files.WalkEntry) (int64, error) {
			if name != "" && !nameMatches(name, e, in.CaseInsensitive) {
				return 0, nil
			}
			if match == nil {
				out.Matches = append(out.Matches, searchMatch{Path: e.Rel, Type: string(e.Kind)})
				if len(out.Matches) >= limit {
					return 0, files.ErrStop
				}
				return 0, nil
			}
			if e.Kind != fsop.File {
				return 0, nil
			}
			n, searched, err := searchFile(e, match, limit, &out)
			if !searched {
				unsearched++
			} else {
				out.FilesSearched++
			}
			return n, err
		})
	if err != nil {
		return nil, searchOut{}, fileError(err)
	}
	out.Path, out.Skipped, out.Truncated = w.Path, w.Skipped+unsearched, w.Truncated
	return textResult(searchText(&out, match != nil)), out, nil
}

// contentMatcher is the test a line's text must pass; nil without
// content.
func contentMatcher(in searchIn) (func([]byte) bool, error) {
	if in.Content == "" {
		return nil, nil
	}
	expr := in.Content
	if !in.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	if in.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("guardrun: content is not a regular expression (RE2): %v", err)
	}
	return re.Match, nil
}

// nameMatches matches glob (lowered, when fold) against the entry's
// name, or its path below the directory when glob has a slash.
func nameMatches(glob string, e files.WalkEntry, fold bool) bool {
	s := e.Name
	if strings.Contains(glob, "/") {
		s = e.Rel
	}
	if fold {
		s = strings.ToLower(s)
	}
	ok, _ := path.Match(glob, s)
	return ok
}

// searchFile adds the lines of the file e that match to out, up to limit
// results in all. It reads at most searchFileBytes and returns how many
// bytes it read; searched is false for a file it could not open or that
// is binary (a NUL byte in its first 8 KiB).
func searchFile(e files.WalkEntry, match func([]byte) bool, limit int, out *searchOut) (n int64, searched bool, err error) {
	file, _, err := fsop.Open(e.Path)
	if err != nil {
		return 0, false, nil
	}
	defer file.Close()
	br := bufio.NewReaderSize(io.LimitReader(file, searchFileBytes), 64<<10)
	if head, _ := br.Peek(8 << 10); bytes.IndexByte(head, 0) >= 0 {
		return 0, false, nil
	}
	line := 0
	for {
		text, rerr := br.ReadSlice('\n')
		long := errors.Is(rerr, bufio.ErrBufferFull)
		n += int64(len(text))
		if len(text) > 0 {
			line++
			if match(text) {
				out.Matches = append(out.Matches, searchMatch{Path: e.Rel, Line: line, Text: clipLine(text)})
				if len(out.Matches) >= limit {
					return n, true, files.ErrStop
				}
			}
		}
		for long {
			// The rest of a line longer than the buffer: not matched
			// again, not counted as another line.
			var more []byte
			more, rerr = br.ReadSlice('\n')
			n += int64(len(more))
			long = errors.Is(rerr, bufio.ErrBufferFull)
		}
		if rerr != nil {
			return n, true, nil
		}
	}
}

// clipLine is a line's text without its line end, at most matchBytes of
// it.
func clipLine(b []byte) string {
	b = bytes.TrimRight(b, "\r\n")
	if len(b) > matchBytes {
		cut := matchBytes
		for cut > 0 && b[cut]&0xc0 == 0x80 {
			cut--
		}
		return string(b[:cut]) + "…"
	}
	return string(b)
}

// searchText is the result as the model reads it: path:line: text per
// match (or one path per line for a name search), then what was left
// out.
func searchText(out *searchOut, content bool) string {
	var b strings.Builder
	for _, m := range out.Matches {
		if content {
			fmt.Fprintf(&b, "%s:%d: %s\n", approval.Sanitize(m.Path), m.Line, approval.Sanitize(m.Text))
			continue
		}
		p := approval.Sanitize(m.Path)
		if m.Type == string(fsop.Dir) {
			p += "/"
		}
		b.WriteString(p + "\n")
	}
	if len(out.Matches) == 0 {
		b.WriteString("no matches\n")
	}
	if out.Truncated {
		fmt.Fprintf(&b, "[guardrun: the search stopped early (%d results); narrow it with path or name]\n", len(out.Matches))
	}
	if out.Skipped > 0 {
		fmt.Fprintf(&b, "[guardrun: %d %s not searched: denied, outside every zone, in a zone that asks before each read, unreadable or binary]\n", out.Skipped, approval.Plural(out.Skipped, "entry was", "entries were"))
	}
	return b.String()
}
