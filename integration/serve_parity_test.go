//go:build linux

package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// Attacks on the served path (`guardrun serve`): each row is one attempt
// to make a served request weaker than, or different from, the same
// request run without the server, and asserts the safe behaviour.

// shRun runs `sh -c SCRIPT sh ARGS...` in w's work directory, without a
// terminal, directly or (pre not empty) under pre, with $GR naming
// guardrun; it gives up after limit.
func shRun(t *testing.T, w *world, pre []string, limit time.Duration, script string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	argv := append(append(append([]string{}, pre...), "sh", "-c", script, "sh"), args...)
	r := proc{dir: w.work, env: append(append([]string{}, w.env...), "GR="+guardrunBin), limit: limit}.run(argv...)
	if r.err != nil {
		t.Fatalf("%q: %v", argv, r.err)
	}
	return r.stdout, r.stderr, r.code
}

// recordsJSON is recs without what differs from run to run (see
// comparable), as JSON.
func recordsJSON(recs []map[string]any) string {
	var out []map[string]any
	for _, r := range recs {
		out = append(out, comparable(r))
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// servedRecords counts the audit records that say they were served.
func servedRecords(t *testing.T, w *world) int {
	n := 0
	for _, r := range auditRecords(t, w) {
		if r["via"] == "server" {
			n++
		}
	}
	return n
}

// TestServeParity: the same guardrun command line, started by the
// same shell snippet, gives the same stdout, stderr and exit status
// served and unserved, and is served exactly when the server can take
// it as is (argv forms, flags, environment, umask, working directory,
// descriptors the CLI treats differently).
func TestServeParity(t *testing.T) {
	requireSandbox(t)
	// prefix (shell) runs before `exec "$GR" "$@"`.
	rows := []struct {
		name   string
		prefix string
		args   []string
		served bool
	}{
		{"script-posargs", "", []string{"--approve-all", "-c", `echo "$0|$1|$#"`, "a0", "b", "c"}, true},
		{"sh-e", "", []string{"--approve-all", "-e", "-c", "false; echo not-reached"}, true},
		{"sh-o-errexit", "", []string{"--approve-all", "-o", "errexit", "-c", "false; echo not-reached"}, true},
		{"sh-lc", "", []string{"--approve-all", "-lc", "echo login"}, true},
		{"argv-form", "", []string{"--approve-all", "--", "echo", "argv", "form"}, true},
		{"flags-after-form", "", []string{"-c", "echo x", "--approve-all"}, true},
		{"strict-refusal", "", []string{"--strict", "-c", "touch refused"}, true},
		{"ask-without-terminal", "", []string{"-c", "touch asked"}, false},
		{"c-without-script", "", []string{"-c"}, false},
		{"dashdash-without-command", "", []string{"--"}, false},
		{"bad-mode", "", []string{"--mode", "bogus", "-c", "echo x"}, false},
		{"help", "", []string{"-h"}, false},
		{"script-file", "", []string{"-e", "script.sh"}, false},
		{"landlock-backend", "", []string{"--approve-all", "--backend", "landlock", "-c", "echo ll"}, true},
		{"umask-077", "umask 077;", []string{"--approve-all", "-c", "umask; echo f > um; stat -c %a um"}, false},
		{"pwd-through-symlink", "ln -sfn \"$PWD\" ../sym; cd ../sym;", []string{"--approve-all", "-c", "pwd; echo $PWD"}, true},
		{"pwd-lies", "export PWD=/;", []string{"--approve-all", "-c", "pwd"}, true},
		{"deleted-cwd", "mkdir -p gone; cd gone; rmdir ../gone;", []string{"--approve-all", "-c", "echo in-deleted"}, false},
		{"relative-guardrun-config", "cp \"$GUARDRUN_CONFIG\" ../rel.yaml; cd ..; export GUARDRUN_CONFIG=rel.yaml; cd work;", []string{"--approve-all", "-c", "echo relcfg"}, false},
		{"relative-config-flag", "cp \"$GUARDRUN_CONFIG\" ../rel2.yaml;", []string{"--config", "../rel2.yaml", "--approve-all", "-c", "echo relflag"}, true},
		{"relative-xdg-config", "export XDG_CONFIG_HOME=cfg;", []string{"--approve-all", "-c", "echo xdg"}, false},
		{"other-home", "export HOME=/tmp;", []string{"--approve-all", "-c", "echo home"}, false},
		{"unset-xdg-state", "unset XDG_STATE_HOME;", []string{"--approve-all", "-c", "echo state"}, false},
		{"other-path", "export PATH=/bin:$PATH;", []string{"--approve-all", "-c", "echo path"}, false},
		{"trace", "export GUARDRUN_TRACE=1;", []string{"--approve-all", "-c", "echo traced"}, false},
		{"relative-server-path", "export GUARDRUN_SERVER=rel/s;", []string{"--approve-all", "-c", "echo relsrv"}, false},
		{"stdin-closed", "exec 0<&-;", []string{"--approve-all", "-c", "cat; echo st $?"}, false},
		{"stdout-closed", "exec 1>&-;", []string{"--approve-all", "-c", "echo out"}, false},
		{"named-session", "", []string{"--approve-all", "--session", "s1", "-c", "echo sess"}, true},
		{"server-var-not-passed-on", "", []string{"--approve-all", "-c", "echo \"[$GUARDRUN_SERVER]\""}, true},
		{"large-script", "", []string{"--approve-all", "-c", "echo " + strings.Repeat("x", 100000) + " | wc -c"}, true},
		{"large-environment", "export BIG=$(head -c 100000 /dev/zero | tr '\\0' x);", []string{"--approve-all", "-c", "echo ${#BIG}"}, true},
		{"many-arguments", "", append([]string{"--approve-all", "-c", "echo $#", "a0"}, strings.Fields(strings.Repeat("a ", 5000))...), true},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			w := serveWorld(t, superviseConfig)
			os.WriteFile(filepath.Join(w.work, "script.sh"), []byte("echo from-file\n"), 0o644)
			script := r.prefix + ` exec "$GR" "$@"`
			// The stderr of a trace holds timings; the rest must match.
			scrub := func(s string) string {
				if r.name == "trace" {
					return ""
				}
				return strings.ReplaceAll(s, w.work, "WORK")
			}
			uOut, uErr, uCode := shRun(t, w, nil, 30*time.Second, script, r.args...)
			before := servedRecords(t, w)
			nu := len(auditRecords(t, w))
			sOut, sErr, sCode := shRun(t, w, []string{guardrunBin, "serve", "--"}, 30*time.Second, script, r.args...)
			served := servedRecords(t, w) > before
			recs := auditRecords(t, w)
			if a, b := recordsJSON(recs[:nu]), recordsJSON(recs[nu:]); a != b {
				t.Errorf("the audit records differ:\n unserved %s\n served   %s", a, b)
			}
			if sCode == -1 {
				t.Fatalf("the served run did not end in 30s: stdout %q stderr %q", sOut, sErr)
			}
			if uOut != sOut || scrub(uErr) != scrub(sErr) || uCode != sCode {
				t.Errorf("served and unserved differ:\n unserved: exit %d stdout %q stderr %q\n served:   exit %d stdout %q stderr %q",
					uCode, uOut, uErr, sCode, sOut, sErr)
			}
			if served != r.served {
				t.Errorf("served %v, want %v (exit %d stdout %q stderr %q)", served, r.served, sCode, sOut, sErr)
			}
		})
	}
}

// TestServeRefuses: the server when something goes wrong, and
// clients it must not serve.
func TestServeRefuses(t *testing.T) {
	requireSandbox(t)
	rows := []struct {
		name string
		run  func(t *testing.T, w *world)
	}{
		{"accept-fails-clients-fall-back", attackAcceptFails},
		{"stalled-request-interruptible", attackStalledRequest},
		{"other-groups-not-served", attackOtherGroups},
		{"chrooted-client-not-served", attackChroot},
		{"bwrap-sandboxed-fake-server-gets-nothing", func(t *testing.T, w *world) { attackFakeServer(t, w, "bwrap") }},
		{"landlock-sandboxed-fake-server-gets-nothing", func(t *testing.T, w *world) { attackFakeServer(t, w, "landlock") }},
		{"socket-dir-hidden-when-spelled-otherwise", attackSocketSpelling},
		{"served-command-sees-no-other-descriptors", func(t *testing.T, w *world) { attackOtherFDs(t, w, "bwrap") }},
		{"served-landlock-command-sees-no-other-descriptors", func(t *testing.T, w *world) { attackOtherFDs(t, w, "landlock") }},
		{"landlock-peer-without-user-namespaces", attackLandlockNoUserns},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			w := serveWorld(t, superviseConfig)
			shortRuntime(t, w)
			r.run(t, w)
		})
	}
}

// shortRuntime gives w an $XDG_RUNTIME_DIR whose path leaves room for the
// server's socket name (a unix socket path has at most 107 bytes).
func shortRuntime(t *testing.T, w *world) string {
	t.Helper()
	d, err := os.MkdirTemp("", "grsa")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	w.env = append(w.env, "XDG_RUNTIME_DIR="+d)
	return d
}

// attackAcceptFails: the server runs out of descriptors (its limit
// lowered, a flood of connections that say nothing) and can no longer
// accept. A client that comes after must run the usual way, not wait
// for an answer that never comes.
func attackAcceptFails(t *testing.T, w *world) {
	testenv.LookPath(t, "prlimit")
	python := testenv.LookPath(t, "python3")
	errFile := filepath.Join(w.tmp, "serve.err")
	flood := python + ` -c '
import socket, sys, time
ss = []
for i in range(64):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); ss.append(s)
time.sleep(4)
' "$GUARDRUN_SERVER"`
	script := `prlimit --pid $PPID --nofile=14:14; ` + flood + ` &
for i in $(seq 100); do grep -q accept ` + errFile + ` && break; sleep 0.1; done
timeout 10 "$GR" --approve-all -c 'echo late'; echo "late $?"; wait`
	pre := []string{"sh", "-c", `exec "$@" 2>` + errFile, "sh", guardrunBin, "serve", "--"}
	out, _, code := shRun(t, w, pre, 40*time.Second, script)
	errOut, _ := os.ReadFile(errFile)
	if !strings.Contains(string(errOut), "accept") {
		t.Fatalf("the server never failed to accept, so nothing was tried: stdout %q stderr %q", out, errOut)
	}
	if code == -1 {
		t.Fatalf("clients hung once the server could not accept (stdout %q stderr %q)", out, errOut)
	}
	if out != "late\nlate 0\n" {
		t.Errorf("the late client did not run its command: exit %d stdout %q stderr %q", code, out, errOut)
	}
}

// attackStalledRequest: a request the server cannot finish deciding (its
// --config is a FIFO nobody writes) must stay as interruptible as the
// unserved guardrun is (timeout's SIGTERM ends it), and serve must end
// when its command does.
func attackStalledRequest(t *testing.T, w *world) {
	fifo := filepath.Join(w.tmp, "cfg.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	script := `timeout 2 "$GR" --config ` + fifo + ` --approve-all -c 'echo never'; echo "status $?"`
	out, _, code := shRun(t, w, nil, 20*time.Second, script)
	if out != "status 124\n" || code != 0 {
		t.Fatalf("unserved: stdout %q exit %d; the test's premise is wrong", out, code)
	}
	start := time.Now()
	out, errOut, code := shRun(t, w, []string{guardrunBin, "serve", "--"}, 20*time.Second, script)
	if code == -1 {
		t.Fatalf("served: the run did not end in 20s: a stalled request ignores SIGTERM or keeps serve from exiting (stdout %q stderr %q)", out, errOut)
	}
	if out != "status 124\n" || code != 0 || time.Since(start) > 10*time.Second {
		t.Errorf("served: stdout %q exit %d after %v, want status 124 soon after the 2s time-out", out, code, time.Since(start))
	}
}

// attackOtherGroups: a client that runs with other groups than the
// server (root's server, a client started with setpriv as another
// group) would get the server's groups for its command. It must run the
// usual way, with its own.
func attackOtherGroups(t *testing.T, w *world) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a client with other groups")
	}
	testenv.LookPath(t, "setpriv")
	// The command prints the groups it runs with (as the sandbox maps
	// them) next to the client's.
	script := `grep -E '^(Gid|Groups):' /proc/self/status | tr -s '\t ' '  '; ` +
		`exec setpriv --regid 65534 --clear-groups -- "$GR" --approve-all -c 'grep -E "^(Gid|Groups):" /proc/self/status | tr -s "\t " "  "'`
	uOut, _, _ := shRun(t, w, nil, 30*time.Second, script)
	before := servedRecords(t, w)
	sOut, sErr, code := shRun(t, w, []string{guardrunBin, "serve", "--"}, 30*time.Second, script)
	if uOut != sOut || code != 0 {
		t.Errorf("the command's groups differ served (exit %d):\n%s%s\nfrom unserved:\n%s", code, sOut, sErr, uOut)
	}
	if servedRecords(t, w) != before {
		t.Error("a client with other groups than the server was served")
	}
}

// attackChroot: a client in a chroot (same namespaces as the server)
// runs what it runs as without the server: its command must not get the
// server's root directory (where, unlike in a chroot, bwrap can even
// make its namespaces).
func attackChroot(t *testing.T, w *world) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a chroot")
	}
	testenv.LookPath(t, "unshare")
	testenv.LookPath(t, "chroot")
	for _, p := range []string{w.work, w.getenv("XDG_RUNTIME_DIR")} {
		if !strings.HasPrefix(p, "/tmp/") {
			t.Skipf("%s is not under /tmp, which the chroot shares", p)
		}
	}
	// The chroot, in a mount namespace of its own with the server: the
	// system's /usr, /etc, /proc, /dev and /tmp bound in.
	setup := `R=$(mktemp -d); mkdir -p $R/usr $R/proc $R/dev $R/tmp $R/etc
mount --rbind /usr $R/usr && mount --rbind /proc $R/proc && mount --rbind /dev $R/dev &&
mount --bind /tmp $R/tmp && mount --bind /etc $R/etc || exit 99
for d in bin lib lib64 sbin; do ln -s usr/$d $R/$d; done
inner="cd $PWD && exec \"\$GR\" --approve-all -c 'echo in-chroot'"
`
	unserved := setup + `chroot $R sh -c "$inner"`
	served := setup + `"$GR" serve -- chroot $R sh -c "$inner"`
	pre := []string{"unshare", "-m", "--propagation", "private"}
	// Served first: the unserved run leaves the backend it found in the
	// state directory's cache, which the server would then use too.
	before := servedRecords(t, w)
	sOut, sErr, sCode := shRun(t, w, pre, 30*time.Second, served)
	served1 := servedRecords(t, w) != before
	uOut, uErr, uCode := shRun(t, w, pre, 30*time.Second, unserved)
	if uCode == 99 || sCode == 99 {
		t.Fatalf("the chroot was not made: %s %s", uErr, sErr)
	}
	if served1 {
		t.Errorf("a chrooted client was served: exit %d stdout %q stderr %q", sCode, sOut, sErr)
	}
	if uOut != sOut || uCode != sCode {
		t.Errorf("in a chroot, served and unserved differ:\n unserved: exit %d stdout %q stderr %q\n served:   exit %d stdout %q stderr %q",
			uCode, uOut, uErr, sCode, sOut, sErr)
	}
}

// fakeServerPy listens at argv[1] as if it were guardrun serve, takes
// what a client sends, tries to read ../outside/secret relative to the
// working directory descriptor it was handed, answers R and X 0, and
// says what it got.
const fakeServerPy = `import array, os, socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(1)
c, _ = s.accept()
fds = array.array('i')
try:
    msg, anc, flags, addr = c.recvmsg(8, socket.CMSG_SPACE(4 * 4))
    for lvl, typ, data in anc:
        if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - len(data) % 4])
except OSError:
    pass
stolen = 'nothing'
if len(fds) == 4:
    try:
        fd = os.open('../outside/secret', os.O_RDONLY, dir_fd=fds[3])
        stolen = os.read(fd, 100).decode().strip()
    except OSError as e:
        stolen = 'denied (%s)' % e.strerror
try:
    c.sendall(b'RX' + struct.pack('<i', 0))
except OSError:
    pass
print('fake got %d descriptors; outside: %s' % (len(fds), stolen), flush=True)
`

// attackFakeServer: a command in a guardrun sandbox (bwrap) listens
// where an unconfined guardrun's $GUARDRUN_SERVER points (set by a
// Makefile's export, say) and answers as the server would. The client
// must not hand it its descriptors (its working directory's would let
// the command open files outside its sandbox) nor take its answer: it
// runs its command itself.
func attackFakeServer(t *testing.T, _ *world, backend string) {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		testenv.Missing(t, "%s is needed for a server inside a sandbox", python)
	}
	w := serveWorld(t, superviseConfig+"  unix_sockets: [/run/guardrun-test-none.sock]\n  landlock_accept: [unix_sockets]\n")
	shortRuntime(t, w)
	if backend == "landlock" {
		landlockWorks(t, w, w.work)
	}
	outside := filepath.Join(filepath.Dir(w.work), "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("TOPSECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(w.work, "fake.py"), []byte(fakeServerPy), 0o644)
	os.Mkdir(filepath.Join(w.work, "sock"), 0o700)
	script := `"$GR" --backend ` + backend + ` --approve-all -c 'cat ../outside/secret 2>/dev/null && echo DIRECT-READ; ` + python + ` fake.py "$PWD/sock/s"' > fake.out 2>&1 &
for i in $(seq 100); do [ -S sock/s ] && break; sleep 0.1; done
GUARDRUN_SERVER=$PWD/sock/s "$GR" --approve-all -c 'echo real-run'; echo "client $?"; wait; cat fake.out`
	out, errOut, code := shRun(t, w, nil, 60*time.Second, script)
	t.Logf("exit %d stdout:\n%s\nstderr:\n%s", code, out, errOut)
	if strings.Contains(out, "DIRECT-READ") {
		t.Fatal("the sandbox let the command read outside: the attempt did not run confined")
	}
	if !strings.Contains(out, "fake got") {
		t.Fatalf("the fake server did not run:\n%s", out)
	}
	if recs := auditRecords(t, w); len(recs) < 1 || recs[0]["sandbox"] != backend {
		t.Fatalf("the fake server did not run under %s: %v", backend, recs)
	}
	if strings.Contains(out, "TOPSECRET") {
		t.Error("a sandboxed fake server read a file outside its sandbox through the client's working directory")
	}
	if !strings.Contains(out, "real-run\nclient 0\n") {
		t.Error("the client took a sandboxed fake server's answer instead of running its command")
	}
	if !strings.Contains(out, "fake got 0 descriptors") {
		t.Error("the client handed its descriptors to a sandboxed fake server")
	}
}

// attackSocketSpelling: the client names the server's socket through a
// symbolic link: the socket's real directory is still hidden from the
// served command.
func attackSocketSpelling(t *testing.T, w *world) {
	rt := shortRuntime(t, w)
	cfg := superviseConfig + "    rt: {root: " + rt + ", mode: ro}\n"
	w = serveWorld(t, cfg)
	w.env = append(w.env, "XDG_RUNTIME_DIR="+rt)
	script := `d=$(dirname "$GUARDRUN_SERVER"); ln -s "$d" ../lnk; ` +
		`GUARDRUN_SERVER=$PWD/../lnk/s "$GR" --approve-all -c "test -e $d/s && echo VISIBLE; echo checked"`
	before := servedRecords(t, w)
	out, errOut, code := shRun(t, w, []string{guardrunBin, "serve", "--"}, 30*time.Second, script)
	if servedRecords(t, w) == before {
		t.Fatalf("not served, so nothing was tried: exit %d stdout %q stderr %q", code, out, errOut)
	}
	if out != "checked\n" {
		t.Errorf("the served command saw the server's socket: %q %q", out, errOut)
	}
}

// attackOtherFDs: runs served at the same time see only their own
// descriptors 0-2, none of the other client's or the server's.
func attackOtherFDs(t *testing.T, w *world, backend string) {
	if backend == "landlock" {
		landlockWorks(t, w, w.work)
	}
	script := `"$GR" --backend ` + backend + ` --approve-all -c 'sleep 2' 3</dev/null 4</dev/null & sleep 0.5
"$GR" --backend ` + backend + ` --approve-all -c 'ls /proc/self/fd | tr "\n" " "; echo' 7</dev/null; wait`
	out, errOut, code := shRun(t, w, []string{guardrunBin, "serve", "--"}, 30*time.Second, script)
	if code != 0 || servedRecords(t, w) != 4 {
		t.Fatalf("exit %d, %d served records: stdout %q stderr %q", code, servedRecords(t, w), out, errOut)
	}
	// ls has its own directory open as the fourth.
	if out != "0 1 2 3 \n" {
		t.Errorf("the served command has descriptors besides 0-2: %q", out)
	}
}

// attackLandlockNoUserns: where user namespaces are off (the wrapper),
// guardrun serve's clients run under landlock; a command inside that
// sandbox that reaches the server with a well-formed request is not
// served (the server closes), and what it asked for did not happen.
func attackLandlockNoUserns(t *testing.T, _ *world) {
	pre := noNamespaces(t)
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		testenv.Missing(t, "%s is needed to speak to the server from inside a sandbox", python)
	}
	w := serveWorld(t, superviseConfig+"  unix_sockets: [/run/guardrun-test-none.sock]\n  landlock_accept: [unix_sockets]\n")
	shortRuntime(t, w)
	outside := filepath.Join(filepath.Dir(w.work), "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(w.work, "client.py"), []byte(serveClientPy), 0o644)
	attack := `touch ` + outside + `/direct 2>/dev/null && echo DIRECT-WROTE; CLIENT_ENV=client.env ` +
		python + ` client.py "$1" --approve-all -- touch ` + outside + `/OUTSIDE`
	script := `env -0 > client.env; "$GR" --approve-all -c '` + attack + `' attack "$GUARDRUN_SERVER"`
	out, errOut, code := shRun(t, w, append(pre, guardrunBin, "serve", "--"), 60*time.Second, script)
	t.Logf("exit %d stdout:\n%s\nstderr:\n%s", code, out, errOut)
	checkPeerRefused(t, w, outside, attack, out)
}

// TestServeRefusesUnprivileged: as an unprivileged user, (1) a server
// that ran a landlock command (and so is not dumpable: its /proc is
// closed to its clients) still serves the clients after it, and (2) a
// fake server in a bwrap sandbox gets nothing from an unconfined client.
func TestServeRefusesUnprivileged(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run guardrun as an unprivileged user")
	}
	testenv.LookPath(t, "runuser")
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		testenv.Missing(t, "%s is needed for a server inside a sandbox", python)
	}
	const user = "guardrun-test"
	testenv.User(t, user)
	dir, err := os.MkdirTemp("/var/tmp", "grsa-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ws, home, outside := dir+"/ws", dir+"/home", dir+"/outside"
	cfg := home + "/cfg.yaml"
	for p, c := range map[string]string{
		ws + "/fake.py":     fakeServerPy,
		outside + "/secret": "TOPSECRET\n",
		cfg: "shell:\n  program: /bin/bash\n  default: {allowed: true, approval: false}\nsandbox:\n" +
			"  unix_sockets: [/run/guardrun-test-none.sock]\n  landlock_accept: [unix_sockets]\n" +
			"  paths:\n    ws: {root: " + ws + ", mode: rw}\n",
	} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(ws+"/sock", 0o700)
	if out, err := exec.Command("chown", "-R", user, dir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v\n%s", err, out)
	}
	os.Chmod(dir, 0o755)
	run := func(script string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "runuser", "-u", user, "--", "env", "-i", "HOME="+home, "PATH=/usr/local/bin:/usr/bin:/bin",
			"GUARDRUN_CONFIG="+cfg, "GR="+guardrunBin, "sh", "-c", script)
		cmd.Dir = ws
		cmd.WaitDelay = pipeGrace
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("as %s: %v\n%s", user, err, out)
		}
		return string(out)
	}
	audit := home + "/.local/state/guardrun/audit.jsonl"
	out := run(`"$GR" serve -- sh -c '"$GR" --backend landlock -c "echo ll"; "$GR" --backend bwrap -c "echo after1"; "$GR" --backend landlock -c "echo after2"'`)
	b, _ := os.ReadFile(audit)
	if out != "ll\nafter1\nafter2\n" || strings.Count(string(b), `"via":"server"`) != 6 {
		t.Errorf("not every run served after a landlock run:\n%s\n%s", out, b)
	}
	out = run(`"$GR" --approve-all -c 'cat ../outside/secret 2>/dev/null && echo DIRECT-READ; ` + python + ` fake.py "$PWD/sock/s"' > fake.out 2>&1 &
for i in $(seq 100); do [ -S sock/s ] && break; sleep 0.1; done
GUARDRUN_SERVER=$PWD/sock/s "$GR" --approve-all -c 'echo real-run'; echo "client $?"; wait; cat fake.out`)
	if strings.Contains(out, "DIRECT-READ") || !strings.Contains(out, "fake got") {
		t.Fatalf("the fake server did not run confined:\n%s", out)
	}
	if strings.Contains(out, "TOPSECRET") || !strings.Contains(out, "real-run\nclient 0\n") || !strings.Contains(out, "fake got 0 descriptors") {
		t.Errorf("a sandboxed fake server was handed the client's request:\n%s", out)
	}
}
