//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// defaultWorld is a world with no config of its own: guardrun finds none
// and uses the embedded default, whose workspace is the working
// directory.
func defaultWorld(t *testing.T) *world {
	t.Helper()
	w := runWorld(t, "")
	env := w.env[:0]
	for _, kv := range w.env {
		if !strings.HasPrefix(kv, "GUARDRUN_CONFIG=") {
			env = append(env, kv)
		}
	}
	w.env = env
	return w
}

// ranRecord is the audit record of script having run.
func ranRecord(t *testing.T, w *world, script string) map[string]any {
	t.Helper()
	for _, r := range auditRecords(t, w) {
		if r["outcome"] == "ran" && r["script"] == script {
			return r
		}
	}
	t.Fatalf("no audit record of %q having run: %v", script, auditRecords(t, w))
	return nil
}

// TestDefaultRunsProjectCode: under the embedded default, the project's
// own node script deletes, rewrites, re-permissions and relinks files
// without a question (there is no terminal: a question would refuse it),
// audited as decided by the rule with a checkpoint; guardrun undo puts
// every file back.
func TestDefaultRunsProjectCode(t *testing.T) {
	requireSandbox(t)
	testenv.LookPath(t, "node")
	w := defaultWorld(t)
	checkpointProject(t, w.work)
	before := treeOf(t, w.work)

	if out, errOut, code := runPlain(t, w, "", nil, "-c", "node rewrite.js"); code != 0 {
		t.Fatalf("node rewrite.js under the default: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	after := treeOf(t, w.work)
	if _, ok := after["README.md"]; ok || after["link"] == before["link"] {
		t.Fatalf("the script did not run as expected:\n%v", after)
	}
	r := ranRecord(t, w, "node rewrite.js")
	if r["decided_by"] != "rule" || r["rule"] != "node" || r["checkpoint"] != float64(1) {
		t.Errorf("the audit record: decided_by %v, rule %v, checkpoint %v; want rule, node, 1", r["decided_by"], r["rule"], r["checkpoint"])
	}

	if out, errOut, code := runPlain(t, w, "", nil, "undo", "--yes"); code != 0 || !strings.Contains(out, "node rewrite.js") {
		t.Fatalf("guardrun undo --yes: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	want := before
	for _, ignored := range []string{"build/out.o", "debug.log"} {
		want[ignored] = after[ignored]
	}
	if diff := cmp.Diff(treeOf(t, w.work), want); diff != "" {
		t.Errorf("the zone after undo (-got +want):\n%s", diff)
	}
}

// TestDefaultProjectCodeUncheckpointable: where the workspace cannot be
// checkpointed (it holds a repository of its own), the same script asks
// and says why: refused with no terminal and in strict mode, a prompt
// naming the reason and the remedy on a terminal; nothing runs.
func TestDefaultProjectCodeUncheckpointable(t *testing.T) {
	requireSandbox(t)
	testenv.LookPath(t, "node")
	w := defaultWorld(t)
	checkpointProject(t, w.work)
	nested := filepath.Join(w.work, "vendor", "lib")
	if out, err := exec.Command("git", "init", "-q", nested).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(nested, "lib.c"), []byte("int lib;\n"), 0o644)
	before := treeOf(t, w.work)
	why := []string{"not checkpointed:", "vendor/lib is a git repository inside the zone", "list it in .gitignore", `rule "node" lets node rewrite.js run unasked only where undo can take it back`}

	for _, args := range [][]string{{"-c", "node rewrite.js"}, {"--strict", "-c", "node rewrite.js"}} {
		_, errOut, code := runPlain(t, w, "", nil, args...)
		if code != 77 {
			t.Errorf("%q: exit %d, want 77\n%s", args, code, errOut)
		}
		for _, s := range why {
			if !strings.Contains(errOut, s) {
				t.Errorf("%q: the refusal does not say %q:\n%s", args, s, errOut)
			}
		}
	}
	r := startPrompt(t, w, nil, "-c", "node rewrite.js")
	r.waitFor(keyLine, 1)
	s := r.screen()
	for _, want := range append(why, "$ node rewrite.js") {
		if !strings.Contains(strings.Join(strings.Fields(s), " "), want) {
			t.Errorf("the prompt does not say %q:\n%s", want, s)
		}
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
}

// TestDefaultProjectTools: under the embedded default, npx runs a tool
// the project has in node_modules/.bin without a question; npx of a
// package the project does not have (which npx would download) asks,
// and so does rm -rf build, which deletes on purpose.
func TestDefaultProjectTools(t *testing.T) {
	requireSandbox(t)
	testenv.LookPath(t, "npx")
	w := defaultWorld(t)
	checkpointProject(t, w.work)
	bin := filepath.Join(w.work, "node_modules", ".bin")
	os.MkdirAll(bin, 0o755)
	if err := os.WriteFile(filepath.Join(bin, "eslint"), []byte("#!/bin/sh\necho \"the project's eslint: $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(w.work, "package.json"), []byte(`{"name": "p", "version": "1.0.0"}`), 0o644)

	out, errOut, code := runPlain(t, w, "", nil, "-c", "npx eslint src")
	if code != 0 || !strings.Contains(out, "the project's eslint: src") {
		t.Fatalf("npx eslint: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if r := ranRecord(t, w, "npx eslint src"); r["decided_by"] != "rule" || r["rule"] != "npx" {
		t.Errorf("npx eslint's audit record: %v", r)
	}

	for _, tt := range []struct{ script, why string }{
		{"npx cowsay hello", "cowsay is not in the project's node_modules/.bin, so npx would download a package of that name"},
		{"rm -rf build", "rm -rf build"},
	} {
		out, errOut, code := runPlain(t, w, "", nil, "-c", tt.script)
		if code != 77 || out != "" || !strings.Contains(errOut, tt.why) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 77 saying %q", tt.script, code, out, errOut, tt.why)
		}
	}
	if _, err := os.Stat(filepath.Join(w.work, "build", "out.o")); err != nil {
		t.Errorf("rm -rf build ran: %v", err)
	}
}

// coverJS deletes and rewrites files of the project, then leaves what
// would keep an undo from putting them back, or make it delete files it
// must leave: argv[2] says which.
const coverJS = `const fs = require("fs"), cp = require("child_process");
fs.rmSync("README.md");
fs.rmSync("docs", {recursive: true});
fs.writeFileSync("src/main.c", "int main() { return 1; }\n");
switch (process.argv[2]) {
case "gitignore":
	fs.writeFileSync(".gitignore", "");
	break;
case "repository":
	cp.execFileSync("git", ["init", "-q", "vendor"]);
	fs.writeFileSync("vendor/x.c", "int x;\n");
	break;
case "unreadable":
	fs.mkdirSync("locked");
	fs.writeFileSync("locked/f", "x\n");
	fs.chmodSync("locked", 0);
	fs.writeFileSync("lockedf", "x\n", {mode: 0});
	fs.chmodSync(".gitignore", 0);
	break;
}
`

// TestDefaultUndoAfterProjectCode: a script of the project, run unasked
// under the embedded default in strict mode, that deletes and rewrites
// files and then empties the .gitignore, makes a repository of its own
// inside the project, or (as an unprivileged user) leaves a directory,
// a file and the .gitignore nobody can read: guardrun undo --yes puts
// back every file it deleted or rewrote, leaves the ignored files
// (build/out.o, debug.log) as they were, and leaves what it made and
// cannot record as it is.
func TestDefaultUndoAfterProjectCode(t *testing.T) {
	requireSandbox(t)
	testenv.LookPath(t, "node")
	tests := []struct {
		trick string
		user  bool
		// left are the entries the script made that undo leaves.
		left []string
	}{
		{trick: "gitignore"},
		{trick: "repository", left: []string{"vendor"}},
		{trick: "unreadable", user: true, left: []string{"locked", "lockedf"}},
	}
	for _, tt := range tests {
		t.Run(tt.trick, func(t *testing.T) {
			w := defaultWorld(t)
			run := func(args ...string) (string, string, int) { return runPlain(t, w, "", nil, args...) }
			if tt.user {
				run = asTestUser(t, w)
			}
			checkpointProject(t, w.work)
			if err := os.WriteFile(filepath.Join(w.work, "cover.js"), []byte(coverJS), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.user {
				chownTree(t, filepath.Dir(w.work))
			}
			before := treeOf(t, w.work)

			script := "node cover.js " + tt.trick
			if out, errOut, code := run("--strict", "-c", script); code != 0 {
				t.Fatalf("%s under the default: exit %d\nstdout: %s\nstderr: %s", script, code, out, errOut)
			}
			if _, err := os.Stat(filepath.Join(w.work, "README.md")); err == nil {
				t.Fatalf("%s did not run", script)
			}
			if out, errOut, code := run("undo", "--yes"); code != 0 {
				t.Fatalf("guardrun undo --yes: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			for _, p := range tt.left {
				if _, err := os.Lstat(filepath.Join(w.work, p)); err != nil {
					t.Errorf("%s: %v; want it left as the script made it", p, err)
				}
				os.Chmod(filepath.Join(w.work, p), 0o755)
				os.RemoveAll(filepath.Join(w.work, p))
			}
			if diff := cmp.Diff(treeOf(t, w.work), before); diff != "" {
				t.Errorf("the project after undo, what the script made and undo leaves removed (-got +want):\n%s", diff)
			}
		})
	}
}

// asTestUser runs guardrun in w as the unprivileged test user, with w's
// environment (its home and state directory, which it then owns).
func asTestUser(t *testing.T, w *world) func(args ...string) (string, string, int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run guardrun as an unprivileged user")
	}
	testenv.LookPath(t, "runuser")
	const user = "guardrun-test"
	testenv.User(t, user)
	return func(args ...string) (string, string, int) {
		t.Helper()
		argv := append(append([]string{"runuser", "-u", user, "--", "env", "-i"}, w.env...), append([]string{guardrunBin}, args...)...)
		r := proc{dir: w.work}.run(argv...)
		if r.err != nil {
			t.Errorf("guardrun %q as %s: %v", args, user, r.err)
		}
		return r.stdout, r.stderr, r.code
	}
}

// chownTree gives dir and everything below it to the test user, and
// lets it reach dir.
func chownTree(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("chown", "-R", "guardrun-test", dir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v\n%s", err, out)
	}
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(d, fi.Mode().Perm()|0o011)
		}
	}
}
