package landlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/sandbox"
)

// TestRestoreFollowsNoLink: a directory on the way to a protected path
// replaced by a link to somewhere else is moved aside, and nothing is
// written through it; a hard link to a protected file is broken and the
// file's content and mode come back; a file too large for the snapshot
// is refused by name.
func TestRestoreFollowsNoLink(t *testing.T) {
	root := t.TempDir()
	elsewhere := t.TempDir()
	mk := func(rel, content string, mode os.FileMode) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	mk("a/.git/config", "[core]\n", 0o644)
	mk("b/.git/hooks/pre-commit", "#!/bin/sh\n", 0o755)
	ws := []Watch{
		{Path: filepath.Join(root, "a/.git/config"), Root: root},
		{Path: filepath.Join(root, "b/.git/hooks"), Root: root},
		{Path: filepath.Join(root, "b/.bashrc"), Root: root, Missing: true},
	}
	snaps, err := take(ws)
	if err != nil {
		t.Fatal(err)
	}
	// The command's doing: a/.git becomes a link to elsewhere (holding
	// a config of its own), the hook gets a second name and new content,
	// a .bashrc appears.
	if err := os.Rename(filepath.Join(root, "a/.git"), filepath.Join(root, "a/git-moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "config"), []byte("evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, "a/.git")); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(root, "b/.git/hooks/pre-commit")
	if err := os.Link(hook, filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "alias"), []byte("evil\n"), 0o777); err != nil {
		t.Fatal(err)
	}
	mk("b/.bashrc", "evil\n", 0o644)

	lines := restore(snaps, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	text := strings.Join(lines, "\n")
	if len(lines) != 3 {
		t.Errorf("want 3 lines:\n%s", text)
	}
	if fi, err := os.Lstat(filepath.Join(root, "a/.git")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link on the way is still there: %v %v", fi, err)
	}
	if _, err := os.Lstat(filepath.Join(root, "a/.git.guardrun-quarantine-20260102T030405Z")); err != nil {
		t.Errorf("the link was not moved aside: %v\n%s", err, text)
	}
	if b, _ := os.ReadFile(filepath.Join(elsewhere, "config")); string(b) != "evil\n" {
		t.Errorf("written through the link: %q", b)
	}
	b, err := os.ReadFile(hook)
	if err != nil || string(b) != "#!/bin/sh\n" {
		t.Errorf("hook: %q, %v\n%s", b, err, text)
	}
	if fi, err := os.Lstat(hook); err != nil || fi.Mode().Perm() != 0o755 || fi.Sys() == nil {
		t.Errorf("hook mode: %v, %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "alias")); string(b) != "evil\n" {
		t.Errorf("the alias should keep the command's content, detached: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(root, "b/.bashrc")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".bashrc still there: %v", err)
	}
	if !strings.Contains(text, "b/.bashrc was created by the command; moved aside to "+filepath.Join(root, "b/.bashrc.guardrun-quarantine-20260102T030405Z")) {
		t.Errorf("no quarantine line:\n%s", text)
	}
	// Nothing changed since: nothing to say.
	snaps, err = take(ws)
	if err != nil {
		t.Fatal(err)
	}
	if l := restore(snaps, time.Now()); len(l) != 0 {
		t.Errorf("unchanged, yet: %q", l)
	}
	// Beyond the bound: refused, naming the path.
	mk("c/.vscode/big", strings.Repeat("x", MaxWatchBytes+1), 0o644)
	_, err = take([]Watch{{Path: filepath.Join(root, "c/.vscode"), Root: root}})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(root, "c/.vscode")) {
		t.Errorf("oversized: %v", err)
	}
}

// BenchmarkSnapshotRestore: what the watch costs each command for a
// repository as git init leaves it (config, 13 sample hooks) and 15
// missing protected names: one snapshot and one comparison, nothing
// changed.
func BenchmarkSnapshotRestore(b *testing.B) {
	root := b.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git/hooks"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".git/config"), []byte("[core]\n\tbare = false\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := range 13 {
		p := filepath.Join(root, ".git/hooks", "hook"+strings.Repeat("x", i)+".sample")
		if err := os.WriteFile(p, []byte(strings.Repeat("#!/bin/sh\n", 100)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	ws := []Watch{{Path: filepath.Join(root, ".git/config"), Root: root}, {Path: filepath.Join(root, ".git/hooks"), Root: root}}
	for i := range 15 {
		ws = append(ws, Watch{Path: filepath.Join(root, ".missing"+strings.Repeat("y", i)), Root: root, Missing: true})
	}
	b.ResetTimer()
	for range b.N {
		snaps, err := take(ws)
		if err != nil {
			b.Fatal(err)
		}
		if l := restore(snaps, time.Now()); len(l) != 0 {
			b.Fatal(l)
		}
	}
}

// TestRestoreCannotRebuild: when guardrun cannot put its copy back (here
// a snapshot it cannot rebuild; in life a full disk), the command's
// version is still moved aside, so that nothing obeys it.
func TestRestoreCannotRebuild(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, ".git/config")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	snaps, err := take([]Watch{{Path: p, Root: root}})
	if err != nil {
		t.Fatal(err)
	}
	snaps[0].node.kind = 0 // build refuses it
	if err := os.WriteFile(p, []byte("[core]\n\tfsmonitor = evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := restore(snaps, time.Now())
	if len(lines) != 1 || !strings.Contains(lines[0], "could NOT be restored") || !strings.Contains(lines[0], "moved aside to") {
		t.Errorf("restore said %q", lines)
	}
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command's version is still at %s: %v", p, err)
	}
	q, _ := filepath.Glob(p + ".guardrun-quarantine-*")
	if len(q) != 1 {
		t.Fatalf("quarantined: %v", q)
	}
	if b, _ := os.ReadFile(q[0]); !strings.Contains(string(b), "fsmonitor") {
		t.Errorf("kept: %q", b)
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Errorf("left behind in .git: %v", ents)
	}
}

// TestSnapshotWhileEntriesComeAndGo: another process writing a watched
// directory while the snapshot is taken (an agent rewriting
// .claude/settings.local.json through a temporary file beside it) makes
// entries vanish between the listing and their reading. The directory is
// still there: it must not be taken as missing (it would be moved aside
// after the command as "created by the command"), nor make the snapshot
// fail.
func TestSnapshotWhileEntriesComeAndGo(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".claude")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := []Watch{{Path: dir, Root: root}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			for _, d := range []string{dir, filepath.Join(dir, "sub")} {
				tmp := filepath.Join(d, "tmp."+strconv.Itoa(i%8))
				os.WriteFile(tmp, []byte("{}"), 0o644)
				os.Remove(tmp)
				os.Mkdir(tmp+".d", 0o755)
				os.Remove(tmp + ".d")
			}
		}
	}()
	deadline := time.Now().Add(time.Second)
	n := 0
	for ; time.Now().Before(deadline); n++ {
		snaps, err := take(ws)
		if err != nil {
			t.Errorf("snapshot %d: %v", n, err)
			break
		}
		if len(snaps) != 1 || snaps[0].node == nil {
			t.Errorf("snapshot %d: the existing %s was taken as missing", n, dir)
			break
		}
	}
	close(stop)
	<-done
	t.Logf("%d snapshots", n)
}

// TestRestoreBesideBwrapPlaceholders: a bwrap command running in the
// same tree makes an empty read-only sticky directory at each missing
// protected name while it runs and removes it when it ends. Appearing or
// disappearing during a landlock command, it is neither "created by the
// command" (moved aside, which also undid the bwrap command's mask) nor
// "removed by the command" (put back, and left for ever). Anything else
// at the name still is, and so is a look-alike no bwrap run holds.
func TestRestoreBesideBwrapPlaceholders(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { // read-only directories, for TempDir's removal
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	mkPlaceholder := func(name string) {
		if err := os.Mkdir(filepath.Join(root, name), 0o555|os.ModeSticky); err != nil {
			t.Fatal(err)
		}
	}
	mkPlaceholder(".vscode") // there before the command, gone after
	ws := []Watch{
		{Path: filepath.Join(root, ".vscode"), Root: root},
		{Path: filepath.Join(root, ".cursor"), Root: root, Missing: true},
		{Path: filepath.Join(root, ".idea"), Root: root, Missing: true},
		{Path: filepath.Join(root, ".envrc"), Root: root, Missing: true},
	}
	snaps, err := take(ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Rmdir(filepath.Join(root, ".vscode")); err != nil {
		t.Fatal(err)
	}
	mkPlaceholder(".cursor") // made during the command
	// Held as the bwrap run that made it holds it while its command runs.
	held, err := os.Open(filepath.Join(root, ".cursor"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	// Made during the command and held by no bwrap run: the command's
	// own look-alike, which stays nobody's mount point.
	mkPlaceholder(".envrc")
	// Made during the command: a look-alike with content.
	mkPlaceholder(".idea")
	os.Chmod(filepath.Join(root, ".idea"), 0o755|os.ModeSticky)
	os.WriteFile(filepath.Join(root, ".idea/workspace.xml"), []byte("x"), 0o644)
	os.Chmod(filepath.Join(root, ".idea"), 0o555|os.ModeSticky)
	lines := restore(snaps, time.Now())
	if len(lines) != 2 || !strings.Contains(lines[0], ".idea was created by the command") || !strings.Contains(lines[1], ".envrc was created by the command") {
		t.Errorf("lines: %q", lines)
	}
	if _, err := os.Lstat(filepath.Join(root, ".vscode")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".vscode was put back: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(root, ".cursor")); err != nil || !fi.IsDir() {
		t.Errorf("the running bwrap command's placeholder .cursor was moved: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, ".envrc")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command's look-alike placeholder .envrc was left: %v", err)
	}
}

// TestBuildBesideBwrapPlaceholders: a bwrap command's placeholders in the
// tree when the ruleset is built (at a missing protected name, at
// guardrun's own missing config) are the missing names they stand for:
// watched and moved aside after the command if it makes them, not
// refused as denied paths that could be created.
func TestBuildBesideBwrapPlaceholders(t *testing.T) {
	ws := t.TempDir()
	for _, n := range []string{".guardrun.yaml", ".vscode"} {
		if err := os.Mkdir(filepath.Join(ws, n), 0o555|os.ModeSticky); err != nil {
			t.Fatal(err)
		}
	}
	own := filepath.Join(ws, ".guardrun.yaml")
	p := &sandbox.Profile{
		ReadOnly:     []string{"/usr"},
		ReadWrite:    []string{ws},
		ReadOnlyOver: []string{own, filepath.Join(ws, ".vscode")},
		Protected:    []string{own},
		ProtectNames: []string{".guardrun.yaml", ".vscode"},
		Cwd:          ws,
	}
	rs, err := Build(p, Options{ABI: 7})
	if err != nil {
		t.Fatal(err)
	}
	var watched []string
	for _, w := range rs.Watch {
		if w.Missing {
			watched = append(watched, filepath.Base(w.Path))
		}
	}
	if strings.Join(watched, " ") != ".guardrun.yaml .vscode" || len(rs.Fixed) != 0 {
		t.Errorf("watched as missing %q, fixed %q", watched, rs.Fixed)
	}
}

// TestTakeHeld: a command starting while another runs is given the
// running one's snapshot of a watched path, not the running one's change
// to it, so that its restore puts back the user's file; once neither
// runs, the path is read afresh.
func TestTakeHeld(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(root, ".git", "config")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := []Watch{{Path: cfg, Root: root}}
	dir := t.TempDir()
	first, releaseFirst, err := takeHeld(dir, ws)
	if err != nil {
		t.Fatal(err)
	}
	// The first command changes the file, and the second starts.
	if err := os.WriteFile(cfg, []byte("[core]\n[alias]\n\tst = !evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	second, releaseSecond, err := takeHeld(dir, ws)
	if err != nil {
		t.Fatal(err)
	}
	restore(first, time.Now())
	releaseFirst()
	// The second command's end: the file is the user's, as it was.
	restore(second, time.Now())
	releaseSecond()
	if b, _ := os.ReadFile(cfg); string(b) != "[core]\n" {
		t.Fatalf("after both restores the file holds %q, want the user's", b)
	}
	// Neither runs: a new command reads the path as it is now.
	if err := os.WriteFile(cfg, []byte("[core]\n\tbare = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	third, releaseThird, err := takeHeld(dir, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseThird()
	if string(third[0].node.data) != "[core]\n\tbare = false\n" {
		t.Errorf("a command starting alone got %q, not the file as it is", third[0].node.data)
	}
	heldMu.Lock()
	n := held[cfg].n
	heldMu.Unlock()
	if n != 1 {
		t.Errorf("%d holders of the path, want 1", n)
	}
}

// TestTakeWithinTotal: the protected paths' snapshots spend one budget
// of MaxWatchTotal bytes as they are read. Paths that grew past it since
// the ruleset was built are refused at the path that crosses it, named
// in the error; the paths after it are not read.
func TestTakeWithinTotal(t *testing.T) {
	root := t.TempDir()
	n := MaxWatchTotal/MaxWatchBytes + 2
	big := make([]byte, MaxWatchBytes-1024)
	var ws []Watch
	for i := range n {
		p := filepath.Join(root, fmt.Sprintf("w%d/.bashrc", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, big, 0o644); err != nil {
			t.Fatal(err)
		}
		ws = append(ws, Watch{Path: p, Root: root})
	}
	// Each path alone is within MaxWatchBytes.
	if _, err := take(ws[:1]); err != nil {
		t.Fatal(err)
	}
	_, err := take(ws)
	cross := ws[MaxWatchTotal/len(big)].Path
	if err == nil || !strings.Contains(err.Error(), cross+" ") || !strings.Contains(err.Error(), "together") {
		t.Fatalf("take of %d paths of %d bytes: %v; want refused at %s, past %d bytes together", n, len(big), err, cross, MaxWatchTotal)
	}
	// The budget is the command's: a second take starts afresh.
	if _, err := take(ws[:2]); err != nil {
		t.Errorf("a second take: %v", err)
	}
}
