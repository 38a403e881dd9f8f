package approval

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
)

// The presentations of file operations for Request.Detail: a unified
// diff for a change to an existing file, the highlighted content of a
// new file, and a one-line description for a delete, a read or a
// listing. Binary content is described, never shown.
//
// Everything taken from a file is passed through Sanitize before any
// colour is added, so the only escape sequences in a detail are the SGR
// colours written here: a file holding "\x1b[2J" shows those characters
// instead of clearing the person's screen.

// MaxShownBytes bounds the content a detail shows: beyond it a diff or a
// new file is described by its size. The person can still read the file
// itself before answering.
const MaxShownBytes = 1 << 20

// maxHighlightLines bounds syntax highlighting: the prompt shows the
// first lines, and the pager gets the text without colour anyway.
const maxHighlightLines = 400

// IsBinary reports whether content is not text a terminal can show: it
// holds a NUL byte or is not valid UTF-8.
func IsBinary(content []byte) bool {
	return bytes.IndexByte(content, 0) >= 0 || !utf8.Valid(content)
}

// DiffDetail shows the change from old to new content of the file at
// path as a unified diff: removed lines red with '-', added lines green
// with '+', hunk headers cyan.
func DiffDetail(path string, old, new []byte, st Style) string {
	p := Sanitize(path)
	switch {
	case IsBinary(old) || IsBinary(new):
		return fmt.Sprintf("%s %s: binary content, %s → %s (not shown)\n",
			st.paint("1", "replace"), p, sizeText(int64(len(old))), sizeText(int64(len(new))))
	case len(old) > MaxShownBytes || len(new) > MaxShownBytes:
		return fmt.Sprintf("%s %s: %s → %s (too large to show a diff)\n",
			st.paint("1", "replace"), p, sizeText(int64(len(old))), sizeText(int64(len(new))))
	case bytes.Equal(old, new):
		return fmt.Sprintf("%s %s: no change (%s)\n", st.paint("1", "rewrite"), p, sizeText(int64(len(new))))
	}
	o, n := string(old), string(new)
	u, err := udiff.ToUnifiedDiff(path, path, o, udiff.Lines(o, n), 3)
	if err != nil {
		return fmt.Sprintf("%s %s: %s → %s (no diff: %v)\n",
			st.paint("1", "replace"), p, sizeText(int64(len(old))), sizeText(int64(len(new))), err)
	}
	added, removed := 0, 0
	for _, h := range u.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				added++
			case udiff.Delete:
				removed++
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s, %s\n", st.paint("1", "change"), p,
		st.paint("32", fmt.Sprintf("+%d", added)), st.paint("31", fmt.Sprintf("-%d", removed)))
	fmt.Fprintf(&b, "%s\n%s\n", st.paint("1", "--- "+p), st.paint("1", "+++ "+p))
	for _, h := range u.Hunks {
		from, to := 0, 0
		for _, l := range h.Lines {
			if l.Kind != udiff.Insert {
				from++
			}
			if l.Kind != udiff.Delete {
				to++
			}
		}
		fmt.Fprintf(&b, "%s\n", st.paint("36", fmt.Sprintf("@@ -%s +%s @@", hunkRange(h.FromLine, from), hunkRange(h.ToLine, to))))
		for _, l := range h.Lines {
			text := Sanitize(strings.TrimSuffix(l.Content, "\n"))
			switch l.Kind {
			case udiff.Delete:
				b.WriteString(st.paint("31", "-"+text))
			case udiff.Insert:
				b.WriteString(st.paint("32", "+"+text))
			default:
				b.WriteString(" " + text)
			}
			b.WriteString("\n")
			if !strings.HasSuffix(l.Content, "\n") {
				b.WriteString(st.paint("2", `\ No newline at end of file`) + "\n")
			}
		}
	}
	return b.String()
}

// hunkRange is a unified diff's start,count; GNU diff writes an empty
// range as the line before it.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}

// NewFileDetail shows the content of a file about to be created at path,
// with line numbers and, when st.Color is set, syntax highlighting
// chosen by the file's name (or, failing that, its content).
func NewFileDetail(path string, content []byte, st Style) string {
	p := Sanitize(path)
	size := int64(len(content))
	switch {
	case size == 0:
		return fmt.Sprintf("%s %s: empty\n", st.paint("1", "new file"), p)
	case IsBinary(content):
		return fmt.Sprintf("%s %s: binary content, %s (not shown)\n", st.paint("1", "new file"), p, sizeText(size))
	case size > MaxShownBytes:
		return fmt.Sprintf("%s %s: %s (too large to show)\n", st.paint("1", "new file"), p, sizeText(size))
	}
	text := Sanitize(string(content))
	noEOL := !strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if st.Color {
		lines = highlight(path, text, lines)
	}
	var b strings.Builder
	lexer := ""
	if l := languageFor(path, text); l != nil && st.Color {
		lexer = ", " + l.name
	}
	fmt.Fprintf(&b, "%s %s: %d %s, %s%s\n", st.paint("1", "new file"), p, len(lines), plural(len(lines), "line"), sizeText(size), lexer)
	width := len(fmt.Sprint(len(lines)))
	for i, l := range lines {
		fmt.Fprintf(&b, "%s %s\n", st.paint("2", fmt.Sprintf("%*d │", width, i+1)), l)
	}
	if noEOL {
		b.WriteString(st.paint("2", `\ No newline at end of file`) + "\n")
	}
	return b.String()
}

// InfoDetail is the one-line presentation of an operation whose content
// is not shown: "delete notes/a.txt: regular file, 1.2 KiB (1234 bytes)".
func InfoDetail(op, path, kind string, size int64, st Style) string {
	what := Sanitize(kind)
	if kind != "directory" {
		what += ", " + sizeText(size)
	}
	return fmt.Sprintf("%s %s: %s\n", st.paint("1", Sanitize(op)), Sanitize(path), what)
}

func sizeText(n int64) string {
	switch {
	case n == 1:
		return "1 byte"
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB (%d bytes)", float64(n)/1024, n)
	}
	return fmt.Sprintf("%.1f MiB (%d bytes)", float64(n)/(1<<20), n)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// highlight colours the first lines of text (already sanitized, split
// into lines). Each returned line carries its own colours and ends with
// a reset, so truncating the detail anywhere leaves no colour open.
func highlight(path, text string, lines []string) []string {
	l := languageFor(path, text)
	if l == nil {
		return lines
	}
	head := text
	if len(lines) > maxHighlightLines {
		head = strings.Join(lines[:maxHighlightLines], "\n") + "\n"
	}
	// The colouring only cuts the text up and adds its own colours. The
	// text is sanitized; check anyway: an escape in it would reach the
	// terminal.
	if strings.ContainsRune(head, 0x1b) {
		return lines
	}
	out := l.colourText(head)
	if len(out) != min(len(lines), maxHighlightLines) {
		// Split differently from us; show the lines plain rather than
		// misnumbered.
		return lines
	}
	return append(out, lines[len(out):]...)
}
