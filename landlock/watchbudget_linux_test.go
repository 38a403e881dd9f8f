package landlock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestBudgetLinks: what counts against MaxWatchTotal. A protected
// directory (.git/hooks of each of the workspace's repositories) can
// hold MaxWatchEntries links whose targets are 4000 bytes each, and
// names of 255: more than a MiB per directory that no file's size shows.
// Enough of them are refused at the budget like files' bytes are,
// rather than read and held whole.
func TestBudgetLinks(t *testing.T) {
	root := t.TempDir()
	target := strings.Repeat("x", 4000)
	per := MaxWatchEntries * (len(target) + 20)
	n := MaxWatchTotal/per + 2
	var ws []Watch
	for i := range n {
		d := filepath.Join(root, fmt.Sprintf("r%02d/.git/hooks", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for j := range MaxWatchEntries {
			if err := os.Symlink(target, filepath.Join(d, fmt.Sprintf("hook-%03d", j))); err != nil {
				t.Fatal(err)
			}
		}
		ws = append(ws, Watch{Path: d, Root: root})
	}
	if _, err := take(ws[:1]); err != nil {
		t.Fatalf("one directory of links: %v, want it kept", err)
	}
	snaps, err := take(ws)
	if err == nil || !strings.Contains(err.Error(), "together") {
		var held int64
		for _, s := range snaps {
			held += s.node.bytes()
		}
		t.Errorf("%d directories of %d links of %d bytes: %v (counted %d bytes); want refused past %d bytes together",
			n, MaxWatchEntries, len(target), err, held, MaxWatchTotal)
	}
	// Long names alone: 255 bytes each, not a byte of data.
	d := filepath.Join(root, "names")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for j := range MaxWatchEntries {
		name := fmt.Sprintf("%03d", j) + strings.Repeat("n", 252)
		if err := os.WriteFile(filepath.Join(d, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := take([]Watch{{Path: d, Root: root}})
	if err != nil || s[0].node.bytes() < MaxWatchEntries*255 {
		t.Errorf("a directory of long names: %v, counted %d bytes; want kept, its names counted", err, s[0].node.bytes())
	}
}

// TestBudgetNoRetry: a path past its bound (a file grown past
// MaxWatchBytes since the ruleset was built) is read once before the
// command is refused, not once per try meant for a path another process
// changes while it is read.
func TestBudgetNoRetry(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, ".bashrc")
	if err := os.WriteFile(p, make([]byte, MaxWatchBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(root, "hooks")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for j := range MaxWatchEntries + 1 {
		if err := os.WriteFile(filepath.Join(d, fmt.Sprint(j)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ path, watch, want string }{
		{p, p, "more than"},
		{d, d, "entries"},
	} {
		in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
		if err != nil {
			t.Fatal(err)
		}
		// Opens and closes alternate, so that inotify does not merge
		// one open with the next.
		if _, err := unix.InotifyAddWatch(in, c.watch, unix.IN_OPEN|unix.IN_CLOSE_NOWRITE); err != nil {
			t.Fatal(err)
		}
		_, err = take([]Watch{{Path: c.path, Root: root}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want refused (%s)", c.path, err, c.want)
		}
		opens := 0
		buf := make([]byte, 1<<16)
		for {
			k, err := unix.Read(in, buf)
			if errors.Is(err, unix.EAGAIN) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off+unix.SizeofInotifyEvent <= k; {
				mask := binary.NativeEndian.Uint32(buf[off+4:])
				ln := binary.NativeEndian.Uint32(buf[off+12:])
				if mask&unix.IN_OPEN != 0 {
					opens++
				}
				off += unix.SizeofInotifyEvent + int(ln)
			}
		}
		unix.Close(in)
		if opens != 1 {
			t.Errorf("%s: opened %d times before refused, want once", c.path, opens)
		}
	}
}

// TestTakeOverTotalNow: paths sized within MaxWatchTotal when the
// ruleset was built (or not sized: missing then, or links) can hold
// more by the time they are read; the command is refused, and nothing
// is left held.
func TestTakeOverTotalNow(t *testing.T) {
	root := t.TempDir()
	share := t.TempDir()
	big := make([]byte, MaxWatchBytes)
	var ws []Watch
	for i := 0; i < MaxWatchTotal/MaxWatchBytes+1; i++ {
		p := filepath.Join(root, fmt.Sprintf("p%d", i), ".env")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, big, 0o600); err != nil {
			t.Fatal(err)
		}
		ws = append(ws, Watch{Path: p, Root: root, Missing: true})
	}
	_, release, err := takeHeld(share, ws)
	if err == nil {
		release()
		t.Fatalf("%d paths of %d bytes each were snapshotted; want the command refused past %d", len(ws), MaxWatchBytes, MaxWatchTotal)
	}
	if !strings.Contains(err.Error(), "together") {
		t.Fatalf("refused for another reason: %v", err)
	}
	// Nothing held: the paths within the total are taken afresh.
	snaps, release, err := takeHeld(share, ws[:2])
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if len(snaps) != 2 || snaps[0].node == nil {
		t.Fatalf("snapshots after the refusal: %d", len(snaps))
	}
}
