package mcpserver

import (
	"bytes"
	"fmt"
	"sync"
	"unicode/utf8"
)

// tail keeps the end of what a command writes on one stream: at most max
// bytes, the start dropped (and counted) as more comes. What a build or
// a test run ends with (the error, the summary) is what an agent needs.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
	// total is every byte written; droppedLines the line ends among
	// those dropped.
	total        int64
	droppedLines int64
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max+4096 {
		t.drop(len(t.buf) - t.max)
	}
	return len(p), nil
}

func (t *tail) drop(n int) {
	t.droppedLines += int64(bytes.Count(t.buf[:n], []byte("\n")))
	t.buf = append(t.buf[:0], t.buf[n:]...)
}

// kept is what the tail holds, starting at a line's start where one lies
// in its first half and never inside a character; truncated when
// anything was dropped, with how many bytes and line ends.
type kept struct {
	text      string
	truncated bool
	total     int64
	dropped   int64
	lines     int64
}

func (t *tail) kept() kept {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) > t.max {
		t.drop(len(t.buf) - t.max)
	}
	k := kept{total: t.total}
	b := t.buf
	if int64(len(b)) < t.total {
		k.truncated = true
		cut := 0
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)/2 {
			cut = i + 1
			k.lines++
		}
		for cut < len(b) && !utf8.RuneStart(b[cut]) {
			cut++
		}
		b = b[cut:]
		k.dropped = t.total - int64(len(b))
		k.lines += t.droppedLines
	}
	k.text = string(b)
	return k
}

// mark is the line put before a truncated stream's text.
func (k kept) mark(stream string) string {
	return fmt.Sprintf("[guardrun: the first %d bytes (%d lines) of %s were dropped; the last %d bytes follow]\n", k.dropped, k.lines, stream, len(k.text))
}
