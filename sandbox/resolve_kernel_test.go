package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maze builds symlink mazes under dir: chains, links to links, `..` after
// links and inside link targets, absolute and dangling links, a loop.
func maze(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{"ws", "ro/sub/deep", "a/b/c", "b/sub"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"ws/rolink":   "../ro/sub",                 // the row: rolink/../pwn is ro/pwn
		"l1":          "a/b",                       // a plain link
		"l2":          "l1",                        // a link to a link
		"l3":          "l2/c",                      // through a chain, then deeper
		"l4":          "l2/../x",                   // `..` inside a target, after a link
		"l5":          filepath.Join(dir, "b/sub"), // absolute
		"l6":          "ws/rolink/deep",            // link in the middle of a target
		"up":          "a/b/c/../..",               // only `..`s
		"dangling":    "nothere",                   // dangling: O_CREAT creates the target
		"dangling2":   "l1/newfile",                // dangling through a link
		"dangdir":     "gone/below",                // dangling, parent missing
		"loopA":       "loopB",
		"loopB":       "loopA",
		"ws/toparent": "..",
		"ws/self":     ".",
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResolveMatchesKernel compares Resolve with `realpath -m` and with
// where open(O_CREAT) really creates the file, in a fresh maze per path.
func TestResolveMatchesKernel(t *testing.T) {
	realpath, err := exec.LookPath("realpath")
	if err != nil {
		if os.Getenv("GUARDRUN_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("realpath (coreutils) is needed: %v", err)
		}
		t.Skipf("realpath (coreutils) not found: %v", err)
	}
	paths := []string{
		"ws/rolink/../pwn",
		"ws/rolink/../../pwn",
		"ws/rolink/deep/../../x",
		"l1/x",
		"l2/x",
		"l2/../y",
		"l2/../../z",
		"l3/x",
		"l3/../../w",
		"l4",
		"l4/../v",
		"l5/x",
		"l5/../u",
		"l6/../t",
		"l6/x",
		"up/s",
		"up/../r",
		"dangling",
		"dangling2",
		"dangdir",
		"ws/toparent/ws/toparent/q",
		"ws/self/../p",
		"ws//rolink/./../o",
		"missing/../n",
		"file/../m",
		"a/b/c/../../../l",
		"ws/rolink/../../ws/rolink/../k",
		"l2/c/../c/../../j",
	}
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			maze(t, dir)
			full := dir + "/" + p // not filepath.Join: that cleans `..`
			got, err := Resolve(full)
			if err != nil {
				t.Fatalf("Resolve(%s): %v", p, err)
			}
			out, err := exec.Command(realpath, "-m", "--", full).Output()
			if err != nil {
				t.Fatalf("realpath -m %s: %v", p, err)
			}
			if want := strings.TrimSuffix(string(out), "\n"); got != want {
				t.Errorf("Resolve(%s) = %s, realpath -m says %s", p, got, want)
			}
			f, err := os.OpenFile(full, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				// The kernel refuses (a missing or non-directory
				// component): nothing is created, so nothing to compare.
				if _, serr := os.Lstat(got); serr == nil && !errors.Is(err, os.ErrExist) {
					if fi, _ := os.Stat(got); fi != nil && !fi.IsDir() && got != filepath.Join(dir, "file") {
						t.Errorf("open(O_CREAT) %s failed (%v) yet %s exists", p, err, got)
					}
				}
				return
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			gi, err := os.Stat(got)
			if err != nil {
				t.Fatalf("open(O_CREAT) %s created a file, but not at %s: %v", p, got, err)
			}
			if !os.SameFile(fi, gi) {
				t.Errorf("open(O_CREAT) %s created a file elsewhere than %s", p, got)
			}
		})
	}
	t.Run("loop", func(t *testing.T) {
		dir, _ := filepath.EvalSymlinks(t.TempDir())
		maze(t, dir)
		if _, err := Resolve(dir + "/loopA/x"); err == nil {
			t.Errorf("Resolve through a symlink loop did not fail")
		}
		if _, err := os.OpenFile(dir+"/loopA/x", os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			t.Errorf("the kernel followed a symlink loop")
		}
	})
	t.Run("process files are not followed", func(t *testing.T) {
		for _, p := range []string{"/dev/stdin", "/dev/fd/3", "/proc/self/fd/1", "/proc/1/root/etc", "/proc/thread-self/fd/0"} {
			if got, _ := Resolve(p); got != p {
				t.Errorf("Resolve(%s) = %s: followed the resolving process's own files", p, got)
			}
		}
	})
}
