//go:build linux

package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// checkpointConfig pre-approves two project scripts because a
// checkpoint is taken before they run (checkpoint: required), and ls,
// which writes nothing. %s is added to the config's end.
const checkpointConfig = `shell:
  program: /bin/bash
  default: {allowed: true, approval: true}
  rules:
    - {pattern: "node rewrite.js", approval: false, checkpoint: required}
    - {pattern: "python3 rewrite.py", approval: false, checkpoint: required}
    - {pattern: ls, approval: false, checkpoint: none}
    - {pattern: cat, approval: false}
sandbox:
  paths:
    workspace: {root: ., mode: rw}
%s`

// rewriteJS deletes, rewrites, re-permissions and relinks files of the
// zone, creates new ones and a directory, and changes an ignored file.
const rewriteJS = `
const fs = require("fs");
fs.rmSync("README.md");
fs.writeFileSync("src/main.c", "int main() { return 1; }\n");
fs.chmodSync("secret.txt", 0o644);
fs.writeFileSync("run.sh", "echo replaced\n");
fs.chmodSync("run.sh", 0o644);
fs.rmSync("docs", {recursive: true});
fs.writeFileSync("docs", "a file where a directory was\n");
fs.unlinkSync("link");
fs.symlinkSync("/etc/passwd", "link");
fs.mkdirSync("new/deep", {recursive: true});
fs.writeFileSync("new/deep/made.txt", "created\n");
fs.writeFileSync("binary.bin", Buffer.from([0, 1, 2, 255]));
fs.writeFileSync("build/out.o", "rebuilt, and ignored\n");
`

// project lays out a repository in dir: text and binary files of
// several permissions, CRLF line ends with a .gitattributes that asks
// for conversion, links, a directory, and ignored files.
func checkpointProject(t *testing.T, dir string) {
	t.Helper()
	files := []struct {
		path, content string
		perm          fs.FileMode
	}{
		{".gitignore", "build/\n*.log\n", 0o644},
		{".gitattributes", "* text=auto eol=lf\n", 0o644},
		{"README.md", "# project\r\nwindows line ends\r\n", 0o644},
		{"src/main.c", "int main() { return 0; }\n", 0o644},
		{"run.sh", "#!/bin/sh\necho hi\n", 0o755},
		{"secret.txt", "only mine\n", 0o600},
		{"shared.txt", "group reads\n", 0o640},
		{"docs/guide.md", "guide\n", 0o644},
		{"docs/deep/x.md", "x\n", 0o644},
		{"binary.bin", "\x00\xffbinary", 0o644},
		{"build/out.o", "ignored object\n", 0o644},
		{"debug.log", "ignored log\n", 0o600},
		{"rewrite.js", rewriteJS, 0o644},
	}
	for _, f := range files {
		p := filepath.Join(dir, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.content), f.perm); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, f.perm)
	}
	if err := os.Symlink("README.md", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

// treeOf describes every entry below root but .git: a file's
// permissions and content hash, a link's target, a directory.
func treeOf(t *testing.T, root string) map[string]string {
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
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			out[rel] = fmt.Sprintf("%v %s", fi.Mode(), hex.EncodeToString(h[:8]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestUndoAfterPreApprovedScript: a pre-approved node script deletes,
// rewrites, re-permissions and relinks files; guardrun undo puts every
// byte, mode and link target back, removes what it created, and leaves
// the ignored files as the script left them. The audit log names the
// checkpoint, and the undo.
func TestUndoAfterPreApprovedScript(t *testing.T) {
	requireSandbox(t)
	testenv.LookPath(t, "node")
	w := runWorld(t, fmt.Sprintf(checkpointConfig, ""))
	checkpointProject(t, w.work)
	before := treeOf(t, w.work)

	if out, errOut, code := runPlain(t, w, "", nil, "-c", "node rewrite.js"); code != 0 {
		t.Fatalf("node rewrite.js: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	after := treeOf(t, w.work)
	if after["secret.txt"] == before["secret.txt"] || after["link"] == before["link"] {
		t.Fatalf("the script did not run as expected:\n%v", after)
	}

	out, errOut, code := runPlain(t, w, "", nil, "checkpoints")
	if code != 0 || !strings.Contains(out, "node rewrite.js") || !strings.Contains(out, "+2 ~5 -3 until now") {
		t.Errorf("guardrun checkpoints: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runPlain(t, w, "", nil, "undo", "--yes")
	if code != 0 {
		t.Fatalf("guardrun undo --yes: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	for _, want := range []string{"undo checkpoint 1", "node rewrite.js", "delete new/deep/made.txt", "-int main() { return 1; }", "+int main() { return 0; }"} {
		if !strings.Contains(out, want) {
			t.Errorf("the undo did not show %q:\n%s", want, out)
		}
	}
	want := before
	for _, ignored := range []string{"build/out.o", "debug.log"} {
		want[ignored] = after[ignored]
	}
	if diff := cmp.Diff(treeOf(t, w.work), want); diff != "" {
		t.Errorf("the zone after undo (-got +want):\n%s", diff)
	}

	recs := auditRecords(t, w)
	var ran, undo map[string]any
	for _, r := range recs {
		switch {
		case r["outcome"] == "ran" && r["script"] == "node rewrite.js":
			ran = r
		case r["op"] == "undo":
			undo = r
		}
	}
	if ran == nil || ran["checkpoint"] != float64(1) {
		t.Errorf("the script's audit record does not name checkpoint 1: %v", ran)
	}
	if undo == nil || undo["undo"] != float64(1) || undo["checkpoint"] != float64(2) || undo["outcome"] != "ran" {
		t.Errorf("the undo's audit record: %v", undo)
	}

	// The undo was checkpointed: undoing it brings the script's work back.
	if out, errOut, code := runPlain(t, w, "", nil, "undo", "--yes", "2"); code != 0 {
		t.Fatalf("guardrun undo 2: exit %d\n%s%s", code, out, errOut)
	}
	if diff := cmp.Diff(treeOf(t, w.work), after); diff != "" {
		t.Errorf("the zone after undoing the undo (-got +want):\n%s", diff)
	}
}

// TestUndoPythonDeletesTree: a pre-approved python script that deletes
// every file it can reach and writes one new one; undo restores the
// whole tree.
func TestUndoPythonDeletesTree(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, fmt.Sprintf(checkpointConfig, ""))
	checkpointProject(t, w.work)
	// What it cannot delete (the sandbox's read-only stand-ins for
	// protected names such as .vscode) it leaves.
	script := `import os, shutil
for e in os.listdir("."):
    if e in (".git", "rewrite.py"):
        continue
    try:
        if os.path.isdir(e) and not os.path.islink(e):
            shutil.rmtree(e)
        else:
            os.remove(e)
    except OSError:
        pass
open("ALL GONE", "w").write("sorry\n")
`
	if err := os.WriteFile(filepath.Join(w.work, "rewrite.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeOf(t, w.work)
	if out, errOut, code := runPlain(t, w, "", nil, "-c", "python3 rewrite.py"); code != 0 {
		t.Fatalf("python3 rewrite.py: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(w.work, "src")); err == nil {
		t.Fatal("the script did not delete src")
	}
	if out, errOut, code := runPlain(t, w, "", nil, "undo", "--yes"); code != 0 {
		t.Fatalf("guardrun undo: exit %d\n%s%s", code, out, errOut)
	}
	got := treeOf(t, w.work)
	want := before
	// Ignored files are not recorded: what the script deleted of them
	// stays deleted.
	for _, ignored := range []string{"build", "build/out.o", "debug.log"} {
		delete(want, ignored)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("the zone after undo (-got +want):\n%s", diff)
	}
}

// TestUndoWithoutCheckpoints: undo with nothing recorded says so, and
// changes nothing; so does the listing.
func TestUndoWithoutCheckpoints(t *testing.T) {
	w := runWorld(t, fmt.Sprintf(checkpointConfig, ""))
	checkpointProject(t, w.work)
	before := treeOf(t, w.work)
	_, errOut, code := runPlain(t, w, "", nil, "undo", "--yes")
	if code == 0 || !strings.Contains(errOut, "nothing to undo: no checkpoints of "+w.work+" yet") {
		t.Errorf("undo with no checkpoints: exit %d, stderr %q", code, errOut)
	}
	out, _, code := runPlain(t, w, "", nil, "checkpoints")
	if code != 0 || !strings.Contains(out, "no checkpoints of "+w.work+" yet") {
		t.Errorf("checkpoints with none: exit %d, %q", code, out)
	}
	if diff := cmp.Diff(treeOf(t, w.work), before); diff != "" {
		t.Errorf("the zone changed (-got +want):\n%s", diff)
	}
}

// TestUndoNeedsPerson: without --yes and with no terminal, undo refuses
// (77) and changes nothing; --dry-run shows the same changes and makes
// none.
func TestUndoNeedsPerson(t *testing.T) {
	requireSandbox(t)
	testenv.LookPath(t, "node")
	w := runWorld(t, fmt.Sprintf(checkpointConfig, ""))
	checkpointProject(t, w.work)
	if _, errOut, code := runPlain(t, w, "", nil, "-c", "node rewrite.js"); code != 0 {
		t.Fatalf("node rewrite.js: exit %d: %s", code, errOut)
	}
	after := treeOf(t, w.work)
	out, _, code := runPlain(t, w, "", nil, "undo", "--dry-run")
	if code != 0 || !strings.Contains(out, "delete new/deep/made.txt") {
		t.Errorf("undo --dry-run: exit %d\n%s", code, out)
	}
	_, errOut, code := runPlain(t, w, "", nil, "undo")
	if code != 77 || !strings.Contains(errOut, "no terminal to ask on") {
		t.Errorf("undo without a terminal: exit %d, stderr %q; want 77", code, errOut)
	}
	if diff := cmp.Diff(treeOf(t, w.work), after); diff != "" {
		t.Errorf("the zone changed (-got +want):\n%s", diff)
	}
}

// TestUndoConfirmedOnTerminal: on a terminal the undo is a prompt that
// shows the changes; y restores.
func TestUndoConfirmedOnTerminal(t *testing.T) {
	requireSandbox(t)
	testenv.LookPath(t, "node")
	w := runWorld(t, fmt.Sprintf(checkpointConfig, ""))
	checkpointProject(t, w.work)
	before := treeOf(t, w.work)
	if _, errOut, code := runPlain(t, w, "", nil, "-c", "node rewrite.js"); code != 0 {
		t.Fatalf("node rewrite.js: exit %d: %s", code, errOut)
	}
	r := startPrompt(t, w, nil, "undo")
	r.waitFor(keyLine, 1)
	if s := r.screen(); !strings.Contains(s, "undo checkpoint 1") || !strings.Contains(s, "$ guardrun undo 1") {
		t.Errorf("the prompt does not show the undo:\n%s", s)
	}
	r.send("y")
	if code := r.wait(); code != 0 {
		t.Fatalf("undo after y: exit %d; stderr: %s", code, r.stderr.String())
	}
	got := treeOf(t, w.work)
	for _, ignored := range []string{"build/out.o", "debug.log"} {
		before[ignored] = got[ignored]
	}
	if diff := cmp.Diff(got, before); diff != "" {
		t.Errorf("the zone after undo (-got +want):\n%s", diff)
	}
}

// TestConcurrentRunsCheckpoint: guardruns running pre-approved scripts
// in one zone at once (make -j, two agents) each get a checkpoint, the
// store stays whole, and undoing the first puts back the tree from
// before all of them.
func TestConcurrentRunsCheckpoint(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, fmt.Sprintf(checkpointConfig, ""))
	checkpointProject(t, w.work)
	script := `import os, sys, time
n = sys.argv[1] if len(sys.argv) > 1 else str(os.getpid())
os.makedirs("out", exist_ok=True)
for i in range(5):
    open(f"out/{n}-{i}", "w").write("x" * i)
    time.sleep(0.01)
`
	os.WriteFile(filepath.Join(w.work, "rewrite.py"), []byte(script), 0o644)
	before := treeOf(t, w.work)
	const runs = 6
	var wg sync.WaitGroup
	codes := make([]int, runs)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errOut, code := runPlain(t, w, "", nil, "-c", "python3 rewrite.py")
			codes[i] = code
			if code != 0 {
				t.Errorf("run %d: exit %d: %s", i, code, errOut)
			}
		}()
	}
	wg.Wait()
	var nums []float64
	for _, r := range auditRecords(t, w) {
		if r["outcome"] == "ran" {
			n, ok := r["checkpoint"].(float64)
			if !ok || n < 1 {
				t.Errorf("a run without a checkpoint: %v", r)
			}
			nums = append(nums, n)
		}
	}
	if len(nums) != runs {
		t.Fatalf("%d runs audited, want %d", len(nums), runs)
	}
	out, errOut, code := runPlain(t, w, "", nil, "checkpoints", "--json")
	if code != 0 {
		t.Fatalf("checkpoints: exit %d: %s", code, errOut)
	}
	requests := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var c struct {
			N        int
			Requests []json.RawMessage
			Error    string `json:"changed_error"`
		}
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatal(err)
		}
		if c.Error != "" {
			t.Errorf("checkpoint %d: %s", c.N, c.Error)
		}
		requests += len(c.Requests)
	}
	if requests != runs {
		t.Errorf("the checkpoints list %d requests, want %d:\n%s", requests, runs, out)
	}
	first := nums[0]
	for _, n := range nums {
		first = min(first, n)
	}
	if out, errOut, code := runPlain(t, w, "", nil, "undo", "--yes", fmt.Sprint(first)); code != 0 {
		t.Fatalf("undo %v: exit %d\n%s%s", first, code, out, errOut)
	}
	if diff := cmp.Diff(treeOf(t, w.work), before); diff != "" {
		t.Errorf("the zone after undoing the first checkpoint (-got +want):\n%s", diff)
	}
}

// storeObjects are the loose object files of the checkpoint stores.
func storeObjects(t *testing.T, w *world) []string {
	t.Helper()
	var out []string
	root := filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun", "checkpoints", "zones")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && len(d.Name()) == 38 {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestUncheckpointableAsks: where the store is damaged (an object
// corrupted) or full (a tiny limit), a pre-approval that relies on undo
// asks instead: refused in strict mode (77), refused with no terminal,
// a prompt that says why on a terminal; nothing runs, no file is
// lost; a plain pre-approval that writes still runs, with a warning, and
// one predicted to write nothing needs no checkpoint.
func TestUncheckpointableAsks(t *testing.T) {
	requireSandbox(t)
	testenv.LookPath(t, "node")
	tests := []struct {
		name   string
		extra  string
		damage func(t *testing.T, w *world)
		why    string
	}{
		{name: "damaged store", damage: func(t *testing.T, w *world) {
			// A first checkpoint (of ls > listing, which writes), then
			// every object of the store corrupted.
			if _, errOut, code := runPlain(t, w, "", nil, "-c", "cat README.md > listing.txt"); code != 0 {
				t.Fatalf("cat: exit %d: %s", code, errOut)
			}
			objs := storeObjects(t, w)
			if len(objs) == 0 {
				t.Fatal("no objects in the store")
			}
			for _, o := range objs {
				os.Chmod(o, 0o600)
				os.WriteFile(o, []byte("garbage"), 0o400)
			}
		}, why: "is damaged"},
		{name: "full store", extra: "checkpoints: {max_store_bytes: 100}\n", why: "checkpoint store is full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := runWorld(t, fmt.Sprintf(checkpointConfig, tt.extra))
			checkpointProject(t, w.work)
			if tt.damage != nil {
				tt.damage(t, w)
			}
			before := treeOf(t, w.work)

			_, errOut, code := runPlain(t, w, "", nil, "--strict", "-c", "node rewrite.js")
			if code != 77 || !strings.Contains(errOut, "denied (strict mode): not checkpointed:") || !strings.Contains(errOut, tt.why) {
				t.Errorf("strict: exit %d, stderr %q; want 77 naming why", code, errOut)
			}
			_, errOut, code = runPlain(t, w, "", nil, "-c", "node rewrite.js")
			if code != 77 || !strings.Contains(errOut, "not checkpointed:") {
				t.Errorf("no terminal: exit %d, stderr %q; want 77", code, errOut)
			}
			r := startPrompt(t, w, nil, "-c", "node rewrite.js")
			r.waitFor(keyLine, 1)
			if s := r.screen(); !strings.Contains(s, "not checkpointed") || !strings.Contains(s, tt.why) {
				t.Errorf("the prompt does not say why it asks:\n%s", s)
			}
			r.send("n")
			r.waitFor("note for the agent", 1)
			r.send("\r")
			if code := r.wait(); code != 77 {
				t.Errorf("denied at the prompt: exit %d", code)
			}
			if diff := cmp.Diff(treeOf(t, w.work), before); diff != "" {
				t.Errorf("files changed though nothing was approved (-got +want):\n%s", diff)
			}
			out, errOut, code := runPlain(t, w, "", nil, "-c", "cat README.md")
			if code != 0 || !strings.Contains(out, "# project") || strings.Contains(errOut, "checkpoint") {
				t.Errorf("a pre-approval that writes nothing: exit %d, stdout %q, stderr %q; want it run, needing no checkpoint", code, out, errOut)
			}
			_, errOut, code = runPlain(t, w, "", nil, "-c", "cat README.md > copy.txt")
			if code != 0 || !fileIn(t, w, "copy.txt") || !strings.Contains(errOut, "warning: not checkpointed:") {
				t.Errorf("a plain pre-approval that writes: exit %d, stderr %q; want it run with a warning", code, errOut)
			}
		})
	}
}

// TestCheckpointStoreHidden: the checkpoint store lies in guardrun's
// state directory, which no command can see.
func TestCheckpointStoreHidden(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, fmt.Sprintf(checkpointConfig, ""))
	checkpointProject(t, w.work)
	if _, errOut, code := runPlain(t, w, "", nil, "-c", "cat README.md > listing.txt"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	store := filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun", "checkpoints")
	if _, err := os.Stat(store); err != nil {
		t.Fatalf("no store at %s: %v", store, err)
	}
	out, _, _ := runPlain(t, w, "", nil, "--approve-all", "-c", "ls -la "+store+"; echo done")
	if strings.Contains(out, "zones") || strings.Contains(out, "log.jsonl") {
		t.Errorf("a command sees the checkpoint store:\n%s", out)
	}
}
