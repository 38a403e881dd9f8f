//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// runWorld is a world (fresh home, state, config and work directory) with
// a private XDG_RUNTIME_DIR as well, so session stores land in the test's
// own directories.
func runWorld(t testing.TB, config string, extraEnv ...string) *world {
	t.Helper()
	w := newWorld(t, config)
	rt := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(rt, 0o700); err != nil {
		t.Fatal(err)
	}
	// Later entries win in os/exec.
	w.env = append(w.env, "XDG_RUNTIME_DIR="+rt)
	w.env = append(w.env, extraEnv...)
	return w
}

func (w *world) getenv(key string) string {
	v := ""
	for _, kv := range w.env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// promptRun is one guardrun process whose controlling terminal and stdin
// are a pty the test types on; its stdout and stderr are captured apart.
type promptRun = ptyRun

func startPrompt(t testing.TB, w *world, extraEnv []string, args ...string) *promptRun {
	t.Helper()
	return startOnPTY(t, w.work, append(append([]string{}, w.env...), extraEnv...), nil, args...)
}

// runPlain runs guardrun with no controlling terminal and returns its
// output and exit status.
func runPlain(t testing.TB, w *world, dir string, extraEnv []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	if dir == "" {
		dir = w.work
	}
	r := proc{dir: dir, env: append(append([]string{}, w.env...), extraEnv...)}.run(append([]string{guardrunBin}, args...)...)
	if r.err != nil {
		t.Errorf("guardrun %q: %v", args, r.err)
	}
	return r.stdout, r.stderr, r.code
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// TestRunPromptYes: y runs the command.
func TestRunPromptYes(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, superviseConfig)
	r := startPrompt(t, w, nil, "-c", "touch made-y")
	r.waitFor(keyLine, 1)
	if s := r.screen(); !strings.Contains(s, "$ touch made-y") || !strings.Contains(s, "in "+w.work) {
		t.Errorf("the prompt does not show the command and its directory:\n%s", s)
	}
	r.send("y")
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d after y, want 0; stderr: %s", code, r.stderr.String())
	}
	if !exists(filepath.Join(w.work, "made-y")) {
		t.Error("the approved command did not run")
	}
}

// TestRunPromptNoWithNote: n and a note refuse with 77 and pass the note
// back in the refusal line.
func TestRunPromptNoWithNote(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, superviseConfig)
	r := startPrompt(t, w, nil, "-c", "touch made-n")
	r.waitFor(keyLine, 1)
	r.send("n")
	r.waitFor("note for the agent", 1)
	r.send("use make instead\r")
	if code := r.wait(); code != 77 {
		t.Fatalf("exit %d after n, want 77; stderr: %s", code, r.stderr.String())
	}
	if got := r.stderr.String(); !strings.Contains(got, "guardrun: denied by user: use make instead\n") {
		t.Errorf("stderr lacks the refusal line with the note:\n%s", got)
	}
	if exists(filepath.Join(w.work, "made-n")) {
		t.Error("the denied command ran")
	}
}

// TestRunPromptSession: s runs and remembers the identical command for the
// session (on a terminal and, from the store, without one, also from many
// processes at once); a different command still asks.
func TestRunPromptSession(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, superviseConfig, "GUARDRUN_SESSION=test-1")
	r := startPrompt(t, w, nil, "-c", "touch a")
	r.waitFor(keyLine, 1)
	r.send("s")
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d after s, want 0; stderr: %s", code, r.stderr.String())
	}
	if !exists(filepath.Join(w.work, "a")) {
		t.Fatal("the command approved for the session did not run")
	}
	os.Remove(filepath.Join(w.work, "a"))

	// The same command again: runs without a prompt.
	r = startPrompt(t, w, nil, "-c", "touch a")
	if code := r.wait(); code != 0 {
		t.Fatalf("the remembered command: exit %d; stderr: %s\nterminal:\n%s", code, r.stderr.String(), r.screen())
	}
	if strings.Contains(r.screen(), "approval needed") {
		t.Errorf("a session grant asked again:\n%s", r.screen())
	}
	if !exists(filepath.Join(w.work, "a")) {
		t.Error("the remembered command did not run")
	}

	// Without a terminal, from 20 processes at once: still granted.
	var wg sync.WaitGroup
	codes := make([]int, 20)
	errs := make([]string, 20)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i], codes[i] = runPlain(t, w, "", nil, "-c", "touch a")
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 0 {
			t.Errorf("concurrent remembered run %d: exit %d; stderr: %s", i, c, errs[i])
		}
	}

	// Another command asks; deny it.
	r = startPrompt(t, w, nil, "-c", "touch b")
	r.waitFor(keyLine, 1)
	r.send("n")
	r.waitFor("note for the agent", 1)
	r.send("\r")
	if code := r.wait(); code != 77 {
		t.Fatalf("touch b after deny: exit %d, want 77", code)
	}
	if exists(filepath.Join(w.work, "b")) {
		t.Error("touch b ran though it was denied")
	}

	// The same command in another directory is another request.
	sub := filepath.Join(w.work, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runPlain(t, w, sub, nil, "-c", "touch a"); code != 77 {
		t.Errorf("the grant for %s covered %s: exit %d; stderr: %s", w.work, sub, code, stderr)
	}
	if list, _, _ := runPlain(t, w, "", nil, "session", "list", "--session", "test-1"); !strings.Contains(list, "(in "+w.work+")") {
		t.Errorf("session list does not say where the grant applies:\n%s", list)
	}

	// Another session does not share the grant.
	_, stderr, code := runPlain(t, w, "", []string{"GUARDRUN_SESSION=test-2"}, "-c", "touch a")
	if code != 77 {
		t.Errorf("another session: exit %d, want 77 (no terminal, not granted); stderr: %s", code, stderr)
	}

	// The session list still reads, and the store is valid JSON.
	out, stderr, code := runPlain(t, w, "", nil, "session", "list", "--session", "test-1", "--json")
	if code != 0 {
		t.Fatalf("session list: exit %d: %s", code, stderr)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Errorf("session list --json does not parse: %v\n%s", err, out)
	}
	if !strings.Contains(out, "touch") {
		t.Errorf("session list does not show the grant:\n%s", out)
	}
	checkStoreJSON(t, w)
}

// checkStoreJSON parses every JSON file under the session store.
func checkStoreJSON(t *testing.T, w *world) {
	t.Helper()
	for _, dir := range []string{filepath.Join(w.getenv("XDG_RUNTIME_DIR"), "guardrun"), filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun", "sessions")} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("session store %s: %v", p, err)
				return nil
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Errorf("session store %s is not valid JSON: %v\n%s", p, err, b)
			}
			return nil
		})
	}
}

// TestRunPromptView: v opens $PAGER on the full request, then y runs it.
func TestRunPromptView(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, superviseConfig)
	copyTo := filepath.Join(w.tmp, "viewed.txt")
	pager := filepath.Join(w.tmp, "pager.sh")
	if err := os.WriteFile(pager, []byte("#!/bin/sh\ncp \"$1\" '"+copyTo+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf("touch f%02d", i))
	}
	script := strings.Join(lines, "\n")
	r := startPrompt(t, w, []string{"PAGER=" + pager}, "-c", script)
	r.waitFor(keyLine, 1)
	// Both the script and its list of asking parts are cut short, so the
	// prompt fits on a terminal.
	if s := r.screen(); strings.Contains(s, "touch f30") || !strings.Contains(s, "10 more lines") || !strings.Contains(s, "10 more parts") {
		t.Errorf("a 30-line script is not truncated in the prompt:\n%s", s)
	}
	r.send("v")
	r.waitFor(keyLine, 2)
	r.send("y")
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d after v, y; stderr: %s", code, r.stderr.String())
	}
	b, err := os.ReadFile(copyTo)
	if err != nil {
		t.Fatalf("the pager was not run on a file: %v\nterminal:\n%s", err, r.screen())
	}
	for _, l := range lines {
		if !strings.Contains(string(b), l+"\n") {
			t.Errorf("the pager's file lacks %q:\n%s", l, b)
		}
	}
	if !exists(filepath.Join(w.work, "f30")) {
		t.Error("the script did not run after v, y")
	}
}

// TestRunPromptEscapes: control characters, escape sequences and bidi
// overrides in a command are shown escaped; their raw bytes never reach
// the terminal.
func TestRunPromptEscapes(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, superviseConfig)
	name := "x\ry\x1b[2Kz\u202etxt.exe"
	r := startPrompt(t, w, nil, "-c", "touch '"+name+"'")
	r.waitFor(keyLine, 1)
	s := r.screen()
	for _, want := range []string{`x\x0dy\x1b[2Kz\u202etxt.exe`} {
		if !strings.Contains(s, want) {
			t.Errorf("the prompt does not show %q:\n%q", want, s)
		}
	}
	for _, raw := range []string{"y\x1b[2Kz", "\u202e", "x\ry"} {
		if strings.Contains(s, raw) {
			t.Errorf("raw %q reached the terminal:\n%q", raw, s)
		}
	}
	r.send("n")
	r.waitFor("note for the agent", 1)
	r.send("\r")
	if code := r.wait(); code != 77 {
		t.Fatalf("exit %d, want 77", code)
	}
	if strings.Contains(r.stderr.String(), "\x1b[2K") || strings.Contains(r.stderr.String(), "\u202e") {
		t.Errorf("the refusal line carries raw control bytes: %q", r.stderr.String())
	}
}

const makeConfig = `mode: strict
shell:
  program: /bin/bash
  default: {allowed: true, approval: true}
  rules:
    - {pattern: cc, approval: false}
    - {pattern: gcc, approval: false}
    - {pattern: ar, approval: false}
    - {pattern: ranlib, approval: false}
    - {pattern: echo, approval: false}
    - {pattern: cat, approval: false}
    - {pattern: sed, approval: false}
    - {pattern: mkdir, approval: false}
    - {pattern: test, approval: false}
    - {pattern: app, approval: false}
    - {pattern: rm, allowed: false}
sandbox:
  paths:
    workspace: {root: %s, mode: rw}
`

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// makeWithGuardrun runs make SHELL=guardrun in proj with w's environment,
// prefixed by pre (a wrapper such as the no-namespace one), in a session
// of its own; it returns the combined output and the exit status.
func makeWithGuardrun(t *testing.T, w *world, proj string, pre []string, args ...string) (string, int) {
	t.Helper()
	argv := append(append([]string{}, pre...), append([]string{"make", "SHELL=" + guardrunBin}, args...)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = proj
	cmd.Env = append(append([]string{}, w.env...), "MAKEFLAGS=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// TestRunMakeShell: make -j2 SHELL=guardrun builds a C project in strict
// mode with the tools pre-approved, and the program runs; a recipe that
// calls a blocked or an asking command fails the build with guardrun's
// refusal line.
func TestRunMakeShell(t *testing.T) {
	requireSandbox(t)
	testenv.LookPath(t, "make")
	testenv.LookPath(t, "cc")
	proj := filepath.Join(t.TempDir(), "cproject")
	copyTree(t, "testdata/cproject", proj)
	w := runWorld(t, fmt.Sprintf(makeConfig, proj))
	makeRun := func(args ...string) (string, int) { return makeWithGuardrun(t, w, proj, nil, args...) }
	out, code := makeRun("-j2", "check")
	if code != 0 {
		t.Fatalf("make -j2 check: exit %d\n%s", code, out)
	}
	const want = "hello from cproject v1.2.3 answer=42 len=19"
	if !strings.Contains(out, want+"\n") {
		t.Errorf("the built program did not print %q:\n%s", want, out)
	}
	if b, err := os.ReadFile(filepath.Join(proj, "build", "check.out")); err != nil || string(b) != want+"\n" {
		t.Errorf("build/check.out = %q, %v", b, err)
	}
	for _, f := range []string{"libcp.a", "app", "version.h", "config.h", "manifest.txt", "main.o", "util.o", "greet.o", "mathx.o"} {
		if !exists(filepath.Join(proj, "build", f)) {
			t.Errorf("build/%s was not made", f)
		}
	}
	onlyEntries(t, proj, "Makefile", "build", "src")

	// Up to date: nothing to do, still succeeds.
	if out, code := makeRun("-j2", "all"); code != 0 {
		t.Errorf("second make: exit %d\n%s", code, out)
	}

	// rm is blocked: make fails and shows why.
	out, code = makeRun("clean")
	if code == 0 {
		t.Errorf("make clean with rm blocked succeeded:\n%s", out)
	}
	if !strings.Contains(out, "guardrun: blocked: rm -f") {
		t.Errorf("make clean does not show guardrun's refusal:\n%s", out)
	}
	if !exists(filepath.Join(proj, "build", "main.o")) {
		t.Error("the blocked rm removed files")
	}

	// curl asks, and strict mode refuses it.
	out, code = makeRun("fetch")
	if code == 0 {
		t.Errorf("make fetch in strict mode succeeded:\n%s", out)
	}
	if !strings.Contains(out, "guardrun: denied (strict mode): curl") {
		t.Errorf("make fetch does not show guardrun's refusal:\n%s", out)
	}
}

// onlyEntries checks that dir holds exactly names: recipes run at once
// in one tree leave nothing of guardrun's behind (the placeholders of
// missing protected names, quarantined copies).
func onlyEntries(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, names) {
		t.Errorf("%s holds %q, want only %q", dir, got, names)
	}
}

const runConfig = `shell:
  program: /bin/bash
  default: {allowed: true, approval: true}
  rules:
    - {pattern: "true", approval: false}
    - {pattern: sleep, approval: false}
    - {pattern: exit, approval: false}
sandbox:
  paths:
    workspace: {root: ., mode: rw}
`

// TestRunConcurrentAudit: 100 guardrun processes at once in one session
// write exactly 200 whole audit lines, a started and an ended one per run.
func TestRunConcurrentAudit(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, runConfig, "GUARDRUN_SESSION=test-x")
	const n = 100
	var wg sync.WaitGroup
	codes := make([]int, n)
	errs := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i], codes[i] = runPlain(t, w, "", nil, "--approve-all", "-c", "true")
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 0 {
			t.Errorf("run %d: exit %d: %s", i, c, errs[i])
		}
	}
	auditPath := filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun", "audit.jsonl")
	f, err := os.Open(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	lines := 0
	pids := map[float64]bool{}
	runs := map[string]string{} // run → outcomes in order
	for sc.Scan() {
		lines++
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Errorf("audit line %d is not JSON: %v\n%s", lines, err, sc.Text())
			continue
		}
		if rec["session"] != "test-x" || (rec["outcome"] != "ran" && rec["outcome"] != "started") || rec["script"] != "true" {
			t.Errorf("audit line %d: session %v, outcome %v, script %v", lines, rec["session"], rec["outcome"], rec["script"])
		}
		run, _ := rec["run"].(string)
		runs[run] += fmt.Sprint(rec["outcome"], " ")
		if e, ok := rec["exit"].(float64); rec["outcome"] == "ran" && (!ok || e != 0) {
			t.Errorf("audit line %d: exit %v", lines, rec["exit"])
		}
		pid, _ := rec["pid"].(float64)
		pids[pid] = true
	}
	if lines != 2*n {
		t.Errorf("the audit log has %d lines after %d runs, want %d", lines, n, 2*n)
	}
	for run, outcomes := range runs {
		if outcomes != "started ran " {
			t.Errorf("run %q has records %q, want a started then a ran record", run, outcomes)
		}
	}
	if len(pids) != n {
		t.Errorf("the audit log has %d distinct pids, want %d", len(pids), n)
	}

	out, stderr, code := runPlain(t, w, "", nil, "session", "list", "--session", "test-x", "--json")
	if code != 0 {
		t.Fatalf("session list: exit %d: %s", code, stderr)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Errorf("session list --json does not parse: %v\n%s", err, out)
	}
	checkStoreJSON(t, w)
}

// TestRunExitStatus: every exit status 0..255 comes back as guardrun's
// own; death by a signal comes back as 128+N.
func TestRunExitStatus(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, runConfig)
	got := make([]int, 256)
	errs := make([]string, 256)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range 256 {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_, errs[i], got[i] = runPlain(t, w, "", nil, "--approve-all", "-c", fmt.Sprintf("exit %d", i))
		}()
	}
	wg.Wait()
	for i, c := range got {
		if c != i {
			t.Errorf("exit %d came back as %d; stderr: %s", i, c, errs[i])
		}
	}

	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--approve-all", "-c", "kill -KILL $$"}, 137},
		{[]string{"--approve-all", "--", "sh", "-c", "kill -TERM $$"}, 143},
		{[]string{"--approve-all", "-c", "kill -INT $$"}, 130},
	} {
		_, stderr, code := runPlain(t, w, "", nil, tc.args...)
		if code != tc.want {
			t.Errorf("guardrun %q: exit %d, want %d; stderr: %s", tc.args, code, tc.want, stderr)
		}
	}
}

// TestRunKilledLeavesNothing: SIGKILL to guardrun takes down what it
// runs, with either backend, including what the command started in the
// background (under landlock, a grandchild is not in any namespace that
// ends with guardrun: the command's keeper ends it).
func TestRunKilledLeavesNothing(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, runConfig)
	for i, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			marker := fmt.Sprintf("300.%d%d", 100000+os.Getpid()%900000, i)
			bg := marker + "1"
			cmd, out := startKillable(t, w, "--backend", backend, "--approve-all", "-c", "sleep "+bg+" & sleep "+marker)
			deadline := time.Now().Add(10 * time.Second)
			for len(markerProcs(marker)) == 0 || len(markerProcs(bg)) == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("sleep %s and sleep %s never both started; output: %s", marker, bg, out.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			killGone(t, cmd, marker, bg)
		})
	}
}

// startKillable starts guardrun with args in its own session, for a test
// that kills it: its stdout and stderr are collected together, and Wait
// gives up on pipes still held open 10s after it died.
func startKillable(t *testing.T, w *world, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(guardrunBin, args...)
	cmd.Dir, cmd.Env = w.work, w.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.WaitDelay = 10 * time.Second
	out := new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, out
}

// killWait kills guardrun with SIGKILL and waits for it: its stdout and
// stderr must reach their end, nothing the command left may hold them.
func killWait(t *testing.T, cmd *exec.Cmd, what string) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGKILL)
	if err := cmd.Wait(); errors.Is(err, exec.ErrWaitDelay) {
		t.Errorf("%s: stdout or stderr of the killed guardrun still open 10s after it died: the command outlived it", what)
	}
}

// killGone kills guardrun (killWait) and checks that no process whose
// argv holds one of markers outlives it.
func killGone(t *testing.T, cmd *exec.Cmd, markers ...string) {
	t.Helper()
	killWait(t, cmd, "guardrun")
	noneLeft(t, 5*time.Second, "a SIGKILLed guardrun", markers...)
}

// noneLeft waits up to d for no process to hold any of markers as an
// argument; whatever is left is killed and reported.
func noneLeft(t *testing.T, d time.Duration, what string, markers ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		var left []int
		for _, m := range markers {
			left = append(left, markerProcs(m)...)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes %v (markers %q) outlived %s", left, markers, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// markerProcs lists the pids whose command line holds marker as a whole
// argument.
func markerProcs(marker string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(b), "\x00") {
			if a == marker {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}
