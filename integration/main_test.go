package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// guardrunBin is the binary under test, built once by TestMain.
var guardrunBin string

func TestMain(m *testing.M) {
	if os.Getenv("GUARDRUN_IT_ROLE") == "broker-asker" {
		// The test binary as a process that asks the broker (web_test.go).
		os.Exit(brokerAsker())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "guardrun-it-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// World-readable so the unprivileged test user can run it too.
	os.Chmod(dir, 0o755)
	guardrunBin = filepath.Join(dir, "guardrun")
	// The test hooks tag lets the proxy tests map made-up names to
	// 127.0.0.1 (GUARDRUN_TEST_RESOLVE); it is inert without that variable.
	build := exec.Command("go", "build", "-tags", "guardrun_testhooks", "-o", guardrunBin, "github.com/guardrun/guardrun/cmd/guardrun")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building guardrun:", err)
		return 1
	}
	return m.Run()
}

// requireSandbox skips, or under GUARDRUN_REQUIRE_SANDBOX=1 fails, when
// the OS sandbox cannot start here.
func requireSandbox(t testing.TB) {
	t.Helper()
	if ok, why := sandboxWorks(); !ok {
		testenv.Missing(t, "the OS sandbox is unavailable: %s", why)
	}
}

// sandboxWorks reports whether bwrap can create namespaces here, checked
// once: parallel tests may ask at the same time.
var sandboxWorks = sync.OnceValues(func() (bool, string) {
	if runtime.GOOS != "linux" {
		return false, "not linux"
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		return false, "bubblewrap (bwrap) is not installed"
	}
	out, err := exec.Command("bwrap", "--unshare-user", "--unshare-pid", "--ro-bind", "/", "/", "--proc", "/proc", "true").CombinedOutput()
	if err != nil {
		return false, "bwrap cannot create namespaces: " + strings.TrimSpace(string(out))
	}
	return true, ""
})

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", filepath.Dir(guardrunBin)+":"+os.Getenv("PATH"))
			env.Setenv("GUARDRUN", guardrunBin)
			home := filepath.Join(env.WorkDir, "home")
			os.MkdirAll(home, 0o755)
			env.Setenv("HOME", home)
			env.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			env.Setenv("XDG_RUNTIME_DIR", "")
			env.Setenv("GUARDRUN_SESSION", "")
			env.Setenv("GUARDRUN_CONFIG", "")
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "bwrap", "userns":
				if ok, _ := sandboxWorks(); ok {
					return true, nil
				}
				if testenv.Required() {
					return false, fmt.Errorf("condition [%s]: the OS sandbox is required but unavailable", cond)
				}
				return false, nil
			case "root":
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status": cmdStatus,
		},
	})
}

// cmdStatus runs a command without a controlling terminal (so no prompt
// can open /dev/tty) and checks its exact exit status:
//
//	status 77 guardrun --strict -c 'curl x'
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("status does not take !")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: status CODE COMMAND [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: bad code %q", args[0])
	}
	name := args[1]
	if name == "guardrun" {
		name = guardrunBin
	}
	var env []string
	for _, kv := range []string{"PATH", "HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "GUARDRUN_SESSION", "GUARDRUN_CONFIG", "NO_COLOR", "GUARDRUN", "TMPDIR", "WORK"} {
		env = append(env, kv+"="+ts.Getenv(kv))
	}
	for _, kv := range strings.Fields(ts.Getenv("ENVPASS")) {
		env = append(env, kv+"="+ts.Getenv(kv))
	}
	p := proc{dir: ts.MkAbs("."), env: env}
	if in := ts.Getenv("STDIN"); in != "" {
		p.stdin = strings.NewReader(in)
	}
	r := p.run(append([]string{name}, args[2:]...)...)
	if r.err != nil {
		ts.Fatalf("status: %v", r.err)
	}
	got := r.code
	stdout, stderr := r.stdout, r.stderr
	// Through the builtin buffers, so stdout/stderr assertions see it.
	ts.Stdout().Write([]byte(stdout))
	ts.Stderr().Write([]byte(stderr))
	if got != want {
		ts.Fatalf("exit status %d, want %d\nstderr: %s", got, want, stderr)
	}
}

// pipeGrace bounds how long a test waits, after guardrun exited, for
// whatever still holds its stdout or stderr: a process left behind makes
// the test fail (exec.ErrWaitDelay) instead of hanging the suite.
const pipeGrace = 30 * time.Second
