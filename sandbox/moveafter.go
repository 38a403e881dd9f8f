package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// MoveAsideCreated moves whatever the command created at a MoveAfter
// path to NAME.guardrun-quarantine-TIME-NS next to it, and returns
// one line per path it moved or could not move. A path whose directory
// is no longer the one Derive saw (a component replaced by a symbolic
// link) is reported, not followed.
func (p *Profile) MoveAsideCreated(now time.Time) []string {
	var out []string
	for _, path := range p.MoveAfter {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if r, err := Resolve(filepath.Dir(path)); err != nil || r != filepath.Dir(path) {
			out = append(out, fmt.Sprintf("protected %s was created by the command, but its directory now leads elsewhere: not moved; review it before git uses it", path))
			continue
		}
		// Whatever the command put at this name is its own (rename
		// replaces a file or link there, never follows it; a directory
		// there fails and is reported).
		q := fmt.Sprintf("%s.guardrun-quarantine-%s-%d", path, now.UTC().Format("20060102T150405Z"), now.Nanosecond())
		if err := os.Rename(path, q); err != nil {
			out = append(out, fmt.Sprintf("protected %s was created by the command and could not be moved aside: %v", path, err))
			continue
		}
		out = append(out, fmt.Sprintf("protected %s was created by the command; moved aside to %s", path, q))
	}
	return out
}
