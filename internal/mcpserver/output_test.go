package mcpserver

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestTailKeepsTheEnd: what a run returns of a stream: all of it when it
// fits, else its end, starting at a line where one starts near, never
// inside a character, with what was dropped counted.
func TestTailKeepsTheEnd(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   kept
	}{
		{name: "what fits is kept whole", max: 10, writes: []string{"abc\n", "def\n"},
			want: kept{text: "abc\ndef\n", total: 8}},
		{name: "the end is kept, from a line's start", max: 10, writes: []string{"line1\nline2\nline3\n"},
			want: kept{text: "line3\n", truncated: true, total: 18, dropped: 12, lines: 2}},
		{name: "a line longer than the tail is cut", max: 4, writes: []string{"abcdefgh"},
			want: kept{text: "efgh", truncated: true, total: 8, dropped: 4}},
		{name: "never inside a character", max: 5, writes: []string{"ééééé"},
			want: kept{text: "éé", truncated: true, total: 10, dropped: 6}},
		{name: "many small writes drop as they go", max: 3, writes: strings.Split(strings.Repeat("x\n", 5000), ""),
			want: kept{text: "x\n", truncated: true, total: 10000, dropped: 9998, lines: 4999}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTail(tt.max)
			for _, w := range tt.writes {
				tl.Write([]byte(w))
			}
			got := tl.kept()
			if diff := cmp.Diff(got, tt.want, cmp.AllowUnexported(kept{})); diff != "" {
				t.Errorf("(-got +want)\n%s", diff)
			}
			if !utf8.ValidString(got.text) {
				t.Errorf("kept %q is not valid UTF-8", got.text)
			}
		})
	}
}

// TestReadLines: read_file's lines: ranges, the byte cap ending at a
// line's end, a first line cut, lines longer than the reader's buffer,
// a last line without its end, and text only.
func TestReadLines(t *testing.T) {
	long := strings.Repeat("y", 100<<10)
	tests := []struct {
		name       string
		file       string
		start, end int
		limit      int
		want       readOut
		wantErr    string
	}{
		{name: "the whole file", file: "a\nb\nc\n", start: 1, limit: 100,
			want: readOut{Content: "a\nb\nc\n", StartLine: 1, EndLine: 3}},
		{name: "a last line without its end", file: "a\nb", start: 1, limit: 100,
			want: readOut{Content: "a\nb", StartLine: 1, EndLine: 2}},
		{name: "a range in the middle", file: "a\nb\nc\nd\n", start: 2, end: 3, limit: 100,
			want: readOut{Content: "b\nc\n", StartLine: 2, EndLine: 3, More: true, NextLine: 4}},
		{name: "a range that ends with the file", file: "a\nb\n", start: 2, end: 2, limit: 100,
			want: readOut{Content: "b\n", StartLine: 2, EndLine: 2}},
		{name: "the cap ends at a line's end", file: "aaa\nbbb\nccc\n", start: 1, limit: 9,
			want: readOut{Content: "aaa\nbbb\n", StartLine: 1, EndLine: 2, More: true, NextLine: 3}},
		{name: "a first line over the cap is cut", file: "abcdef\n", start: 1, limit: 4,
			want: readOut{Content: "abcd", StartLine: 1, EndLine: 1, More: true, NextLine: 1, Cut: true}},
		{name: "a cut never splits a character", file: "ééé\n", start: 1, limit: 3,
			want: readOut{Content: "é", StartLine: 1, EndLine: 1, More: true, NextLine: 1, Cut: true}},
		{name: "lines longer than the reader's buffer", file: "x\n" + long + "\nz\n", start: 2, limit: 1 << 20,
			want: readOut{Content: long + "\nz\n", StartLine: 2, EndLine: 3}},
		{name: "a long line that does not fit is where to read on", file: "x\n" + long + "\n", start: 1, limit: 1000,
			want: readOut{Content: "x\n", StartLine: 1, EndLine: 1, More: true, NextLine: 2}},
		{name: "past the end", file: "a\n", start: 5, limit: 100,
			want: readOut{StartLine: 5, EndLine: 4}},
		{name: "a NUL byte", file: "a\x00b\n", start: 1, limit: 100, wantErr: "is not text"},
		{name: "invalid UTF-8", file: "\xff\n", start: 1, limit: 100, wantErr: "is not text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := readOut{StartLine: tt.start}
			_, err := readLines(strings.NewReader(tt.file), &out, tt.end, tt.limit)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(out, tt.want); diff != "" {
				t.Errorf("(-got +want)\n%s", diff)
			}
		})
	}
}

// TestCheckListen: --listen takes a loopback address and a port only.
func TestCheckListen(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:0": true, "127.0.0.1:8080": true, "[::1]:9000": true, "localhost:0": true, "127.1.2.3:1": true,
		"0.0.0.0:8080": false, ":8080": false, "192.168.1.2:80": false, "example.com:80": false,
		"127.0.0.1": false, "127.0.0.1:http": false, "127.0.0.1:70000": false, "[::]:80": false,
	} {
		if err := CheckListen(addr); (err == nil) != ok {
			t.Errorf("CheckListen(%q) = %v, want ok %v", addr, err, ok)
		}
	}
}
