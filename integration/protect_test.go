//go:build linux

package integration

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/guardrun/guardrun/internal/config"
)

// envTree is a project directory (the working directory, the embedded
// default's rw workspace) and a HOME beside it, with guardrun's state and
// user config at their default places: nothing chosen by the environment
// unless a test says so.
type envTree struct {
	root, proj, home string
	env              []string
}

func newEnvTree(t *testing.T) *envTree {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := &envTree{root: root, proj: filepath.Join(root, "proj"), home: filepath.Join(root, "home")}
	for _, d := range []string{tr.proj, tr.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tr.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + tr.home,
		"NO_COLOR=1",
		"LANG=C.UTF-8",
		"MAKEFLAGS=",
	}
	return tr
}

func (tr *envTree) write(t *testing.T, rel, content string) string {
	t.Helper()
	p := filepath.Join(tr.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs name with args in dir, without a controlling terminal.
func (tr *envTree) run(t *testing.T, dir string, extraEnv []string, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, tr.env...), extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.WaitDelay = pipeGrace
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %q: %v", name, args, err)
	}
	return o.String(), e.String(), code
}

// preApproving is a config that, if trusted, would let the recipe run
// without asking, in approve-all mode, with the network on.
const preApproving = `mode: approve-all
shell:
  rules:
    - {pattern: touch, approval: false}
sandbox:
  paths:
    workspace: {root: $PWD, mode: rw}
  network: true
`

// TestEnvConfigInsideZoneNotTrusted is the Makefile attack: a Makefile
// (which a sandboxed command could have written) exports a variable that
// makes guardrun, started by `make SHELL=guardrun` for each recipe, take
// a config or state from inside the workspace. The config is treated as
// an untrusted project file (the recipe asks, and without a terminal is
// refused, 77) and a state location is refused (125); stderr names the
// variable, the file and why.
func TestEnvConfigInsideZoneNotTrusted(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("needs make")
	}
	const recipe = "all:\n\ttouch made\n"
	for _, tc := range []struct {
		name     string
		makefile string
		files    map[string]string
		code     int
		stderr   []string
	}{
		{
			name:     "GUARDRUN_CONFIG",
			makefile: "export GUARDRUN_CONFIG := $(CURDIR)/x.yaml\n" + recipe,
			files:    map[string]string{"proj/x.yaml": preApproving},
			code:     77,
			stderr: []string{
				"x.yaml (from $GUARDRUN_CONFIG) is inside the rw zone \"workspace\"",
				"where sandboxed commands can write: it is not trusted",
				"rule \"touch\" at ", "approval: false (an untrusted config cannot pre-approve)",
				"mode: approve-all (an untrusted config cannot change the mode)",
				"guardrun: denied (no terminal to ask; interactive mode acts as strict): touch made needs approval",
			},
		},
		{
			name:     "XDG_CONFIG_HOME",
			makefile: "export XDG_CONFIG_HOME := $(CURDIR)/cfg\n" + recipe,
			files:    map[string]string{"proj/cfg/guardrun/config.yaml": preApproving},
			code:     77,
			stderr: []string{
				"cfg/guardrun/config.yaml (from user config ($XDG_CONFIG_HOME)) is inside the rw zone \"workspace\"",
				"approval: false (an untrusted config cannot pre-approve)",
				"unset XDG_CONFIG_HOME or point it outside every rw zone",
				"touch made needs approval",
			},
		},
		{
			name:     "XDG_STATE_HOME",
			makefile: "export XDG_STATE_HOME := $(CURDIR)/state\n" + recipe,
			code:     125,
			stderr: []string{
				"guardrun: $XDG_STATE_HOME puts guardrun's trust store and audit log in ",
				"inside the rw zone \"workspace\"",
				"unset XDG_STATE_HOME or point it outside every rw zone",
			},
		},
		{
			// $HOME chooses the user config as XDG_CONFIG_HOME does
			// (the state kept outside the zone by XDG_STATE_HOME).
			name:     "HOME config",
			makefile: "export XDG_STATE_HOME := $(abspath $(CURDIR)/../home/.local/state)\nexport HOME := $(CURDIR)/h\n" + recipe,
			files:    map[string]string{"proj/h/.config/guardrun/config.yaml": preApproving},
			code:     77,
			stderr: []string{
				"h/.config/guardrun/config.yaml (from user config ($HOME)) is inside the rw zone \"workspace\"",
				"approval: false (an untrusted config cannot pre-approve)",
				"unset HOME or point it outside every rw zone",
				"touch made needs approval",
			},
		},
		{
			name:     "HOME state",
			makefile: "export HOME := $(CURDIR)/h\n" + recipe,
			files:    map[string]string{"proj/h/.config/guardrun/config.yaml": preApproving},
			code:     125,
			stderr: []string{
				"guardrun: $HOME puts guardrun's trust store and audit log in ",
				"inside the rw zone \"workspace\"",
				"unset HOME or point it outside every rw zone",
			},
		},
		{
			name:     "XDG_RUNTIME_DIR",
			makefile: "export XDG_RUNTIME_DIR := $(CURDIR)/run\n" + recipe,
			files:    map[string]string{"proj/run/.keep": ""},
			code:     125,
			stderr: []string{
				"guardrun: $XDG_RUNTIME_DIR puts guardrun's session grants in ",
				"unset XDG_RUNTIME_DIR or point it outside every rw zone",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newEnvTree(t)
			tr.write(t, "proj/Makefile", tc.makefile)
			for rel, content := range tc.files {
				tr.write(t, rel, content)
			}
			if tc.name == "XDG_RUNTIME_DIR" {
				// A runtime directory must look private to be used at all.
				os.Chmod(filepath.Join(tr.proj, "run"), 0o700)
			}
			_, stderr, code := tr.run(t, tr.proj, nil, "make", "SHELL="+guardrunBin)
			if code == 0 {
				t.Fatalf("make succeeded; want the recipe refused\n%s", stderr)
			}
			if !strings.Contains(stderr, "Error "+strconv.Itoa(tc.code)) {
				t.Errorf("make's recipe did not fail with %d:\n%s", tc.code, stderr)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			if exists(filepath.Join(tr.proj, "made")) {
				t.Error("the recipe ran")
			}
		})
	}

	// The control: the same config outside every rw zone is trusted, and
	// the same recipe runs without a person (so the refusals above are the
	// check's doing, not the config's).
	t.Run("outside the zone is trusted", func(t *testing.T) {
		tr := newEnvTree(t)
		cfg := tr.write(t, "x.yaml", preApproving)
		tr.write(t, "proj/Makefile", "export GUARDRUN_CONFIG := "+cfg+"\n"+recipe)
		_, stderr, code := tr.run(t, tr.proj, nil, "make", "SHELL="+guardrunBin)
		if code != 0 || !exists(filepath.Join(tr.proj, "made")) {
			t.Fatalf("make with a trusted config outside the zone: exit %d\n%s", code, stderr)
		}
		if strings.Contains(stderr, "not trusted") {
			t.Errorf("a config outside every rw zone was called untrusted:\n%s", stderr)
		}
	})
}

// TestNestedUntrustedConfigKeepsTrustedBlock: a trusted p/.guardrun.yaml
// blocks `terraform apply`; an untrusted p/sub/.guardrun.yaml (which the
// agent could write) turns it into an ask. Run from p/sub, the block
// stays: the untrusted file tightens the trusted ancestor, not the user
// config.
func TestNestedUntrustedConfigKeepsTrustedBlock(t *testing.T) {
	requireSandbox(t)
	tr := newEnvTree(t)
	parent := tr.write(t, "proj/.guardrun.yaml", `shell:
  rules:
    - {pattern: "terraform apply", allowed: false, description: "never from here"}
    - {pattern: ls, approval: false}
sandbox:
  paths:
    workspace: {root: ., mode: rw}
`)
	tr.write(t, "proj/sub/.guardrun.yaml", `shell:
  rules:
    - {pattern: "terraform apply", approval: true}
    - {pattern: "make", allowed: false}
`)
	data, _ := os.ReadFile(parent)
	if err := config.OpenTrustStore(filepath.Join(tr.home, ".local", "state", "guardrun")).Trust(parent, data); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(tr.proj, "sub")
	out, _, code := tr.run(t, sub, nil, guardrunBin, "explain", "-c", "terraform apply")
	if code != 0 || !strings.HasPrefix(out, "decision: block") {
		t.Errorf("terraform apply from p/sub: exit %d\n%s", code, out)
	}
	_, stderr, code := tr.run(t, sub, nil, guardrunBin, "--approve-all", "-c", "terraform apply")
	if code != 77 || !strings.Contains(stderr, `guardrun: blocked: terraform apply matches rule "terraform apply"`) {
		t.Errorf("terraform apply from p/sub in approve-all: exit %d, stderr %q", code, stderr)
	}
	// The nested file's own tightening applies; the trusted parent's
	// pre-approval stays.
	out, _, _ = tr.run(t, sub, nil, guardrunBin, "explain", "-c", "make")
	if !strings.HasPrefix(out, "decision: block") {
		t.Errorf("make from p/sub (blocked by the nested file):\n%s", out)
	}
	out, _, _ = tr.run(t, sub, nil, guardrunBin, "explain", "-c", "ls")
	if !strings.HasPrefix(out, "decision: allow") {
		t.Errorf("ls from p/sub (pre-approved by the trusted parent):\n%s", out)
	}
	// check names both files, where they came from and why.
	out, _, _ = tr.run(t, sub, nil, guardrunBin, "check")
	for _, s := range []string{
		parent + " is trusted (project (.guardrun.yaml above the working directory): trusted with guardrun trust",
		filepath.Join(sub, ".guardrun.yaml") + " is NOT trusted (project (.guardrun.yaml above the working directory): not trusted: project files come with the repository; it only tightens " + parent,
	} {
		if !strings.Contains(out, s) {
			t.Errorf("check lacks %q:\n%s", s, out)
		}
	}
}

// TestGitConfigChain: `echo ... >> .git/config` is pre-approved by the
// default rules (echo, a write in the workspace) and would make the next
// pre-approved `git status` run a program (core.fsmonitor). The write
// asks in every mode but approve-all; in approve-all the sandbox refuses
// it; either way the following git status runs nothing.
func TestGitConfigChain(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	const write = `printf '[core]\n\tfsmonitor = "touch pwned"\n' >> .git/config`
	for _, mode := range []string{"interactive", "strict", "approve-all"} {
		t.Run(mode, func(t *testing.T) {
			tr := newEnvTree(t)
			if out, err := exec.Command("git", "init", "-q", tr.proj).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			gitConfig := filepath.Join(tr.proj, ".git", "config")
			before, _ := os.ReadFile(gitConfig)
			out, _, _ := tr.run(t, tr.proj, nil, guardrunBin, "explain", "-c", write)
			if !strings.HasPrefix(out, "decision: ask") || !strings.Contains(out, ".git/config is protected (sandbox.protect)") {
				t.Errorf("explain: want ask because .git/config is protected:\n%s", out)
			}
			_, stderr, code := tr.run(t, tr.proj, nil, guardrunBin, "--mode", mode, "-c", write)
			switch mode {
			case "approve-all":
				if code == 0 || !strings.Contains(stderr, "Read-only file system") {
					t.Errorf("approve-all: the write ran (exit %d); want the sandbox to refuse it:\n%s", code, stderr)
				}
			default:
				if code != 77 || !strings.Contains(stderr, "needs approval") {
					t.Errorf("%s: exit %d, want 77 (asks, no terminal):\n%s", mode, code, stderr)
				}
			}
			if after, _ := os.ReadFile(gitConfig); !bytes.Equal(after, before) {
				t.Errorf(".git/config changed:\n%s", after)
			}
			if _, stderr, code := tr.run(t, tr.proj, nil, guardrunBin, "--mode", mode, "-c", "git status"); code != 0 {
				t.Errorf("git status: exit %d\n%s", code, stderr)
			}
			if exists(filepath.Join(tr.proj, "pwned")) {
				t.Error("git status ran the planted fsmonitor")
			}
		})
	}
}

// TestGitAndMakeInSandbox: protecting .git/hooks and .git/config leaves
// git init, add, commit and checkout and make working inside the sandbox.
func TestGitAndMakeInSandbox(t *testing.T) {
	requireSandbox(t)
	for _, tool := range []string{"git", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	tr := newEnvTree(t)
	tr.write(t, "proj/Makefile", "out.txt: in.txt\n\tcp in.txt out.txt\n")
	tr.write(t, "proj/in.txt", "hello\n")
	script := `set -e
git init -q .
git add .
git commit -q -m first
git checkout -q -b topic
echo more >> in.txt
make
git add -A
git commit -q -m second
git checkout -q -
git checkout -q -
git log --format=%s`
	stdout, stderr, code := tr.run(t, tr.proj, []string{
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
	}, guardrunBin, "--approve-all", "-c", script)
	if code != 0 {
		t.Fatalf("git and make in the sandbox: exit %d\n%s%s", code, stdout, stderr)
	}
	// The repository was made during the command, so its hooks and config
	// could not be read-only then: guardrun says so.
	for _, n := range []string{".git/hooks", ".git/config"} {
		if !strings.Contains(stderr, "guardrun: warning: the command created "+filepath.Join(tr.proj, n)+", which guardrun protects") {
			t.Errorf("no warning that %s was created unprotected:\n%s", n, stderr)
		}
	}
	if stdout != "cp in.txt out.txt\nsecond\nfirst\n" {
		t.Errorf("git log = %q, want both commits", stdout)
	}
	if b, _ := os.ReadFile(filepath.Join(tr.proj, "out.txt")); string(b) != "hello\nmore\n" {
		t.Errorf("make did not build out.txt: %q", b)
	}
	// No placeholder of a protected name is left behind.
	for _, n := range []string{".bashrc", ".envrc", ".vscode", ".gitmodules", ".mcp.json"} {
		if exists(filepath.Join(tr.proj, n)) {
			t.Errorf("%s left behind in the workspace", n)
		}
	}
}
