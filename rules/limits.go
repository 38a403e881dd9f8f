package rules

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/guardrun/guardrun/internal/sys/regfile"
)

// The limits below bound what a config file can cost guardrun. A project's
// .guardrun.yaml is read by every command run in its tree, trusted or not,
// so a hostile one must not make each command slow, or flood its stderr.
// Real configs are a few kilobytes and a handful of errors.
const (
	// MaxConfigBytes is the largest config file guardrun reads.
	MaxConfigBytes = 128 << 10
	// maxExpanded bounds the size of the document with its aliases
	// expanded, in bytes of scalar text plus nodeWeight per node: a
	// few anchors used many times cannot make a small file cost as much
	// as a huge one.
	maxExpanded = 4 << 20
	// nodeWeight is what a node counts towards maxExpanded beyond its
	// text.
	nodeWeight = 16
	// maxLocated bounds the rules, examples, zones and domain entries
	// of one file, aliases expanded: each carries where it was written
	// ("file:line:col"), so in a deep directory every one costs the
	// length of the file's path (4,000 aliased examples a few bytes
	// each would otherwise decode to hundreds of megabytes).
	maxLocated = 5000
	// maxErrors is how many errors are reported; the rest are counted.
	maxErrors = 20
	// maxKeptErrors is how many errors are held while walking, to sort
	// them into file order; beyond it they are only counted.
	maxKeptErrors = 1000
	// maxQuoted is the length of a value quoted in an error; a longer
	// one is cut, with "…" at the cut.
	maxQuoted = 64
	// maxMsg and maxPath bound an error's message and key path.
	maxMsg, maxPath = 512, 160
)

// ReadFile reads a config file, refusing one larger than MaxConfigBytes
// before reading it.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	return ReadOpened(f)
}

// ReadOpened is ReadFile of a file its caller opened (f.Name() names it
// in errors): a caller that must see a regular file opens it without
// waiting (a FIFO) and checks.
func ReadOpened(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	data, err := regfile.ReadOpened(f, fi, MaxConfigBytes)
	var tl *regfile.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, tooLarge(f.Name(), tl.Size)
	case err != nil:
		return nil, fmt.Errorf("config: %w", err)
	}
	return data, nil
}

func tooLarge(file string, size int64) error {
	what := "more than " + sizeText(MaxConfigBytes)
	switch {
	case size >= 1<<20:
		what = sizeText(size)
	case size >= 0:
		what = fmt.Sprintf("%d bytes", size)
	}
	return ConfigErrors{{File: file, Msg: fmt.Sprintf("the file is %s; a config file may be at most %s", what, sizeText(MaxConfigBytes))}}
}

func sizeText(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	if n >= 1<<10 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// clip cuts s to at most max bytes (at a character boundary), marking
// the cut with "…".
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// clipQuoted cuts the string arguments that format quotes (%q) to
// maxQuoted: they are values from the file, of any length.
func clipQuoted(format string, args []any) []any {
	out := args
	arg := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0123456789.", format[i]) >= 0 {
			i++
		}
		if i >= len(format) || format[i] == '%' {
			continue
		}
		if format[i] == 'q' && arg < len(args) {
			if s, ok := args[arg].(string); ok && len(s) > maxQuoted {
				if &out[0] == &args[0] {
					out = append([]any(nil), args...)
				}
				out[arg] = clip(s, maxQuoted)
			}
		}
		arg++
	}
	return out
}

// expandedSize is the size of n with every alias replaced by what it
// names (see maxExpanded), stopping once it passes limit. Each node's
// size is computed once, so this is linear in the parsed document even
// when the expansion is exponential: an alias names an anchored node,
// whose size is remembered; any other node is reached only through its
// parent, once. (Remembering every node cost a map entry per node of
// every config, on every command.)
func expandedSize(n *yaml.Node, limit int64, memo map[*yaml.Node]int64) int64 {
	if n == nil {
		return 0
	}
	keep := n.Anchor != ""
	if keep {
		if v, ok := memo[n]; ok {
			return v
		}
		memo[n] = limit + 1 // a cycle counts as too large
	}
	size := int64(nodeWeight + len(n.Value))
	if n.Kind == yaml.AliasNode {
		if a := n.Alias; a != nil && a.Anchor == "" {
			// Not what the parser makes; count it as too large rather
			// than walk it unremembered.
			return limit + 1
		}
		size += expandedSize(n.Alias, limit, memo)
	}
	for _, c := range n.Content {
		if size > limit {
			break
		}
		size += expandedSize(c, limit, memo)
	}
	if keep {
		memo[n] = size
	}
	return size
}

// finish bounds the errors reported: file order, at most maxErrors of
// them and then how many more, each cut to a readable length.
func (d *decoder) finish() {
	more := d.dropped
	if len(d.errs) > maxErrors {
		more += len(d.errs) - maxErrors
		d.errs = d.errs[:maxErrors]
	}
	for _, e := range d.errs {
		e.Path = clip(e.Path, maxPath)
		e.Msg = clip(e.Msg, maxMsg)
	}
	if more > 0 {
		d.errs = append(d.errs, &ConfigError{File: d.file, Msg: fmt.Sprintf("and %d more %s (only the first %d are shown)", more, plural(more, "error"), maxErrors)})
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
