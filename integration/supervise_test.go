//go:build linux

package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/supervisor"
)

// superviseConfig allows echo, seq, sleep and cat, asks for touch, and
// lets everything be written in the work directory.
var superviseConfig = configWithRules("")

func configWithRules(extra string) string {
	return strings.Replace(superviseRules, "sandbox:", extra+"sandbox:", 1)
}

const superviseRules = `shell:
  program: /bin/bash
  default: {allowed: true, approval: true}
  rules:
    - pattern: echo
      approval: false
    - pattern: seq
      approval: false
    - pattern: sleep
      approval: false
    - pattern: cat
      approval: false
    - pattern: test
      approval: false
    - pattern: touch
      approval: true
sandbox:
  paths:
    workspace: {root: ., mode: rw}
`

// world is a fresh home, state, config and work directory for one test.
type world struct {
	work string
	tmp  string
	env  []string
}

func newWorld(t testing.TB, config string) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{work: filepath.Join(root, "work"), tmp: filepath.Join(root, "tmp")}
	home := filepath.Join(root, "home")
	for _, d := range []string{w.work, w.tmp, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The config lies outside the rw zone (inside one, $GUARDRUN_CONFIG
	// would not be trusted); a zone at "." means the work directory.
	cfg := filepath.Join(root, "guardrun.yaml")
	config = strings.ReplaceAll(config, "{root: ., ", "{root: "+w.work+", ")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	w.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_RUNTIME_DIR=",
		"TMPDIR=" + w.tmp,
		"GUARDRUN_CONFIG=" + cfg,
		"NO_COLOR=1",
		"TERM=xterm",
	}
	return w
}

// tty is a program on a terminal a test drives: it types on the master
// and reads everything shown there.
type tty struct{ *term }

// startOnTTY starts argv as a session leader with a new pty as its
// controlling terminal and stdio, as a terminal emulator would.
func startOnTTY(t testing.TB, w *world, argv ...string) *tty {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = w.work, w.env
	return &tty{startTerm(t, cmd, termOpts{keepSlave: true})}
}

// waitFor waits until what was shown after offset from matches re and
// returns the offset just past the match.
func (tt *tty) waitFor(from int, re string) int {
	tt.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := tt.screen()
		if loc := rx.FindStringIndex(s[min(from, len(s)):]); loc != nil {
			return min(from, len(s)) + loc[1]
		}
		if time.Now().After(deadline) {
			tt.t.Fatalf("terminal never showed %q; after offset %d it shows:\n%s", re, from, s[min(from, len(s)):])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// socketHidden asks the fake agent for the socket its environment names
// (its command what, the variable env), checks that it exists on the
// host and that a sandboxed command cannot see it, and returns where the
// screen was read to.
func (tt *tty) socketHidden(at int, what, env string) int {
	t := tt.t
	t.Helper()
	tt.typ(what + "\n")
	end := tt.waitFor(at, `agent `+what+`: \S+\r\n`)
	sock := regexp.MustCompile(`agent ` + what + `: (\S+)\r\n`).FindStringSubmatch(tt.screen()[at:end])[1]
	if fi, err := os.Stat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("%s=%s: %v", env, sock, err)
	}
	tt.typ("test -e " + sock + " && echo VISIBLE || echo HIDDEN\n")
	at = tt.waitFor(end, `agent saw: (VISIBLE|HIDDEN)`)
	if strings.Contains(tt.screen(), "agent saw: VISIBLE") {
		t.Fatalf("%s (%s) is visible inside the sandbox", env, sock)
	}
	return at
}

// answer waits for a prompt's key line after from, lets the supervisor's
// settle time pass (keys typed sooner go to the agent), and types keys.
// The settle time starts when the prompt is drawn, before the test sees
// it, so it is over settle after the test saw it.
func (tt *tty) answer(from int, keys string) int {
	tt.t.Helper()
	at := tt.waitFor(from, `\[y\] approve once.*> `)
	time.Sleep(supervisor.DefaultSettle + 50*time.Millisecond)
	tt.typ(keys)
	return at
}

// waitFile waits until path exists: an event a command signals.
func waitFile(t testing.TB, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (tt *tty) termios() unix.Termios {
	tt.t.Helper()
	tio, err := unix.IoctlGetTermios(int(tt.ps.Fd()), unix.TCGETS)
	if err != nil {
		tt.t.Fatal(err)
	}
	return *tio
}

func fakeAgent(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs("testdata/fakeagent/fakeagent.sh")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func prompts(s string) int { return strings.Count(s, "── guardrun: approval needed") }

// TestSupervise drives `guardrun supervise -- fakeagent` as a person
// would: allowed commands run without asking, asking ones prompt on the
// supervisor's terminal and take y, n with a note, and s; a session grant
// covers the identical command later, also from a grandchild, and no
// other; two children asking at once are shown one after the other; the
// agent's output waits during a prompt and arrives whole and in order;
// and the terminal is restored at the end.
func TestSupervise(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t, superviseConfig)
	tt := startOnTTY(t, w, guardrunBin, "supervise", "--", "sh", fakeAgent(t))
	before := tt.termios()
	at := tt.waitFor(0, "fakeagent: ready")
	if after := tt.termios(); after.Lflag&unix.ICANON != 0 {
		t.Error("the terminal is not in raw mode under the supervisor")
	}

	// The socket is the agent's, and invisible to the commands it runs.
	at = tt.socketHidden(at, "socket", "GUARDRUN_SOCKET")

	// So is the command server's, where commands that need no prompt
	// run.
	at = tt.socketHidden(at, "server", "GUARDRUN_SERVER")

	// An allowed command: no prompt, served.
	tt.typ("echo hello-from-echo\n")
	at = tt.waitFor(at, `agent saw: hello-from-echo\r\n>>> end \d+: status 0`)
	if n := prompts(tt.screen()); n != 0 {
		t.Fatalf("%d prompts for an allowed command", n)
	}
	if recs := recordsOf(auditRecords(t, w), "echo hello-from-echo"); len(recs) != 2 || recs[0]["via"] != "server" {
		t.Errorf("the allowed command was not served: %v", recs)
	}

	// y: runs.
	tt.typ("touch file-y\n")
	at = tt.answer(at, "y")
	at = tt.waitFor(at, `>>> end \d+: status 0`)
	if _, err := os.Stat(filepath.Join(w.work, "file-y")); err != nil {
		t.Errorf("approved touch did not run: %v", err)
	}
	if recs := recordsOf(auditRecords(t, w), "touch file-y"); len(recs) != 2 || recs[1]["decided_by"] != "person" || recs[1]["via"] != nil {
		t.Errorf("the approved command: %v", recs)
	}

	// n with a note: refused with the note, the file not made.
	tt.typ("touch file-n\n")
	at = tt.answer(at, "n")
	at = tt.waitFor(at, "note for the agent")
	tt.typ("not that one\r")
	at = tt.waitFor(at, `agent saw: guardrun: denied by user: not that one\r\n>>> end \d+: status 77`)
	if _, err := os.Stat(filepath.Join(w.work, "file-n")); err == nil {
		t.Error("denied touch ran")
	}

	// s: runs, and the identical command does not ask again, neither
	// from the agent nor from a child of a child; another command does.
	tt.typ("touch file-s\n")
	at = tt.answer(at, "s")
	at = tt.waitFor(at, `>>> end \d+: status 0`)
	asked := prompts(tt.screen())
	tt.typ("touch file-s\n")
	at = tt.waitFor(at, `>>> end \d+: status 0`)
	tt.typ("nested touch file-s\n")
	at = tt.waitFor(at, `begin \d+: nested[\s\S]*>>> end \d+: status 0`)
	if n := prompts(tt.screen()); n != asked {
		t.Fatalf("a session grant asked again (%d prompts, want %d):\n%s", n, asked, tt.screen())
	}
	tt.typ("touch file-other\n")
	at = tt.answer(at, "y")
	at = tt.waitFor(at, `>>> end \d+: status 0`)
	if n := prompts(tt.screen()); n != asked+1 {
		t.Fatalf("a different command did not ask (%d prompts, want %d)", n, asked+1)
	}

	// A nested child that is not covered asks the same supervisor.
	tt.typ("nested touch file-nested\n")
	at = tt.answer(at, "y")
	at = tt.waitFor(at, `>>> end \d+: status 0`)
	if _, err := os.Stat(filepath.Join(w.work, "file-nested")); err != nil {
		t.Errorf("nested touch did not run: %v", err)
	}

	// Two children ask at once: one prompt, then the other, both
	// answered.
	tt.typ("par touch par-1 ;; touch par-2\n")
	first := tt.answer(at, "y")
	second := tt.answer(first, "y")
	if prompts(tt.screen()[at:second]) != 2 {
		t.Fatalf("want two prompts, one after the other:\n%s", tt.screen()[at:])
	}
	at = tt.waitFor(second, `>>> end \d+: status 0 0`)
	for _, f := range []string{"par-1", "par-2"} {
		if _, err := os.Stat(filepath.Join(w.work, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}

	// Output held during a prompt arrives afterwards, whole and in order.
	// seq starts once the prompt is up (go exists) and writes all of its
	// output before the prompt is answered (seq-written exists).
	tt.typ("par sh -c 'while ! test -e go; do sleep 0.01; done; seq 1 100000; echo > seq-written; echo SEQ-DONE' ;; touch held\n")
	keys := tt.waitFor(at, `touch held[\s\S]*\[y\] approve once.*> `)
	if err := os.WriteFile(filepath.Join(w.work, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(w.work, "seq-written"))
	if s := tt.screen()[keys:]; strings.Contains(s, "\n1\r\n") || strings.Contains(s, "SEQ-DONE") {
		t.Fatalf("output shown during a prompt: %.200q", s)
	}
	// A key counts once the keyboard was quiet for the settle time after
	// the prompt was drawn; seq may finish well within it.
	time.Sleep(supervisor.DefaultSettle + 50*time.Millisecond)
	tt.typ("y")
	end := tt.waitFor(keys, `>>> end \d+: status 0 0`)
	checkSeq(t, tt.screen()[keys:end], 100000)

	tt.typ("quit\n")
	tt.waitFor(at, "fakeagent: bye")
	if st := tt.wait(); st != 0 {
		t.Errorf("supervise exited %d, want the agent's 0", st)
	}
	if after := tt.termios(); after != before {
		t.Errorf("terminal not restored:\nbefore %+v\nafter  %+v", before, after)
	}
	if left, _ := filepath.Glob(filepath.Join(w.tmp, "guardrun-*")); len(left) > 0 {
		t.Errorf("socket directory left behind: %v", left)
	}
}

// checkSeq checks that s holds the lines 1..n once each, in order.
func checkSeq(t *testing.T, s string, n int) {
	t.Helper()
	// The prompt's closing sequences come just before the released output.
	s = regexp.MustCompile(`\x1b\][^\x07]*\x07|\x1b\[[0-9;?]*[a-zA-Z]|\x1b[78]`).ReplaceAllString(s, "")
	next := 1
	for _, l := range strings.Split(s, "\r\n") {
		v, err := strconv.Atoi(l)
		if err != nil {
			continue
		}
		if v != next {
			t.Fatalf("line %d after %d", v, next-1)
		}
		next++
	}
	if next != n+1 {
		t.Fatalf("saw 1..%d, want 1..%d", next-1, n)
	}
}

const unsandboxedConfig = `shell:
  default: {allowed: true, approval: true}
sandbox:
  require_os_sandbox: false
`

// The agent's status is supervise's; a killed agent is 128+9; the
// terminal is restored either way.
func TestSuperviseAgentStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		kill   bool
		want   int
	}{
		{"exit 5", "echo started; exit 5", false, 5},
		{"killed", "echo started; exec sleep 60", true, 128 + 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, unsandboxedConfig)
			tt := startOnTTY(t, w, guardrunBin, "supervise", "--", "sh", "-c", "echo pid=$$; "+tc.script)
			before := tt.termios()
			tt.waitFor(0, "started")
			if tc.kill {
				m := regexp.MustCompile(`pid=(\d+)`).FindStringSubmatch(tt.screen())
				pid, _ := strconv.Atoi(m[1])
				syscall.Kill(pid, syscall.SIGKILL)
			}
			if st := tt.wait(); st != tc.want {
				t.Errorf("status %d, want %d", st, tc.want)
			}
			if after := tt.termios(); after != before {
				t.Errorf("terminal not restored:\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
}

// A GUARDRUN_SOCKET that no supervisor answers falls back to the
// terminal; with none, interactive mode acts as strict.
func TestStaleSocketFallsBack(t *testing.T) {
	w := newWorld(t, unsandboxedConfig)
	cmd := exec.Command(guardrunBin, "-c", "uname -a")
	cmd.Dir = w.work
	cmd.Env = append(w.env, "GUARDRUN_SOCKET="+filepath.Join(w.tmp, "gone", "socket"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal
	out, _ := cmd.CombinedOutput()
	if st := cmd.ProcessState.ExitCode(); st != 77 || !strings.Contains(string(out), "no terminal to ask") {
		t.Errorf("status %d, output %s", st, out)
	}
}

// guardrun shell from a pipe: each line is checked and sandboxed; cd,
// export and unset carry over; exit ends it with its status.
func TestShellPiped(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t, configWithRules(`    - pattern: cd
      approval: false
    - pattern: export
      approval: false
    - pattern: unset
      approval: false
    - pattern: pwd
      approval: false
    - pattern: "true"
      approval: false
`))
	os.Mkdir(filepath.Join(w.work, "sub"), 0o755)
	script := strings.Join([]string{
		`echo one`,
		`cd sub`,
		`pwd`,
		`cd does-not-exist`,
		`pwd`,
		`export GREETING="hi there"`,
		`echo "[$GREETING]"`,
		`if true; then`,
		`  echo multi-line`,
		`fi`,
		`unset GREETING`,
		`echo "[$GREETING]"`,
		`touch nope`,
		`cd ..`,
		`pwd`,
		`exit 3`,
		`echo not reached`,
	}, "\n") + "\n"
	cmd := exec.Command(guardrunBin, "shell")
	cmd.Dir, cmd.Env = w.work, w.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stdin = strings.NewReader(script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	if st := cmd.ProcessState.ExitCode(); st != 3 {
		t.Errorf("status %d, want 3\nstderr: %s", st, stderr.String())
	}
	want := strings.Join([]string{
		"one",
		filepath.Join(w.work, "sub"),
		filepath.Join(w.work, "sub"),
		"[hi there]",
		"multi-line",
		"[]",
		w.work,
	}, "\n") + "\n"
	if got := stdout.String(); got != want {
		t.Errorf("stdout:\n%s\nwant:\n%s\nstderr:\n%s", got, want, stderr.String())
	}
	for _, s := range []string{"does-not-exist: No such file or directory", "denied (no terminal to ask"} {
		if !strings.Contains(stderr.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
		}
	}
}

// guardrun shell on a terminal: a prompt per line, continuation lines,
// and the prompt for approval on the same terminal.
func TestShellOnTerminal(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t, superviseConfig)
	tt := startOnTTY(t, w, guardrunBin, "shell")
	at := tt.waitFor(0, `guardrun:.*\$ `)
	tt.typ("echo 'two\n")
	at = tt.waitFor(at, `> `)
	tt.typ("lines'\n")
	at = tt.waitFor(at, `two\r\nlines\r\n`)
	tt.typ("touch from-shell\n")
	at = tt.waitFor(at, `\[y\] approve once.*> `)
	time.Sleep(450 * time.Millisecond) // the prompt's quiet time
	tt.typ("y")
	if approval.InjectionPossible() {
		end := tt.waitFor(at, `to confirm, type (?:\x1b\[1m)?[a-z]+`)
		code := regexp.MustCompile(`[a-z]+$`).FindString(tt.screen()[at:end])
		tt.typ(code)
	}
	tt.waitFor(at, `guardrun:.*\$ `)
	if _, err := os.Stat(filepath.Join(w.work, "from-shell")); err != nil {
		t.Errorf("approved touch did not run: %v", err)
	}
	tt.typ("exit 4\n")
	if st := tt.wait(); st != 4 {
		t.Errorf("status %d, want 4", st)
	}
}

// BenchmarkSuperviseThroughput relays a large output through `guardrun
// supervise` and through script(1), alternately, each into a pty that is
// read and discarded, and reports both rates, their ratio and the
// supervisor's peak RSS. GUARDRUN_BENCH_MB sets the size (default 256).
func BenchmarkSuperviseThroughput(b *testing.B) {
	if _, err := exec.LookPath("script"); err != nil {
		b.Skip("script(1) is not installed")
	}
	mb := 256
	if v, err := strconv.Atoi(os.Getenv("GUARDRUN_BENCH_MB")); err == nil && v > 0 {
		mb = v
	}
	w := newWorld(b, unsandboxedConfig)
	size := strconv.Itoa(mb << 20)
	writer := "head -c " + size + " /dev/zero"
	var tGuard, tScript time.Duration
	var peakKB int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runs := []func(){
			func() {
				d, rss := relayThrough(b, w, mb<<20, guardrunBin, "supervise", "--", "sh", "-c", writer)
				tGuard += d
				peakKB = max(peakKB, rss)
			},
			func() {
				d, _ := relayThrough(b, w, mb<<20, "script", "-qfec", writer, "/dev/null")
				tScript += d
			},
		}
		if i%2 == 1 {
			runs[0], runs[1] = runs[1], runs[0]
		}
		runs[0]()
		runs[1]()
	}
	b.StopTimer()
	rate := func(d time.Duration) float64 { return float64(b.N*mb) / d.Seconds() }
	b.ReportMetric(rate(tGuard), "supervise-MB/s")
	b.ReportMetric(rate(tScript), "script-MB/s")
	b.ReportMetric(rate(tGuard)/rate(tScript), "ratio")
	b.ReportMetric(float64(peakKB)/1024, "peak-RSS-MB")
}

// relayThrough runs argv on a fresh pty, reads and discards everything it
// shows, and returns how long that took and the process's peak RSS (KiB,
// from its rusage).
func relayThrough(b *testing.B, w *world, want int, argv ...string) (time.Duration, int64) {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = w.work, w.env
	start := time.Now()
	tm := startTerm(b, cmd, termOpts{discard: true})
	defer tm.close()
	<-tm.shown // when the last writer is gone
	elapsed := time.Since(start)
	if err := <-tm.done; err != nil {
		b.Fatalf("%v: %v", argv, err)
	}
	if n := tm.count; n < int64(want) {
		b.Fatalf("%v: relayed %d bytes, want %d", argv, n, want)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	return elapsed, rss
}
