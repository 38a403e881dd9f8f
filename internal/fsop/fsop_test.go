//go:build unix

package fsop

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// tempDir is a test directory with its own symlinks resolved (macOS's
// /var is a link), since fsop refuses links anywhere on a path.
func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func write(t *testing.T, p, content string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// leftovers lists temporary files a write left behind in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".guardrun-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// bothWays runs f with openat2 and with the O_NOFOLLOW walk.
func bothWays(t *testing.T, f func(t *testing.T)) {
	t.Run("openat2", f)
	t.Run("walk", func(t *testing.T) {
		forceWalk = true
		defer func() { forceWalk = false }()
		f(t)
	})
}

func umask() os.FileMode {
	m := unix.Umask(0)
	unix.Umask(m)
	return os.FileMode(m)
}

func TestWriteFile(t *testing.T) {
	type result struct {
		Err     string // substring of the error, "" for none
		Created bool
		Content string // the target's content afterwards
		Mode    os.FileMode
		Outside string // the outside file's content afterwards
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, root, outside string) (target string, o WriteOptions)
		want  result
	}{{
		name: "new file gets 0644 minus umask",
		setup: func(t *testing.T, root, _ string) (string, WriteOptions) {
			return filepath.Join(root, "new.txt"), WriteOptions{}
		},
		want: result{Created: true, Content: "NEW", Mode: 0o644 &^ umask()},
	}, {
		name: "existing file keeps its mode",
		setup: func(t *testing.T, root, _ string) (string, WriteOptions) {
			p := filepath.Join(root, "script.sh")
			write(t, p, "old", 0o750)
			return p, WriteOptions{}
		},
		want: result{Content: "NEW", Mode: 0o750},
	}, {
		name: "existing private file stays private",
		setup: func(t *testing.T, root, _ string) (string, WriteOptions) {
			p := filepath.Join(root, "secret")
			write(t, p, "old", 0o600)
			return p, WriteOptions{}
		},
		want: result{Content: "NEW", Mode: 0o600},
	}, {
		name: "final component is a symlink pointing out",
		setup: func(t *testing.T, root, outside string) (string, WriteOptions) {
			p := filepath.Join(root, "link")
			os.Symlink(outside, p)
			return p, WriteOptions{}
		},
		want: result{Err: "a symbolic link appeared", Content: "OUTSIDE", Outside: "OUTSIDE"},
	}, {
		name: "directory swapped for a symlink after the check",
		setup: func(t *testing.T, root, outside string) (string, WriteOptions) {
			// Policy saw root/sub/f.txt; now sub points out.
			os.Symlink(filepath.Dir(outside), filepath.Join(root, "sub"))
			return filepath.Join(root, "sub", filepath.Base(outside)), WriteOptions{}
		},
		// Content and Mode read through the link: the outside file.
		want: result{Err: "a symbolic link appeared", Content: "OUTSIDE", Mode: 0o644, Outside: "OUTSIDE"},
	}, {
		name: "missing parent directory",
		setup: func(t *testing.T, root, _ string) (string, WriteOptions) {
			return filepath.Join(root, "nodir", "f.txt"), WriteOptions{}
		},
		want: result{Err: "no such file or directory", Content: "<open ", Outside: "OUTSIDE"},
	}, {
		name: "target is a directory",
		setup: func(t *testing.T, root, _ string) (string, WriteOptions) {
			p := filepath.Join(root, "d")
			os.Mkdir(p, 0o755)
			return p, WriteOptions{}
		},
		want: result{Err: "is a directory", Content: "<read ", Outside: "OUTSIDE"},
	}, {
		name: "expected content still there",
		setup: func(t *testing.T, root, _ string) (string, WriteOptions) {
			p := filepath.Join(root, "f.txt")
			write(t, p, "seen", 0o644)
			s, err := Load(p, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			return p, WriteOptions{Expect: s}
		},
		want: result{Content: "NEW", Mode: 0o644},
	}, {
		name: "content changed after it was shown",
		setup: func(t *testing.T, root, _ string) (string, WriteOptions) {
			p := filepath.Join(root, "f.txt")
			write(t, p, "seen", 0o644)
			s, err := Load(p, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			// Same size, same inode: only the content tells.
			f, _ := os.OpenFile(p, os.O_WRONLY, 0)
			f.WriteAt([]byte("SEEN"), 0)
			f.Close()
			return p, WriteOptions{Expect: s}
		},
		want: result{Err: "changed after it was shown", Content: "SEEN", Mode: 0o644},
	}, {
		name: "created after it was shown as new",
		setup: func(t *testing.T, root, _ string) (string, WriteOptions) {
			p := filepath.Join(root, "f.txt")
			s, err := Load(p, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			write(t, p, "sneaky", 0o644)
			return p, WriteOptions{Expect: s}
		},
		want: result{Err: "it was created", Content: "sneaky", Mode: 0o644},
	}, {
		name: "replaced by a symlink after it was shown",
		setup: func(t *testing.T, root, outside string) (string, WriteOptions) {
			p := filepath.Join(root, "f.txt")
			write(t, p, "seen", 0o644)
			s, _ := Load(p, 1<<20)
			os.Remove(p)
			os.Symlink(outside, p)
			return p, WriteOptions{Expect: s}
		},
		want: result{Err: "a symbolic link appeared", Content: "OUTSIDE", Outside: "OUTSIDE"},
	}}
	bothWays(t, func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				root, out := tempDir(t), tempDir(t)
				outside := filepath.Join(out, "f.txt")
				write(t, outside, "OUTSIDE", 0o644)
				target, o := tt.setup(t, root, outside)
				created, err := WriteFile(target, []byte("NEW"), o)
				got := result{Created: created, Content: read(t, target), Outside: read(t, outside)}
				if err != nil {
					got.Err = err.Error()
					if strings.Contains(got.Err, tt.want.Err) && tt.want.Err != "" {
						got.Err = tt.want.Err
					}
				}
				if strings.HasPrefix(got.Content, "<") && strings.HasPrefix(got.Content, tt.want.Content) {
					got.Content = tt.want.Content
				}
				if fi, err := os.Lstat(target); err == nil && fi.Mode().IsRegular() {
					got.Mode = fi.Mode().Perm()
				}
				if tt.want.Outside == "" {
					tt.want.Outside = "OUTSIDE"
				}
				if diff := cmp.Diff(got, tt.want); diff != "" {
					t.Errorf("(-got +want)\n%s", diff)
				}
				if l := leftovers(t, root); len(l) > 0 {
					t.Errorf("temporary files left behind: %v", l)
				}
			})
		}
	})
}

func TestWriteFileKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "not root: owning a file as someone else needs root")
	}
	p := filepath.Join(tempDir(t), "f")
	write(t, p, "old", 0o755)
	if err := os.Chown(p, 1234, 5678); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o755|os.ModeSetuid)
	if _, err := WriteFile(p, []byte("new"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	st := fi.Sys().(*syscall.Stat_t)
	got := fmt.Sprintf("%d:%d %v", st.Uid, st.Gid, fi.Mode())
	if want := "1234:5678 urwxr-xr-x"; got != want {
		t.Errorf("owner and mode %s, want %s", got, want)
	}
}

// TestWriteFailsMidway makes write(2) itself fail, with EFBIG from a
// file size limit set in a child process, and checks that the old file
// is untouched and no temporary file is left.
func TestWriteFailsMidway(t *testing.T) {
	if p := os.Getenv("FSOP_TEST_EFBIG"); p != "" {
		// The child: writes past RLIMIT_FSIZE fail with EFBIG instead
		// of killing the process once SIGXFSZ is ignored.
		signal.Ignore(syscall.SIGXFSZ)
		lim := &syscall.Rlimit{Cur: 4096, Max: 4096}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, lim); err != nil {
			fmt.Println("setrlimit:", err)
			os.Exit(3)
		}
		_, err := WriteFile(p, bytes.Repeat([]byte("n"), 64<<10), WriteOptions{})
		fmt.Println("error:", err)
		os.Exit(0)
	}
	root := tempDir(t)
	target := filepath.Join(root, "f.txt")
	old := strings.Repeat("old\n", 100)
	write(t, target, old, 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteFailsMidway$")
	cmd.Env = append(os.Environ(), "FSOP_TEST_EFBIG="+target)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "error: "+target+": file too large") {
		t.Errorf("child's write did not fail with EFBIG:\n%s", out)
	}
	if got := read(t, target); got != old {
		t.Errorf("old file changed to %q", got)
	}
	if l := leftovers(t, root); len(l) > 0 {
		t.Errorf("temporary files left behind: %v", l)
	}
}

// TestConcurrentReader reads the file over and over while it is
// rewritten: every read sees one version in full.
func TestConcurrentReader(t *testing.T) {
	p := filepath.Join(tempDir(t), "f.txt")
	a := bytes.Repeat([]byte("a"), 192<<10)
	b := bytes.Repeat([]byte("b"), 320<<10)
	write(t, p, string(a), 0o644)
	var stop atomic.Bool
	var reads, bad atomic.Int64
	var wg sync.WaitGroup
	// Readers stop when stop is set, after the writer's last write.
	for range 2 {
		wg.Go(func() {
			for !stop.Load() {
				got, err := os.ReadFile(p)
				reads.Add(1)
				if err != nil || !bytes.Equal(got, a) && !bytes.Equal(got, b) {
					if bad.Add(1) == 1 {
						t.Errorf("a reader saw %d bytes (err %v), neither version in full", len(got), err)
					}
				}
			}
		})
	}
	for i := range 60 {
		data := a
		if i%2 == 0 {
			data = b
		}
		if _, err := WriteFile(p, data, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if reads.Load() == 0 {
		t.Fatal("the readers never ran")
	}
	t.Logf("%d reads, %d bad", reads.Load(), bad.Load())
}

// TestWriteRaceAtRename swaps the target for a symlink in the last
// moment before the rename: the rename replaces the link, and the file
// it points to is untouched.
func TestWriteRaceAtRename(t *testing.T) {
	root, out := tempDir(t), tempDir(t)
	outside := filepath.Join(out, "f.txt")
	write(t, outside, "OUTSIDE", 0o644)
	p := filepath.Join(root, "f.txt")
	write(t, p, "old", 0o644)
	writeHook = func(string) {
		os.Remove(p)
		os.Symlink(outside, p)
	}
	defer func() { writeHook = nil }()
	if _, err := WriteFile(p, []byte("NEW"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	got := []string{read(t, p), read(t, outside)}
	if diff := cmp.Diff(got, []string{"NEW", "OUTSIDE"}); diff != "" {
		t.Errorf("(-got +want)\n%s", diff)
	}
	if fi, _ := os.Lstat(p); fi.Mode()&fs.ModeSymlink != 0 {
		t.Error("the target is still a symlink")
	}
}

func TestRemove(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, root, outside string) string
		wantErr string
		want    Kind
		gone    bool
	}{{
		name: "regular file",
		setup: func(t *testing.T, root, _ string) string {
			p := filepath.Join(root, "f")
			write(t, p, "x", 0o644)
			return p
		},
		want: File, gone: true,
	}, {
		name: "empty directory",
		setup: func(t *testing.T, root, _ string) string {
			p := filepath.Join(root, "d")
			os.Mkdir(p, 0o755)
			return p
		},
		want: Dir, gone: true,
	}, {
		name: "directory with files",
		setup: func(t *testing.T, root, _ string) string {
			p := filepath.Join(root, "d")
			os.Mkdir(p, 0o755)
			write(t, filepath.Join(p, "keep"), "x", 0o644)
			return p
		},
		wantErr: "directory not empty",
	}, {
		name: "symlink to a file outside",
		setup: func(t *testing.T, root, outside string) string {
			p := filepath.Join(root, "l")
			os.Symlink(outside, p)
			return p
		},
		wantErr: "a symbolic link appeared",
	}, {
		name: "inside a directory that became a symlink",
		setup: func(t *testing.T, root, outside string) string {
			os.Symlink(filepath.Dir(outside), filepath.Join(root, "sub"))
			return filepath.Join(root, "sub", filepath.Base(outside))
		},
		wantErr: "a symbolic link appeared",
	}, {
		name: "named pipe",
		setup: func(t *testing.T, root, _ string) string {
			p := filepath.Join(root, "fifo")
			if err := unix.Mkfifo(p, 0o644); err != nil {
				testenv.Missing(t, "no mkfifo: %v", err)
			}
			return p
		},
		wantErr: "is a named pipe; fs rm removes files and empty directories only",
	}, {
		name: "missing",
		setup: func(t *testing.T, root, _ string) string {
			return filepath.Join(root, "nothing")
		},
		wantErr: "no such file or directory",
	}}
	bothWays(t, func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				root, out := tempDir(t), tempDir(t)
				outside := filepath.Join(out, "f.txt")
				write(t, outside, "OUTSIDE", 0o644)
				p := tt.setup(t, root, outside)
				fi, err := Remove(p, nil)
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				if fi.Kind != tt.want {
					t.Errorf("kind %q, want %q", fi.Kind, tt.want)
				}
				_, lerr := os.Lstat(p)
				if gone := errors.Is(lerr, fs.ErrNotExist); gone != tt.gone && tt.name != "missing" {
					t.Errorf("gone = %v, want %v", gone, tt.gone)
				}
				if got := read(t, outside); got != "OUTSIDE" {
					t.Errorf("outside file is now %q", got)
				}
			})
		}
	})
}

func TestRemoveReplacedAfterShown(t *testing.T) {
	p := filepath.Join(tempDir(t), "f")
	write(t, p, "seen", 0o644)
	fi, err := Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(p)
	write(t, p, "other", 0o644)
	_, err = Remove(p, &fi)
	var ce *ChangedError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v, want a *ChangedError", err)
	}
	if got := read(t, p); got != "other" {
		t.Errorf("file is now %q", got)
	}
}

func TestList(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root := tempDir(t)
		write(t, filepath.Join(root, "b.txt"), "12345", 0o644)
		os.Mkdir(filepath.Join(root, "a-dir"), 0o755)
		os.Symlink("/etc/passwd", filepath.Join(root, "c-link"))
		got, fi, err := List(root)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Kind != Dir {
			t.Errorf("kind %q", fi.Kind)
		}
		for i := range got {
			if got[i].Kind == Dir {
				got[i].Size = 0 // file system dependent
			}
		}
		want := []Entry{
			{Name: "a-dir", Kind: Dir},
			{Name: "b.txt", Kind: File, Size: 5},
			{Name: "c-link", Kind: Symlink, Size: int64(len("/etc/passwd")), Target: "/etc/passwd"},
		}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("(-got +want)\n%s", diff)
		}

		got, _, err = List(filepath.Join(root, "b.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, []Entry{{Name: "b.txt", Kind: File, Size: 5}}); diff != "" {
			t.Errorf("a file lists as itself (-got +want)\n%s", diff)
		}

		if _, _, err := List(filepath.Join(root, "c-link")); err == nil {
			t.Error("listing through a symlink worked")
		}
		if _, _, err := List("/"); err != nil {
			t.Errorf("List(/): %v", err)
		}
	})
}

func TestOpenAndLoad(t *testing.T) {
	root := tempDir(t)
	p := filepath.Join(root, "f")
	write(t, p, "hello", 0o644)
	fifo := filepath.Join(root, "fifo")
	unix.Mkfifo(fifo, 0o644)

	f, fi, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi.Size != 5 || fi.Kind != File {
		t.Errorf("Open info %+v", fi)
	}
	// A named pipe must not block the open.
	if _, _, err := Open(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file (named pipe)") {
		t.Errorf("Open(fifo): %v", err)
	}
	if _, _, err := Open(root); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Open(dir): %v", err)
	}

	s, err := Load(p, 5)
	if err != nil || string(s.Data) != "hello" || s.TooLarge {
		t.Errorf("Load at the limit: %+v, %v", s, err)
	}
	s, err = Load(p, 4)
	if err != nil || s.Data != nil || !s.TooLarge || s.Info.Size != 5 {
		t.Errorf("Load over the limit: %+v, %v", s, err)
	}
	s, err = Load(filepath.Join(root, "none"), 5)
	if err != nil || s.Exists {
		t.Errorf("Load of a missing file: %+v, %v", s, err)
	}
	if _, err := Load(filepath.Join(root, "none", "x"), 5); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load with a missing parent: %v", err)
	}
	if _, err := Load("relative/path", 5); err == nil {
		t.Error("Load took a relative path")
	}
	if _, err := Load(root+"/./f", 5); err == nil {
		t.Error("Load took an unclean path")
	}
}
