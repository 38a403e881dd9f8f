package serve_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/serve"
)

// The server loads the config anew for every request, as a guardrun
// started there would: what a person changes between two served
// requests (a project file created, the user config edited, a file
// trusted or no longer trusted, $GUARDRUN_CONFIG's file edited, another
// working directory) is obeyed by the next one. Each test makes a
// command that ran refused, or one that was refused run.

// lastRecord is the last record of the audit log at audit.
func lastRecord(t *testing.T, audit string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// served runs script through srv in dir and returns the exit status,
// what guardrun printed on stderr and the request's last audit record.
func served(t *testing.T, srv *serve.Server, dir, audit, script string) (int, string, map[string]any) {
	t.Helper()
	c := dial(t, srv, dir, "--approve-all", "-c", script)
	if r := c.reply(t); r != 'R' {
		errOut, _ := io.ReadAll(c.stderr)
		t.Fatalf("%q in %s: reply %q, want R: %s", script, dir, r, errOut)
	}
	code := c.exit(t)
	c.c.Close()
	errOut, _ := io.ReadAll(c.stderr)
	rec := lastRecord(t, audit)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec["script"] != script || rec["cwd"] != real || rec["via"] != "server" {
		t.Fatalf("last audit record is not this request's: %v", rec)
	}
	return code, string(errOut), rec
}

// wantRan and wantRefused check a request's outcome as its person sees
// it: the exit status, the refusal on stderr, the audit's verdict.
func wantRan(t *testing.T, what string, code int, stderr string, rec map[string]any) {
	t.Helper()
	if code != 0 || rec["verdict"] != "allow" || rec["outcome"] != "ran" {
		t.Errorf("%s: exit %d, verdict %v, outcome %v, want 0, allow, ran; stderr %q", what, code, rec["verdict"], rec["outcome"], stderr)
	}
}

func wantRefused(t *testing.T, what string, code int, stderr string, rec map[string]any) {
	t.Helper()
	if code != 77 || rec["verdict"] != "block" || !strings.Contains(stderr, "guardrun: blocked: echo hi") {
		t.Errorf("%s: exit %d, verdict %v, stderr %q; want 77, block, guardrun: blocked", what, code, rec["verdict"], stderr)
	}
}

const blockEcho = "shell:\n  rules:\n    - {pattern: echo, allowed: false}\n"

// zone is a config's sandbox section with dir as its rw zone.
func zone(dir string) string { return "sandbox:\n  paths:\n    w: {root: " + dir + ", mode: rw}\n" }

// writeUserConfig writes the user config of startServer's world.
func writeUserConfig(t *testing.T, work, text string) string {
	t.Helper()
	user := filepath.Join(filepath.Dir(work), "home", ".config", "guardrun", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return user
}

// TestServedProjectFileCreated: a .guardrun.yaml created in the working
// directory, or in a parent, after a served request tightens the next.
func TestServedProjectFileCreated(t *testing.T) {
	srv, work, audit := startServer(t)
	sub := filepath.Join(work, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{work, sub} {
		code, stderr, rec := served(t, srv, dir, audit, "echo hi")
		wantRan(t, "before any project file, in "+dir, code, stderr, rec)
	}
	// In the parent of the working directory sub.
	if err := os.WriteFile(filepath.Join(work, ".guardrun.yaml"), []byte(blockEcho), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr, rec := served(t, srv, sub, audit, "echo hi")
	wantRefused(t, "a project file created in the parent", code, stderr, rec)
	// And in the working directory itself, replacing the parent's
	// (removed) as the nearest.
	os.Remove(filepath.Join(work, ".guardrun.yaml"))
	code, stderr, rec = served(t, srv, sub, audit, "echo hi")
	wantRan(t, "the parent's project file removed", code, stderr, rec)
	if err := os.WriteFile(filepath.Join(sub, ".guardrun.yaml"), []byte(blockEcho), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr, rec = served(t, srv, sub, audit, "echo hi")
	wantRefused(t, "a project file created in the working directory", code, stderr, rec)
}

// TestServedUserConfigEdited: the user config rewritten with the same
// size and its modification time put back is obeyed at once.
func TestServedUserConfigEdited(t *testing.T) {
	srv, work, audit := startServer(t)
	allow := "shell:\n  rules:\n    - {pattern: echo, approval: false}\n" + zone(work)
	block := "shell:\n  rules:\n    - {pattern: echo, allowed: false }\n" + zone(work)
	if len(allow) != len(block) {
		t.Fatal("the test's configs must have one size")
	}
	user := writeUserConfig(t, work, allow)
	code, stderr, rec := served(t, srv, work, audit, "echo hi")
	wantRan(t, "the user config allowing echo", code, stderr, rec)
	fi, err := os.Stat(user)
	if err != nil {
		t.Fatal(err)
	}
	// Rewritten in place (same inode), same size, same mtime.
	f, err := os.OpenFile(user, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(block), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(user, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if now, err := os.Stat(user); err != nil || now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("the rewrite changed size or mtime: %v %v", now, err)
	}
	code, stderr, rec = served(t, srv, work, audit, "echo hi")
	wantRefused(t, "the user config rewritten to block echo", code, stderr, rec)
}

// TestServedTrustChanged: trusting a project file that allows what the
// user config blocks makes the next served request run it; revoking the
// trust, or editing the trusted file, makes it refused again.
func TestServedTrustChanged(t *testing.T) {
	srv, work, audit := startServer(t)
	home := filepath.Join(filepath.Dir(work), "home")
	writeUserConfig(t, work, blockEcho+zone(work))
	proj := filepath.Join(work, ".guardrun.yaml")
	allow := []byte("shell:\n  rules:\n    - {pattern: echo, approval: false}\n" + zone("."))
	if err := os.WriteFile(proj, allow, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr, rec := served(t, srv, work, audit, "echo hi")
	wantRefused(t, "an untrusted project file cannot loosen the user config", code, stderr, rec)

	store := config.OpenTrustStore(filepath.Join(home, ".local", "state", "guardrun"))
	if err := store.Trust(proj, allow); err != nil {
		t.Fatal(err)
	}
	code, stderr, rec = served(t, srv, work, audit, "echo hi")
	wantRan(t, "the project file trusted", code, stderr, rec)

	if ok, err := store.Revoke(proj); err != nil || !ok {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	code, stderr, rec = served(t, srv, work, audit, "echo hi")
	wantRefused(t, "the project file's trust revoked", code, stderr, rec)

	// Trusted again, then edited (same size): no longer the file trusted.
	if err := store.Trust(proj, allow); err != nil {
		t.Fatal(err)
	}
	code, stderr, rec = served(t, srv, work, audit, "echo hi")
	wantRan(t, "the project file trusted again", code, stderr, rec)
	if err := os.WriteFile(proj, []byte(strings.Replace(string(allow), "pattern: echo", "pattern: ech0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr, rec = served(t, srv, work, audit, "echo hi")
	wantRefused(t, "the trusted project file edited", code, stderr, rec)
}

// TestServedOtherRepository: requests from two repositories, one after
// the other, each get their own project file.
func TestServedOtherRepository(t *testing.T) {
	srv, work, audit := startServer(t)
	a, b := twoRepos(t, work)
	for i := 0; i < 2; i++ {
		code, stderr, rec := served(t, srv, a, audit, "echo hi")
		wantRefused(t, "in the repository whose project file blocks echo", code, stderr, rec)
		code, stderr, rec = served(t, srv, b, audit, "echo hi")
		wantRan(t, "in the repository without one", code, stderr, rec)
	}
	// The directory b swapped for a link to a: the same path, a's file.
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a, b); err != nil {
		t.Fatal(err)
	}
	code, stderr, rec := served(t, srv, b, audit, "echo hi")
	wantRefused(t, "b a link to a", code, stderr, rec)
}

// TestServedGuardrunConfigEdited: the file $GUARDRUN_CONFIG names,
// edited between two served requests, is obeyed by the second.
func TestServedGuardrunConfigEdited(t *testing.T) {
	srv, work, audit := startServerConfig(t, "shell:\n  rules:\n    - {pattern: echo, approval: false}\nsandbox:\n  paths:\n    w: {root: {work}, mode: rw}\n")
	code, stderr, rec := served(t, srv, work, audit, "echo hi")
	wantRan(t, "$GUARDRUN_CONFIG allowing echo", code, stderr, rec)
	gc := os.Getenv("GUARDRUN_CONFIG")
	b, err := os.ReadFile(gc)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(gc)
	edited := strings.Replace(string(b), "approval: false}", "allowed: false} ", 1)
	if len(edited) != len(b) {
		t.Fatal("the edit must keep the size")
	}
	if err := os.WriteFile(gc, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(gc, fi.ModTime(), fi.ModTime())
	code, stderr, rec = served(t, srv, work, audit, "echo hi")
	wantRefused(t, "$GUARDRUN_CONFIG edited to block echo", code, stderr, rec)
}

// TestServedProjectLinkRetargeted: a .guardrun.yaml replaced, between
// two served requests, by a link to a file of the same size is not
// served with what the regular file said (nor with what the link leads
// to: a project file is never read through a link, see
// config.ReadProject); the server leaves the request to the client,
// whose own run reports the link.
func TestServedProjectLinkRetargeted(t *testing.T) {
	srv, work, audit := startServer(t)
	dir := t.TempDir()
	quiet := strings.Replace(blockEcho, "echo", "ech0", 1)
	b := filepath.Join(dir, "b.yaml")
	if err := os.WriteFile(b, []byte(blockEcho), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(work, ".guardrun.yaml")
	if err := os.WriteFile(link, []byte(quiet), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr, rec := served(t, srv, work, audit, "echo hi")
	wantRan(t, "the project file blocking ech0", code, stderr, rec)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(b, link); err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv, work, "--approve-all", "-c", "echo hi")
	if r := c.reply(t); r == 'R' {
		t.Errorf("the project file replaced by a link: served (exit %d), want left to the client", c.exit(t))
	}
	c.c.Close()
	if last := lastRecord(t, audit); last["time"] != rec["time"] || last["script"] != rec["script"] {
		t.Errorf("the project file replaced by a link: audit %v, want no record after the first request's", last)
	}
}

// TestServedModePerRequest: one request's --mode is not the next one's:
// an unknown command run with --approve-all is refused with --mode
// strict right after; without --mode, the config's (interactive) would
// ask a person, so the server leaves it to the client (F); with
// --approve-all it runs again.
func TestServedModePerRequest(t *testing.T) {
	srv, work, audit := startServer(t)
	for _, mode := range []string{"approve-all", "strict", "", "approve-all"} {
		args := []string{"-c", "tac </dev/null"}
		if mode != "" {
			args = append([]string{"--mode", mode}, args...)
		}
		c := dial(t, srv, work, args...)
		r := c.reply(t)
		if mode == "" {
			if r != 'F' {
				t.Errorf("without --mode: reply %q, want F (a person would be asked)", r)
			}
			c.c.Close()
			continue
		}
		if r != 'R' {
			t.Fatalf("--mode %s: reply %q, want R", mode, r)
		}
		code := c.exit(t)
		c.c.Close()
		rec := lastRecord(t, audit)
		want, outcome := 0, "ran"
		if mode == "strict" {
			want, outcome = 77, "refused"
		}
		if code != want || rec["outcome"] != outcome {
			t.Errorf("--mode %s: exit %d, outcome %v; want %d, %s", mode, code, rec["outcome"], want, outcome)
		}
	}
}

// twoRepos makes the directories a and b in work, a with a project file
// that blocks echo, b without one.
func twoRepos(t *testing.T, work string) (a, b string) {
	t.Helper()
	a, b = filepath.Join(work, "a"), filepath.Join(work, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(a, ".guardrun.yaml"), []byte(blockEcho), 0o644); err != nil {
		t.Fatal(err)
	}
	return a, b
}
