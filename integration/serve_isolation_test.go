//go:build linux

package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// Attacks on the served path from what runs through it: served landlock
// commands against the server and against each other, the server's
// long-lived state (config edited between commands, its binary
// replaced). Every escape attempt runs inside the sandbox under test,
// and each row first checks that it did (a direct write outside fails,
// the audit says the command was served under the backend).

// isolationConfig: echo, sleep, cat and the like run without a person; the
// work directory is the only writable zone.
var isolationConfig = configWithRules(`    - pattern: kill
      approval: false
    - pattern: ls
      approval: false
    - pattern: printf
      approval: false
    - pattern: head
      approval: false
`)

// serveTimed is serveScript bounded by a minute: a row whose attack
// stopped the server fails instead of hanging.
func serveTimed(t *testing.T, w *world, gr, script string, extraEnv ...string) (stdout, stderr string, code int) {
	t.Helper()
	p := proc{dir: w.work, env: append(append([]string{}, w.env...), extraEnv...), limit: time.Minute, waitDelay: 10 * time.Second}
	r := p.run(gr, "serve", "--", "sh", "-c", script)
	if r.timedOut {
		t.Fatalf("guardrun serve did not end within a minute (a stalled server?)\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if r.err != nil {
		t.Fatalf("guardrun serve: %v", r.err)
	}
	return r.stdout, r.stderr, r.code
}

// servedUnder fails unless script has a start record saying it was served
// under backend: the attack ran where the row says.
func servedUnder(t *testing.T, w *world, script, backend string) {
	t.Helper()
	recs := recordsOf(auditRecords(t, w), script)
	if len(recs) == 0 || recs[0]["via"] != "server" || recs[0]["sandbox"] != backend {
		t.Fatalf("%q was not served under %s: %v", script, backend, recs)
	}
}

// confinedProbe is a line that prints DIRECT-WROTE if the command can
// write outside its zones: the sandbox did not come up.
func confinedProbe(outside string) string {
	return `touch ` + outside + `/direct 2>/dev/null && echo DIRECT-WROTE; `
}

type isolationRow struct {
	name string
	// class: "server" (a served command against the server), "concurrent"
	// (against another served command), "later-runs" (the server's later
	// runs weakened or broken), "attributes" (what the client is held to
	// that the server is not), "state" (what changes between commands).
	class string
	run   func(t *testing.T, backend string)
	// backends the row runs under; nil: both.
	backends []string
}

// TestServeIsolation: each row is an attack and the safe behaviour it must
// meet.
func TestServeIsolation(t *testing.T) {
	requireSandbox(t)
	rows := []isolationRow{
		{"command-signals-server", "server", attackSignalServer, nil},
		{"command-reads-server-proc", "server", attackServerProc, nil},
		{"concurrent-command-signals-other", "concurrent", attackConcurrentSignal, nil},
		{"concurrent-command-reads-other-tmpdir", "concurrent", attackConcurrentTmp, nil},
		{"concurrent-protected-change-not-kept", "concurrent", attackConcurrentRestore, nil},
		{"server-still-confines-after-runs", "later-runs", attackServerAfterRuns, nil},
		{"server-descriptors-not-leaked-across-runs", "later-runs", attackFDLeak, nil},
		{"signal-to-one-client-ends-only-its-run", "later-runs", attackSignalOne, nil},
		{"client-killed-mid-change-restored-and-audited", "later-runs", attackClientKilled, nil},
		{"binary-replaced-not-served-by-old-server", "state", attackBinaryReplaced, nil},
		{"client-file-size-limit-kept", "attributes", attackClientLimit, nil},
		{"client-cgroup-kept", "attributes", attackClientCgroup, nil},
		{"config-edited-between-commands", "state", attackConfigEdited, nil},
		{"project-config-added-between-commands", "state", attackProjectAdded, nil},
		{"trusted-project-config-changed", "state", attackTrustedChanged, nil},
		{"trust-store-removed-between-commands", "state", attackTrustRemoved, nil},
		{"session-grant-revoked-between-commands", "state", attackGrantRevoked, nil},
		{"state-dir-removed-between-commands", "state", attackStateRemoved, nil},
	}
	classes := map[string]bool{}
	for _, r := range rows {
		classes[r.class] = true
		backends := r.backends
		if backends == nil {
			backends = []string{"bwrap", "landlock"}
		}
		for _, b := range backends {
			t.Run(r.name+"/"+b, func(t *testing.T) { r.run(t, b) })
		}
	}
	t.Logf("%d rows in %d classes, each under both backends", len(rows), len(classes))
}

// isolationWorld is a served world for backend with a directory outside
// every zone.
func isolationWorld(t *testing.T, backend, config string) (w *world, outside string) {
	t.Helper()
	// A short runtime directory: the socket's path must fit sun_path.
	rt, err := os.MkdirTemp("", "gr2-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	w = runWorld(t, config, "GR="+guardrunBin, "GUARDRUN_BACKEND="+backend, "XDG_RUNTIME_DIR="+rt)
	if backend == "landlock" {
		landlockWorks(t, w, w.work)
	}
	outside = filepath.Join(filepath.Dir(w.work), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	return w, outside
}

func wantNo(t *testing.T, out string, words ...string) {
	t.Helper()
	for _, w := range words {
		if strings.Contains(out, w) {
			t.Errorf("%s: the attack got through:\n%s", w, out)
		}
	}
}

// attackSignalServer: a served command finds the server (its shell's
// parent, passed in) and signals it: stop, terminate, and a null signal.
// The server is out of reach (another pid namespace under bwrap, the
// signal scope under landlock), and serves the next command.
func attackSignalServer(t *testing.T, backend string) {
	w, outside := isolationWorld(t, backend, isolationConfig)
	attack := confinedProbe(outside) + `kill -0 $1 2>/dev/null && echo SIG0-OK; kill -STOP $1 2>/dev/null && echo STOP-OK; kill -TERM $1 2>/dev/null && echo TERM-OK; echo tried`
	out, errOut, code := serveTimed(t, w, guardrunBin, `"$GR" --approve-all -c '`+attack+`' x "$PPID"; "$GR" --approve-all -c 'echo after'`)
	if code != 0 || !strings.Contains(out, "tried\n") || !strings.HasSuffix(out, "after\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	wantNo(t, out, "DIRECT-WROTE", "SIG0-OK", "STOP-OK", "TERM-OK")
	servedUnder(t, w, attack, backend)
	servedUnder(t, w, "echo after", backend)
}

// attackServerProc: a served command reads the server's environment,
// memory, descriptors, working directory and those of its threads
// (one of which carries the command's own Landlock domain) through
// /proc. None is readable; its own are (the probe works).
func attackServerProc(t *testing.T, backend string) {
	w, outside := isolationWorld(t, backend, isolationConfig)
	attack := confinedProbe(outside) + `test -r /proc/self/environ && cat /proc/self/environ >/dev/null && echo OWN-OK; ` +
		`cat /proc/$1/environ >/dev/null 2>&1 && echo ENVIRON-READ; ` +
		`for f in /proc/$1/fd/*; do readlink $f >/dev/null 2>&1 && echo FD-READLINK; ls $f/ >/dev/null 2>&1 && echo FD-OPENED; head -c1 $f >/dev/null 2>&1 && echo FD-READ; done; ` +
		`(exec 3</proc/$1/mem) 2>/dev/null && echo MEM-OPENED; ` +
		`ls /proc/$1/cwd/ >/dev/null 2>&1 && echo CWD-LISTED; ` +
		`for d in /proc/$1/task/*; do cat $d/environ >/dev/null 2>&1 && echo TASK-ENVIRON-READ; (exec 3<$d/mem) 2>/dev/null && echo TASK-MEM-OPENED; done; ` +
		`ls /proc/$1/map_files/ >/dev/null 2>&1 && echo MAPS-LISTED; echo tried`
	// A secret only the server's environment holds: GUARDRUN_SERVER's
	// value is the server's socket, which the command does not get.
	out, errOut, code := serveTimed(t, w, guardrunBin, `"$GR" --approve-all -c '`+attack+`' x "$PPID"`)
	if code != 0 || !strings.Contains(out, "tried\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if backend == "landlock" && !strings.Contains(out, "OWN-OK") {
		t.Errorf("the command could not read its own environment: the probe is wrong\n%s", out)
	}
	wantNo(t, out, "DIRECT-WROTE", "ENVIRON-READ", "FD-READLINK", "FD-OPENED", "FD-READ", "MEM-OPENED", "CWD-LISTED", "TASK-ENVIRON-READ", "TASK-MEM-OPENED", "MAPS-LISTED")
	servedUnder(t, w, attack, backend)
}

// waitArg1 waits up to 30 s for name, which a concurrent command makes.
const waitArg1 = `i=0; while [ ! -e "$1" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done; `

// attackConcurrentSignal: two commands served at once; the second
// signals the first (its pid, which the first wrote down) and reads its
// environment. The first finishes untouched.
func attackConcurrentSignal(t *testing.T, backend string) {
	w, outside := isolationWorld(t, backend, isolationConfig)
	first := `echo $$ > a.pid; sleep 2; echo A-DONE`
	second := confinedProbe(outside) + `p=$(cat a.pid); if [ "$p" != "$$" ]; then kill -TERM $p 2>/dev/null && echo KILLED-A; kill -STOP $p 2>/dev/null && echo STOPPED-A; ` +
		`cat /proc/$p/environ >/dev/null 2>&1 && echo READ-A-ENV; readlink /proc/$p/cwd >/dev/null 2>&1 && echo READ-A-CWD; fi; echo tried`
	script := `"$GR" --approve-all -c '` + first + `' & ` + waitArg1 + `"$GR" --approve-all -c '` + second + `'; wait`
	out, errOut, code := serveTimed(t, w, guardrunBin, `set -- a.pid; `+script)
	if code != 0 || !strings.Contains(out, "tried\n") || !strings.Contains(out, "A-DONE\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	wantNo(t, out, "DIRECT-WROTE", "KILLED-A", "STOPPED-A", "READ-A-ENV", "READ-A-CWD")
	servedUnder(t, w, first, backend)
	servedUnder(t, w, second, backend)
	recs := recordsOf(auditRecords(t, w), first)
	if len(recs) != 2 || recs[1]["exit"] != float64(0) {
		t.Errorf("the first command did not end on its own: %v", recs)
	}
}

// attackConcurrentTmp: the first command keeps a secret in its $TMPDIR
// and writes the directory's name down; the second, served at the same
// time, reads and writes there.
func attackConcurrentTmp(t *testing.T, backend string) {
	w, outside := isolationWorld(t, backend, isolationConfig)
	first := `echo secret-a > "$TMPDIR/s" && echo "$TMPDIR" > a.tmp; sleep 2; cat "$TMPDIR/s"`
	// Under bwrap both see their own private /tmp at the same path: the
	// second then only reaches its own (and the first's file stays).
	second := confinedProbe(outside) + `d=$(cat a.tmp); cat "$d/s" 2>/dev/null && echo READ-A-TMP; if [ "$d" != "$TMPDIR" ]; then echo evil > "$d/s" 2>/dev/null && echo WROTE-A-TMP; ls "$d/" >/dev/null 2>&1 && echo LISTED-A-TMP; fi; echo tried`
	script := `"$GR" --approve-all -c '` + first + `' & ` + waitArg1 + `"$GR" --approve-all -c '` + second + `'; wait`
	out, errOut, code := serveTimed(t, w, guardrunBin, `set -- a.tmp; `+script)
	if code != 0 || !strings.Contains(out, "tried\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	wantNo(t, out, "DIRECT-WROTE", "READ-A-TMP", "WROTE-A-TMP", "LISTED-A-TMP")
	if !strings.Contains(out, "secret-a\n") {
		t.Errorf("the first command lost its own $TMPDIR file:\n%s", out)
	}
	servedUnder(t, w, second, backend)
}

// gitWork makes w's work directory a repository and returns its
// .git/config's content.
func gitWork(t *testing.T, w *world) []byte {
	t.Helper()
	testenv.LookPath(t, "git")
	cmd := exec.Command("git", "init", "-q", w.work)
	cmd.Env = w.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(w.work, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// attackConcurrentRestore: a served command changes a protected file
// (.git/config, which git runs aliases from) and keeps running while a
// second command is served in the same tree; the first ends, then the
// second. The change must not survive: under bwrap it is refused, under
// landlock it is put back after the command, and the second command's
// end must not put the first one's change back (its "before" is the
// first command's work, not the user's file).
func attackConcurrentRestore(t *testing.T, backend string) {
	w, outside := isolationWorld(t, backend, isolationConfig)
	orig := gitWork(t, w)
	first := confinedProbe(outside) + `printf "[alias]\n\tst = !touch PWNED\n" >> .git/config 2>/dev/null; echo > a.mod; sleep 2; echo A-DONE`
	second := `sleep 4; echo B-DONE`
	script := `"$GR" --approve-all -c '` + first + `' & ` + waitArg1 + `"$GR" --approve-all -c '` + second + `'; wait`
	out, errOut, code := serveTimed(t, w, guardrunBin, `set -- a.mod; `+script)
	if code != 0 || !strings.Contains(out, "A-DONE\n") || !strings.Contains(out, "B-DONE\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	wantNo(t, out, "DIRECT-WROTE")
	servedUnder(t, w, first, backend)
	servedUnder(t, w, second, backend)
	now, err := os.ReadFile(filepath.Join(w.work, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(now, orig) {
		t.Errorf("the first command's change to .git/config survived both commands:\n%s\nstderr:\n%s", now, errOut)
	}
}

// attackServerAfterRuns: after a few served runs under the backend (a
// landlock run restricts one of the server's threads and makes it not
// dumpable), commands under either backend are still confined and still
// served: the server's later commands are not weaker, nor broken.
func attackServerAfterRuns(t *testing.T, backend string) {
	w, outside := isolationWorld(t, backend, isolationConfig)
	other := map[string]string{"bwrap": "landlock", "landlock": "bwrap"}[backend]
	if other == "landlock" {
		landlockWorks(t, w, w.work)
	}
	probe := confinedProbe(outside) + `echo probed`
	script := `for i in 1 2 3; do "$GR" --approve-all -c 'echo run'; done; ` +
		`"$GR" --approve-all -c '` + probe + `'; "$GR" --approve-all --backend ` + other + ` -c '` + probe + ` '`
	out, errOut, code := serveTimed(t, w, guardrunBin, script)
	if code != 0 || strings.Count(out, "probed\n") != 2 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	wantNo(t, out, "DIRECT-WROTE")
	if exists(filepath.Join(outside, "direct")) {
		t.Error("a later command wrote outside its zones")
	}
	servedUnder(t, w, probe, backend)
	servedUnder(t, w, probe+" ", other)
}

// attackBinaryReplaced: guardrun is upgraded (its file replaced by
// another) while a server started from the old one runs. The old
// server must not serve the new guardrun's requests (it would apply the
// old code's policy, and under landlock it cannot start the trampoline
// of a deleted executable): the request runs as without the server, and
// succeeds.
func attackBinaryReplaced(t *testing.T, backend string) {
	w, _ := isolationWorld(t, backend, isolationConfig)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	gr := filepath.Join(dir, "guardrun")
	copyFile(t, guardrunBin, gr)
	script := `"$GR" --approve-all -c 'echo before'; cp "$GR" "$GR.new" && mv "$GR.new" "$GR"; "$GR" --approve-all -c 'echo after'; echo "status $?"`
	out, errOut, code := serveTimed(t, w, gr, script, "GR="+gr)
	if code != 0 || out != "before\nafter\nstatus 0\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	servedUnder(t, w, "echo before", backend)
	recs := recordsOf(auditRecords(t, w), "echo after")
	if len(recs) != 2 || recs[0]["via"] != nil || recs[1]["outcome"] != "ran" {
		t.Errorf("after the upgrade: records %v, want a run of the new guardrun's own", recs)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// attackConfigEdited: the config file is changed between two served
// commands (echo now blocked): the second is refused as the new config
// says.
func attackConfigEdited(t *testing.T, backend string) {
	w, _ := isolationWorld(t, backend, isolationConfig)
	blocked := filepath.Join(filepath.Dir(w.work), "blocked.yaml")
	if err := os.WriteFile(blocked, []byte(strings.ReplaceAll(strings.Replace(isolationConfig, "pattern: echo\n      approval: false", "pattern: echo\n      allowed: false", 1), "{root: ., ", "{root: "+w.work+", ")), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `"$GR" -c 'echo one'; cp ` + blocked + ` "$GUARDRUN_CONFIG"; "$GR" -c 'echo two'; echo "status $?"`
	out, errOut, code := serveTimed(t, w, guardrunBin, script)
	if code != 0 || out != "one\nstatus 77\n" || !strings.Contains(errOut, "guardrun: blocked") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	servedUnder(t, w, "echo one", backend)
}

// projectWorld is a world without $GUARDRUN_CONFIG: the user config
// (cfg) and a project's .guardrun.yaml in the work directory are found.
func projectWorld(t *testing.T, backend, cfg string) *world {
	t.Helper()
	w, _ := isolationWorld(t, backend, cfg)
	user := filepath.Join(w.getenv("XDG_CONFIG_HOME"), "guardrun", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte(strings.ReplaceAll(cfg, "{root: ., ", "{root: "+w.work+", ")), 0o644); err != nil {
		t.Fatal(err)
	}
	w.env = append(w.env, "GUARDRUN_CONFIG=")
	return w
}

// attackProjectAdded: an untrusted .guardrun.yaml appears between two
// served commands (blocking echo): the second is refused, since an
// untrusted project file still tightens.
func attackProjectAdded(t *testing.T, backend string) {
	w := projectWorld(t, backend, isolationConfig)
	script := `"$GR" -c 'echo one'; printf 'shell:\n  rules:\n    - {pattern: echo, allowed: false}\n' > .guardrun.yaml; "$GR" -c 'echo two'; echo "status $?"`
	out, errOut, code := serveTimed(t, w, guardrunBin, script)
	if code != 0 || out != "one\nstatus 77\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	servedUnder(t, w, "echo one", backend)
}

// attackTrustedChanged: a trusted project config that lets touch run
// without approval is changed after it was trusted (another rule
// added): no longer trusted, it cannot loosen, and the touch needs a
// person, whom no one can ask here: refused, not run.
func attackTrustedChanged(t *testing.T, backend string) {
	w := projectWorld(t, backend, isolationConfig)
	loosen := "shell:\n  rules:\n    - {pattern: touch, approval: false}\nsandbox:\n  paths:\n    workspace: {root: ., mode: rw}\n"
	if err := os.WriteFile(filepath.Join(w.work, ".guardrun.yaml"), []byte(loosen), 0o644); err != nil {
		t.Fatal(err)
	}
	trustHere(t, w)
	script := `mkdir d; "$GR" -c 'touch d/one'; echo "status $?"; echo "# edited" >> .guardrun.yaml; "$GR" -c 'touch d/two'; echo "status $?"`
	out, errOut, code := serveTimed(t, w, guardrunBin, script)
	if code != 0 || out != "status 0\nstatus 77\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !exists(filepath.Join(w.work, "d", "one")) || exists(filepath.Join(w.work, "d", "two")) {
		t.Error("touch one should have run (trusted), touch two not (changed, untrusted)")
	}
	servedUnder(t, w, "touch d/one", backend)
}

// attackTrustRemoved: the trust store is emptied between two served
// commands (the person revoked the project): the loosening rule no longer
// applies to the second.
func attackTrustRemoved(t *testing.T, backend string) {
	w := projectWorld(t, backend, isolationConfig)
	loosen := "shell:\n  rules:\n    - {pattern: touch, approval: false}\nsandbox:\n  paths:\n    workspace: {root: ., mode: rw}\n"
	if err := os.WriteFile(filepath.Join(w.work, ".guardrun.yaml"), []byte(loosen), 0o644); err != nil {
		t.Fatal(err)
	}
	trustHere(t, w)
	state := filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun")
	ents, _ := os.ReadDir(state)
	var trust []string
	for _, e := range ents {
		if strings.Contains(e.Name(), "trust") {
			trust = append(trust, filepath.Join(state, e.Name()))
		}
	}
	if len(trust) == 0 {
		t.Fatalf("no trust store in %s: %v", state, ents)
	}
	script := `mkdir d; "$GR" -c 'touch d/one'; echo "status $?"; rm -rf ` + strings.Join(trust, " ") + `; "$GR" -c 'touch d/two'; echo "status $?"`
	out, errOut, code := serveTimed(t, w, guardrunBin, script)
	if code != 0 || out != "status 0\nstatus 77\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !exists(filepath.Join(w.work, "d", "one")) || exists(filepath.Join(w.work, "d", "two")) {
		t.Error("touch one should have run (trusted), touch two not (trust revoked)")
	}
	servedUnder(t, w, "touch d/one", backend)
}

// trustHere trusts w's .guardrun.yaml as a person would, on a terminal.
func trustHere(t *testing.T, w *world) {
	t.Helper()
	r := startOnPTY(t, w.work, w.env, strings.NewReader(""), "trust")
	r.waitFor("Trust this file? [y/N]", 1)
	r.send("y\r")
	if code := r.wait(); code != 0 {
		t.Fatalf("guardrun trust: exit %d\n%s", code, r.screen())
	}
}

// attackClientLimit: the agent holds its commands to a file size limit
// (ulimit -f); a served command must not get the server's unlimited
// one: the 3 MB write stops at the 2 MB limit (SIGXFSZ, 153) as it
// would without the server.
func attackClientLimit(t *testing.T, backend string) {
	w, _ := isolationWorld(t, backend, isolationConfig)
	script := `"$GR" --approve-all -c 'echo served'; ulimit -f 4096; "$GR" --approve-all -c 'head -c 3000000 /dev/zero > big; echo "st $?"'`
	out, errOut, code := serveTimed(t, w, guardrunBin, script)
	if code != 0 || !strings.HasPrefix(out, "served\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	servedUnder(t, w, "echo served", backend)
	fi, err := os.Stat(filepath.Join(w.work, "big"))
	if err != nil {
		t.Fatalf("the command did not run: %v\n%s\n%s", err, out, errOut)
	}
	if fi.Size() > 4096*512 || !strings.Contains(out, "st 153\n") {
		t.Errorf("the command wrote %d bytes past its client's file size limit (2 MB):\n%s", fi.Size(), out)
	}
}

// attackFDLeak: the server's open descriptors after many served runs
// (each with its client's four descriptors, under landlock a seccomp
// listener too) are as many as after the first.
func attackFDLeak(t *testing.T, backend string) {
	w, _ := isolationWorld(t, backend, isolationConfig)
	script := `"$GR" --approve-all -c 'echo warm'; sleep 0.5; a=$(ls /proc/$PPID/fd | wc -l); i=0; ` +
		`while [ $i -lt 15 ]; do "$GR" --approve-all -c 'echo x' >/dev/null; i=$((i+1)); done; ` +
		`"$GR" --approve-all -c 'false'; sleep 0.5; b=$(ls /proc/$PPID/fd | wc -l); echo "fds $a $b"`
	out, errOut, code := serveTimed(t, w, guardrunBin, script)
	var a, b int
	if _, err := fmt.Sscanf(out, "warm\nfds %d %d", &a, &b); err != nil || code != 0 {
		t.Fatalf("exit %d (%v)\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	servedUnder(t, w, "echo x", backend)
	t.Logf("server descriptors: %d after the first run, %d after 16 more", a, b)
	if b > a {
		t.Errorf("the server holds %d descriptors after 16 more runs, %d before", b, a)
	}
}

// attackSignalOne: two served runs at once; SIGTERM to one client ends
// its command (143) and not the other, which finishes.
func attackSignalOne(t *testing.T, backend string) {
	w, _ := isolationWorld(t, backend, isolationConfig)
	first := `echo > a.started; sleep 10; echo A-FINISHED`
	second := `echo > b.started; sleep 2; echo B-FINISHED`
	script := `"$GR" --approve-all -c '` + first + `' & pa=$!; "$GR" --approve-all -c '` + second + `' & pb=$!; ` +
		`set -- a.started; ` + waitArg1 + `set -- b.started; ` + waitArg1 + `sleep 0.2; kill -TERM $pa; wait $pa; echo "A $?"; wait $pb; echo "B $?"`
	out, errOut, code := serveTimed(t, w, guardrunBin, script)
	if code != 0 || !strings.Contains(out, "A 143\n") || !strings.Contains(out, "B-FINISHED\n") || !strings.Contains(out, "B 0\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	wantNo(t, out, "A-FINISHED")
	servedUnder(t, w, first, backend)
	servedUnder(t, w, second, backend)
}

// TestServeIsolationUnprivileged: as an unprivileged user, a served
// landlock command reaches neither the server (signals, /proc) nor,
// through a concurrent command's snapshot, a lasting change to a
// protected file.
func TestServeIsolationUnprivileged(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run guardrun as an unprivileged user")
	}
	testenv.LookPath(t, "runuser")
	testenv.LookPath(t, "git")
	const user = "guardrun-test"
	testenv.User(t, user)
	dir, err := os.MkdirTemp("/var/tmp", "grsa2-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ws, home, outside := dir+"/ws", dir+"/home", dir+"/outside"
	cfg := home + "/cfg.yaml"
	attack := `srv=$PPID
"$GR" --approve-all -c 'd=../outside; touch $d/direct 2>/dev/null && echo DIRECT-WROTE; kill -0 $1 2>/dev/null && echo SIG0-OK; kill -STOP $1 2>/dev/null && echo STOP-OK; cat /proc/$1/environ >/dev/null 2>&1 && echo ENVIRON-READ; ls /proc/$1/fd/ >/dev/null 2>&1 && echo FD-LISTED; (exec 3</proc/$1/mem) 2>/dev/null && echo MEM-OPENED; echo tried' x "$srv"
"$GR" --approve-all -c 'echo after'
"$GR" --approve-all -c 'printf "[alias]\n\tst = !touch PWNED\n" >> .git/config; echo > a.mod; sleep 2; echo A-DONE' &
i=0; while [ ! -e a.mod ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done
"$GR" --approve-all -c 'sleep 4; echo B-DONE'
wait
`
	for p, c := range map[string]string{
		ws + "/attack.sh": attack,
		cfg: "shell:\n  program: /bin/bash\n  default: {allowed: true, approval: false}\nsandbox:\n" +
			"  backend: landlock\n  paths:\n    ws: {root: " + ws + ", mode: rw}\n",
	} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(outside, 0o755)
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	orig, err := os.ReadFile(ws + "/.git/config")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("chown", "-R", user, dir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v\n%s", err, out)
	}
	os.Chmod(dir, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "runuser", "-u", user, "--", "env", "-i", "HOME="+home, "PATH=/usr/local/bin:/usr/bin:/bin",
		"GUARDRUN_CONFIG="+cfg, "GR="+guardrunBin, guardrunBin, "serve", "--", "sh", "attack.sh")
	cmd.Dir = ws
	cmd.WaitDelay = pipeGrace
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err != nil || !strings.Contains(out, "tried\n") || !strings.Contains(out, "after\n") || !strings.Contains(out, "B-DONE\n") {
		t.Fatalf("as %s: %v\n%s", user, err, out)
	}
	wantNo(t, out, "DIRECT-WROTE", "SIG0-OK", "STOP-OK", "ENVIRON-READ", "FD-LISTED", "MEM-OPENED")
	audit, _ := os.ReadFile(home + "/.local/state/guardrun/audit.jsonl")
	if n := strings.Count(string(audit), `"via":"server"`); n != 8 || strings.Count(string(audit), `"sandbox":"landlock"`) != 8 {
		t.Fatalf("not every run was served under landlock (%d served):\n%s", n, audit)
	}
	now, _ := os.ReadFile(ws + "/.git/config")
	if !bytes.Equal(now, orig) {
		t.Errorf("the first command's change to .git/config survived:\n%s\n%s", now, out)
	}
}

// attackClientCgroup: the agent puts a command's guardrun in a cgroup of
// its own (a pids limit, as systemd-run or a CI runner would); the
// command must stay in it, not run in the server's: such a client is not
// served, and under landlock (no cgroup namespace) the command sees the
// cgroup.
func attackClientCgroup(t *testing.T, backend string) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make a cgroup")
	}
	base := "/sys/fs/cgroup/pids"
	if _, err := os.Stat(base + "/cgroup.procs"); err != nil {
		testenv.Missing(t, "no pids cgroup hierarchy at %s", base)
	}
	cg, err := os.MkdirTemp(base, "guardrun-attack-")
	if err != nil {
		testenv.Missing(t, "cannot make a cgroup: %v", err)
	}
	defer os.Remove(cg)
	if err := os.WriteFile(cg+"/pids.max", []byte("200"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, _ := isolationWorld(t, backend, isolationConfig)
	rel := strings.TrimPrefix(cg, base)
	script := `"$GR" --approve-all -c 'echo served'; echo $$ > ` + cg + `/cgroup.procs && "$GR" --approve-all -c 'grep -c "pids:` + rel + `$" /proc/self/cgroup; echo in-cgroup'`
	out, errOut, code := serveTimed(t, w, guardrunBin, script)
	if code != 0 || !strings.HasPrefix(out, "served\n") || !strings.Contains(out, "in-cgroup\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	servedUnder(t, w, "echo served", backend)
	recs := auditRecords(t, w)
	for _, r := range recs {
		if s, _ := r["script"].(string); strings.Contains(s, "in-cgroup") && r["via"] != nil {
			t.Errorf("a client in another cgroup was served: %v", r)
		}
	}
	if backend == "landlock" && !strings.HasPrefix(strings.TrimPrefix(out, "served\n"), "1\n") {
		t.Errorf("the command did not run in its client's cgroup:\n%s", out)
	}
}

// attackGrantRevoked: a person approves a command for the session on the
// terminal (the client asks: the server does not); the same command is
// then served without asking, by the grant; the grant is revoked; the
// next identical command is not served silently: the person is asked
// again and says no.
func attackGrantRevoked(t *testing.T, backend string) {
	w, _ := isolationWorld(t, backend, isolationConfig)
	w.env = append(w.env, "GUARDRUN_SESSION=attack2-grants")
	script := `mkdir d; "$GR" -c 'touch d/a'; echo "first $?"; "$GR" -c 'touch d/a'; echo "second $?"; ` +
		`"$GR" session revoke --all >/dev/null; echo "revoked $?"; "$GR" -c 'touch d/a'; echo "third $?"`
	r := startPrompt(t, w, nil, "serve", "--", "sh", "-c", script)
	r.waitFor(keyLine, 1)
	r.send("s")
	r.waitFor(keyLine, 2)
	r.send("n")
	r.waitFor("note for the agent", 1)
	r.send("revoked\r")
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d; stderr: %s\nterminal:\n%s", code, r.stderr.String(), r.screen())
	}
	out := r.stdout.String()
	if out != "first 0\nsecond 0\nrevoked 0\nthird 77\n" {
		t.Fatalf("stdout %q, want first 0, second 0, revoked 0, third 77; terminal:\n%s", out, r.screen())
	}
	if n := strings.Count(r.screen(), keyLine); n != 2 {
		t.Errorf("%d prompts, want 2 (the grant's, and after the revocation)", n)
	}
	recs := recordsOf(auditRecords(t, w), "touch d/a")
	if len(recs) != 5 {
		t.Fatalf("records: %v", recs)
	}
	by := []string{}
	for _, rec := range recs {
		by = append(by, fmt.Sprint(rec["outcome"], "/", rec["decided_by"], "/", rec["via"]))
	}
	want := "started/person/<nil> ran/person/<nil> started/session/server ran/session/server refused/person/<nil>"
	if strings.Join(by, " ") != want {
		t.Errorf("records (outcome/decided_by/via): %s\nwant %s", strings.Join(by, " "), want)
	}
}

// attackClientKilled: the client is killed (SIGKILL) while its command,
// having changed a protected file, still runs. The server ends the
// command, writes the end record, and the protected file is as before
// (under landlock put back by the server's restore; under bwrap never
// changed).
func attackClientKilled(t *testing.T, backend string) {
	w, _ := isolationWorld(t, backend, isolationConfig)
	orig := gitWork(t, w)
	started := filepath.Join(w.work, "started")
	script := `printf "[alias]\n\tst = !touch PWNED\n" >> .git/config 2>/dev/null; echo > started; sleep 5; echo > done`
	cmd, client, out := servedClient(t, w, script, started)
	servedUnder(t, w, script, backend)
	syscall.Kill(client, syscall.SIGKILL)
	cmd.Wait()
	time.Sleep(6 * time.Second)
	if exists(filepath.Join(w.work, "done")) {
		t.Error("the command outlived its killed client")
	}
	recs := recordsOf(auditRecords(t, w), script)
	if len(recs) != 2 || recs[1]["outcome"] != "ran" {
		t.Errorf("no end record: %v", recs)
	}
	now, err := os.ReadFile(filepath.Join(w.work, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(now, orig) {
		t.Errorf("the change to .git/config survived the killed client:\n%s\n%s", now, out)
	}
}

// attackStateRemoved: guardrun's state directory (audit log, caches of
// compiled filters and of the sandbox check) is removed between two
// served commands: the second is still served, runs confined and is
// recorded in a new audit log.
func attackStateRemoved(t *testing.T, backend string) {
	w, outside := isolationWorld(t, backend, isolationConfig)
	probe := confinedProbe(outside) + `echo two`
	script := `"$GR" --approve-all -c 'echo one'; rm -rf "$XDG_STATE_HOME/guardrun"; "$GR" --approve-all -c '` + probe + `'; echo "status $?"`
	out, errOut, code := serveTimed(t, w, guardrunBin, script)
	if code != 0 || out != "one\ntwo\nstatus 0\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	servedUnder(t, w, probe, backend)
	if recs := recordsOf(auditRecords(t, w), probe); len(recs) != 2 || recs[1]["outcome"] != "ran" {
		t.Errorf("records after the state directory was removed: %v", recs)
	}
}
