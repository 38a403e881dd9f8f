//go:build linux

package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guardrun/guardrun/sandbox"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// Script is the argv that runs script with the shell program, as
// `program -c script [argv0 [args...]]`, like sh -c.
func Script(program, script string, args ...string) []string {
	return append([]string{program, "-c", script}, args...)
}

// testState is guardrun's state directory for the tests' commands
// (Config.StateDir): the landlock backend shares the snapshots of
// protected names there.
var testState string

// suiteDir holds what the whole test binary shares and what the
// unprivileged user must be able to read: the probe and a copy of this
// test binary. 0755, outside /tmp.
var suiteDir string

// probePath is the compiled escape probe (testdata/probe).
var probePath string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	// The landlock backend's shared snapshots of protected names live in
	// guardrun's state directory, which request sets; here one of this
	// process's own, outside every zone.
	state, err := os.MkdirTemp(fixtureRoot(), "guardrun-runner-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner test:", err)
		return 2
	}
	defer os.RemoveAll(state)
	testState = state
	if p := os.Getenv("GUARDRUN_TEST_PROBE"); p != "" {
		// A re-executed copy: the parent built the probe.
		probePath = p
		suiteDir = filepath.Dir(p)
		return m.Run()
	}
	dir, err := os.MkdirTemp(fixtureRoot(), "guardrun-runner-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner test:", err)
		return 2
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "runner test:", err)
		return 2
	}
	suiteDir = dir
	probePath = filepath.Join(dir, "probe")
	build := exec.Command("go", "build", "-o", probePath, "./testdata/probe")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "runner test: build probe: %v\n%s", err, out)
		return 2
	}
	return m.Run()
}

// fixtureRoot is where fixtures live: not under /tmp, because inside the
// sandbox /tmp is a private, writable tmpfs, and "outside every zone" must
// be somewhere that stays read-only inside.
func fixtureRoot() string {
	if d := os.Getenv("GUARDRUN_TEST_FIXTURES"); d != "" {
		return d
	}
	return "/var/tmp"
}

// testBackend is the backend the sandbox tests run against:
// GUARDRUN_TEST_BACKEND, bwrap by default. TestLandlockWithoutNamespaces
// re-runs them with landlock where bwrap cannot start.
var testBackend = func() string {
	if b := os.Getenv("GUARDRUN_TEST_BACKEND"); b != "" {
		return b
	}
	return BackendBwrap
}()

func landlockTest() bool { return testBackend == BackendLandlock }

// testBackendNamed is the backend named (bwrap, landlock) as the tests'
// commands run under it: the tests' state directory, nothing remembered.
func testBackendNamed(name string) Backend {
	b, err := New("linux", name, Config{StateDir: testState})
	if err != nil {
		panic(err)
	}
	return b
}

// backendName is b's name, "" for none.
func backendName(b Backend) string {
	if b == nil {
		return ""
	}
	return b.Name()
}

// requireSandbox skips when no sandbox can be built here, naming what is
// missing, unless GUARDRUN_REQUIRE_SANDBOX=1 turns that into a failure.
func requireSandbox(t testing.TB) {
	t.Helper()
	if err := testBackendNamed(testBackend).Check(); err != nil {
		testenv.Missing(t, "sandbox unavailable: %v", err)
	}
}

// fixture is a small world for a sandboxed command: a writable workspace,
// a read-only home with secrets, guardrun's own files, and a directory
// outside every zone.
type fixture struct {
	base    string
	ws      string // writable zone, the working directory
	home    string // read-only zone, $HOME
	outside string // in no zone
	sys     string // a system_read directory of the fixture's own
	state   string // guardrun's state (hidden)
	config  string // guardrun's config in the workspace (read-only)
	newConf string // a config that does not exist yet
	secret  string // ws/.env
	marker  string
	profile *sandbox.Profile
	env     []string
	// accept are the landlock losses the runs accept.
	accept []string
	// extra are zones added to the profile (TestSandboxWorks's Go cache).
	extra []sandbox.Zone
}

const secretText = "API_KEY=do-not-leak\n"

// gitConfigText points git at hooks in the work tree, as husky does: the
// hooks there must be as protected as .git/hooks.
const gitConfigText = "[core]\n\trepositoryformatversion = 0\n\thooksPath = .husky\n"

func newFixture(t testing.TB) *fixture {
	t.Helper()
	base, err := os.MkdirTemp(fixtureRoot(), "guardrun-fixture-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	return fixtureAt(t, base, true)
}

// fixtureAt lays out (when create is set) and describes the fixture in
// base; a helper process re-describes the parent's fixture.
func fixtureAt(t testing.TB, base string, create bool) *fixture {
	t.Helper()
	f := &fixture{
		base:    base,
		ws:      filepath.Join(base, "ws"),
		home:    filepath.Join(base, "home"),
		outside: filepath.Join(base, "outside"),
		sys:     filepath.Join(base, "sys"),
		marker:  "guardrun-marker-" + strconv.FormatInt(time.Now().UnixNano(), 36),
	}
	f.state = filepath.Join(f.home, ".local/state/guardrun")
	f.config = filepath.Join(f.ws, ".guardrun.yaml")
	f.newConf = filepath.Join(f.ws, ".guardrun.local.yaml")
	f.secret = filepath.Join(f.ws, ".env")
	if create {
		files := map[string]string{
			f.secret:                                   secretText,
			f.config:                                   "mode: strict\n",
			filepath.Join(f.home, ".bashrc"):           "# the user's bashrc\n",
			filepath.Join(f.home, ".ssh/id_ed25519"):   "PRIVATE KEY\n",
			filepath.Join(f.state, "audit.jsonl"):      "{}\n",
			filepath.Join(f.outside, "keep"):           "outside\n",
			filepath.Join(f.outside, "shared.env"):     secretText,
			filepath.Join(f.ws, "Makefile"):            "all:\n\techo made > made.txt\n",
			filepath.Join(f.ws, "hello.c"):             "#include <stdio.h>\nint main(void){puts(\"hello from gcc\");return 0;}\n",
			filepath.Join(f.ws, "sub/.env"):            secretText,
			filepath.Join(f.ws, "sub/dir/placeholder"): "",
			// Protected names (sandbox.DefaultProtect): a repository
			// at the top, a nested one without hooks, and a nested
			// .envrc; .bashrc and .vscode are missing at the top.
			filepath.Join(f.ws, ".git/config"):                          gitConfigText,
			filepath.Join(f.ws, ".git/HEAD"):                            "ref: refs/heads/main\n",
			filepath.Join(f.ws, ".git/hooks/README.sample"):             "# sample\n",
			filepath.Join(f.ws, "nested/.git/config"):                   gitConfigText,
			filepath.Join(f.ws, "nested/.git/HEAD"):                     "ref: refs/heads/main\n",
			filepath.Join(f.ws, "deep/x/.envrc"):                        "export A=1\n",
			filepath.Join(f.ws, ".husky/pre-commit"):                    "npx lint-staged\n",
			filepath.Join(f.ws, ".git/modules/lib/config"):              gitConfigText,
			filepath.Join(f.ws, ".git/modules/lib/hooks/README.sample"): "# sample\n",
			// Git directories not named .git: a bare repository, and
			// the one a checkout's .git file points to.
			filepath.Join(f.ws, "bare/HEAD"):               "ref: refs/heads/main\n",
			filepath.Join(f.ws, "bare/config"):             gitConfigText,
			filepath.Join(f.ws, "bare/objects/pack/.keep"): "",
			filepath.Join(f.ws, "bare/refs/heads/.keep"):   "",
			filepath.Join(f.ws, ".claude/settings.json"):   "{}\n",
			filepath.Join(f.ws, "wtree/.git"):              "gitdir: ../gstore\n",
			filepath.Join(f.ws, "gstore/HEAD"):             "ref: refs/heads/main\n",
			filepath.Join(f.ws, "gstore/config"):           gitConfigText,
			filepath.Join(f.ws, "gstore/objects/.keep"):    "",
			filepath.Join(f.ws, "gstore/refs/.keep"):       "",
			filepath.Join(f.sys, "keep"):                   "system\n",
		}
		for p, c := range files {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(filepath.Join(f.outside, "target"), filepath.Join(f.ws, "link")); err != nil {
			t.Fatal(err)
		}
		// A denied name that is a link out of every zone (a shared
		// .env): it must neither leak nor stop the sandbox starting.
		if err := os.MkdirAll(filepath.Join(f.ws, "app"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(f.outside, "shared.env"), filepath.Join(f.ws, "app/.env")); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(base, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.profile = f.derive(t, f.ws)
	f.env = []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=C.UTF-8",
		"GITHUB_TOKEN=host-secret", // must not reach the command
		"GUARDRUN_PROBE_MARKER=" + f.marker,
		"GUARDRUN_PROBE_BACKEND=" + testBackend,
		// Outside every zone: the landlock probe's proof that it is
		// confined (it must not be able to read it).
		"GUARDRUN_PROBE_CANARY=" + filepath.Join(f.outside, "keep"),
	}
	for _, ns := range []string{"user", "pid", "mnt"} {
		v, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			t.Fatal(err)
		}
		f.env = append(f.env, "GUARDRUN_PROBE_HOST_NS_"+strings.ToUpper(ns)+"="+v)
	}
	return f
}

// derive is the fixture's profile for commands started in cwd.
func (f *fixture) derive(t testing.TB, cwd string) *sandbox.Profile {
	t.Helper()
	return f.deriveWith(t, cwd, false)
}

// deriveWith is derive with the network on or off.
func (f *fixture) deriveWith(t testing.TB, cwd string, network bool) *sandbox.Profile {
	t.Helper()
	p, err := sandbox.Derive(sandbox.Spec{
		Network: network,
		Zones: append([]sandbox.Zone{
			{Name: "ws", Root: f.ws, Writable: true},
			{Name: "home", Root: f.home},
			{Name: "probe", Root: filepath.Dir(probePath)},
		}, f.extra...),
		SystemRead:   append(slices.Clone(sandbox.DefaultSystemPaths), f.sys),
		ProtectNames: sandbox.DefaultProtect,
		Deny:         []string{filepath.Join(f.home, ".ssh")},
		DenyNames:    []string{".env", ".npmrc"},
		Protect: []sandbox.Protected{
			{Path: f.config},
			{Path: f.newConf},
			{Path: f.state, Hide: true},
		},
		Cwd:  cwd,
		Home: f.home,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// opts are the runner options of the fixture's runs.
func (f *fixture) opts() Options {
	return Options{Backend: testBackendNamed(testBackend), LandlockAccept: f.accept}
}

// run runs argv in the fixture's sandbox and returns its status and
// combined output.
func (f *fixture) run(t testing.TB, stdin io.Reader, argv ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	status, err := RunWith(ctx, f.opts(), f.profile, argv, f.env, Stdio{Stdin: stdin, Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatalf("Run %q: sandbox did not start: %v\n%s", argv, err, out.String())
	}
	return status, out.String()
}

// markerProcesses lists host processes whose command line holds marker.
func markerProcesses(marker string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == strconv.Itoa(os.Getpid()) {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		// A zombie is gone already; only its parent's wait is missing.
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
				continue
			}
		}
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
	}
	return out
}

// commandRunning reports whether the sandboxed probe itself (not bwrap,
// whose command line also holds the marker) is running with marker.
// (A zombie is not running.)
func commandRunning(marker string) bool {
	for _, p := range markerProcesses(marker) {
		if _, cmdline, _ := strings.Cut(p, ": "); strings.HasPrefix(cmdline, probePath+" ") {
			return true
		}
	}
	return false
}

// waitFor polls cond until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}
