package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// state is a zone's files as one snapshot found them.
type state struct {
	top    string // the work tree's tree (the commit's)
	tree   string // the zone's tree
	commit string
	perms  string // the permission list's blob; "" when every file has git's mode
	files  int
	bytes  int64
	// skipped are files left out (snapOpts.forUndo).
	skipped []string
}

func (a state) same(b state) bool {
	return a.tree == b.tree && a.perms == b.perms && slices.Equal(a.skipped, b.skipped)
}

type snapOpts struct {
	// forUndo is the snapshot an undo compares with and records before
	// it restores: files larger than max_file_bytes are left out
	// (skipped) instead of failing it, and the zone's totals and the
	// store's size do not stop it, since undoing is how a zone that
	// grew beyond them is put back. What no checkpoint can hold (a
	// repository inside the zone, a directory or file git cannot read)
	// is left out too and so left as it is, as ignored files are:
	// a command that made one cannot keep the rest from being put back.
	forUndo bool
}

// zoneInfo is written in a zone's store: which zone it records, how.
type zoneInfo struct {
	Root    string   `json:"root"`
	Name    string   `json:"name,omitempty"`
	Top     string   `json:"top"`
	Prefix  string   `json:"prefix,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	Names   []string `json:"exclude_names,omitempty"`
}

// overLimit remembers that a zone was beyond a limit, so that the
// commands after it do not each walk a tree that is too large.
type overLimit struct {
	Until  time.Time `json:"until"`
	Reason string    `json:"reason"`
	Limits Limits    `json:"limits"`
}

// overLimitFor is how long a zone found beyond a limit is not walked
// again.
const overLimitFor = 2 * time.Minute

// fileInfo is one file of a snapshot: its size, its git mode and its
// permissions.
type fileInfo struct {
	size int64
	mode uint32
	perm fs.FileMode
}

// snapshot records the zone's files in the store's git directory and
// returns the state. The caller holds the zone's lock. A zone that
// cannot be recorded is an *Error.
func (s *Store) snapshot(ctx context.Context, sp zoneSpec, opt snapOpts) (state, error) {
	if reason, ok := s.damaged(sp); ok {
		return state{}, &Error{Zone: sp.Root, Damaged: true, Reason: reason}
	}
	if !opt.forUndo {
		if ol, ok := s.overLimit(sp); ok {
			return state{}, &Error{Zone: sp.Root, Reason: ol}
		}
	}
	r := newRepo(s.git, sp.dir, sp.top)
	defer r.obj.close()
	if err := r.init(); err != nil {
		return state{}, &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
	}
	if err := s.writeZoneInfo(sp); err != nil {
		return state{}, &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
	}
	// The zone's lock is held: an index.lock is a git's that was killed,
	// and would keep status from refreshing the index.
	os.Remove(r.index + ".lock")
	started := s.now()
	out, err := s.status(ctx, r, sp, opt)
	if err != nil {
		return state{}, err
	}
	changed, nested := parseStatus(out)
	if len(nested) > 0 && !opt.forUndo {
		return state{}, &Error{Zone: sp.Root, Reason: fmt.Sprintf(
			"%s is a git repository inside the zone, whose files a checkpoint cannot hold: list it in .gitignore, or make it a zone of its own", s.rel(sp, nested[0]))}
	}
	entries, err := readIndex(r.index)
	if err != nil {
		os.Remove(r.index) // a cache: the next snapshot starts afresh
		return state{}, &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
	}

	// Every file of the state: the index's entries git found unchanged
	// (their permissions from the cache where their stat data says they
	// are the same), then what status listed, read again.
	cachePath := filepath.Join(sp.dir, "perms.cache")
	cache := readPermCache(cachePath)
	misses := 0
	isChanged := make(map[string]bool, len(changed))
	for _, p := range changed {
		isChanged[p] = true
	}
	files := make([]file, 0, len(entries)+len(changed))
	for _, e := range entries {
		switch {
		case isChanged[e.path]:
			// Read below.
		case e.mode == modeSymlink:
			files = append(files, file{path: e.path, fileInfo: fileInfo{size: int64(e.size), mode: modeSymlink}})
		default:
			if key, perm, ok := cache.lookup(e); ok {
				files = append(files, file{path: e.path, fileInfo: fileInfo{size: int64(e.size), mode: e.mode, perm: perm}, key: key})
				continue
			}
			misses++
			if f, ok := lstatFile(sp.top, e.path); ok {
				files = append(files, f)
			}
		}
	}
	var add, drop [][]byte
	var skipped []string
	var pending int64
	gitignore := false
	for _, p := range changed {
		misses++
		f, ok := lstatFile(sp.top, p)
		if !ok {
			add = append(add, []byte(p)) // gone: update-index --remove drops it
			continue
		}
		if f.mode != modeSymlink && f.size > s.limits.MaxFileBytes {
			if !opt.forUndo {
				return state{}, s.tooLarge(sp, fmt.Sprintf("%s is %s, more than checkpoints.max_file_bytes (%s): list it in .gitignore, or raise the limit",
					s.rel(sp, p), sizeText(f.size), sizeText(s.limits.MaxFileBytes)))
			}
			// Left out; an entry an earlier state made for it leaves the
			// index too, or the older content would stand in its place.
			skipped = append(skipped, s.rel(sp, p))
			drop = append(drop, []byte(":(top,literal)"+p))
			continue
		}
		if opt.forUndo && f.mode != modeSymlink && !readable(filepath.Join(sp.top, filepath.FromSlash(p))) {
			// Not recorded and so never touched, unless the target
			// holds a file there; its entry leaves the index.
			drop = append(drop, []byte(":(top,literal)"+p))
			continue
		}
		files = append(files, f)
		pending += f.size
		add = append(add, []byte(p))
		if path.Base(p) == ".gitignore" {
			gitignore = true
		}
	}
	if !opt.forUndo {
		total := int64(0)
		for _, f := range files {
			total += f.size
		}
		switch {
		case len(files) > s.limits.MaxFiles:
			return state{}, s.tooLarge(sp, fmt.Sprintf("the zone holds %d files, more than checkpoints.max_files (%d): list what need not be kept in .gitignore, or raise the limit",
				len(files), s.limits.MaxFiles))
		case total > s.limits.MaxBytes:
			return state{}, s.tooLarge(sp, fmt.Sprintf("the zone's files hold %s, more than checkpoints.max_bytes (%s): list what need not be kept in .gitignore, or raise the limit",
				sizeText(total), sizeText(s.limits.MaxBytes)))
		}
		if pending > 0 {
			if err := s.roomFor(ctx, r, sp, pending); err != nil {
				return state{}, err
			}
		}
	}

	st := state{skipped: skipped}
	if len(add) > 0 || len(drop) > 0 {
		ignored, err := s.add(ctx, r, sp, add, drop, gitignore)
		if err != nil {
			return state{}, err
		}
		if len(ignored) > 0 {
			files = slices.DeleteFunc(files, func(f file) bool { return ignored[f.path] })
		}
		after, err := readIndex(r.index)
		if err != nil {
			return state{}, &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
		}
		if st.top, st.tree, err = r.obj.writeTrees(after, sp.prefix); err != nil {
			return state{}, &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
		}
		if st.commit, err = r.obj.write("commit", commitText(st.top, s.now())); err != nil {
			return state{}, &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
		}
		if err := writeRef(r.gitDir, "refs/heads/main", st.commit); err != nil {
			return state{}, &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
		}
		s.grow(sp, pending+int64(len(add))*256)
	} else {
		head, err := readRef(r.gitDir, "refs/heads/main")
		if err != nil {
			return state{}, s.damage(sp, fmt.Sprintf("its HEAD cannot be read: %v", err))
		}
		if head == "" {
			// An empty zone, seen for the first time.
			st.top = emptyTree
			if st.commit, err = r.obj.write("commit", commitText(st.top, s.now())); err == nil {
				err = writeRef(r.gitDir, "refs/heads/main", st.commit)
			}
			if err != nil {
				return state{}, &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
			}
		} else {
			st.commit = head
			if st.top, err = r.obj.commitTree(head); err != nil {
				return state{}, s.damage(sp, err.Error())
			}
		}
		if st.tree, err = r.obj.subtree(st.top, sp.prefix); err != nil {
			return state{}, s.damage(sp, err.Error())
		}
	}

	// Permissions git's modes do not say, per file below the zone.
	var perms []permEntry
	for _, f := range files {
		st.files++
		st.bytes += f.size
		if f.mode == modeSymlink || f.perm == defaultPerm(f.mode) {
			continue
		}
		perms = append(perms, permEntry{path: s.rel(sp, f.path), perm: f.perm})
	}
	if len(perms) > 0 {
		if st.perms, err = r.obj.write("blob", encodePerms(perms)); err != nil {
			return state{}, &Error{Zone: sp.Root, Reason: fmt.Sprintf("checkpoint store: %v", err)}
		}
	}
	// A stale cache costs only an lstat per file it misses: it is
	// written again when it misses many.
	if misses > 64 || misses > len(files)/8 || cache.n == 0 && len(files) > 0 {
		writePermCache(cachePath, started, files)
	}
	if err := s.scrub(r, sp); err != nil {
		return state{}, err
	}
	return st, nil
}

// file is one file of a snapshot, with the stat data its permissions
// were read with.
type file struct {
	path string
	fileInfo
	key permKey
}

// lstatFile reads what a snapshot keeps of the file at p (below the
// work tree top): false for a directory (a file replaced by one), a
// FIFO, a socket, or nothing.
func lstatFile(top, p string) (file, bool) {
	fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p)))
	if err != nil {
		return file{}, false
	}
	switch {
	case fi.Mode().IsRegular():
		m := uint32(modeFile)
		if fi.Mode().Perm()&0o100 != 0 {
			m = modeExec
		}
		perm := fi.Mode().Perm() | fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
		return file{path: p, fileInfo: fileInfo{size: fi.Size(), mode: m, perm: perm}, key: statKey(fi)}, true
	case fi.Mode()&fs.ModeSymlink != 0:
		return file{path: p, fileInfo: fileInfo{size: fi.Size(), mode: modeSymlink}}, true
	}
	return file{}, false
}

// readable reports whether the file at p can be opened to be read.
func readable(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// status runs git status over the zone. An index git calls corrupt is
// a cache: it is removed, and status runs again.
func (s *Store) status(ctx context.Context, r *repo, sp zoneSpec, opt snapOpts) ([]byte, error) {
	args := []string{"status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames", "--ignored=no", "--"}
	args = append(args, pathspecs(sp)...)
	for try := 0; ; try++ {
		out, stderr, err := r.run(ctx, nil, args...)
		if err != nil && try == 0 && strings.Contains(stderr, "index") && (strings.Contains(stderr, "corrupt") || strings.Contains(stderr, "bad signature") || strings.Contains(stderr, "smaller than expected")) {
			os.Remove(r.index)
			continue
		}
		if err != nil {
			return nil, s.gitFailed(sp, err)
		}
		for _, l := range strings.Split(stderr, "\n") {
			if d, ok := strings.CutPrefix(l, "warning: could not open directory '"); ok && !opt.forUndo {
				d, why, _ := strings.Cut(d, "': ")
				return nil, &Error{Zone: sp.Root, Reason: fmt.Sprintf("cannot read %s (%s)", s.relTop(sp, strings.TrimSuffix(d, "/"))+"/", strings.ToLower(why))}
			}
		}
		return out, nil
	}
}

// add records the changed paths in the index, and drops the recorded
// files a changed .gitignore now ignores (returned).
func (s *Store) add(ctx context.Context, r *repo, sp zoneSpec, add, drop [][]byte, gitignore bool) (map[string]bool, error) {
	if len(add) > 0 {
		// update-index takes the paths themselves: no walk of the zone,
		// which status has just done. --remove drops a path that is gone
		// (or is a directory now, whose files are paths of their own).
		in := append(bytes.Join(add, []byte{0}), 0)
		if _, stderr, err := r.run(ctx, in, "update-index", "--add", "--remove", "-z", "--stdin"); err != nil {
			// A file git could not read: permission denied, or gone.
			for _, l := range strings.Split(stderr, "\n") {
				if f, ok := strings.CutPrefix(l, "error: open(\""); ok {
					f, why, _ := strings.Cut(f, "\"): ")
					return nil, &Error{Zone: sp.Root, Reason: fmt.Sprintf("cannot read %s (%s)", s.relTop(sp, f), strings.ToLower(why))}
				}
			}
			return nil, s.gitFailed(sp, err)
		}
	}
	if err := s.unindex(ctx, r, sp, drop); err != nil {
		return nil, err
	}
	if !gitignore {
		return nil, nil
	}
	// git keeps tracking a file a new .gitignore line ignores; a
	// checkpoint must not: it would hold, and an undo restore, a file
	// the project says is not its own.
	args := append([]string{"ls-files", "-z", "--cached", "--ignored", "--exclude-standard", "--"}, pathspecs(sp)...)
	out, _, err := r.run(ctx, nil, args...)
	if err != nil {
		return nil, s.gitFailed(sp, err)
	}
	ignored := map[string]bool{}
	var rm [][]byte
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			rm = append(rm, []byte(":(top,literal)"+p))
			ignored[p] = true
		}
	}
	return ignored, s.unindex(ctx, r, sp, rm)
}

// unindex removes paths from the index (not from the zone).
func (s *Store) unindex(ctx context.Context, r *repo, sp zoneSpec, specs [][]byte) error {
	if len(specs) == 0 {
		return nil
	}
	in := append(bytes.Join(specs, []byte{0}), 0)
	if _, _, err := r.run(ctx, in, "rm", "--cached", "-q", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
		return s.gitFailed(sp, err)
	}
	return nil
}

// pathspecs limit git to the zone: its root below the work tree,
// without the zones inside it.
func pathspecs(sp zoneSpec) []string {
	var out []string
	if sp.prefix != "" {
		out = append(out, ":(top,literal)"+sp.prefix)
	}
	for _, x := range sp.excl {
		out = append(out, ":(top,literal,exclude)"+x)
	}
	base := "**/"
	if sp.prefix != "" {
		base = globEscape(sp.prefix) + "/**/"
	}
	for _, n := range sp.names {
		// A name, and everything below a directory of that name.
		out = append(out, ":(top,exclude,glob,icase)"+base+globEscape(n), ":(top,exclude,glob,icase)"+base+globEscape(n)+"/**")
	}
	return out
}

// globEscape quotes the characters git's glob pathspecs read.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// parseStatus reads `git status --porcelain=v2 -z`: the paths to record
// again (changed, deleted, new), and the directories that are
// repositories of their own (git shows them, untracked, as "dir/").
func parseStatus(out []byte) (changed, nested []string) {
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		switch {
		case strings.HasPrefix(r, "1 "):
			if f := strings.SplitN(r, " ", 9); len(f) == 9 {
				changed = append(changed, f[8])
			}
		case strings.HasPrefix(r, "2 "):
			if f := strings.SplitN(r, " ", 10); len(f) == 10 {
				changed = append(changed, f[9])
			}
			if i+1 < len(recs) {
				i++
				changed = append(changed, recs[i])
			}
		case strings.HasPrefix(r, "u "):
			if f := strings.SplitN(r, " ", 11); len(f) == 11 {
				changed = append(changed, f[10])
			}
		case strings.HasPrefix(r, "? "):
			p := r[2:]
			if strings.HasSuffix(p, "/") {
				nested = append(nested, strings.TrimSuffix(p, "/"))
			} else {
				changed = append(changed, p)
			}
		}
	}
	return changed, nested
}

// rel is a path below the work tree as a path below the zone's root.
func (s *Store) rel(sp zoneSpec, p string) string {
	if sp.prefix == "" {
		return p
	}
	return strings.TrimPrefix(p, sp.prefix+"/")
}

// relTop is a path git named (relative to the work tree, or absolute)
// as a path below the zone's root.
func (s *Store) relTop(sp zoneSpec, p string) string {
	if filepath.IsAbs(p) {
		if r, err := filepath.Rel(sp.Root, p); err == nil {
			return filepath.ToSlash(r)
		}
		return p
	}
	return s.rel(sp, p)
}

func commitText(tree string, t time.Time) []byte {
	stamp := fmt.Sprintf("guardrun <guardrun@localhost> %d +0000", t.Unix())
	return fmt.Appendf(nil, "tree %s\nauthor %s\ncommitter %s\n\nguardrun checkpoint\n", tree, stamp, stamp)
}

// readRef reads a loose ref: its object, or "" where there is none.
func readRef(gitDir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	oid := strings.TrimSpace(string(b))
	if !validOID(oid) {
		return "", fmt.Errorf("%s holds %q, not an object name", name, clip(oid, 40))
	}
	return oid, nil
}

func writeRef(gitDir, name, oid string) error {
	p := filepath.Join(gitDir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return writeFileAtomic(p, []byte(oid+"\n"), 0o600)
}

// defaultPerm is the permission a file of git's mode gets when nothing
// else is recorded.
func defaultPerm(mode uint32) fs.FileMode {
	if mode == modeExec {
		return 0o755
	}
	return 0o644
}

// permEntry is one file whose permissions are not its mode's default.
type permEntry struct {
	path string
	perm fs.FileMode
}

// encodePerms is the permission list's blob: "MODE PATH\0" per file,
// MODE in octal with the set-id and sticky bits (Go's fs.FileMode bits
// turned into the kernel's), sorted by path.
func encodePerms(ps []permEntry) []byte {
	slices.SortFunc(ps, func(a, b permEntry) int { return strings.Compare(a.path, b.path) })
	var b bytes.Buffer
	for _, p := range ps {
		fmt.Fprintf(&b, "%04o %s\x00", unixPerm(p.perm), p.path)
	}
	return b.Bytes()
}

func decodePerms(oid string, b []byte) (map[string]fs.FileMode, error) {
	out := map[string]fs.FileMode{}
	for _, rec := range bytes.Split(b, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		m, p, ok := bytes.Cut(rec, []byte(" "))
		n, err := strconv.ParseUint(string(m), 8, 32)
		if !ok || err != nil || len(p) == 0 {
			return nil, &objectError{oid, fmt.Errorf("%w: not a permission list", errCorrupt)}
		}
		out[string(p)] = goPerm(uint32(n))
	}
	return out, nil
}

func unixPerm(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}

func goPerm(p uint32) fs.FileMode {
	m := fs.FileMode(p & 0o777)
	if p&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if p&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if p&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

func (s *Store) writeZoneInfo(sp zoneSpec) error {
	b, err := json.Marshal(zoneInfo{Root: sp.Root, Name: sp.Name, Top: sp.top, Prefix: sp.prefix, Exclude: sp.excl, Names: sp.names})
	if err != nil {
		return err
	}
	p := filepath.Join(sp.dir, "zone.json")
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return writeFileAtomic(p, b, 0o600)
}

// specOf is the zone of a store, as its zone.json records it.
func (s *Store) specOf(id string) (zoneSpec, error) {
	dir := filepath.Join(s.dir, "zones", id)
	b, err := os.ReadFile(filepath.Join(dir, "zone.json"))
	if err != nil {
		return zoneSpec{}, err
	}
	var zi zoneInfo
	if err := json.Unmarshal(b, &zi); err != nil {
		return zoneSpec{}, fmt.Errorf("%s: %w", filepath.Join(dir, "zone.json"), err)
	}
	sp := zoneSpec{Zone: Zone{Name: zi.Name, Root: zi.Root}, top: zi.Top, prefix: zi.Prefix, excl: zi.Exclude, names: zi.Names, id: id, dir: dir}
	if !filepath.IsAbs(sp.Root) || !filepath.IsAbs(sp.top) {
		return zoneSpec{}, fmt.Errorf("%s names no zone", filepath.Join(dir, "zone.json"))
	}
	return sp, nil
}

// tooLarge is a zone beyond a limit, remembered for overLimitFor.
func (s *Store) tooLarge(sp zoneSpec, reason string) error {
	b, _ := json.Marshal(overLimit{Until: s.now().Add(overLimitFor), Reason: reason, Limits: s.limits})
	writeFileAtomic(filepath.Join(sp.dir, "over-limit"), b, 0o600)
	return &Error{Zone: sp.Root, Reason: reason}
}

func (s *Store) overLimit(sp zoneSpec) (string, bool) {
	p := filepath.Join(sp.dir, "over-limit")
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	var ol overLimit
	if json.Unmarshal(b, &ol) != nil || ol.Limits != s.limits || s.now().After(ol.Until) {
		os.Remove(p)
		return "", false
	}
	return ol.Reason, true
}

// damaged reports whether the zone's store was found damaged.
func (s *Store) damaged(sp zoneSpec) (string, bool) {
	b, err := os.ReadFile(filepath.Join(sp.dir, "damaged"))
	if err != nil {
		return "", false
	}
	return damagedReason(sp, strings.TrimSpace(string(b))), true
}

func damagedReason(sp zoneSpec, what string) string {
	return fmt.Sprintf("its checkpoint store is damaged (%s); `guardrun checkpoints --reset` moves it aside and starts a new one", what)
}

// damage marks the zone's store damaged: no checkpoint is taken in it
// again until it is reset, since its old objects cannot be trusted to
// restore what they name.
func (s *Store) damage(sp zoneSpec, what string) error {
	writeFileAtomic(filepath.Join(sp.dir, "damaged"), []byte(what+"\n"), 0o600)
	return &Error{Zone: sp.Root, Damaged: true, Reason: damagedReason(sp, what)}
}

// gitFailed turns git's failure into an *Error, marking the store
// damaged where git says an object is.
func (s *Store) gitFailed(sp zoneSpec, err error) error {
	var ge *gitError
	if errors.As(err, &ge) {
		low := strings.ToLower(ge.stderr)
		for _, w := range []string{"corrupt", "unable to read", "bad object", "invalid object", "inflate", "bad tree object", "missing object"} {
			if strings.Contains(low, w) {
				return s.damage(sp, err.Error())
			}
		}
	}
	return &Error{Zone: sp.Root, Reason: err.Error()}
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
