package agents

import (
	"errors"
	"fmt"
	"strings"
)

// Patch is a Codex apply_patch document:
//
//	*** Begin Patch
//	*** Add File: PATH
//	+LINE...
//	*** Update File: PATH
//	*** Move to: NEWPATH        (optional)
//	@@ CONTEXT                  (optional, starts each chunk)
//	 CONTEXT LINE / -OLD LINE / +NEW LINE...
//	*** End of File             (optional)
//	*** Delete File: PATH
//	*** End Patch
type Patch struct {
	Files []PatchFile
}

// PatchFile is one file a patch adds, updates (and maybe moves) or
// deletes.
type PatchFile struct {
	Kind string // "add", "update" or "delete"
	Path string
	// MoveTo is the new path of an update that moves the file.
	MoveTo string
	// Lines are an added file's lines.
	Lines []string
	// Chunks are an update's changes.
	Chunks []PatchChunk
}

// PatchChunk is one @@ section of an update.
type PatchChunk struct {
	// Anchor is the text after @@, a line the chunk follows ("" none).
	Anchor string
	// Old are the lines the chunk replaces (context and removed), New
	// what it puts there (context and added).
	Old, New []string
	// EOF says the chunk ends at the end of the file.
	EOF bool
}

// maxPatchFiles bounds the files one patch may name.
const maxPatchFiles = 1000

// ParsePatch reads a patch. It is strict where the file names are
// concerned (every file header is read, anything unknown is an error)
// and takes the changes' lines as they come.
func ParsePatch(text string) (*Patch, error) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != "*** Begin Patch" {
		return nil, errors.New("the patch does not start with *** Begin Patch")
	}
	if strings.TrimSpace(lines[len(lines)-1]) != "*** End Patch" {
		return nil, errors.New("the patch does not end with *** End Patch")
	}
	body := lines[1 : len(lines)-1]
	p := &Patch{}
	var cur *PatchFile
	var chunk *PatchChunk
	header := func(l, prefix string) (string, bool) {
		rest, ok := strings.CutPrefix(l, prefix)
		if !ok {
			return "", false
		}
		return strings.TrimSpace(rest), true
	}
	for n, l := range body {
		line := n + 2
		if path, ok := header(l, "*** Add File: "); ok {
			cur, chunk = p.add("add", path), nil
		} else if path, ok := header(l, "*** Update File: "); ok {
			cur, chunk = p.add("update", path), nil
		} else if path, ok := header(l, "*** Delete File: "); ok {
			cur, chunk = p.add("delete", path), nil
		} else if path, ok := header(l, "*** Move to: "); ok {
			if cur == nil || cur.Kind != "update" || cur.MoveTo != "" || len(cur.Chunks) > 0 {
				return nil, fmt.Errorf("line %d: *** Move to must follow an *** Update File header", line)
			}
			cur.MoveTo = path
			if path == "" {
				return nil, fmt.Errorf("line %d: *** Move to: names no file", line)
			}
		} else if strings.TrimSpace(l) == "*** End of File" {
			if chunk == nil {
				return nil, fmt.Errorf("line %d: *** End of File outside a change", line)
			}
			chunk.EOF = true
		} else if strings.HasPrefix(l, "***") {
			return nil, fmt.Errorf("line %d: unknown patch line %q", line, clip(l))
		} else {
			switch {
			case cur == nil:
				return nil, fmt.Errorf("line %d: a line before the first file header", line)
			case cur.Kind == "delete":
				return nil, fmt.Errorf("line %d: a line in *** Delete File: %s", line, cur.Path)
			case cur.Kind == "add":
				text, ok := strings.CutPrefix(l, "+")
				if !ok {
					return nil, fmt.Errorf("line %d: a line of an added file must start with +", line)
				}
				cur.Lines = append(cur.Lines, text)
			default:
				if anchor, ok := strings.CutPrefix(l, "@@"); ok {
					cur.Chunks = append(cur.Chunks, PatchChunk{Anchor: strings.TrimSpace(anchor)})
					chunk = &cur.Chunks[len(cur.Chunks)-1]
					continue
				}
				if chunk == nil {
					cur.Chunks = append(cur.Chunks, PatchChunk{})
					chunk = &cur.Chunks[len(cur.Chunks)-1]
				}
				switch {
				case l == "":
					chunk.Old, chunk.New = append(chunk.Old, ""), append(chunk.New, "")
				case l[0] == ' ':
					chunk.Old, chunk.New = append(chunk.Old, l[1:]), append(chunk.New, l[1:])
				case l[0] == '-':
					chunk.Old = append(chunk.Old, l[1:])
				case l[0] == '+':
					chunk.New = append(chunk.New, l[1:])
				default:
					return nil, fmt.Errorf("line %d: a changed line must start with a space, - or +", line)
				}
			}
		}
		if cur != nil && cur.Path == "" {
			return nil, fmt.Errorf("line %d: the file header names no file", line)
		}
		if len(p.Files) > maxPatchFiles {
			return nil, fmt.Errorf("the patch names more than %d files", maxPatchFiles)
		}
	}
	if len(p.Files) == 0 {
		return nil, errors.New("the patch changes no file")
	}
	for _, f := range p.Files {
		if f.Kind == "update" && len(f.Chunks) == 0 && f.MoveTo == "" {
			return nil, fmt.Errorf("*** Update File: %s changes nothing", f.Path)
		}
		for _, path := range []string{f.Path, f.MoveTo} {
			if strings.ContainsRune(path, 0) {
				return nil, errors.New("a file name holds a NUL byte")
			}
		}
	}
	return p, nil
}

func (p *Patch) add(kind, path string) *PatchFile {
	p.Files = append(p.Files, PatchFile{Kind: kind, Path: path})
	return &p.Files[len(p.Files)-1]
}

// Ops are the file operations the patch performs, as the zones judge
// them: an added file is a write, a deleted one a delete, an update an
// edit, and a move an edit of the old file's content written to the new
// path with the old one deleted.
func (p *Patch) Ops() []FileOp {
	var ops []FileOp
	for _, f := range p.Files {
		switch f.Kind {
		case "add":
			content := f.Content()
			ops = append(ops, FileOp{Op: OpWrite, Path: f.Path, Apply: func([]byte) ([]byte, error) { return content, nil }})
		case "delete":
			ops = append(ops, FileOp{Op: OpDelete, Path: f.Path})
		case "update":
			apply := f.Apply
			if f.MoveTo == "" {
				ops = append(ops, FileOp{Op: OpEdit, Path: f.Path, Apply: apply})
				continue
			}
			ops = append(ops,
				FileOp{Op: OpRead, Path: f.Path},
				FileOp{Op: OpWrite, Path: f.MoveTo, From: f.Path, Apply: apply},
				FileOp{Op: OpDelete, Path: f.Path})
		}
	}
	return ops
}

// Content is an added file's content.
func (f *PatchFile) Content() []byte { return []byte(strings.Join(f.Lines, "\n") + "\n") }

// Apply is an update's change of the file's content.
func (f *PatchFile) Apply(old []byte) ([]byte, error) { return applyChunks(old, f.Chunks) }

// applyChunks applies an update's chunks to a file's content, finding
// each chunk's old lines after the previous one (exactly, then ignoring
// trailing and then surrounding white space, as Codex does).
func applyChunks(content []byte, chunks []PatchChunk) ([]byte, error) {
	lines := strings.Split(string(content), "\n")
	trailingNL := len(lines) > 0 && lines[len(lines)-1] == ""
	if trailingNL {
		lines = lines[:len(lines)-1]
	}
	pos := 0
	for _, c := range chunks {
		if c.Anchor != "" {
			i := seek(lines, []string{c.Anchor}, pos, false)
			if i < 0 {
				return nil, fmt.Errorf("the line %q the change follows is not in the file", clip(c.Anchor))
			}
			pos = i + 1
		}
		if len(c.Old) == 0 {
			at := len(lines)
			lines = append(lines[:at:at], c.New...)
			pos = len(lines)
			continue
		}
		i := seek(lines, c.Old, pos, c.EOF)
		if i < 0 {
			return nil, fmt.Errorf("the lines the change replaces are not in the file: %q", clip(strings.Join(c.Old, "\n")))
		}
		out := append(append(append([]string{}, lines[:i]...), c.New...), lines[i+len(c.Old):]...)
		lines, pos = out, i+len(c.New)
	}
	s := strings.Join(lines, "\n")
	if trailingNL || len(lines) > 0 {
		s += "\n"
	}
	return []byte(s), nil
}

func seek(lines, want []string, from int, eof bool) int {
	for _, norm := range []func(string) string{
		func(s string) string { return s },
		func(s string) string { return strings.TrimRight(s, " \t") },
		strings.TrimSpace,
	} {
		start := from
		if eof && len(lines)-len(want) >= from {
			start = len(lines) - len(want)
		}
	next:
		for i := start; i+len(want) <= len(lines); i++ {
			for j, w := range want {
				if norm(lines[i+j]) != norm(w) {
					continue next
				}
			}
			return i
		}
	}
	return -1
}
