//go:build linux

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// serveWorld is a run world whose commands can name guardrun as $GR.
func serveWorld(t *testing.T, config string) *world {
	t.Helper()
	return runWorld(t, config, "GR="+guardrunBin)
}

// serveScript runs `guardrun serve -- sh -c SCRIPT` in w's work directory
// without a terminal and returns its output and exit status.
func serveScript(t *testing.T, w *world, script string, extraEnv ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runPlain(t, w, "", extraEnv, "serve", "--", "sh", "-c", script)
}

// auditRecords reads w's audit log.
func auditRecords(t *testing.T, w *world) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun", "audit.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// recordsOf are the audit records of script (or of argv joined by
// spaces).
func recordsOf(recs []map[string]any, what string) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		s, _ := r["script"].(string)
		if a, ok := r["argv"].([]any); ok {
			var parts []string
			for _, x := range a {
				parts = append(parts, fmt.Sprint(x))
			}
			s = strings.Join(parts, " ")
		}
		if s == what {
			out = append(out, r)
		}
	}
	return out
}

// comparable is a record without what differs from run to run.
func comparable(r map[string]any) map[string]any {
	c := map[string]any{}
	for k, v := range r {
		switch k {
		case "time", "duration_ms", "pid", "run", "via":
			continue
		case "checkpoint":
			// A number each run takes anew: that one was taken counts.
			v = "taken"
		}
		c[k] = v
	}
	return c
}

// TestServeRun: a guardrun started under guardrun serve is served: its
// output, its exit status, and start and end records identical to those
// of the same command run without the server but for "via": "server",
// which guardrun log shows.
func TestServeRun(t *testing.T) {
	requireSandbox(t)
	w := serveWorld(t, superviseConfig)
	const script = "echo hi; echo err >&2; exit 3"
	out, errOut, code := serveScript(t, w, `"$GR" --approve-all -c '`+script+`'; echo "status $?"`)
	if out != "hi\nstatus 3\n" || errOut != "err\n" || code != 0 {
		t.Fatalf("served: stdout %q stderr %q exit %d; want hi, status 3 / err / 0", out, errOut, code)
	}
	served := recordsOf(auditRecords(t, w), script)
	if len(served) != 2 {
		t.Fatalf("served: %d records, want start and end: %v", len(served), served)
	}
	for _, r := range served {
		if r["via"] != "server" {
			t.Errorf("served record without via server: %v", r)
		}
	}
	if served[0]["outcome"] != "started" || served[1]["outcome"] != "ran" || served[1]["exit"] != float64(3) ||
		served[0]["run"] != served[1]["run"] || served[0]["pid"] == float64(0) {
		t.Errorf("served records: %v", served)
	}

	out, errOut, code = runPlain(t, w, "", nil, "--approve-all", "-c", script)
	if out != "hi\n" || errOut != "err\n" || code != 3 {
		t.Fatalf("unserved: stdout %q stderr %q exit %d", out, errOut, code)
	}
	all := recordsOf(auditRecords(t, w), script)
	if len(all) != 4 {
		t.Fatalf("%d records after both runs, want 4", len(all))
	}
	for i, r := range all[2:] {
		if _, ok := r["via"]; ok {
			t.Errorf("unserved record with via: %v", r)
		}
		a, b := comparable(served[i]), comparable(r)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("served and unserved records differ:\n served   %s\n unserved %s", ja, jb)
		}
	}
	log, _, _ := runPlain(t, w, "", nil, "log")
	if !strings.Contains(log, "(via server)") {
		t.Errorf("guardrun log does not show the served run:\n%s", log)
	}
}

// TestServeRefusal: strict mode's refusal through the server: 77, the
// refusal line on stderr, a refused record.
func TestServeRefusal(t *testing.T) {
	requireSandbox(t)
	w := serveWorld(t, superviseConfig)
	_, errOut, code := serveScript(t, w, `"$GR" --strict -c 'touch nope'; exit $?`)
	if code != 77 || !strings.Contains(errOut, "guardrun: denied (strict mode): touch nope needs approval") {
		t.Fatalf("exit %d, stderr %q; want 77 and the refusal", code, errOut)
	}
	if exists(filepath.Join(w.work, "nope")) {
		t.Error("the refused command ran")
	}
	recs := recordsOf(auditRecords(t, w), "touch nope")
	if len(recs) != 1 || recs[0]["outcome"] != "refused" || recs[0]["via"] != "server" {
		t.Errorf("records: %v", recs)
	}
}

// TestServeFallback: what the server does not take runs as without it,
// with the same output and status, and is not recorded as served.
func TestServeFallback(t *testing.T) {
	requireSandbox(t)
	w := serveWorld(t, superviseConfig)
	const script = "echo fb; exit 4"
	check := func(name, out string, code int, wantOut string, wantCode int) {
		t.Helper()
		if out != wantOut || code != wantCode {
			t.Errorf("%s: stdout %q exit %d, want %q %d", name, out, code, wantOut, wantCode)
		}
	}
	noneServed := func(name string) {
		t.Helper()
		for _, r := range auditRecords(t, w) {
			if r["via"] != nil {
				t.Errorf("%s: a record says it was served: %v", name, r)
			}
		}
	}
	// No server at the path (it has gone).
	gone := filepath.Join(t.TempDir(), "gone", "s")
	out, _, code := runPlain(t, w, "", []string{"GUARDRUN_SERVER=" + gone}, "--approve-all", "-c", script)
	check("stale socket", out, code, "fb\n", 4)
	// A socket that is not a server's.
	out, _, code = runPlain(t, w, "", []string{"GUARDRUN_SERVER=/dev/null"}, "--approve-all", "-c", script)
	check("not a socket", out, code, "fb\n", 4)
	// Another state directory than the server's.
	other := filepath.Join(t.TempDir(), "state")
	out, _, code = serveScript(t, w, `XDG_STATE_HOME=`+other+` "$GR" --approve-all -c '`+script+`'`)
	check("env mismatch", out, code, "fb\n", 4)
	if b, err := os.ReadFile(filepath.Join(other, "guardrun", "audit.jsonl")); err != nil || !strings.Contains(string(b), `"exit":4`) {
		t.Errorf("env mismatch: the run was not recorded in its own state directory: %v %s", err, b)
	}
	// Not a run form.
	out, _, code = serveScript(t, w, `"$GR" --approve-all explain -c 'echo x'`)
	if !strings.HasPrefix(out, "decision: allow\n") || code != 0 {
		t.Errorf("explain: stdout %q exit %d", out, code)
	}
	// A usage error is the client's own.
	_, errOut, code := serveScript(t, w, `"$GR" --mode nonsense -c 'echo x'`)
	if code != 2 || !strings.Contains(errOut, "--mode wants interactive") {
		t.Errorf("usage error: exit %d stderr %q", code, errOut)
	}
	noneServed("fallbacks")
}

// TestServeAsksPerson: interactive mode with an ask is the client's:
// the person is asked on its terminal as without the server.
func TestServeAsksPerson(t *testing.T) {
	requireSandbox(t)
	w := serveWorld(t, superviseConfig)
	r := startPrompt(t, w, nil, "serve", "--", "sh", "-c", `"$GR" -c 'touch made-y'`)
	r.waitFor(keyLine, 1)
	r.send("y")
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d after y, want 0; stderr: %s", code, r.stderr.String())
	}
	if !exists(filepath.Join(w.work, "made-y")) {
		t.Error("the approved command did not run")
	}
	recs := recordsOf(auditRecords(t, w), "touch made-y")
	if len(recs) != 2 || recs[1]["decided_by"] != "person" || recs[1]["via"] != nil {
		t.Errorf("records: %v", recs)
	}
}

// servedClient starts `guardrun serve -- sh -c 'exec $GR --approve-all
// -c SCRIPT'` and returns it and the client's pid once the command has
// made started.
func servedClient(t *testing.T, w *world, script, started string) (*exec.Cmd, int, *bytes.Buffer) {
	t.Helper()
	cmd, out := startKillable(t, w, "serve", "--", "sh", "-c", `exec "$GR" --approve-all -c '`+script+`'`)
	deadline := time.Now().Add(20 * time.Second)
	for !exists(started) {
		if time.Now().After(deadline) {
			t.Fatalf("the command did not start: %s", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	recs := recordsOf(auditRecords(t, w), script)
	if len(recs) != 1 || recs[0]["via"] != "server" {
		t.Fatalf("not served: %v", recs)
	}
	// The client is serve's child, which exec'd guardrun.
	pid := int(recs[0]["pid"].(float64))
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if ppid, _ := strconv.Atoi(f[1]); ppid != cmd.Process.Pid {
		t.Fatalf("the client %d is not serve's child (its parent is %d)", pid, ppid)
	}
	return cmd, pid, out
}

// TestServeSignals: SIGINT to a served client ends the command (130,
// end record); SIGKILL of the client ends the sandboxed command too.
func TestServeSignals(t *testing.T) {
	requireSandbox(t)
	t.Run("SIGINT", func(t *testing.T) {
		w := serveWorld(t, superviseConfig)
		started, done := filepath.Join(w.work, "started"), filepath.Join(w.work, "done")
		script := "echo > started; sleep 30; echo > done"
		cmd, client, _ := servedClient(t, w, script, started)
		syscall.Kill(client, syscall.SIGINT)
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			t.Errorf("exit %d, want 130", code)
		}
		recs := recordsOf(auditRecords(t, w), script)
		if len(recs) != 2 || recs[1]["exit"] != float64(130) {
			t.Errorf("records: %v", recs)
		}
		if exists(done) {
			t.Error("the command finished")
		}
	})
	t.Run("SIGKILL", func(t *testing.T) {
		w := serveWorld(t, superviseConfig)
		started, done := filepath.Join(w.work, "started"), filepath.Join(w.work, "done")
		script := "echo > started; sleep 3; echo > done"
		cmd, client, _ := servedClient(t, w, script, started)
		syscall.Kill(client, syscall.SIGKILL)
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 128+9 {
			t.Errorf("serve exit %d, want 137 (its command was killed)", code)
		}
		// Had the command outlived its client, done would be there now.
		time.Sleep(4 * time.Second)
		if exists(done) {
			t.Error("the command outlived its killed client")
		}
		recs := recordsOf(auditRecords(t, w), script)
		if len(recs) != 2 || recs[1]["outcome"] != "ran" {
			t.Errorf("no end record: %v", recs)
		}
	})
}

// TestServeMakeShell: make -j2 SHELL=guardrun under guardrun serve builds
// the C project, every recipe served, under either backend.
func TestServeMakeShell(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) { serveMakeShell(t, backend) })
	}
}

func serveMakeShell(t *testing.T, backend string) {
	requireSandbox(t)
	testenv.LookPath(t, "make")
	testenv.LookPath(t, "cc")
	proj := filepath.Join(t.TempDir(), "cproject")
	copyTree(t, "testdata/cproject", proj)
	w := runWorld(t, fmt.Sprintf(makeConfig, proj)+landlockAccept, "GUARDRUN_BACKEND="+backend)
	if backend == "landlock" {
		landlockWorks(t, w, proj)
	}
	out, code := makeWithGuardrun(t, w, proj, []string{guardrunBin, "serve", "--"}, "-j2", "check")
	if code != 0 {
		t.Fatalf("make -j2 check: exit %d\n%s", code, out)
	}
	const want = "hello from cproject v1.2.3 answer=42 len=19"
	if !strings.Contains(out, want+"\n") {
		t.Errorf("the built program did not print %q:\n%s", want, out)
	}
	onlyEntries(t, proj, "Makefile", "build", "src")
	recs := auditRecords(t, w)
	if len(recs) < 10 {
		t.Fatalf("only %d records", len(recs))
	}
	for _, r := range recs {
		if r["via"] != "server" || r["sandbox"] != backend {
			t.Errorf("a recipe was not served under %s: %v", backend, r)
		}
	}
	out, code = makeWithGuardrun(t, w, proj, []string{guardrunBin, "serve", "--"}, "clean")
	if code == 0 || !strings.Contains(out, "guardrun: blocked: rm -f") {
		t.Errorf("make clean: exit %d\n%s", code, out)
	}
}

// serveClientPy sends one well-formed GRS1 request (argv after the
// socket; the whole environment; descriptors 0-2 and the working
// directory) and prints what the server answered first: R, F, or
// closed. $CLIENT_ENV names a file of NUL-separated variables to send
// instead of its own environment.
const serveClientPy = `import os, socket, struct, sys
def strs(l):
    return struct.pack('<I', len(l)) + b''.join(struct.pack('<I', len(x)) + x for x in l)
argv = [b'guardrun'] + [a.encode() for a in sys.argv[2:]]
env = [k.encode() + b'=' + v.encode() for k, v in os.environ.items()]
if os.environ.get('CLIENT_ENV'):
    env = [e for e in open(os.environ['CLIENT_ENV'], 'rb').read().split(b'\0') if e]
um = os.umask(0o22); os.umask(um)
p = strs(argv) + strs(env) + struct.pack('<I', um)
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print('connected', flush=True)
d = os.open('.', os.O_PATH | os.O_DIRECTORY)
try:
    socket.send_fds(s, [b'GRS1' + struct.pack('<I', len(p)) + p], [0, 1, 2, d])
    r = s.recv(1)
except (BrokenPipeError, ConnectionResetError):
    r = b''
print('reply', r.decode() if r else 'closed', flush=True)
while r and s.recv(64):
    pass
`

// TestServeSandboxedPeer: a command inside a guardrun sandbox (landlock,
// which with unix_sockets accepted lets it connect to any pathname
// socket) that reaches the server with a well-formed request is not
// served: the server closes without an answer, and the request (a
// trusted --config of its own making, opening a directory the sandbox
// keeps shut) has no effect. The same request from outside any
// sandbox is served, so the request itself is sound.
func TestServeSandboxedPeer(t *testing.T) {
	requireSandbox(t)
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		testenv.Missing(t, "%s is needed to speak to the server from inside a sandbox", python)
	}
	// A socket the config lets commands use; with it listed, socket(AF_UNIX)
	// is open and landlock cannot restrict connect.
	w := serveWorld(t, superviseConfig+"  unix_sockets: [/run/guardrun-test-none.sock]\n  landlock_accept: [unix_sockets]\n")
	landlockWorks(t, w, w.work)
	outside := filepath.Join(filepath.Dir(w.work), "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.work, "client.py"), []byte(serveClientPy), 0o644); err != nil {
		t.Fatal(err)
	}
	evil := "mode: approve-all\nsandbox:\n  paths:\n    work: {root: " + w.work + ", mode: rw}\n    out: {root: " + outside + ", mode: rw}\n"
	if err := os.WriteFile(filepath.Join(w.work, "evil.yaml"), []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	// Inside the sandbox: the direct write must fail (else the sandbox is
	// not up and the attempt is not made); then the request.
	attack := `touch ` + outside + `/direct 2>/dev/null && echo DIRECT-WROTE; ` +
		python + ` client.py "$1" --session s1 --config evil.yaml -- touch ` + outside + `/OUTSIDE`
	// The attack sends the environment of guardrun serve's own child,
	// which the server would accept, so that only the peer check stands
	// between it and the server.
	attack = `CLIENT_ENV=client.env ` + attack
	script := `env -0 > client.env; ` + python + ` client.py "$GUARDRUN_SERVER" --approve-all -- touch served-ok; ` +
		`"$GR" --approve-all --backend landlock -c '` + attack + `' attack "$GUARDRUN_SERVER"`
	out, errOut, code := serveScript(t, w, script)
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.HasPrefix(out, "connected\nreply R\n") || !exists(filepath.Join(w.work, "served-ok")) {
		t.Fatalf("the request from outside the sandbox was not served: the test's client is wrong:\n%s", out)
	}
	checkPeerRefused(t, w, outside, attack, strings.TrimPrefix(out, "connected\nreply R\n"))
}

// checkPeerRefused checks the output of a command that, in a landlock
// sandbox, sent the server a request to create outside/OUTSIDE (attack
// is its script): it ran confined, it reached the server, the server
// closed on it, and OUTSIDE does not exist.
func checkPeerRefused(t *testing.T, w *world, outside, attack, out string) {
	t.Helper()
	if strings.Contains(out, "DIRECT-WROTE") || exists(filepath.Join(outside, "direct")) {
		t.Fatal("the sandbox let the command write outside: the attempt did not run confined")
	}
	recs := recordsOf(auditRecords(t, w), attack)
	if len(recs) != 2 || recs[0]["sandbox"] != "landlock" {
		t.Fatalf("the attack did not run under landlock: %v", recs)
	}
	if !strings.Contains(out, "connected\n") {
		t.Fatalf("the sandboxed command could not connect to the server, so the peer check was not reached:\n%s", out)
	}
	if !strings.Contains(out, "reply closed\n") {
		t.Errorf("the server answered a sandboxed peer:\n%s", out)
	}
	if exists(filepath.Join(outside, "OUTSIDE")) {
		t.Error("the sandboxed command got OUTSIDE created through the server")
	}
}

// TestServeServerKilled: a client whose server dies while its command
// runs says so and exits 125, and the command does not outlive the
// server.
func TestServeServerKilled(t *testing.T) {
	requireSandbox(t)
	w := serveWorld(t, superviseConfig)
	started, done := filepath.Join(w.work, "started"), filepath.Join(w.work, "done")
	script := "echo > started; sleep 3; echo > done"
	cmd, client, out := servedClient(t, w, script, started)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait() // and for the client, which holds the output pipe
	// The client is the server's orphan now; it ends once it sees the
	// server gone.
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(client, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the client outlived its server by 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "guardrun: lost the guardrun server (") {
		t.Errorf("the client did not say it lost its server: %q", out)
	}
	time.Sleep(4 * time.Second)
	if exists(done) {
		t.Error("the command outlived its server")
	}
}
