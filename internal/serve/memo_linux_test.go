package serve_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/guardrun/guardrun/internal/config"
)

// Rows against what the server's process remembers between requests
// (package rules keeps decoded configs by file name, bytes, directory
// and environment): each request must get the config a guardrun started
// in its working directory at that moment would.

// TestServedSameBytesOtherDirectory: two repositories hold trusted
// project files with the same bytes, whose rw zone is their own
// directory (root: .). A request in each writes in its own directory:
// the decoding remembered for one is not the other's.
func TestServedSameBytesOtherDirectory(t *testing.T) {
	srv, work, audit := startServer(t)
	home := filepath.Join(filepath.Dir(work), "home")
	store := config.OpenTrustStore(filepath.Join(home, ".local", "state", "guardrun"))
	text := []byte("shell:\n  rules:\n    - {pattern: echo, approval: false}\nsandbox:\n  paths:\n    w: {root: ., mode: rw}\n")
	var dirs []string
	for _, name := range []string{"a", "b"} {
		d := filepath.Join(work, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(d, ".guardrun.yaml")
		if err := os.WriteFile(p, text, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := store.Trust(p, text); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	for i := range 2 {
		for _, d := range dirs {
			out := fmt.Sprintf("out%d", i)
			code, stderr, rec := served(t, srv, d, audit, "echo hi > "+out)
			if code != 0 || rec["outcome"] != "ran" {
				t.Errorf("in %s: exit %d, outcome %v, stderr %q", d, code, rec["outcome"], stderr)
			}
			if b, err := os.ReadFile(filepath.Join(d, out)); err != nil || string(b) != "hi\n" {
				t.Errorf("in %s: %s holds %q, %v: the write went elsewhere", d, out, b, err)
			}
		}
	}
}

// TestServedConfigBreaksAfterLoading: a project file that loaded, then
// rewritten so that it no longer does, is not served with the earlier
// decoding (the client's own guardrun reports the error); written valid
// again, it is obeyed.
func TestServedConfigBreaksAfterLoading(t *testing.T) {
	srv, work, audit := startServer(t)
	proj := filepath.Join(work, ".guardrun.yaml")
	if err := os.WriteFile(proj, []byte(blockEcho), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr, rec := served(t, srv, work, audit, "echo hi")
	wantRefused(t, "the project file blocking echo", code, stderr, rec)
	for _, broken := range []string{blockEcho + "  bogus: 1\n", blockEcho + "\tx", "shell:\n  rules:\n    - {pattern: echo, allowed: false, sandbox_paths: [nowhere]}\n"} {
		if err := os.WriteFile(proj, []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		c := dial(t, srv, work, "--approve-all", "-c", "echo hi")
		if r := c.reply(t); r != 'F' {
			t.Errorf("the project file broken (%q): reply %q, want F (the client reports the error)", broken, r)
		}
		c.c.Close()
	}
	if err := os.WriteFile(proj, []byte(blockEcho), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr, rec = served(t, srv, work, audit, "echo hi")
	wantRefused(t, "the project file valid again", code, stderr, rec)
}

// TestServedConcurrentRepositories: requests from two repositories at
// once, one whose project file blocks echo and one without, each get
// their own config however they interleave.
func TestServedConcurrentRepositories(t *testing.T) {
	srv, work, _ := startServer(t)
	a, b := twoRepos(t, work)
	const n = 12
	var wg sync.WaitGroup
	for i := range n {
		dir, want := b, 0
		if i%2 == 0 {
			dir, want = a, 77
		}
		c := dial(t, srv, dir, "--approve-all", "-c", "echo hi")
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := c.reply(t); r != 'R' {
				t.Errorf("in %s: reply %q, want R", dir, r)
				return
			}
			code := c.exit(t)
			c.c.Close()
			errOut, _ := io.ReadAll(c.stderr)
			if code != want {
				t.Errorf("in %s: exit %d, want %d; stderr %q", dir, code, want, errOut)
			}
		}()
	}
	wg.Wait()
}

// TestServedLinkedWorkingDirectory: a client whose $PWD is a link
// (cd'ed into through it) has the project files above the link's path,
// as its own guardrun's os.Getwd would give it, however the link is
// pointed between requests; without that $PWD, those above the real
// directory.
func TestServedLinkedWorkingDirectory(t *testing.T) {
	srv, work, _ := startServer(t)
	guarded, plain := filepath.Join(work, "guarded"), filepath.Join(work, "plain")
	for _, d := range []string{filepath.Join(guarded, "x"), filepath.Join(plain, "real")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(guarded, ".guardrun.yaml"), []byte(blockEcho), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(guarded, "link")
	real := filepath.Join(plain, "real")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	run := func(pwd string) (int, string) {
		env := append(without(os.Environ(), "PWD"), "PWD="+pwd)
		c := dialEnv(t, srv, link, env, "--approve-all", "-c", "echo hi")
		if r := c.reply(t); r != 'R' {
			t.Fatalf("PWD=%s: reply %q, want R", pwd, r)
		}
		code := c.exit(t)
		c.c.Close()
		errOut, _ := io.ReadAll(c.stderr)
		return code, string(errOut)
	}
	for i := range 2 {
		if code, stderr := run(link); code != 77 {
			t.Errorf("round %d, PWD the link under the guarded tree: exit %d, want 77 (blocked); stderr %q", i, code, stderr)
		}
		if code, stderr := run(real); code != 0 {
			t.Errorf("round %d, PWD the real directory: exit %d, want 0; stderr %q", i, code, stderr)
		}
	}
}
