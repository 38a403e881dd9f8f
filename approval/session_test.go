package approval

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

func TestCommandKeyTellsPayloadsApart(t *testing.T) {
	type payload struct {
		argv [][]string
		rule []string
	}
	tests := []struct {
		name string
		a, b payload
	}{
		{"a second command", payload{[][]string{{"ls"}}, []string{""}},
			payload{[][]string{{"ls"}, {"rm", "x"}}, []string{"", "rm"}}},
		{"a redirection", payload{[][]string{{"cmd", "ls"}}, []string{""}},
			payload{[][]string{{"cmd", "ls"}, {"file", "write", "cwd", "f"}}, []string{"", ""}}},
		{"argument boundaries", payload{[][]string{{"rm", "a b"}}, []string{"rm"}},
			payload{[][]string{{"rm", "a", "b"}}, []string{"rm"}}},
		{"command boundaries", payload{[][]string{{"ls"}, {"rm"}}, []string{"", ""}},
			payload{[][]string{{"ls", "rm"}}, []string{""}}},
		{"an empty argument", payload{[][]string{{"rm"}}, []string{"rm"}},
			payload{[][]string{{"rm", ""}}, []string{"rm"}}},
		{"invalid UTF-8 bytes", payload{[][]string{{"rm", "\xff"}}, []string{"rm"}},
			payload{[][]string{{"rm", "\xfe"}}, []string{"rm"}}},
		{"invalid UTF-8 and U+FFFD", payload{[][]string{{"rm", "\xff"}}, []string{"rm"}},
			payload{[][]string{{"rm", "\ufffd"}}, []string{"rm"}}},
		{"the rule", payload{[][]string{{"git", "push"}}, []string{"git-push"}},
			payload{[][]string{{"git", "push"}}, []string{"git"}}},
		{"rule moved to another part", payload{[][]string{{"a"}, {"b"}}, []string{"r", ""}},
			payload{[][]string{{"a"}, {"b"}}, []string{"", "r"}}},
		{"argv text shifted into the rule", payload{[][]string{{"rm", "x"}}, []string{""}},
			payload{[][]string{{"rm"}}, []string{"x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := CommandKey(tt.a.argv, tt.a.rule), CommandKey(tt.b.argv, tt.b.rule)
			if a == b {
				t.Errorf("%v and %v share key %s", tt.a, tt.b, a)
			}
		})
	}
}

func TestKeysAreStableHexSHA256(t *testing.T) {
	// Golden values: a change here makes every stored grant ask again,
	// which must be deliberate.
	tests := []struct {
		name, got, want string
	}{
		{"command", CommandKey([][]string{{"cmd", "git", "push"}}, []string{"git-push"}),
			"6d2984c07947b4549914684f1a39e54d1ad45be2a9ce41f2a6c2f070e841e205"},
		{"file", FileKey("notes", "write", "notes/x.txt"),
			"54e913b8f03424fb3b8fd15ed9c9db66183c1bb0963757625f9c80387bd74a6a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(tt.got) {
				t.Fatalf("key %q is not hex sha256", tt.got)
			}
			if diff := cmp.Diff(tt.got, tt.want); diff != "" {
				t.Errorf("key changed (-got +want):\n%s", diff)
			}
		})
	}
	if FileKey("a", "write", "b") == CommandKey([][]string{{"a", "write", "b"}}, nil) {
		t.Error("a file key equals a command key of the same strings")
	}
	if FileKey("z", "write", "a/b") == FileKey("z", "write/a", "b") {
		t.Error("file key fields are not separated")
	}
}

func TestSessionFileNameIsSafeAndDistinct(t *testing.T) {
	ids := []string{
		"tty:34816:1234:5678",
		"../../etc/passwd",
		"..",
		".",
		"/",
		"a/b",
		"a_b",
		"a\x00b",
		"-rf",
		".hidden",
		"ünïcödé",
		"\xff\xfe",
		strings.Repeat("x", 300),
		strings.Repeat("x", 301),
	}
	safe := regexp.MustCompile(`^[A-Za-z0-9_]{0,32}-[0-9a-f]{16}$`)
	seen := map[string]string{}
	for _, id := range ids {
		name := sessionFileName(id)
		if !safe.MatchString(name) {
			t.Errorf("sessionFileName(%q) = %q, not a safe file name", id, name)
		}
		if prev, ok := seen[name]; ok {
			t.Errorf("sessionFileName(%q) = sessionFileName(%q) = %q", id, prev, name)
		}
		seen[name] = id
	}
	if got, want := sessionFileName("tty:34816:1234:5678"), "tty_34816_1234_5678-"; !strings.HasPrefix(got, want) {
		t.Errorf("sessionFileName keeps no readable prefix: %q, want prefix %q", got, want)
	}
}

// fakeClock is a settable time source for a Store.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

func openTestStore(t *testing.T, dir, session string, ttl time.Duration, clock *fakeClock) *Store {
	t.Helper()
	s, err := OpenStore(dir, session, ttl)
	if err != nil {
		t.Fatal(err)
	}
	if clock != nil {
		s.now = clock.now
	}
	return s
}

func keysOf(gs []Grant) []string {
	var ks []string
	for _, g := range gs {
		ks = append(ks, g.Key)
	}
	return ks
}

func TestStoreRemembersGrantsUntilRevoked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	clock := &fakeClock{t: t0}
	s := openTestStore(t, dir, "s1", 0, clock)
	kls := CommandKey([][]string{{"cmd", "ls"}}, []string{"ls"})
	kw := FileKey("notes", "write", "notes/x.txt")

	if _, ok, err := s.Has(kls); ok || err != nil {
		t.Fatalf("Has before any grant = %v, %v", ok, err)
	}
	if fileExists(s.Path()) {
		t.Errorf("Has created the store file")
	}
	for _, g := range []Grant{
		{Key: kls, Kind: "command", Summary: "ls", Rule: "ls"},
		{Key: kw, Kind: "file", Summary: "write notes/x.txt", Created: t0.Add(-time.Minute)},
	} {
		if err := s.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	g, ok, err := s.Has(kls)
	if !ok || err != nil {
		t.Fatalf("Has after Add = %v, %v", ok, err)
	}
	if diff := cmp.Diff(g, Grant{Key: kls, Kind: "command", Summary: "ls", Rule: "ls", Created: t0}); diff != "" {
		t.Errorf("Has grant (-got +want):\n%s", diff)
	}
	if _, ok, _ := s.Has(""); ok {
		t.Errorf("the empty key is granted")
	}
	// A second process sees the same grants.
	other := openTestStore(t, dir, "s1", 0, clock)
	list, err := other.List()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(keysOf(list), []string{kls, kw}); diff != "" {
		t.Errorf("List (-got +want):\n%s", diff)
	}
	// Another session does not.
	if _, ok, _ := openTestStore(t, dir, "s2", 0, clock).Has(kls); ok {
		t.Errorf("a grant of session s1 is visible in s2")
	}
	// Adding the same key again replaces it rather than duplicating it,
	// and makes it the newest.
	if err := s.Add(Grant{Key: kls, Kind: "command", Summary: "ls again"}); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(); len(list) != 2 || list[1].Summary != "ls again" {
		t.Errorf("re-adding a key: List = %+v", list)
	}

	if ok, err := s.Revoke(kls); !ok || err != nil {
		t.Errorf("Revoke(ls) = %v, %v", ok, err)
	}
	if ok, err := s.Revoke(kls); ok || err != nil {
		t.Errorf("Revoke(ls) twice = %v, %v", ok, err)
	}
	if _, ok, _ := s.Has(kls); ok {
		t.Errorf("revoked grant still held")
	}
	if _, ok, _ := s.Has(kw); !ok {
		t.Errorf("revoking one grant lost another")
	}
	if ok, err := s.Revoke("all"); !ok || err != nil {
		t.Errorf("Revoke(all) = %v, %v", ok, err)
	}
	if list, _ := s.List(); len(list) != 0 {
		t.Errorf("List after Revoke(all) = %+v", list)
	}
	if ok, err := s.Revoke(""); ok || err != nil {
		t.Errorf("Revoke of an empty session = %v, %v", ok, err)
	}
}

func TestStoreForgetsTheOldestGrantsWhenFull(t *testing.T) {
	s := openTestStore(t, t.TempDir(), "s", 0, nil)
	for i := range maxGrants + 2 {
		if err := s.Add(Grant{Key: strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != maxGrants || list[0].Key != "2" || list[len(list)-1].Key != strconv.Itoa(maxGrants+1) {
		t.Errorf("full store holds %d grants from %s to %s, want %d from 2 to %d",
			len(list), list[0].Key, list[len(list)-1].Key, maxGrants, maxGrants+1)
	}
}

func TestStoreCreatesPrivateFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "guardrun", "sessions")
	s := openTestStore(t, dir, "s", 0, nil)
	if err := s.Add(Grant{Key: "k", Kind: "command"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want fs.FileMode
	}{{dir, fs.ModeDir | 0o700}, {s.Path(), 0o600}, {s.lockPath(), 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != c.want {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode(), c.want)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	var sf storeFile
	data, _ := os.ReadFile(s.Path())
	if err := json.Unmarshal(data, &sf); err != nil {
		t.Fatalf("store file is not JSON: %v", err)
	}
	if sf.Session != "s" || len(sf.Grants) != 1 || !sf.Expires.Equal(sf.Created.Add(DefaultTTL)) {
		t.Errorf("store file = %+v, want session s, 1 grant, expiring %v after creation", sf, DefaultTTL)
	}
}

func TestStoreExpiry(t *testing.T) {
	const key = "k"
	tests := []struct {
		name      string
		ttl       time.Duration // when granting
		reopenTTL time.Duration // when asking
		at        time.Duration // after the grant
		want      bool
	}{
		{"within the ttl", time.Hour, time.Hour, 59 * time.Minute, true},
		{"at the ttl", time.Hour, time.Hour, time.Hour, false},
		{"zero ttl means 8h", 0, 0, 7*time.Hour + 59*time.Minute, true},
		{"zero ttl ends at 8h", 0, 0, 8 * time.Hour, false},
		{"a shortened ttl applies at once", 8 * time.Hour, time.Hour, 2 * time.Hour, false},
		{"a lengthened ttl does not stretch a session", time.Hour, 8 * time.Hour, 2 * time.Hour, false},
		{"a small clock step back is tolerated", time.Hour, time.Hour, -30 * time.Second, true},
		{"a clock stepped far back ends the session", time.Hour, time.Hour, -time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			clock := &fakeClock{t: t0}
			if err := openTestStore(t, dir, "s", tt.ttl, clock).Add(Grant{Key: key}); err != nil {
				t.Fatal(err)
			}
			clock.set(t0.Add(tt.at))
			s := openTestStore(t, dir, "s", tt.reopenTTL, clock)
			_, got, err := s.Has(key)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Has = %v, want %v", got, tt.want)
			}
			if list, _ := s.List(); (len(list) == 1) != tt.want {
				t.Errorf("List = %+v, want granted %v", list, tt.want)
			}
			if !tt.want && fileExists(s.Path()) {
				t.Errorf("expired store file was not removed")
			}
		})
	}
}

func TestStoreAddAfterExpiryStartsANewSession(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: t0}
	s := openTestStore(t, dir, "s", time.Hour, clock)
	if err := s.Add(Grant{Key: "old"}); err != nil {
		t.Fatal(err)
	}
	clock.set(t0.Add(2 * time.Hour))
	if err := s.Add(Grant{Key: "new"}); err != nil {
		t.Fatal(err)
	}
	list, _ := s.List()
	if diff := cmp.Diff(keysOf(list), []string{"new"}); diff != "" {
		t.Errorf("grants (-got +want):\n%s", diff)
	}
	clock.set(t0.Add(2*time.Hour + 59*time.Minute))
	if _, ok, _ := s.Has("new"); !ok {
		t.Errorf("the new session expired with the old one")
	}
}

func TestStoreUntrustworthyFileGrantsNothing(t *testing.T) {
	tests := []struct {
		name     string
		contents func(s *Store) string
	}{
		{"not JSON", func(*Store) string { return `{"session":"s","grants":[{"key":"k"` }},
		{"no session id", func(*Store) string {
			return fmt.Sprintf(`{"created":%q,"expires":%q,"grants":[{"key":"k"}]}`, t0.Format(time.RFC3339), t0.Add(time.Hour).Format(time.RFC3339))
		}},
		{"another session's grants", func(*Store) string {
			return fmt.Sprintf(`{"session":"other","created":%q,"expires":%q,"grants":[{"key":"k"}]}`, t0.Format(time.RFC3339), t0.Add(time.Hour).Format(time.RFC3339))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{t: t0}
			s := openTestStore(t, t.TempDir(), "s", 0, clock)
			mustWrite(t, s.Path(), tt.contents(s), 0o600)
			_, ok, err := s.Has("k")
			var corrupt *CorruptStoreError
			if ok || !errors.As(err, &corrupt) {
				t.Fatalf("Has = %v, %v; want false and a *CorruptStoreError", ok, err)
			}
			if _, err := s.List(); !errors.As(err, &corrupt) {
				t.Errorf("List error = %v, want a *CorruptStoreError", err)
			}
			if err := s.Add(Grant{Key: "new"}); err != nil {
				t.Fatalf("Add over a corrupt store: %v", err)
			}
			list, err := s.List()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(keysOf(list), []string{"new"}); diff != "" {
				t.Errorf("Add did not replace the corrupt store (-got +want):\n%s", diff)
			}
		})
	}
}

func TestStoreRevokeAllRemovesACorruptStore(t *testing.T) {
	s := openTestStore(t, t.TempDir(), "s", 0, nil)
	mustWrite(t, s.Path(), "garbage", 0o600)
	if ok, err := s.Revoke("k"); ok || err == nil {
		t.Errorf("Revoke(k) of a corrupt store = %v, %v; want false and an error", ok, err)
	}
	if ok, err := s.Revoke("all"); !ok || err != nil {
		t.Errorf("Revoke(all) of a corrupt store = %v, %v", ok, err)
	}
	if fileExists(s.Path()) {
		t.Errorf("corrupt store file still there")
	}
}

func TestStoreRefusesUnsafeFiles(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, s *Store)
		wantErr string
	}{
		{"symlinked store file", func(t *testing.T, s *Store) {
			target := filepath.Join(t.TempDir(), "planted.json")
			mustWrite(t, target, `{"session":"s","created":"2999-01-01T00:00:00Z","expires":"2999-01-02T00:00:00Z","grants":[{"key":"k"}]}`, 0o600)
			mustSymlink(t, target, s.Path())
		}, "is a symlink"},
		{"group-writable store file", func(t *testing.T, s *Store) {
			mustWrite(t, s.Path(), `{}`, 0o660)
		}, "writable by group or others"},
		{"store file of another user", func(t *testing.T, s *Store) {
			mustWrite(t, s.Path(), `{}`, 0o600)
			chownOrSkip(t, s.Path())
		}, "not by you"},
		{"symlinked lock file", func(t *testing.T, s *Store) {
			mustSymlink(t, filepath.Join(t.TempDir(), "elsewhere"), s.lockPath())
		}, "is a symlink"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTestStore(t, t.TempDir(), "s", 0, nil)
			tt.setup(t, s)
			if _, ok, err := s.Has("k"); ok {
				t.Errorf("Has = true through an unsafe file")
			} else if !strings.Contains(tt.name, "lock") && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Has error = %v, want one containing %q", err, tt.wantErr)
			}
			if err := s.Add(Grant{Key: "k2"}); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Add error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestOpenStoreRefusesUnsafeDirectories(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		wantErr string
	}{
		{"group-writable", func(t *testing.T, dir string) { mkdirMode(t, dir, 0o770) }, "writable by group or others"},
		{"world-writable", func(t *testing.T, dir string) { mkdirMode(t, dir, 0o777) }, "writable by group or others"},
		{"world-writable and sticky", func(t *testing.T, dir string) { mkdirMode(t, dir, 0o1777) }, "writable by group or others"},
		{"another user's", func(t *testing.T, dir string) {
			mkdirMode(t, dir, 0o700)
			chownOrSkip(t, dir)
		}, "not by you"},
		{"a file", func(t *testing.T, dir string) { mustWrite(t, dir, "", 0o600) }, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sessions")
			tt.setup(t, dir)
			_, err := OpenStore(dir, "s", 0)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("OpenStore error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	for _, c := range []struct{ dir, session string }{{"", "s"}, {t.TempDir(), ""}} {
		if _, err := OpenStore(c.dir, c.session, 0); err == nil {
			t.Errorf("OpenStore(%q, %q) succeeded", c.dir, c.session)
		}
	}
}

func mkdirMode(t *testing.T, dir string, mode fs.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	perm := mode.Perm()
	if mode&0o1000 != 0 {
		perm |= fs.ModeSticky
	}
	if err := os.Chmod(dir, perm); err != nil {
		t.Fatal(err)
	}
}

func addWorker(s *Store, who string, n int) error {
	for j := range n {
		name := fmt.Sprintf("%s-%d", who, j)
		if err := s.Add(Grant{Key: FileKey("z", "write", name), Kind: "file", Summary: name}); err != nil {
			return err
		}
	}
	return nil
}

func TestStoreConcurrentAddsFromGoroutinesAndProcessesLoseNothing(t *testing.T) {
	const goroutines, children, perWorker = 50, 10, 2
	dir := t.TempDir()
	release, wait := startChildren(t, "store-add", children,
		"TEST_DIR="+dir, "TEST_SESSION=race", "TEST_N="+strconv.Itoa(perWorker))
	s := openTestStore(t, dir, "race", 0, nil)
	start := make(chan struct{})
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			<-start
			errs <- addWorker(s, fmt.Sprintf("g%d", i), perWorker)
		})
	}
	release()
	close(start)
	wg.Wait()
	wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	var sf storeFile
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sf); err != nil {
		t.Fatalf("store file is not valid JSON: %v", err)
	}
	var got, want []string
	for _, g := range sf.Grants {
		got = append(got, g.Summary)
	}
	for i := range goroutines {
		for j := range perWorker {
			want = append(want, fmt.Sprintf("g%d-%d", i, j))
		}
	}
	for i := range children {
		for j := range perWorker {
			want = append(want, fmt.Sprintf("c%d-%d", i, j))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("grants after concurrent adds (-got +want):\n%s", diff)
	}
}

func TestListSessionsSkipsAndReportsBadFiles(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: t0}
	for i, id := range []string{"b", "a"} {
		clock.set(t0.Add(time.Duration(i) * time.Minute))
		s := openTestStore(t, dir, id, time.Hour, clock)
		for j := 0; j <= i; j++ {
			if err := s.Add(Grant{Key: fmt.Sprint(j)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	corrupt := filepath.Join(dir, sessionFileName("c")+".json")
	mustWrite(t, corrupt, "{", 0o600)
	// A copy of a's grants under another session's name.
	data, _ := os.ReadFile(filepath.Join(dir, sessionFileName("a")+".json"))
	misplaced := filepath.Join(dir, sessionFileName("d")+".json")
	mustWrite(t, misplaced, string(data), 0o600)
	mustWrite(t, filepath.Join(dir, "notes.txt"), "ignored", 0o600)

	infos, err := ListSessions(dir)
	want := []SessionInfo{
		{ID: "b", Created: t0, Expires: t0.Add(time.Hour), Grants: 1},
		{ID: "a", Created: t0.Add(time.Minute), Expires: t0.Add(time.Minute + time.Hour), Grants: 2},
	}
	if diff := cmp.Diff(infos, want); diff != "" {
		t.Errorf("ListSessions (-got +want):\n%s", diff)
	}
	if err == nil || !strings.Contains(err.Error(), corrupt) || !strings.Contains(err.Error(), misplaced) {
		t.Errorf("error = %v, want it to name %s and %s", err, corrupt, misplaced)
	}
	if infos, err := ListSessions(filepath.Join(dir, "none")); infos != nil || err != nil {
		t.Errorf("ListSessions of a missing dir = %v, %v", infos, err)
	}
}

func TestDefaultDirs(t *testing.T) {
	private := t.TempDir()
	shared := filepath.Join(t.TempDir(), "shared")
	mkdirMode(t, shared, 0o777)
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("$HOME is not defined") }
	tests := []struct {
		name      string
		env       map[string]string
		home      func() (string, error)
		wantState string
		wantStore string
	}{
		{"home only", nil, home, "/home/u/.local/state/guardrun", "/home/u/.local/state/guardrun/sessions"},
		{"xdg state home", map[string]string{"XDG_STATE_HOME": "/st"}, home, "/st/guardrun", "/st/guardrun/sessions"},
		{"relative xdg state home is ignored", map[string]string{"XDG_STATE_HOME": "st"}, home,
			"/home/u/.local/state/guardrun", "/home/u/.local/state/guardrun/sessions"},
		{"private runtime dir", map[string]string{"XDG_RUNTIME_DIR": private}, home,
			"/home/u/.local/state/guardrun", private + "/guardrun/sessions"},
		{"shared runtime dir is not used", map[string]string{"XDG_RUNTIME_DIR": shared}, home,
			"/home/u/.local/state/guardrun", "/home/u/.local/state/guardrun/sessions"},
		{"missing runtime dir is not used", map[string]string{"XDG_RUNTIME_DIR": private + "/none"}, home,
			"/home/u/.local/state/guardrun", "/home/u/.local/state/guardrun/sessions"},
		{"no home", nil, noHome, "", ""},
		{"no home but a runtime dir", map[string]string{"XDG_RUNTIME_DIR": private}, noHome, "", private + "/guardrun/sessions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			got := []string{defaultStateDir(getenv, tt.home), defaultStoreDir(getenv, tt.home)}
			if diff := cmp.Diff(got, []string{tt.wantState, tt.wantStore}); diff != "" {
				t.Errorf("state, store dirs (-got +want):\n%s", diff)
			}
		})
	}
}

func TestSessionIDPrecedence(t *testing.T) {
	tests := []struct {
		name     string
		explicit string
		env      string
		want     string
	}{
		{"explicit wins", "sup-1", "env-1", "sup-1"},
		{"environment next", "", "env-1", "env-1"},
		{"ids are taken verbatim", "", "../x y", "../x y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "GUARDRUN_SESSION" {
					return tt.env
				}
				return ""
			}
			id, ok := SessionID(tt.explicit, getenv)
			if diff := cmp.Diff(id, tt.want); diff != "" || !ok {
				t.Errorf("SessionID ok=%v (-got +want):\n%s", ok, diff)
			}
		})
	}
}

// statLine builds a /proc/<pid>/stat line as the kernel formats it.
func statLine(pid int, comm string, session, tty int, start uint64) string {
	f := make([]string, 52-2)
	for i := range f {
		f[i] = "0"
	}
	f[0] = "S"
	f[4-3] = "1"
	f[6-3] = strconv.Itoa(session)
	f[7-3] = strconv.Itoa(tty)
	f[22-3] = strconv.FormatUint(start, 10)
	return fmt.Sprintf("%d (%s) %s\n", pid, comm, strings.Join(f, " "))
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    procStat
		wantErr bool
	}{
		{"plain", statLine(100, "bash", 90, 34816, 12345), procStat{100, 90, 34816, 12345}, false},
		{"spaces in the name", statLine(100, "my prog 1 2 3", 90, 34816, 1), procStat{100, 90, 34816, 1}, false},
		{"closing parenthesis and fake fields", statLine(100, "x) R 1 2 3 4 5", 90, 34817, 2), procStat{100, 90, 34817, 2}, false},
		{"only parentheses", statLine(100, ")()(", 90, 0, 3), procStat{100, 90, 0, 3}, false},
		{"empty name", statLine(100, "", 90, 1, 4), procStat{100, 90, 1, 4}, false},
		{"newline in the name", statLine(100, "a\n) 7 7", 90, 1, 5), procStat{100, 90, 1, 5}, false},
		{"negative tty_nr", statLine(100, "x", 90, -1, 6), procStat{100, 90, -1, 6}, false},
		{"largest start time", statLine(1, "init", 1, 0, 1<<64-1), procStat{1, 1, 0, 1<<64 - 1}, false},
		{"truncated", "100 (bash) S 1 100 90 34816", procStat{}, true},
		{"no parentheses", "100 bash S 1 100 90 34816 0 0 0 0 0 0 0 0 0 0 0 0 0 0 12345", procStat{}, true},
		{"no pid", "(bash) " + strings.SplitN(statLine(1, "x", 1, 1, 1), ") ", 2)[1], procStat{}, true},
		{"non-numeric session", strings.Replace(statLine(100, "x", 90, 1, 1), " 90 ", " 9a ", 1), procStat{}, true},
		{"empty", "", procStat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tt.line))
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestTTYKey(t *testing.T) {
	self := procStat{PID: 200, Session: 90, TTY: 34816, StartTime: 999}
	leader := procStat{PID: 90, Session: 90, TTY: 34816, StartTime: 555}
	tests := []struct {
		name         string
		self, leader procStat
		boot         string
		want         string
		wantOK       bool
	}{
		{"terminal session", self, leader, "", "tty:34816:90:555", true},
		{"with boot id", self, leader, "0123abcd", "tty:34816:90:555:0123abcd", true},
		{"no controlling terminal", procStat{PID: 200, Session: 90}, leader, "", "", false},
		{"leader's pid reused by another process", self, procStat{PID: 90, Session: 77, TTY: 34816, StartTime: 9}, "", "", false},
		{"leader on another terminal", self, procStat{PID: 90, Session: 90, TTY: 1, StartTime: 9}, "", "", false},
		{"leader stat of the wrong process", self, procStat{PID: 91, Session: 90, TTY: 34816}, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ttyKey(tt.self, tt.leader, tt.boot)
			if diff := cmp.Diff(got, tt.want); diff != "" || ok != tt.wantOK {
				t.Errorf("ok = %v, want %v; key (-got +want):\n%s", ok, tt.wantOK, diff)
			}
		})
	}
}

// runSessionIDChild runs the session-id child with no $GUARDRUN_SESSION
// and returns its pid, ok and id.
func runSessionIDChild(t *testing.T, withTTY bool) (pid int, ok bool, id string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GUARDRUN_SESSION=")
	}), childEnv+"=session-id")
	var out *bufio.Reader
	if withTTY {
		f, err := pty.Start(cmd) // new session with the pty as its terminal
		if err != nil {
			testenv.Missing(t, "no pty: %v", err)
		}
		defer f.Close()
		out = bufio.NewReader(f)
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // new session, no terminal
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		out = bufio.NewReader(stdout)
	}
	line, err := out.ReadString('\n')
	cmd.Wait()
	if err != nil {
		t.Fatalf("reading child: %v (%q)", err, line)
	}
	if _, err := fmt.Sscanf(line, "%d %t %s", &pid, &ok, &id); err != nil && ok {
		t.Fatalf("child said %q: %v", line, err)
	}
	return pid, ok, id
}

func TestSessionIDFromTheControllingTerminal(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("terminal sessions are keyed on Linux only")
	}
	pid1, ok, id1 := runSessionIDChild(t, true)
	if !ok {
		t.Fatalf("no session found on a terminal")
	}
	// The child is its session's leader, so the key names its own pid.
	if !regexp.MustCompile(`^tty:[1-9][0-9]*:` + strconv.Itoa(pid1) + `:[0-9]+(:[0-9a-f]{32})?$`).MatchString(id1) {
		t.Errorf("session id %q is not tty:<tty_nr>:%d:<starttime>[:<boot id>]", id1, pid1)
	}
	_, ok, id2 := runSessionIDChild(t, true)
	if !ok || id2 == id1 {
		t.Errorf("a second terminal session got id %q (ok %v), the first %q", id2, ok, id1)
	}
	if _, ok, id := runSessionIDChild(t, false); ok {
		t.Errorf("a session without a terminal got id %q", id)
	}
}
