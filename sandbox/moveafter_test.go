package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMoveAsideCreatedAttacks: what a command can leave at a MoveAfter
// name (.git/commondir) to make guardrun's move act elsewhere, or to
// keep the name in place. Each must end with nothing at the name and
// nothing changed outside the workspace.
func TestMoveAsideCreatedAttacks(t *testing.T) {
	for _, tc := range []struct {
		name string
		// plant makes the attack; cd is .git/commondir, out a directory
		// outside the workspace holding the file "victim".
		plant func(t *testing.T, ws, cd, out string)
		// moved: the name is moved aside (else it is reported, not moved).
		moved bool
	}{
		{"a symbolic link to a file outside", func(t *testing.T, ws, cd, out string) {
			must(t, os.Symlink(filepath.Join(out, "victim"), cd))
		}, true},
		{"a symbolic link to a directory outside", func(t *testing.T, ws, cd, out string) {
			must(t, os.Symlink(out, cd))
		}, true},
		{"a dangling symbolic link", func(t *testing.T, ws, cd, out string) {
			must(t, os.Symlink(filepath.Join(out, "nothing"), cd))
		}, true},
		{"a directory", func(t *testing.T, ws, cd, out string) {
			must(t, os.MkdirAll(filepath.Join(cd, "sub"), 0o755))
		}, true},
		{"a read-only directory", func(t *testing.T, ws, cd, out string) {
			must(t, os.Mkdir(cd, 0o755))
			must(t, os.WriteFile(filepath.Join(cd, "f"), nil, 0o644))
			must(t, os.Chmod(cd, 0o500))
			t.Cleanup(func() {
				filepath.Walk(ws, func(p string, _ fs.FileInfo, _ error) error { os.Chmod(p, 0o755); return nil })
			})
		}, true},
		{"a fifo", func(t *testing.T, ws, cd, out string) {
			must(t, syscall.Mkfifo(cd, 0o644))
		}, true},
		{".git replaced with a symbolic link to a directory outside", func(t *testing.T, ws, cd, out string) {
			must(t, os.Rename(filepath.Join(ws, ".git"), filepath.Join(ws, "git-old")))
			must(t, os.WriteFile(filepath.Join(out, "commondir"), []byte("x\n"), 0o644))
			must(t, os.Symlink(out, filepath.Join(ws, ".git")))
		}, false},
		{".git/.. path: the workspace's parent swapped is not reachable, .git a link to itself", func(t *testing.T, ws, cd, out string) {
			must(t, os.Rename(filepath.Join(ws, ".git"), filepath.Join(ws, "git-old")))
			must(t, os.Symlink(".", filepath.Join(ws, ".git")))
			must(t, os.WriteFile(filepath.Join(ws, "commondir"), []byte("x\n"), 0o644))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tree(t, "ws/.git/HEAD", "ws/.git/config", "ws/.git/objects/", "ws/.git/refs/", "out/victim")
			ws, out := d+"/ws", d+"/out"
			p, err := Derive(Spec{Zones: []Zone{{Name: "ws", Root: ws, Writable: true}}, ProtectNames: DefaultProtect, Cwd: ws})
			if err != nil {
				t.Fatal(err)
			}
			cd := ws + "/.git/commondir"
			tc.plant(t, ws, cd, out)
			got := p.MoveAsideCreated(time.Now())
			if len(got) != 1 {
				t.Fatalf("MoveAsideCreated = %q", got)
			}
			if tc.moved {
				if !strings.Contains(got[0], "moved aside to "+cd+".guardrun-quarantine-") {
					t.Fatalf("not moved: %q", got)
				}
				if _, err := os.Lstat(cd); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s still there: %v", cd, err)
				}
			} else if !strings.Contains(got[0], "not moved") {
				t.Errorf("moved through a replaced directory: %q", got)
			}
			// Nothing outside moved or changed.
			ents, _ := os.ReadDir(out)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if want := "victim"; !tc.moved && tc.name[:4] == ".git" && strings.Contains(tc.name, "outside") {
				want = "commondir victim"
				if strings.Join(names, " ") != want {
					t.Errorf("outside now holds %q, want %q", names, want)
				}
			} else if strings.Join(names, " ") != want {
				t.Errorf("outside now holds %q, want %q", names, want)
			}
			if fi, err := os.Lstat(filepath.Join(out, "victim")); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("victim outside changed: %v %v", fi, err)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
