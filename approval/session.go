package approval

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/guardrun/guardrun/internal/sys/atomicfile"
)

// DefaultTTL is how long a session's grants last when the config sets no
// session.ttl.
const DefaultTTL = 8 * time.Hour

// clockSkew is how far before its creation time a session is still
// honoured. A clock stepped back further than this could otherwise stretch
// a session beyond its ttl, so the session is treated as expired.
const clockSkew = time.Minute

// maxGrants bounds a session's grants. Every granted lookup decodes the
// whole store file, and this keeps that well under a millisecond; a
// person rarely approves this many distinct commands for one session.
const maxGrants = 128

// maxStoreSize bounds what is read of a store file; anything larger was
// not written by guardrun and is treated as corrupt.
const maxStoreSize = 16 << 20

// Grant is one "approve for session" answer.
type Grant struct {
	// Key is the hex sha256 of the canonical payload (CommandKey, FileKey).
	Key string `json:"key"`
	// Kind is command, file or network (a host through the proxy).
	Kind string `json:"kind"`
	// Summary is how the grant is listed: the quoted argv, or
	// "write notes/x.txt".
	Summary string `json:"summary"`
	Rule    string `json:"rule,omitempty"`
	// Where is the working directory the grant applies in: a command's
	// key includes it, so the same command elsewhere asks again.
	Where   string    `json:"where,omitempty"`
	Created time.Time `json:"created"`
}

// Key derivation. Both keys hash a length-prefixed encoding, not JSON:
// encoding/json replaces invalid UTF-8 with U+FFFD, so two different argvs
// (`rm $'\xff'` and `rm $'\xfe'`) would share a key and one approval would
// cover the other. Length prefixes make every boundary explicit: ["a b"]
// and ["a", "b"], or [["ls"], ["rm"]] and [["ls", "rm"]], never collide.
// The leading tag separates command keys from file keys and lets a future
// encoding change invalidate old grants instead of misreading them.
// Keep in sync: changing either encoding changes every key, which simply
// makes stored grants ask again.
const (
	commandKeyTag = "guardrun/command/v1"
	fileKeyTag    = "guardrun/file/v1"
	filesKeyTag   = "guardrun/files/v1"
)

// CommandKey is the session key of a request: the argv and matched rule
// of every part the caller passes. The caller passes all parts of a
// request (every asking part and every file operation, not just the first
// command), so that a grant for `ls` never covers `ls; rm x` or `ls > f`.
// rule[i] belongs to argv[i]; missing rules count as empty.
func CommandKey(argv [][]string, rule []string) string {
	h := newKeyHash(commandKeyTag)
	h.count(len(argv))
	for _, a := range argv {
		h.strings(a)
	}
	h.strings(rule)
	return h.sum()
}

// FileKey is the session key of a file operation: zone, op and path,
// never the contents, so approving "write notes/x.txt" for the session
// approves later writes of other contents there too.
func FileKey(zone, op, path string) string {
	h := newKeyHash(fileKeyTag)
	h.strings([]string{zone, op, path})
	return h.sum()
}

// FilesKey is the session key of file operations on several paths (a
// move, a patch): each operation's zone, op and path, in order, so that
// a grant covers those operations and no others.
func FilesKey(zones, ops, paths []string) string {
	h := newKeyHash(filesKeyTag)
	h.strings(zones)
	h.strings(ops)
	h.strings(paths)
	return h.sum()
}

type keyHash struct{ buf []byte }

func newKeyHash(tag string) *keyHash {
	h := &keyHash{}
	h.str(tag)
	return h
}

func (h *keyHash) count(n int) { h.buf = binary.AppendUvarint(h.buf, uint64(n)) }

func (h *keyHash) str(s string) {
	h.count(len(s))
	h.buf = append(h.buf, s...)
}

func (h *keyHash) strings(ss []string) {
	h.count(len(ss))
	for _, s := range ss {
		h.str(s)
	}
}

func (h *keyHash) sum() string {
	sum := sha256.Sum256(h.buf)
	return hex.EncodeToString(sum[:])
}

// SessionInfo describes one stored session.
type SessionInfo struct {
	ID      string
	Created time.Time
	// Expires as stored; a shorter session.ttl configured since then ends
	// the session earlier.
	Expires time.Time
	Grants  int
}

// storeFile is the on-disk form of one session.
type storeFile struct {
	Session string    `json:"session"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	Grants  []Grant   `json:"grants"`
}

// CorruptStoreError reports a session file that cannot be trusted: not
// JSON, or holding another session. Such a file grants nothing (fail
// closed); the next Add replaces it.
type CorruptStoreError struct {
	Path string
	Err  error
}

func (e *CorruptStoreError) Error() string {
	return fmt.Sprintf("session store %s is corrupt (its grants are ignored): %v", e.Path, e.Err)
}

func (e *CorruptStoreError) Unwrap() error { return e.Err }

// Store is the session memory of one session: the grants a person gave
// with "approve for session". It lives in one file per session, shared by
// every guardrun process of the session, and holds no open file, so a
// Store is safe for concurrent use.
//
// The session expires ttl after its first grant (sudo-like: using a grant
// does not extend it). The ttl in force when reading also bounds an
// existing session, so shortening session.ttl takes effect at once while
// lengthening it does not stretch sessions already granted.
type Store struct {
	dir     string
	session string
	name    string // file name without extension, from sessionFileName
	ttl     time.Duration
	now     func() time.Time
}

// OpenStore opens the store of session in dir, creating dir (mode 0700)
// if needed. An existing dir must be a directory owned by the current user
// and not writable by group or others: whoever can write there could plant
// grants. ttl 0 means DefaultTTL.
func OpenStore(dir, session string, ttl time.Duration) (*Store, error) {
	if dir == "" {
		return nil, errors.New("session store: no directory")
	}
	if session == "" {
		return nil, errors.New("session store: empty session id")
	}
	if ttl < 0 {
		return nil, fmt.Errorf("session store: negative ttl %v", ttl)
	}
	if ttl == 0 {
		ttl = DefaultTTL
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("session store: %s is not a directory", dir)
	}
	if err := checkPrivate("session directory", dir, fi); err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	return &Store{dir: dir, session: session, name: sessionFileName(session), ttl: ttl, now: time.Now}, nil
}

// Path is the store's file.
func (s *Store) Path() string { return filepath.Join(s.dir, s.name+".json") }

func (s *Store) lockPath() string { return filepath.Join(s.dir, s.name+".lock") }

// live reports whether the session in sf is still valid at now.
func (s *Store) live(sf *storeFile, now time.Time) bool {
	expires := sf.Created.Add(s.ttl)
	if sf.Expires.Before(expires) {
		expires = sf.Expires
	}
	return !now.Before(sf.Created.Add(-clockSkew)) && now.Before(expires)
}

// Has reports whether key was granted in this session. An expired session
// has no grants, and its file is removed (best effort). A store that
// cannot be trusted has no grants either: Has returns false with the error
// (a *CorruptStoreError if the file is damaged), so a caller that only
// prints the error still asks the person. A file that does not contain
// the key at all answers false without being decoded, so damage is only
// reported by lookups that could have been granted (and by List and Add).
func (s *Store) Has(key string) (Grant, bool, error) {
	if key == "" {
		return Grant{}, false, nil
	}
	data, err := readStoreBytes(s.Path())
	if err != nil || data == nil {
		return Grant{}, false, err
	}
	// Most lookups are misses (every command that asks), and a file that
	// does not even contain the key grants nothing whatever else it holds,
	// so skip decoding it. The key is searched as JSON writes it.
	if quoted, err := json.Marshal(key); err != nil || !bytes.Contains(data, quoted) {
		return Grant{}, false, nil
	}
	sf, err := s.decode(data)
	if err != nil {
		return Grant{}, false, err
	}
	if !s.live(sf, s.now()) {
		s.removeExpired()
		return Grant{}, false, nil
	}
	for _, g := range sf.Grants {
		if g.Key == key {
			return g, true, nil
		}
	}
	return Grant{}, false, nil
}

// removeExpired deletes the session file if it is still expired once the
// lock is held: another process may have just started a new session in it.
func (s *Store) removeExpired() {
	unlock, err := s.lock()
	if err != nil {
		return
	}
	defer unlock()
	sf, err := s.read()
	if err == nil && sf != nil && !s.live(sf, s.now()) {
		os.Remove(s.Path())
	}
}

// Add stores g as the newest grant, replacing one with the same key. A
// zero Created is set to now. An expired session starts afresh with g as
// its only grant, and a corrupt store file is replaced. A session keeps
// at most maxGrants grants; beyond that the oldest are forgotten, so they
// ask again.
//
// The read-modify-write runs under flock(LOCK_EX) on a separate lock file,
// so concurrent Adds from any number of processes lose nothing; the new
// contents go to a temporary file that is synced and renamed over the old
// one, so a crash leaves the old store or the new one, never half of one.
func (s *Store) Add(g Grant) error {
	if g.Key == "" {
		return errors.New("session store: grant without key")
	}
	now := s.now()
	if g.Created.IsZero() {
		g.Created = now
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	sf, err := s.read()
	var corrupt *CorruptStoreError
	if errors.As(err, &corrupt) {
		sf = nil
	} else if err != nil {
		return err
	}
	if sf == nil || !s.live(sf, now) {
		sf = &storeFile{Session: s.session, Created: now, Expires: now.Add(s.ttl)}
	}
	sf.Grants = slices.DeleteFunc(sf.Grants, func(h Grant) bool { return h.Key == g.Key })
	sf.Grants = append(sf.Grants, g)
	if over := len(sf.Grants) - maxGrants; over > 0 {
		sf.Grants = slices.Delete(sf.Grants, 0, over)
	}
	return s.write(sf)
}

// List returns the grants of the session, oldest first; none once it has
// expired.
func (s *Store) List() ([]Grant, error) {
	sf, err := s.read()
	if err != nil || sf == nil || !s.live(sf, s.now()) {
		return nil, err
	}
	return sf.Grants, nil
}

// Revoke removes the grant with key, or every grant of the session when
// key is "" or "all", and reports whether anything was revoked. Revoking
// all of a corrupt store removes the file.
func (s *Store) Revoke(key string) (bool, error) {
	all := key == "" || key == "all"
	unlock, err := s.lock()
	if err != nil {
		return false, err
	}
	defer unlock()
	sf, err := s.read()
	var corrupt *CorruptStoreError
	switch {
	case all && errors.As(err, &corrupt):
		return true, s.remove()
	case err != nil:
		return false, err
	case sf == nil:
		return false, nil
	case !s.live(sf, s.now()):
		return false, s.remove()
	case all:
		return len(sf.Grants) > 0, s.remove()
	}
	i := slices.IndexFunc(sf.Grants, func(g Grant) bool { return g.Key == key })
	if i < 0 {
		return false, nil
	}
	sf.Grants = slices.Delete(sf.Grants, i, i+1)
	if len(sf.Grants) == 0 {
		return true, s.remove()
	}
	return true, s.write(sf)
}

func (s *Store) remove() error {
	if err := os.Remove(s.Path()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session store: %w", err)
	}
	return nil
}

// lock takes the session's lock file. The lock file is never removed:
// deleting a lock file while another process waits on it lets two
// processes hold "the" lock at once.
func (s *Store) lock() (unlock func(), err error) {
	f, err := os.OpenFile(s.lockPath(), os.O_RDWR|os.O_CREATE|openFlags, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session store: %w", openError("session lock", s.lockPath(), err))
	}
	if err := checkRegularPrivate("session lock", f); err != nil {
		f.Close()
		return nil, fmt.Errorf("session store: %w", err)
	}
	if err := lockFile(f, true); err != nil {
		f.Close()
		return nil, fmt.Errorf("session store: %w", err)
	}
	return func() {
		unlockFile(f)
		f.Close()
	}, nil
}

// read loads the session file; nil, nil when there is none. It needs no
// lock: writers replace the file by rename, so a reader sees the old or
// the new contents whole.
func (s *Store) read() (*storeFile, error) {
	data, err := readStoreBytes(s.Path())
	if err != nil || data == nil {
		return nil, err
	}
	return s.decode(data)
}

// decode parses the session file's contents and checks that they are
// this session's.
func (s *Store) decode(data []byte) (*storeFile, error) {
	sf, err := decodeStoreFile(s.Path(), data)
	if err != nil {
		return nil, err
	}
	if sf.Session != s.session {
		return nil, &CorruptStoreError{Path: s.Path(), Err: fmt.Errorf("it holds session %q", sf.Session)}
	}
	return sf, nil
}

// readStoreFile loads and checks one session file; nil, nil if it does
// not exist.
func readStoreFile(path string) (*storeFile, error) {
	data, err := readStoreBytes(path)
	if err != nil || data == nil {
		return nil, err
	}
	return decodeStoreFile(path, data)
}

// readStoreBytes reads one session file after checking it is a private
// regular file; nil, nil if it does not exist.
func readStoreBytes(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session store: %w", openError("session file", path, err))
	}
	defer f.Close()
	if err := checkRegularPrivate("session file", f); err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxStoreSize+1))
	if err != nil {
		return nil, fmt.Errorf("session store: read %s: %w", path, err)
	}
	if len(data) > maxStoreSize {
		return nil, &CorruptStoreError{Path: path, Err: fmt.Errorf("larger than %d bytes", maxStoreSize)}
	}
	if data == nil {
		data = []byte{} // exists, but empty: corrupt, not missing
	}
	return data, nil
}

func decodeStoreFile(path string, data []byte) (*storeFile, error) {
	var sf storeFile
	if err := json.Unmarshal(data, &sf); err != nil {
		return nil, &CorruptStoreError{Path: path, Err: err}
	}
	if sf.Session == "" {
		return nil, &CorruptStoreError{Path: path, Err: errors.New("no session id")}
	}
	return &sf, nil
}

// write replaces the session file atomically: temp file, fsync, rename,
// fsync of the directory so the rename itself survives a crash.
func (s *Store) write(sf *storeFile) error {
	// Compact, not indented: Has decodes the whole file on every granted
	// lookup, and whitespace is most of what indenting adds.
	data, err := json.Marshal(sf)
	if err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	data = append(data, '\n')
	if err := atomicfile.Replace(s.Path(), data, atomicfile.Options{Perm: 0o600, Durable: true}); err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	return nil
}

// ListSessions lists the sessions stored in dir, oldest first. Files that
// cannot be read or trusted are skipped and reported together in the
// error, alongside every session that could be listed. A missing dir has
// no sessions.
func ListSessions(dir string) ([]SessionInfo, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	var (
		infos []SessionInfo
		errs  []error
	)
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.Contains(name, ".tmp-") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		sf, err := readStoreFile(path)
		switch {
		case err != nil:
			errs = append(errs, err)
			continue
		case sf == nil: // removed since ReadDir
			continue
		case sessionFileName(sf.Session) != name:
			// A session's grants are only ever looked up under its own
			// name; a file elsewhere was copied or renamed by hand.
			errs = append(errs, &CorruptStoreError{Path: path, Err: fmt.Errorf("it holds session %q, which is not stored under this name", sf.Session)})
			continue
		}
		infos = append(infos, SessionInfo{ID: sf.Session, Created: sf.Created, Expires: sf.Expires, Grants: len(sf.Grants)})
	}
	slices.SortFunc(infos, func(a, b SessionInfo) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return infos, errors.Join(errs...)
}

// sessionFileName maps a session id, which may hold any bytes, to a file
// name: a readable prefix of the id's letters, digits and underscores
// (everything else becomes '_', so no '/', '.', '..' or NUL survives),
// then '-' and 16 hex digits of the id's sha256 so distinct ids stay
// distinct. Read also checks the id stored inside the file, so even a
// hash collision grants nothing across sessions.
func sessionFileName(id string) string {
	const maxPrefix = 32
	var b strings.Builder
	for _, r := range id {
		if b.Len() == maxPrefix {
			break
		}
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(id))
	return b.String() + "-" + hex.EncodeToString(sum[:8])
}

// DefaultStateDir is $XDG_STATE_HOME/guardrun, else
// ~/.local/state/guardrun; empty when neither is known (no absolute
// XDG_STATE_HOME and no absolute home directory).
func DefaultStateDir() string {
	return defaultStateDir(os.Getenv, os.UserHomeDir)
}

// DefaultStoreDir is $XDG_RUNTIME_DIR/guardrun/sessions when
// XDG_RUNTIME_DIR names a private directory of the current user (it lives
// on a tmpfs that is emptied at logout and reboot, as sudo's timestamps
// are), else the sessions directory under DefaultStateDir; empty when
// neither is known.
func DefaultStoreDir() string {
	return defaultStoreDir(os.Getenv, os.UserHomeDir)
}

func defaultStoreDir(getenv func(string) string, home func() (string, error)) string {
	if rt := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		if fi, err := os.Stat(rt); err == nil && fi.IsDir() && checkPrivate("runtime directory", rt, fi) == nil {
			return filepath.Join(rt, "guardrun", "sessions")
		}
	}
	d := defaultStateDir(getenv, home)
	if d == "" {
		return ""
	}
	return filepath.Join(d, "sessions")
}

func defaultStateDir(getenv func(string) string, home func() (string, error)) string {
	// The XDG base directory spec says relative paths are invalid and must
	// be ignored.
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "guardrun")
	}
	h, err := home()
	if err != nil || !filepath.IsAbs(h) {
		return ""
	}
	return filepath.Join(h, ".local", "state", "guardrun")
}

// SessionID picks the session: explicit (the supervisor's or --session),
// else $GUARDRUN_SESSION, else the controlling terminal's session, keyed
// like sudo's tty tickets so that a new login on the same terminal is a
// new session. ok is false when there is none: no terminal and nothing
// set. getenv nil means os.Getenv.
func SessionID(explicit string, getenv func(string) string) (id string, ok bool) {
	if explicit != "" {
		return explicit, true
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	if id := getenv("GUARDRUN_SESSION"); id != "" {
		return id, true
	}
	return ttySession()
}

// procStat holds the fields of /proc/<pid>/stat (proc(5)) that identify a
// terminal session.
type procStat struct {
	PID       int
	Session   int    // field 6
	TTY       int    // field 7, tty_nr; 0 when there is no controlling terminal
	StartTime uint64 // field 22, clock ticks after boot
}

// parseProcStat parses the contents of /proc/<pid>/stat. The command name
// (field 2) is in parentheses and may itself hold spaces, parentheses and
// newlines, since a process names itself; the fields after it never hold
// ')', so the name ends at the last ')'.
func parseProcStat(b []byte) (procStat, error) {
	s := string(b)
	open := strings.IndexByte(s, '(')
	end := strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procStat{}, errors.New("proc stat: no command name in parentheses")
	}
	var st procStat
	var err error
	if st.PID, err = strconv.Atoi(strings.TrimSpace(s[:open])); err != nil {
		return procStat{}, fmt.Errorf("proc stat: pid: %w", err)
	}
	// fields[0] is field 3 (state), so field N is fields[N-3].
	fields := strings.Fields(s[end+1:])
	if len(fields) < 22-3+1 {
		return procStat{}, fmt.Errorf("proc stat: %d fields after the command name, want at least %d", len(fields), 22-3+1)
	}
	if st.Session, err = strconv.Atoi(fields[6-3]); err != nil {
		return procStat{}, fmt.Errorf("proc stat: session: %w", err)
	}
	if st.TTY, err = strconv.Atoi(fields[7-3]); err != nil {
		return procStat{}, fmt.Errorf("proc stat: tty_nr: %w", err)
	}
	if st.StartTime, err = strconv.ParseUint(fields[22-3], 10, 64); err != nil {
		return procStat{}, fmt.Errorf("proc stat: starttime: %w", err)
	}
	return st, nil
}

// ttyKey builds the session id of a terminal session from this process's
// stat and its session leader's. ok is false without a controlling
// terminal, or when the leader is gone or is not the leader of this
// session (its pid was reused), because then nothing tells this login
// apart from an earlier one. boot, when known, keeps a session of an
// earlier boot, which may reuse the same numbers, from matching.
func ttyKey(self, leader procStat, boot string) (string, bool) {
	if self.TTY == 0 || self.Session <= 0 {
		return "", false
	}
	if leader.PID != self.Session || leader.Session != self.Session || leader.TTY != self.TTY {
		return "", false
	}
	key := fmt.Sprintf("tty:%d:%d:%d", self.TTY, self.Session, leader.StartTime)
	if boot != "" {
		key += ":" + boot
	}
	return key, true
}
