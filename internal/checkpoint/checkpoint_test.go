//go:build linux || darwin

package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree describes every entry below root, as a person comparing two
// trees would: a file's permissions and content hash, a link's target,
// a directory. .git is left out.
func tree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[rel] = "link -> " + l
		case fi.IsDir():
			out[rel] = "dir"
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			out[rel] = fmt.Sprintf("file %s %s", fi.Mode().Perm()|fi.Mode()&(fs.ModeSetgid|fs.ModeSetuid|fs.ModeSticky), hex.EncodeToString(h[:6]))
		default:
			out[rel] = "other " + fi.Mode().Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func write(t testing.TB, p, content string, perm fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// testLimits are the limits of a config that sets none
// (rules.DefaultCheckpoints).
func testLimits() Limits {
	return Limits{MaxFiles: 50_000, MaxBytes: 2 << 30, MaxFileBytes: 100 << 20, MaxStoreBytes: 4 << 30, Keep: 200}
}

// newStore is a store in the test's directory with the default limits
// (changed by edit).
func newStore(t testing.TB, edit func(*Limits)) *Store {
	t.Helper()
	if _, err := findGit(); err != nil {
		t.Skip(err)
	}
	l := testLimits()
	if edit != nil {
		edit(&l)
	}
	s, err := Open(filepath.Join(t.TempDir(), "state", "checkpoints"), l)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// project is a zone with a .gitignore, files of several permissions,
// links, and an ignored file.
func project(t testing.TB) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "w")
	write(t, filepath.Join(root, ".gitignore"), "*.o\nbuild/\n", 0o644)
	write(t, filepath.Join(root, "README"), "read me\n", 0o644)
	write(t, filepath.Join(root, "run.sh"), "#!/bin/sh\necho hi\n", 0o755)
	write(t, filepath.Join(root, "secret.txt"), "only mine\n", 0o600)
	write(t, filepath.Join(root, "shared.txt"), "group reads\n", 0o640)
	write(t, filepath.Join(root, "src", "main.c"), "int main(){return 0;}\r\n", 0o644)
	write(t, filepath.Join(root, "src", "deep", "x.txt"), "x\n", 0o644)
	write(t, filepath.Join(root, "setgid"), "g\n", 0o755|fs.ModeSetgid)
	write(t, filepath.Join(root, "main.o"), "ignored object\n", 0o644)
	write(t, filepath.Join(root, "build", "out"), "ignored build\n", 0o644)
	write(t, filepath.Join(root, "bin.dat"), "\x00\x01\x02binary\xff", 0o644)
	symlink(t, "README", filepath.Join(root, "link"))
	symlink(t, "/nonexistent/target", filepath.Join(root, "dangling"))
	// Attributes that would change stored bytes if git obeyed them.
	write(t, filepath.Join(root, ".gitattributes"), "* text=auto eol=lf\n*.c ident\n", 0o644)
	return root
}

func zoneOf(root string) []Zone { return []Zone{{Name: "w", Root: root}} }

func take(t testing.TB, s *Store, root, summary string) int {
	t.Helper()
	n, err := s.Take(context.Background(), zoneOf(root), Request{Run: summary, Summary: summary})
	if err != nil {
		t.Fatalf("checkpoint: %v", err)
	}
	return n
}

func undo(t testing.TB, s *Store, n int) int {
	t.Helper()
	p, err := s.Plan(context.Background(), n)
	if err != nil {
		t.Fatalf("plan undo %d: %v", n, err)
	}
	pre, err := s.Apply(context.Background(), p, Request{Summary: fmt.Sprintf("undo %d", n)})
	if err != nil {
		t.Fatalf("undo %d: %v", n, err)
	}
	return pre
}

// TestUndoRestoresEveryByteAndMode: whatever a command does to the
// zone's files (delete, rewrite, chmod, relink, replace a file by a
// directory and back, create), undo puts back every file's content and
// permissions and every link's target, removes what was created, and
// leaves ignored files as they are.
func TestUndoRestoresEveryByteAndMode(t *testing.T) {
	s := newStore(t, nil)
	root := project(t)
	before := tree(t, root)
	n := take(t, s, root, "the command")

	os.Remove(filepath.Join(root, "README"))
	write(t, filepath.Join(root, "run.sh"), "rm -rf /\n", 0o755)
	os.Chmod(filepath.Join(root, "secret.txt"), 0o644)
	os.Chmod(filepath.Join(root, "setgid"), 0o755) // the set-id bit gone
	os.Remove(filepath.Join(root, "link"))
	symlink(t, "/etc/passwd", filepath.Join(root, "link"))
	os.RemoveAll(filepath.Join(root, "src"))
	write(t, filepath.Join(root, "src"), "now a file\n", 0o644)
	os.Remove(filepath.Join(root, "shared.txt"))
	os.Mkdir(filepath.Join(root, "shared.txt"), 0o755)
	write(t, filepath.Join(root, "shared.txt", "inside"), "new\n", 0o644)
	write(t, filepath.Join(root, "new", "dir", "made.txt"), "created\n", 0o644)
	write(t, filepath.Join(root, "bin.dat"), "changed\x00", 0o644)
	write(t, filepath.Join(root, "main.o"), "rebuilt object\n", 0o644)
	ignoredAfter := tree(t, root)["main.o"]

	undo(t, s, n)
	want := before
	want["main.o"] = ignoredAfter // ignored: never touched
	if diff := cmp.Diff(tree(t, root), want); diff != "" {
		t.Errorf("after undo (-got +want):\n%s", diff)
	}
}

// TestUndoPastWhatCannotBeRecorded: a command that leaves in the zone
// what no checkpoint can hold (a repository of its own, a directory or
// a file git cannot read, a file beyond max_file_bytes) does not keep
// the undo from putting back the files it deleted and rewrote; what it
// made is left as it is, as ignored files are, and a file the target
// holds is put back over it.
func TestUndoPastWhatCannotBeRecorded(t *testing.T) {
	gitInit := func(t *testing.T, dir string) {
		if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
	}
	tests := []struct {
		name       string
		limits     func(*Limits)
		unreadable bool // the row needs a user that permissions stop
		trick      func(t *testing.T, root string)
		// left are the entries the undo leaves as the trick made them.
		left []string
	}{
		{name: "a repository made inside the zone", trick: func(t *testing.T, root string) {
			gitInit(t, filepath.Join(root, "sub"))
			write(t, filepath.Join(root, "sub", "f"), "in the new repository\n", 0o644)
		}, left: []string{"sub", "sub/f"}},
		{name: "a directory of the zone made a repository", trick: func(t *testing.T, root string) {
			write(t, filepath.Join(root, "src", "main.c"), "changed\n", 0o644)
			gitInit(t, filepath.Join(root, "src"))
		}},
		{name: "a file beyond max_file_bytes", limits: func(l *Limits) { l.MaxFileBytes = 1000 }, trick: func(t *testing.T, root string) {
			write(t, filepath.Join(root, "big.bin"), strings.Repeat("x", 2000), 0o644)
		}},
		{name: "a directory nobody can read", unreadable: true, trick: func(t *testing.T, root string) {
			write(t, filepath.Join(root, "locked", "f"), "x\n", 0o644)
			os.Chmod(filepath.Join(root, "locked"), 0)
			t.Cleanup(func() { os.Chmod(filepath.Join(root, "locked"), 0o755) })
		}, left: []string{"locked"}},
		{name: "a file nobody can read", unreadable: true, trick: func(t *testing.T, root string) {
			write(t, filepath.Join(root, "lockedf"), "x\n", 0)
		}, left: []string{"lockedf"}},
		{name: "a recorded file rewritten and made unreadable", unreadable: true, trick: func(t *testing.T, root string) {
			write(t, filepath.Join(root, "shared.txt"), "rewritten\n", 0)
		}},
		{name: "a .gitignore made unreadable", unreadable: true, trick: func(t *testing.T, root string) {
			os.Chmod(filepath.Join(root, ".gitignore"), 0)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.unreadable && os.Geteuid() == 0 {
				t.Skip("root reads every file")
			}
			s := newStore(t, tt.limits)
			root := project(t)
			before := tree(t, root)
			n := take(t, s, root, "the command")
			os.Remove(filepath.Join(root, "README"))
			write(t, filepath.Join(root, "run.sh"), "rm -rf /\n", 0o755)
			tt.trick(t, root)
			left := map[string]string{}
			for _, p := range tt.left {
				fi, err := os.Lstat(filepath.Join(root, p))
				if err != nil {
					t.Fatal(err)
				}
				left[p] = fi.Mode().String()
			}

			undo(t, s, n)
			for p, mode := range left {
				if fi, err := os.Lstat(filepath.Join(root, p)); err != nil || fi.Mode().String() != mode {
					t.Errorf("%s: %v; want it left as the command made it (%s)", p, err, mode)
				}
			}
			for _, p := range tt.left {
				os.Chmod(filepath.Join(root, p), 0o755)
				os.RemoveAll(filepath.Join(root, p))
			}
			os.RemoveAll(filepath.Join(root, "src", ".git"))
			if diff := cmp.Diff(tree(t, root), before); diff != "" {
				t.Errorf("after undo, what the command made left out (-got +want):\n%s", diff)
			}
		})
	}
}

// TestUndoLeavesIgnoredFiles: a command that empties, removes, relinks
// or hides a .gitignore makes the files it ignored look like files the
// command created; the undo puts the .gitignore back and leaves those
// files as they are, as it leaves every ignored file. A file the
// command did create is removed whatever its name.
func TestUndoLeavesIgnoredFiles(t *testing.T) {
	tests := []struct {
		name       string
		unreadable bool
		trick      func(t *testing.T, root string)
		// created are files the command made, which the undo removes.
		created []string
	}{
		{name: "the .gitignore emptied", trick: func(t *testing.T, root string) {
			write(t, filepath.Join(root, ".gitignore"), "", 0o644)
		}},
		{name: "the .gitignore removed", trick: func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, ".gitignore"))
		}},
		{name: "the .gitignore a link to an empty file", trick: func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, ".gitignore"))
			symlink(t, "/dev/null", filepath.Join(root, ".gitignore"))
		}},
		{name: "the .gitignore unreadable", unreadable: true, trick: func(t *testing.T, root string) {
			os.Chmod(filepath.Join(root, ".gitignore"), 0)
		}},
		{name: "a deeper .gitignore removed", trick: func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, "src", ".gitignore"))
		}},
		{name: "files made beside, one named like pathspec magic", trick: func(t *testing.T, root string) {
			write(t, filepath.Join(root, ".gitignore"), "", 0o644)
			write(t, filepath.Join(root, ":(glob)*"), "made\n", 0o644)
			write(t, filepath.Join(root, "build2", "x.o.txt"), "made\n", 0o644)
		}, created: []string{":(glob)*", "build2/x.o.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.unreadable && os.Geteuid() == 0 {
				t.Skip("root reads every file")
			}
			s := newStore(t, nil)
			root := project(t)
			write(t, filepath.Join(root, "src", ".gitignore"), "*.tmp\n", 0o644)
			write(t, filepath.Join(root, "src", "deep", "scratch.tmp"), "ignored below src\n", 0o644)
			write(t, filepath.Join(root, "build", "data", "db.sqlite"), "the person's data\n", 0o600)
			before := tree(t, root)
			n := take(t, s, root, "the command")
			os.Remove(filepath.Join(root, "README"))
			tt.trick(t, root)
			for _, p := range tt.created {
				if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
					t.Fatal(err)
				}
			}

			undo(t, s, n)
			if diff := cmp.Diff(tree(t, root), before); diff != "" {
				t.Errorf("after undo (-got +want):\n%s", diff)
			}
		})
	}
}

// TestUndoOfUndo: the undo itself was checkpointed first, so undoing
// it brings back what the command had done.
func TestUndoOfUndo(t *testing.T) {
	s := newStore(t, nil)
	root := project(t)
	n := take(t, s, root, "the command")
	write(t, filepath.Join(root, "README"), "rewritten\n", 0o600)
	write(t, filepath.Join(root, "added"), "new\n", 0o644)
	after := tree(t, root)
	pre := undo(t, s, n)
	if pre == n {
		t.Fatalf("the undo's checkpoint reused %d, the checkpoint it undid", n)
	}
	undo(t, s, pre)
	if diff := cmp.Diff(tree(t, root), after); diff != "" {
		t.Errorf("after undoing the undo (-got +want):\n%s", diff)
	}
}

// TestUnchangedZoneSharesCheckpoint: requests that run from the same
// state share its number; a change gives the next one a new number.
func TestUnchangedZoneSharesCheckpoint(t *testing.T) {
	s := newStore(t, nil)
	root := project(t)
	a := take(t, s, root, "ls")
	b := take(t, s, root, "cat README")
	os.Chmod(filepath.Join(root, "README"), 0o600) // permissions alone are a change
	c := take(t, s, root, "python3 gen.py")
	d := take(t, s, root, "ls again")
	if diff := cmp.Diff([]int{a, b, c, d}, []int{1, 1, 2, 2}); diff != "" {
		t.Errorf("numbers (-got +want):\n%s", diff)
	}
	cps, err := s.Checkpoints(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, c := range cps {
		var reqs []string
		for _, r := range c.Requests {
			reqs = append(reqs, r.Summary)
		}
		got = append(got, reqs)
	}
	if diff := cmp.Diff(got, [][]string{{"ls", "cat README"}, {"python3 gen.py", "ls again"}}); diff != "" {
		t.Errorf("requests per checkpoint (-got +want):\n%s", diff)
	}
}

// TestChangedAfter: what a request changed is the difference to the
// zone's next checkpoint, or to its files now for the newest.
func TestChangedAfter(t *testing.T) {
	s := newStore(t, nil)
	root := project(t)
	take(t, s, root, "first")
	os.Remove(filepath.Join(root, "README"))
	write(t, filepath.Join(root, "a"), "a\n", 0o644)
	write(t, filepath.Join(root, "b"), "b\n", 0o644)
	take(t, s, root, "second")
	os.Chmod(filepath.Join(root, "run.sh"), 0o700)
	write(t, filepath.Join(root, "main.o"), "ignored\n", 0o644)
	cps, err := s.Checkpoints(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []Counts
	for _, c := range cps {
		a, err := s.ChangedAfter(context.Background(), cps, c.Zones[0])
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, CountChanges(a.Changes))
	}
	want := []Counts{{Added: 2, Deleted: 1}, {Modified: 1}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("changes after each checkpoint (-got +want):\n%s", diff)
	}
}

// TestNotCheckpointable: each limit, and a repository inside the zone,
// is an *Error whose reason names it; nothing is recorded.
func TestNotCheckpointable(t *testing.T) {
	tests := []struct {
		name   string
		limits func(*Limits)
		setup  func(t *testing.T, root string)
		reason string
	}{
		{name: "too many files", limits: func(l *Limits) { l.MaxFiles = 5 }, reason: "more than checkpoints.max_files (5)"},
		{name: "a file too large", limits: func(l *Limits) { l.MaxFileBytes = 1000 }, setup: func(t *testing.T, root string) {
			write(t, filepath.Join(root, "big.bin"), strings.Repeat("x", 2000), 0o644)
		}, reason: "big.bin is 2.0 KiB, more than checkpoints.max_file_bytes (1000 bytes)"},
		{name: "too many bytes", limits: func(l *Limits) { l.MaxBytes = 100 }, reason: "more than checkpoints.max_bytes (100 bytes)"},
		{name: "store full", limits: func(l *Limits) { l.MaxStoreBytes = 50 }, reason: "checkpoint store is full"},
		{name: "nested repository", setup: func(t *testing.T, root string) {
			write(t, filepath.Join(root, "vendor", "lib", "x.go"), "package x\n", 0o644)
			if out, err := exec.Command("git", "init", "-q", filepath.Join(root, "vendor", "lib")).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
		}, reason: "vendor/lib is a git repository inside the zone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, tt.limits)
			root := project(t)
			if tt.setup != nil {
				tt.setup(t, root)
			}
			n, err := s.Take(context.Background(), zoneOf(root), Request{Summary: "x"})
			var ce *Error
			if !errors.As(err, &ce) || !strings.Contains(ce.Reason, tt.reason) {
				t.Fatalf("Take = %d, %v; want an *Error with %q", n, err, tt.reason)
			}
			if n != 0 {
				t.Errorf("Take recorded checkpoint %d", n)
			}
			if cps, _ := s.Checkpoints(nil); len(cps) != 0 {
				t.Errorf("the store lists %d checkpoints", len(cps))
			}
		})
	}
}

// TestIgnoredAfterChangeLeavesCheckpoint: a file a new .gitignore line
// ignores is no longer recorded, so an undo leaves it alone.
func TestIgnoredAfterChangeLeavesCheckpoint(t *testing.T) {
	s := newStore(t, nil)
	root := project(t)
	take(t, s, root, "first")
	write(t, filepath.Join(root, ".gitignore"), "*.o\nbuild/\nnotes.log\n", 0o644)
	write(t, filepath.Join(root, "notes.log"), "mine\n", 0o644)
	n := take(t, s, root, "second")
	write(t, filepath.Join(root, "notes.log"), "still mine, edited\n", 0o644)
	write(t, filepath.Join(root, "README"), "changed\n", 0o644)
	want := tree(t, root)
	undo(t, s, n)
	want["README"] = tree(t, root)["README"]
	if diff := cmp.Diff(tree(t, root), want); diff != "" {
		t.Errorf("after undo (-got +want):\n%s", diff)
	}
	if got := tree(t, root)["notes.log"]; got != want["notes.log"] {
		t.Errorf("the ignored notes.log was changed by the undo")
	}
}

// TestZoneBelowRepository: a zone that is a directory of a repository
// gets the .gitignore files above it too, and an undo touches nothing
// outside it.
func TestZoneBelowRepository(t *testing.T) {
	s := newStore(t, nil)
	top := filepath.Join(t.TempDir(), "repo")
	if out, err := exec.Command("git", "init", "-q", top).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	write(t, filepath.Join(top, ".gitignore"), "*.tmp\n", 0o644)
	write(t, filepath.Join(top, "outside.txt"), "not the zone's\n", 0o644)
	root := filepath.Join(top, "sub")
	write(t, filepath.Join(root, "kept.txt"), "kept\n", 0o644)
	write(t, filepath.Join(root, "scratch.tmp"), "ignored by the parent's .gitignore\n", 0o644)
	n := take(t, s, root, "x")
	cps, _ := s.Checkpoints(nil)
	if got := cps[0].Zones[0].Files; got != 1 {
		t.Errorf("the checkpoint holds %d files, want 1 (kept.txt)", got)
	}
	write(t, filepath.Join(root, "kept.txt"), "changed\n", 0o644)
	write(t, filepath.Join(top, "outside.txt"), "changed outside\n", 0o644)
	outside := tree(t, top)["outside.txt"]
	undo(t, s, n)
	if got := tree(t, root)["kept.txt"]; !strings.Contains(got, "file -rw-r--r--") || got == tree(t, top)["outside.txt"] {
		t.Errorf("kept.txt after undo: %s", got)
	}
	b, _ := os.ReadFile(filepath.Join(root, "kept.txt"))
	if string(b) != "kept\n" {
		t.Errorf("kept.txt holds %q after undo", b)
	}
	if got := tree(t, top)["outside.txt"]; got != outside {
		t.Errorf("outside.txt, outside the zone, was changed by the undo")
	}
}

// TestNestedZoneExcluded: a zone inside another is its own; the outer
// zone's checkpoint neither holds nor restores its files.
func TestNestedZoneExcluded(t *testing.T) {
	s := newStore(t, nil)
	root := project(t)
	inner := filepath.Join(root, "notes")
	write(t, filepath.Join(inner, "n.txt"), "note\n", 0o644)
	zones := []Zone{{Name: "w", Root: root, Exclude: []string{inner}}}
	n, err := s.Take(context.Background(), zones, Request{})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(inner, "n.txt"), "changed note\n", 0o644)
	undo(t, s, n)
	if b, _ := os.ReadFile(filepath.Join(inner, "n.txt")); string(b) != "changed note\n" {
		t.Errorf("the inner zone's file was restored by the outer zone's undo: %q", b)
	}
}

// TestUndoRefusesChangedZone: a zone that changed after the undo was
// shown is not undone.
func TestUndoRefusesChangedZone(t *testing.T) {
	s := newStore(t, nil)
	root := project(t)
	n := take(t, s, root, "x")
	write(t, filepath.Join(root, "README"), "one\n", 0o644)
	p, err := s.Plan(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "README"), "two\n", 0o644)
	_, err = s.Apply(context.Background(), p, Request{})
	var ce *ChangedError
	if !errors.As(err, &ce) {
		t.Fatalf("Apply = %v, want a *ChangedError", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "README")); string(b) != "two\n" {
		t.Errorf("README holds %q", b)
	}
}

// objectFiles are a store's loose object files.
func objectFiles(t testing.TB, s *Store) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(filepath.Join(s.dir, "zones"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && len(d.Name()) == 38 && filepath.Base(filepath.Dir(filepath.Dir(p))) == "objects" {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func corrupt(t testing.TB, p string) {
	t.Helper()
	os.Chmod(p, 0o600)
	if err := os.WriteFile(p, []byte("not zlib at all"), 0o400); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedStore: a damaged object is found (by the snapshot that
// reads it, or by the scrub), the store then takes no checkpoint until
// it is reset, and an undo that would need the object changes nothing.
func TestDamagedStore(t *testing.T) {
	t.Run("tree of the newest state", func(t *testing.T) {
		s := newStore(t, nil)
		root := project(t)
		take(t, s, root, "x")
		cps, _ := s.Checkpoints(nil)
		sp, _ := s.specOf(cps[0].Zones[0].ID)
		corrupt(t, filepath.Join(sp.dir, "git", "objects", cps[0].Zones[0].Tree[:2], cps[0].Zones[0].Tree[2:]))
		_, err := s.Take(context.Background(), zoneOf(root), Request{})
		var ce *Error
		if !errors.As(err, &ce) || !ce.Damaged {
			t.Fatalf("Take = %v, want a damaged store", err)
		}
		_, err = s.Take(context.Background(), zoneOf(root), Request{})
		if !errors.As(err, &ce) || !ce.Damaged {
			t.Fatalf("second Take = %v, want a damaged store still", err)
		}
		if why := s.Damaged(root); why == "" {
			t.Error("Damaged says nothing")
		}
		if _, err := s.Reset(root); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Take(context.Background(), zoneOf(root), Request{}); err != nil {
			t.Errorf("Take after Reset: %v", err)
		}
	})
	t.Run("every object, by the scrub", func(t *testing.T) {
		s := newStore(t, nil)
		root := project(t)
		take(t, s, root, "x")
		for _, p := range objectFiles(t, s) {
			corrupt(t, p)
		}
		var err error
		for range 300 {
			if _, err = s.Take(context.Background(), zoneOf(root), Request{}); err != nil {
				break
			}
		}
		var ce *Error
		if !errors.As(err, &ce) || !ce.Damaged {
			t.Fatalf("Take = %v, want a damaged store", err)
		}
	})
	t.Run("undo needing a damaged blob", func(t *testing.T) {
		s := newStore(t, nil)
		root := project(t)
		n := take(t, s, root, "x")
		blob := ""
		out, err := exec.Command("git", "hash-object", filepath.Join(root, "README")).Output()
		if err != nil {
			t.Fatal(err)
		}
		blob = strings.TrimSpace(string(out))
		os.Remove(filepath.Join(root, "README"))
		write(t, filepath.Join(root, "new"), "new\n", 0o644)
		p, err := s.Plan(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range objectFiles(t, s) {
			if strings.HasSuffix(f, blob[:2]+"/"+blob[2:]) {
				corrupt(t, f)
			}
		}
		before := tree(t, root)
		_, err = s.Apply(context.Background(), p, Request{})
		var ce *Error
		if !errors.As(err, &ce) || !ce.Damaged {
			t.Fatalf("Apply = %v, want a damaged store", err)
		}
		if diff := cmp.Diff(tree(t, root), before); diff != "" {
			t.Errorf("the refused undo changed files (-got +want):\n%s", diff)
		}
	})
}

// TestConcurrentCheckpoints: guardruns checkpointing one zone at once,
// while files change, each record a whole state: numbers are never
// given twice to different states, every state's objects are there,
// and undoing any of them restores a tree the zone had.
func TestConcurrentCheckpoints(t *testing.T) {
	s := newStore(t, nil)
	root := project(t)
	const workers, rounds = 4, 6
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				p := filepath.Join(root, fmt.Sprintf("w%d", w), fmt.Sprintf("f%d", i))
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(strings.Repeat("x", i)), 0o644)
				if _, err := s.Take(context.Background(), zoneOf(root), Request{Run: fmt.Sprintf("%d-%d", w, i)}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	log, err := s.Log()
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != workers*rounds {
		t.Errorf("the log holds %d points, want %d", len(log), workers*rounds)
	}
	trees := map[int]string{}
	for _, p := range log {
		if t0, ok := trees[p.N]; ok && t0 != p.Tree {
			t.Errorf("checkpoint %d holds two states", p.N)
		}
		trees[p.N] = p.Tree
	}
	sp, _ := s.specOf(log[0].ID)
	r := newRepo(s.git, sp.dir, sp.top)
	defer r.obj.close()
	for n, tr := range trees {
		var walk func(string) error
		walk = func(oid string) error {
			es, err := r.obj.tree(oid)
			if err != nil {
				return err
			}
			for _, e := range es {
				if e.mode == modeTree {
					if err := walk(e.oid); err != nil {
						return err
					}
				} else if err := r.obj.verify(e.oid); err != nil {
					return err
				}
			}
			return nil
		}
		if err := walk(tr); err != nil {
			t.Errorf("checkpoint %d: %v", n, err)
		}
	}
}

// TestTreesAsGitWrites: the trees a checkpoint writes from its index
// are the ones git write-tree writes, so that git status finds the
// recorded state and the index the same.
func TestTreesAsGitWrites(t *testing.T) {
	s := newStore(t, nil)
	root := project(t)
	for _, n := range []string{"a.b", "a-b", "a/b", "a/b.c", "a0", "b/a/c", "b.a", "z"} {
		write(t, filepath.Join(root, "names", n), n+"\n", 0o644)
	}
	take(t, s, root, "x")
	cps, _ := s.Checkpoints(nil)
	sp, _ := s.specOf(cps[0].Zones[0].ID)
	r := newRepo(s.git, sp.dir, sp.top)
	out, _, err := r.run(context.Background(), nil, "write-tree")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cps[0].Zones[0].Tree, strings.TrimSpace(string(out)); got != want {
		t.Errorf("the checkpoint's tree is %s, git write-tree writes %s", got, want)
	}
	st, _, err := r.run(context.Background(), nil, "status", "--porcelain=v2")
	if err != nil || len(st) != 0 {
		t.Errorf("git status of the store after a checkpoint: %q, %v; want nothing", st, err)
	}
}

// TestDeniedNamesNotRecorded: files no command can see (sandbox.deny's
// names, any depth, any case) are neither copied into the store nor
// touched by an undo.
func TestDeniedNamesNotRecorded(t *testing.T) {
	s := newStore(t, nil)
	root := project(t)
	write(t, filepath.Join(root, ".env"), "TOKEN=1\n", 0o600)
	write(t, filepath.Join(root, "src", ".ENV"), "TOKEN=2\n", 0o600)
	write(t, filepath.Join(root, "keys", "secrets", "k"), "TOKEN=3\n", 0o600)
	zones := []Zone{{Name: "w", Root: root, ExcludeNames: []string{".env", "secrets"}}}
	n, err := s.Take(context.Background(), zones, Request{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range objectFiles(t, s) {
		b, _ := exec.Command("git", "--git-dir", filepath.Dir(filepath.Dir(filepath.Dir(f))), "cat-file", "-p", filepath.Base(filepath.Dir(f))+filepath.Base(f)).Output()
		if strings.Contains(string(b), "TOKEN=") {
			t.Errorf("the store holds a denied file's content: %q", b)
		}
	}
	for _, p := range []string{".env", "src/.ENV", "keys/secrets/k"} {
		write(t, filepath.Join(root, p), "changed\n", 0o600)
	}
	want := tree(t, root)
	undo(t, s, n)
	if diff := cmp.Diff(tree(t, root), want); diff != "" {
		t.Errorf("the undo touched denied files (-got +want):\n%s", diff)
	}
}
