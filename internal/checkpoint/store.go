package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Limits bound what one zone's checkpoints may hold and keep. A zone
// beyond them cannot be checkpointed.
type Limits struct {
	// MaxFiles is the most files a zone may hold.
	MaxFiles int
	// MaxBytes is the most bytes the files of a zone may hold together.
	MaxBytes int64
	// MaxFileBytes is the largest file a checkpoint records.
	MaxFileBytes int64
	// MaxStoreBytes is the most a zone's store may take on disk.
	MaxStoreBytes int64
	// Keep is how many checkpoints of a zone are kept; older ones are
	// removed.
	Keep int
}

// Zone is a directory tree to checkpoint.
type Zone struct {
	// Name is the zone's name in the config.
	Name string
	// Root is the zone's root, absolute and resolved (no symlink).
	Root string
	// Exclude are paths inside Root whose files are not this zone's: the
	// roots of other zones inside it, paths no command can see
	// (sandbox.deny).
	Exclude []string
	// ExcludeNames are file names left out wherever they appear below
	// Root, ignoring case: the bare names of sandbox.deny (.env), which
	// no command can see or change, and whose content guardrun does not
	// copy.
	ExcludeNames []string
}

// Request is what a checkpoint is taken for.
type Request struct {
	// Run is the request's run in the audit log.
	Run string
	// Summary is the request in one line.
	Summary string
	// Cwd is where it ran.
	Cwd string
	// Undo is the checkpoint an undo restores, for the checkpoint taken
	// before that undo.
	Undo int
}

// Point is one line of the store's log: a zone's state, recorded before
// a request ran. The requests that ran from the same state share its
// number N.
type Point struct {
	N    int       `json:"n"`
	Time time.Time `json:"time"`
	// Zone is the zone's root, Name its name, ID its store.
	Zone string `json:"zone"`
	Name string `json:"name,omitempty"`
	ID   string `json:"id"`
	// Tree is the zone's files, Perms the permissions that git's modes
	// do not say, Commit the store's commit of it.
	Tree   string `json:"tree"`
	Perms  string `json:"perms,omitempty"`
	Commit string `json:"commit"`
	Files  int    `json:"files"`
	Bytes  int64  `json:"bytes"`
	// Skipped are files of the zone this state does not hold (larger
	// than max_file_bytes; only the checkpoint before an undo skips).
	Skipped []string `json:"skipped,omitempty"`
	Run     string   `json:"run,omitempty"`
	Summary string   `json:"summary,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Undo    int      `json:"undo,omitempty"`
}

// Error says why a zone cannot be checkpointed.
type Error struct {
	// Zone is the zone's root.
	Zone string
	// Reason is why, in words a person can act on.
	Reason string
	// Damaged is set when the store itself is damaged.
	Damaged bool
}

func (e *Error) Error() string { return e.Zone + ": " + e.Reason }

// Store is the checkpoint store in one directory of guardrun's state.
// Any number of guardrun processes use it at once: a zone's store is
// changed under a lock of its own, the log under the store's.
type Store struct {
	dir    string
	limits Limits
	git    string
	now    func() time.Time
}

// Open opens (and, on the first checkpoint, creates) the store in dir
// with limits l. It fails when there is no git to record with.
func Open(dir string, l Limits) (*Store, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("checkpoint store %q is not an absolute path", dir)
	}
	git, err := findGit()
	if err != nil {
		return nil, err
	}
	return &Store{dir: dir, limits: l, git: git, now: time.Now}, nil
}

func (s *Store) logPath() string { return filepath.Join(s.dir, "log.jsonl") }

// zoneSpec is a zone with where its store and work tree are.
type zoneSpec struct {
	Zone
	// top is the work tree git sees: the zone's root, or the
	// repository above it whose .gitignore files apply to it.
	top string
	// prefix is the zone's root below top ("" when they are the same),
	// slash-separated.
	prefix string
	// excl are the excluded paths below top; names the excluded names.
	excl, names []string
	id          string
	dir         string
}

// spec finds a zone's work tree and store.
func (s *Store) spec(z Zone) (zoneSpec, error) {
	if !filepath.IsAbs(z.Root) {
		return zoneSpec{}, &Error{Zone: z.Root, Reason: "not an absolute path"}
	}
	fi, err := os.Lstat(z.Root)
	switch {
	case err != nil:
		return zoneSpec{}, &Error{Zone: z.Root, Reason: fmt.Sprintf("cannot read it: %v", pathErr(err))}
	case !fi.IsDir():
		return zoneSpec{}, &Error{Zone: z.Root, Reason: fmt.Sprintf("not a directory (%s)", fi.Mode().Type())}
	}
	if within(s.dir, z.Root) {
		return zoneSpec{}, &Error{Zone: z.Root, Reason: "the zone holds guardrun's own checkpoint store"}
	}
	if within(s.git, z.Root) {
		return zoneSpec{}, &Error{Zone: z.Root, Reason: "the zone holds " + s.git + ", which guardrun would run to record it"}
	}
	top := findTop(z.Root)
	sp := zoneSpec{Zone: z, top: top}
	if top != z.Root {
		sp.prefix = filepath.ToSlash(z.Root[len(top)+1:])
	}
	for _, x := range z.Exclude {
		if x != z.Root && within(x, z.Root) {
			sp.excl = append(sp.excl, filepath.ToSlash(x[len(top)+1:]))
		}
	}
	slices.Sort(sp.excl)
	sp.excl = slices.Compact(sp.excl)
	for _, n := range z.ExcludeNames {
		if n != "" && !strings.ContainsRune(n, '/') && !slices.Contains(sp.names, n) {
			sp.names = append(sp.names, n)
		}
	}
	slices.Sort(sp.names)
	// One store per work tree, zone and exclusions: a zone seen another
	// way starts a store of its own rather than reading an index that
	// holds other paths.
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00\x00%s", z.Root, top, strings.Join(sp.excl, "\x00"), strings.Join(sp.names, "\x00"))
	sp.id = hex.EncodeToString(h.Sum(nil))[:16]
	sp.dir = filepath.Join(s.dir, "zones", sp.id)
	return sp, nil
}

// findTop is the work tree whose .gitignore files apply to root: the
// nearest directory at or above root holding .git, but never the home
// directory or above it (a repository of the home directory's dotfiles
// is not the project's), else root itself.
func findTop(root string) string {
	home, _ := os.UserHomeDir()
	for d := root; ; {
		if home != "" && within(home, d) {
			return root
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return root
		}
		d = parent
	}
}

// within reports whether path is root or inside it (both clean and
// absolute).
func within(path, root string) bool {
	if root == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == root || strings.HasPrefix(path, root+"/")
}

func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Log reads every point of the log, oldest first. A store with no log
// has none. A malformed line (a writer killed mid-line) is skipped.
func (s *Store) Log() ([]Point, error) {
	f, err := os.Open(s.logPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Point
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var p Point
			if json.Unmarshal(line, &p) == nil && p.N > 0 {
				out = append(out, p)
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// lastN is the highest number in the log (0 for none): its last line,
// read from the end.
func (s *Store) lastN() (int, error) {
	f, err := os.Open(s.logPath())
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	for chunk := int64(16 << 10); ; chunk *= 4 {
		from := max(0, size-chunk)
		b := make([]byte, size-from)
		if _, err := f.ReadAt(b, from); err != nil && err != io.EOF {
			return 0, err
		}
		lines := bytes.Split(b, []byte("\n"))
		if from > 0 {
			lines = lines[1:] // maybe cut
		}
		for i := len(lines) - 1; i >= 0; i-- {
			var p Point
			if json.Unmarshal(lines[i], &p) == nil && p.N > 0 {
				return p.N, nil
			}
		}
		if from == 0 {
			return 0, nil
		}
	}
}

// appendLog writes points as lines of the log; the caller holds the
// store's lock.
func (s *Store) appendLog(ps []Point) error {
	var buf bytes.Buffer
	for _, p := range ps {
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	f, err := os.OpenFile(s.logPath(), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	out := buf.Bytes()
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		// A writer killed mid-line leaves a line without its end: start
		// a fresh one.
		var last [1]byte
		if _, err := f.ReadAt(last[:], fi.Size()-1); err == nil && last[0] != '\n' {
			out = append([]byte{'\n'}, out...)
		}
	}
	_, werr := f.Write(out)
	cerr := f.Close()
	return errors.Join(werr, cerr)
}

// lockTimeout is how long a checkpoint waits for another guardrun's
// checkpoint of the same zone.
const lockTimeout = 2 * time.Minute

// lockZone takes a zone's lock.
func (s *Store) lockZone(ctx context.Context, sp zoneSpec) (func(), error) {
	if err := os.MkdirAll(sp.dir, 0o700); err != nil {
		return nil, &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
	}
	unlock, err := lockFile(ctx, filepath.Join(sp.dir, "lock"), lockTimeout)
	if err != nil {
		return nil, &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
	}
	return unlock, nil
}

// lockLog takes the store's own lock, under which numbers are given
// and the log is written.
func (s *Store) lockLog(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, err
	}
	return lockFile(ctx, filepath.Join(s.dir, "lock"), lockTimeout)
}
