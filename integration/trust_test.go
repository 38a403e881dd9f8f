package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// hostileProject is a .guardrun.yaml that tries to widen everything it
// can, plus a block rule and a deny path, which are tightening and so
// apply even while the file is untrusted.
const hostileProject = `mode: approve-all
shell:
  default: {allowed: true, approval: false}
  rules:
    - {pattern: "make deploy", allowed: false}
    - {pattern: "*", approval: false}
sandbox:
  paths:
    workspace: {root: .., mode: rw, delete_approval: false}
    everything: {root: /, mode: ro}
  deny: [secret.txt]
  network: true
  require_os_sandbox: false
  os_sandbox_fallback: refuse_tools
audit:
  path: %AUDIT%
`

// ignoredParts are what guardrun must name as ignored for hostileProject.
var ignoredParts = []string{
	"mode: approve-all",
	"shell.default.approval: false",
	`rule "*"`,
	`zone "workspace"`,
	`zone "everything"`,
	"sandbox.network: true",
	"sandbox.require_os_sandbox: false",
	"sandbox.os_sandbox_fallback: refuse_tools",
	"audit.path:",
}

// trustCommands are explained with and without the project file; none of
// them touches what the project legitimately tightens (make deploy,
// secret.txt).
var trustCommands = []string{
	"ls -la",
	"git status",
	"curl https://example.com",
	"rm -rf build",
	"sudo ls",
	"python3 -c 'print(1)'",
	"echo hi > out.txt",
	"cat ../outside.txt",
	"echo x > ../outside.txt",
	"cat /etc/hostname",
	"npm install",
	"make",
}

const secretContent = "TOP-SECRET-42\n"

type trustTree struct {
	root, proj, home, state, cfgHome, run string
	file                                  string // proj/.guardrun.yaml
	env                                   []string
}

func newTrustTree(t *testing.T) *trustTree { return newTrustTreeHome(t, false) }

// newTrustTreeHome builds root/proj (the project, the cwd) and a private
// HOME with its state and config dirs: root/home, or, with homeInProject,
// root/proj/home, so that the project's rw workspace holds guardrun's
// state and user config and only guardrun's own protection keeps them
// out of reach.
func newTrustTreeHome(t *testing.T, homeInProject bool) *trustTree {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// HOME is not the account's home here, so it must lie outside every
	// rw zone (hostileProject's workspace is root): a separate directory.
	other, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := &trustTree{root: root, proj: filepath.Join(root, "proj"), home: filepath.Join(other, "home")}
	if homeInProject {
		tr.home = filepath.Join(tr.proj, "home")
	}
	tr.state = filepath.Join(tr.home, ".local", "state")
	tr.cfgHome = filepath.Join(tr.home, ".config")
	tr.run = filepath.Join(root, "run")
	tr.file = filepath.Join(tr.proj, ".guardrun.yaml")
	for _, d := range []string{tr.proj, tr.state, tr.cfgHome, tr.run} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(tr.proj, "secret.txt"), []byte(secretContent), 0o644)
	os.WriteFile(filepath.Join(root, "outside.txt"), []byte("outside\n"), 0o644)
	tr.env = []string{
		"PATH=" + os.Getenv("PATH"),
		// State and user config at their default places under HOME:
		// chosen by XDG_* variables, inside an rw zone (the trusted
		// project's workspace is root) they would be refused.
		"HOME=" + tr.home,
		"NO_COLOR=1",
		"LANG=C.UTF-8",
		// GUARDRUN_CONFIG is deliberately absent: discovery must find the
		// project file.
	}
	return tr
}

func (tr *trustTree) writeProject(t *testing.T) []byte {
	t.Helper()
	data := []byte(strings.ReplaceAll(hostileProject, "%AUDIT%", filepath.Join(tr.root, "elsewhere.jsonl")))
	if err := os.WriteFile(tr.file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

func (tr *trustTree) trustStore() string {
	return filepath.Join(tr.state, "guardrun", "trusted.json")
}

// guardrun runs the binary in the project dir without a controlling
// terminal.
func (tr *trustTree) guardrun(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	r := proc{dir: tr.proj, env: tr.env}.run(append([]string{guardrunBin}, args...)...)
	if r.err != nil {
		t.Fatalf("running guardrun: %v", r.err)
	}
	return r.stdout, r.stderr, r.code
}

// verdicts explains every command of trustCommands; the warning printed
// by each run is returned per command.
func (tr *trustTree) verdicts(t *testing.T, cmds []string) (map[string]string, []string) {
	t.Helper()
	got := map[string]string{}
	var warnings []string
	for _, c := range cmds {
		out, errs, code := tr.guardrun(t, "explain", "--json", "-c", c)
		if code != 0 {
			t.Fatalf("explain %q: exit %d\n%s", c, code, errs)
		}
		var v struct {
			Decision string `json:"decision"`
			Network  bool   `json:"network"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("explain %q: %v\n%s", c, err, out)
		}
		got[c] = v.Decision
		if v.Network {
			got[c] += "+network"
		}
		warnings = append(warnings, errs)
	}
	return got, warnings
}

func (tr *trustTree) profile(t *testing.T) map[string]any {
	t.Helper()
	out, errs, code := tr.guardrun(t, "profile", "--json")
	if code != 0 {
		t.Fatalf("profile: exit %d\n%s", code, errs)
	}
	var p struct {
		Profile map[string]any `json:"profile"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	return p.Profile
}

// without removes the given strings from the list field of a profile.
func without(p map[string]any, field string, drop ...string) {
	list, _ := p[field].([]any)
	var keep []any
	for _, v := range list {
		if s, ok := v.(string); ok && slices.Contains(drop, s) {
			continue
		}
		keep = append(keep, v)
	}
	p[field] = keep
}

// checkWarning asserts stderr names each ignored part and the trust
// command exactly once.
func (tr *trustTree) checkWarning(t *testing.T, what, stderr string) {
	t.Helper()
	trustCmd := "guardrun trust " + tr.file
	if n := strings.Count(stderr, trustCmd); n != 1 {
		t.Errorf("%s: stderr names %q %d times, want once:\n%s", what, trustCmd, n, stderr)
	}
	if n := strings.Count(stderr, "is not trusted"); n != 1 {
		t.Errorf("%s: warning appears %d times, want once:\n%s", what, n, stderr)
	}
	// Each ignored part is named (a zone may have several lines, one per
	// ignored field), and the whole list appears once.
	for _, part := range ignoredParts {
		if !strings.Contains(stderr, "guardrun:   - "+part) {
			t.Errorf("%s: stderr does not name ignored part %q:\n%s", what, part, stderr)
		}
	}
	if n := strings.Count(stderr, "guardrun:   - mode: approve-all"); n != 1 {
		t.Errorf("%s: the ignored list appears %d times, want once:\n%s", what, n, stderr)
	}
}

// TestTrustUntrustedOnlyTightens: a hostile, untrusted project config
// changes no verdict and no part of the sandbox profile except what it
// may tighten, and says what it ignored once per run.
func TestTrustUntrustedOnlyTightens(t *testing.T) {
	tr := newTrustTree(t)

	// The base: the embedded default, no project file anywhere above.
	baseVerdicts, baseWarn := tr.verdicts(t, trustCommands)
	for i, w := range baseWarn {
		if w != "" {
			t.Fatalf("no project file, %q: unexpected stderr %q", trustCommands[i], w)
		}
	}
	baseProfile := tr.profile(t)

	tr.writeProject(t)
	gotVerdicts, warns := tr.verdicts(t, trustCommands)
	if d := cmp.Diff(baseVerdicts, gotVerdicts); d != "" {
		t.Errorf("untrusted project changed verdicts (-base +untrusted):\n%s", d)
	}
	for i, w := range warns {
		tr.checkWarning(t, "explain "+trustCommands[i], w)
	}

	got := tr.profile(t)
	// What legitimately differs, and only that:
	//  - deny: the project's own deny path (secret.txt) is a tightening
	//    that applies (TestTrustTighteningApplies checks it), also listed
	//    as a bare name in deny_names for the landlock backend;
	//  - the project file itself: with no file it is protected by being
	//    masked (listed in deny, so it cannot be created); once it exists
	//    it is protected by a read-only bind (read_only_over). It is in
	//    "protected" both times.
	secret := filepath.Join(tr.proj, "secret.txt")
	without(got, "deny", secret)
	without(got, "deny_names", "secret.txt") // the same deny, as a name
	without(got, "deny", tr.file)
	without(baseProfile, "deny", tr.file)
	without(got, "read_only_over", tr.file)
	without(baseProfile, "read_only_over", tr.file)
	if d := cmp.Diff(baseProfile, got); d != "" {
		t.Errorf("untrusted project changed the sandbox profile beyond its tightening (-base +untrusted):\n%s", d)
	}

	// The mode stays interactive: nothing pre-approved runs without a
	// terminal to ask on.
	_, errs, code := tr.guardrun(t, "-c", "curl https://example.com")
	if code != 77 {
		t.Errorf("curl without a terminal under the untrusted project: exit %d, want 77\n%s", code, errs)
	}
	tr.checkWarning(t, "run", errs)

	out, _, code := tr.guardrun(t, "check")
	if code != 0 || !strings.Contains(out, "is NOT trusted") || !strings.Contains(out, "mode: interactive") {
		t.Errorf("check: exit %d, want it to report the project untrusted and interactive:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(tr.root, "elsewhere.jsonl")); err == nil {
		t.Error("the untrusted audit.path was written")
	}
}

// TestTrustTighteningApplies: the untrusted file's block rule and deny
// path apply.
func TestTrustTighteningApplies(t *testing.T) {
	tr := newTrustTree(t)
	tr.writeProject(t)
	v, _ := tr.verdicts(t, []string{"make deploy", "make deploy --prod", "cat < secret.txt", "make"})
	// make alone keeps the default's verdict: the project's Makefile,
	// pre-approved with a checkpoint.
	want := map[string]string{"make deploy": "block", "make deploy --prod": "block", "cat < secret.txt": "block", "make": "allow"}
	if d := cmp.Diff(want, v); d != "" {
		t.Errorf("verdicts under the untrusted project (-want +got):\n%s", d)
	}
	_, errs, code := tr.guardrun(t, "--approve-all", "-c", "make deploy")
	if code != 77 {
		t.Errorf("make deploy under --approve-all: exit %d, want 77 (blocked)\n%s", code, errs)
	}

	t.Run("sandbox", func(t *testing.T) {
		requireSandbox(t)
		testenv.LookPath(t, "python3")
		reads := []string{
			"cat secret.txt",
			`python3 -c 'import sys; sys.stdout.write(open("secret.txt").read())'`,
		}
		for _, script := range reads {
			out, errs, code := tr.guardrun(t, "--approve-all", "-c", script)
			if code == 125 {
				t.Fatalf("%s: the sandbox failed to start (125):\n%s", script, errs)
			}
			if code == 0 || strings.Contains(out, "TOP-SECRET") || strings.Contains(errs, "TOP-SECRET") {
				t.Errorf("%s: exit %d, read the denied file? stdout %q stderr %q", script, code, out, errs)
			}
			tr.checkWarning(t, script, errs)
		}
		// The same reads work without the project file: the deny came
		// from it (and a failure above was not a missing tool).
		os.Remove(tr.file)
		for _, script := range reads {
			out, errs, code := tr.guardrun(t, "--approve-all", "-c", script)
			if code != 0 || out != secretContent {
				t.Errorf("%s without the project file: exit %d, stdout %q\n%s", script, code, out, errs)
			}
		}
	})
}

// trustPTY runs `guardrun trust` on a pty and answers.
func (tr *trustTree) trustPTY(t *testing.T, answer string, args ...string) (screen, stdout string, code int) {
	t.Helper()
	// stdin is not the terminal: it must not answer.
	r := startOnPTY(t, tr.proj, tr.env, strings.NewReader("y\n"), append([]string{"trust"}, args...)...)
	r.waitFor("Trust this file? [y/N]", 1)
	r.send(answer + "\r")
	code = r.wait()
	r.drained()
	return r.screen(), r.stdout.String(), code
}

// escapeProject is a benign config whose workspace is the project dir.
const escapeProject = `shell:
  rules:
    - {pattern: "make deploy", allowed: false}
sandbox:
  paths:
    workspace: {root: ., mode: rw, delete_approval: false}
  require_os_sandbox: true
`

// TestTrustEscape: code inside guardrun's sandbox cannot write the trust
// store, create a trusted config, trust a file itself, or edit the
// project's .guardrun.yaml. Every attempt runs only inside the sandbox
// (guardrun --approve-all -c); a sandbox that fails to start (125) fails
// the test.
func TestTrustEscape(t *testing.T) {
	requireSandbox(t)
	testenv.LookPath(t, "python3")
	tr := newTrustTree(t)
	if err := os.WriteFile(tr.file, []byte(escapeProject), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, code := tr.trustPTY(t, "y"); code != 0 {
		t.Fatalf("trusting the project: exit %d", code)
	}
	// A copy of guardrun inside the workspace, so code in the sandbox can
	// try to run `guardrun trust` on a pty of its own.
	bin, err := os.ReadFile(guardrunBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tr.proj, "gr"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(tr.proj, "sub"), 0o755)

	// The user config dir exists but holds no config.yaml: a config
	// created there would be trusted.
	userCfgDir := filepath.Join(tr.cfgHome, "guardrun")
	if err := os.MkdirAll(userCfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	snapshot := func() map[string]string {
		out := map[string]string{}
		for _, p := range []string{tr.trustStore(), tr.file, filepath.Join(userCfgDir, "config.yaml"), filepath.Join(tr.root, ".guardrun.yaml")} {
			if b, err := os.ReadFile(p); err == nil {
				out[p] = string(b)
			} else {
				out[p] = "<absent: " + errors.Unwrap(err).Error() + ">"
			}
		}
		if ents, err := os.ReadDir(userCfgDir); err == nil {
			out[userCfgDir] = fmt.Sprint(len(ents), " entries")
		} else {
			out[userCfgDir] = err.Error()
		}
		return out
	}
	before := snapshot()
	if !strings.Contains(before[tr.trustStore()], tr.file) {
		t.Fatalf("the trust store does not hold the project:\n%s", before[tr.trustStore()])
	}

	py := func(code string) string {
		// The script is one python3 -c argument, so the parser sees only
		// an unknown command (approved by --approve-all) and the attempt
		// really runs in the sandbox.
		return "python3 -c '" + code + "'"
	}
	hostileStore := `[{"path": "` + filepath.Join(tr.proj, "sub", ".guardrun.yaml") + `", "sha256": "` + strings.Repeat("0", 64) + `", "trusted": "2020-01-01T00:00:00Z"}]`
	// mayRun marks attempts that may succeed inside the sandbox because
	// they only reach the sandbox's private, throw-away /tmp (the test
	// tree lives under /tmp); for those the host-side check is what counts.
	attempts := []struct {
		name, script string
		mayRun       bool
	}{
		{"overwrite the trust store", py(`open("` + tr.trustStore() + `", "w").write(` + "\"\"\"" + hostileStore + "\"\"\"" + `)`), false},
		{"append to the trust store", py(`open("` + tr.trustStore() + `", "a").write("x")`), false},
		{"replace the trust store by rename", py(`import os; open("t.json","w").write("[]"); os.replace("t.json", "` + tr.trustStore() + `")`), false},
		{"remove the trust store", py(`import os; os.remove("` + tr.trustStore() + `")`), false},
		{"shell redirect into the trust store", `sh -c 'echo "[]" > "$0"' ` + tr.trustStore(), false},
		{"create the user config", py(`open("` + filepath.Join(userCfgDir, "config.yaml") + `", "w").write("mode: approve-all\n")`), false},
		{"remove the user config dir", py(`import os, shutil; shutil.rmtree("` + userCfgDir + `")`), false},
		{"create a project config above the workspace", py(`open("../.guardrun.yaml", "w").write("mode: approve-all\n")`), true},
		{"append to .guardrun.yaml", py(`open(".guardrun.yaml", "a").write("x")`), false},
		{"truncate .guardrun.yaml", py(`open(".guardrun.yaml", "w").write("mode: approve-all\n")`), false},
		{"replace .guardrun.yaml by rename", py(`import os; open("n.yaml","w").write("mode: approve-all\n"); os.replace("n.yaml", ".guardrun.yaml")`), false},
		{"remove .guardrun.yaml", py(`import os; os.remove(".guardrun.yaml")`), false},
		{"chmod .guardrun.yaml", py(`import os; os.chmod(".guardrun.yaml", 0o666); open(".guardrun.yaml", "a").write("x")`), false},
		{"shell redirect into .guardrun.yaml", `sh -c 'echo x >> "$0"' .guardrun.yaml`, false},
		{"trust a file from inside", py(`import os, pty
open("sub/.guardrun.yaml", "w").write("mode: approve-all\n")
pid, fd = pty.fork()
if pid == 0:
    os.execv("./gr", ["gr", "trust", "sub/.guardrun.yaml"])
out = b""
sent = False
while True:
    try:
        b = os.read(fd, 4096)
    except OSError:
        break
    if not b:
        break
    out += b
    if b"[y/N]" in out and not sent:
        sent = True
        os.write(fd, b"y\r")
_, st = os.waitpid(pid, 0)
print(out.decode(errors="replace"))
rc = os.waitstatus_to_exitcode(st)
print("inner guardrun trust exit", rc)
raise SystemExit(3 if rc else 0)`), true}, // HOME is under /tmp: its trust store, in the sandbox, is the private /tmp's
	}
	// The attempts must fail for the sandbox, not for a missing tool:
	// python3 runs in the sandbox, and can open a pty there.
	if out, errs, code := tr.guardrun(t, "--approve-all", "-c", py(`import os, pty; pty.openpty(); print("python runs")`)); code != 0 || out != "python runs\n" {
		t.Fatalf("python3 in the sandbox: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, a := range attempts {
		out, errs, code := tr.guardrun(t, "--approve-all", "-c", a.script)
		if code == 125 {
			t.Fatalf("%s: the sandbox failed to start (exit 125); not retrying outside it:\n%s", a.name, errs)
		}
		if code == 0 && !a.mayRun {
			t.Errorf("%s: exit 0, want a failure inside the sandbox\nstdout: %s\nstderr: %s", a.name, out, errs)
		}
		if code == 77 {
			t.Errorf("%s: refused by guardrun (77) instead of failing inside the sandbox:\n%s", a.name, errs)
		}
		t.Logf("%s: exit %d\n%s%s", a.name, code, out, errs)
		if d := cmp.Diff(before, snapshot()); d != "" {
			t.Fatalf("%s: changed guardrun's files on the host (-before +after):\n%s", a.name, d)
		}
	}
	// Host side: the project is still trusted, the file made inside is not.
	if out, _, _ := tr.guardrun(t, "check"); !strings.Contains(out, tr.file+" is trusted") {
		t.Errorf("after the attempts, check says:\n%s", out)
	}
	sub := filepath.Join(tr.proj, "sub", ".guardrun.yaml")
	if _, err := os.Stat(sub); err == nil {
		cmd := exec.Command(guardrunBin, "check")
		cmd.Dir = filepath.Dir(sub)
		cmd.Env = tr.env
		out, _ := cmd.Output()
		if !strings.Contains(string(out), "NOT trusted") {
			t.Errorf("a config made inside the sandbox is trusted:\n%s", out)
		}
	}
}

// TestTrustSymlinkZoneNarrowing: narrowing the workspace to a symlink
// inside it that points outside is widening, and is ignored.
func TestTrustSymlinkZoneNarrowing(t *testing.T) {
	tr := newTrustTree(t)
	// Outside /tmp: inside the sandbox /tmp is private, so a write there
	// is allowed wherever the zones are.
	outside, err := os.MkdirTemp("/var/tmp", "guardrun-outside-")
	if err != nil {
		t.Skipf("need a directory outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	if err := os.Symlink(outside, filepath.Join(tr.proj, "link")); err != nil {
		t.Fatal(err)
	}
	script := "echo x > " + filepath.Join(outside, "f")
	base, _ := tr.verdicts(t, []string{script})
	if base[script] != "block" {
		t.Fatalf("base verdict for %q: %s, want block", script, base[script])
	}
	os.WriteFile(tr.file, []byte("sandbox:\n  paths:\n    workspace: {root: ./link, mode: rw}\n"), 0o644)
	got, warns := tr.verdicts(t, []string{script})
	if got[script] != "block" {
		t.Errorf("untrusted zone narrowed through a symlink: %q is %s, want block", script, got[script])
	}
	if !strings.Contains(warns[0], `zone "workspace"`) || !strings.Contains(warns[0], "guardrun trust "+tr.file) {
		t.Errorf("the symlinked root was not reported as ignored:\n%s", warns[0])
	}
}

// TestTrustTooLarge: guardrun trust checks the file before it reads it:
// a file over the config limit is refused (125) at once with the size
// limit, and a FIFO (which never ends, or never starts) as not a regular
// file, without waiting for a writer; each with a short message, before
// any terminal is needed.
func TestTrustTooLarge(t *testing.T) {
	tr := newTrustTree(t)
	dir := filepath.Join(tr.root, "elsewhere") // not above the working directory
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("# "+strings.Repeat("x", 200<<10)+"\nmode: strict\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "endless.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{big: "a config file may be at most 128 KiB", fifo: "is not a regular file"} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, guardrunBin, "trust", file)
		cmd.Dir, cmd.Env = tr.proj, tr.env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		var errb bytes.Buffer
		cmd.Stderr = &errb
		cmd.Run()
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Fatalf("trust %s: still waiting after 20s", file)
		}
		if code := cmd.ProcessState.ExitCode(); code != 125 || !strings.Contains(errb.String(), want) || errb.Len() > 4096 {
			t.Errorf("trust %s: exit %d, stderr (%d bytes) %.300q; want 125 and %q", filepath.Base(file), code, errb.Len(), errb.String(), want)
		}
	}
	if _, err := os.Stat(tr.trustStore()); err == nil {
		t.Error("a refused file was recorded in the trust store")
	}
}
