//go:build linux

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/landlock"
	"github.com/guardrun/guardrun/sandbox"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// requireLandlock skips unless the landlock backend works here (and
// fails instead under GUARDRUN_REQUIRE_SANDBOX=1 when the suite runs
// against landlock).
func requireLandlock(t testing.TB) {
	t.Helper()
	if err := landlock.Check(); err != nil {
		if os.Getenv("GUARDRUN_REQUIRE_SANDBOX") == "1" && landlockTest() {
			t.Fatalf("landlock unavailable (GUARDRUN_REQUIRE_SANDBOX=1): %v", err)
		}
		t.Skipf("landlock unavailable: %v", err)
	}
}

// TestLandlockRefuses: a profile landlock cannot enforce in full (a
// denied path the config lists, missing in a writable working directory,
// could be created) is refused before anything runs, naming each part
// and the way out. Missing denied and protected names (.env, .bashrc)
// are not refused: they are moved aside after the command if it creates
// them (TestLandlockProtectedRestored).
func TestLandlockRefuses(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	work := filepath.Join(f.ws, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	p := f.derive(t, work)
	target := filepath.Join(work, "secrets")
	p.Deny = append(p.Deny, target)
	var out bytes.Buffer
	_, err := RunWith(context.Background(), Options{Backend: testBackendNamed(BackendLandlock)}, p,
		[]string{probePath, "write", target}, f.env, Stdio{Stdout: &out, Stderr: &out})
	var ue *landlock.UnenforceableError
	if !errors.As(err, &ue) {
		t.Fatalf("want a refusal naming the parts, got %v\n%s", err, out.String())
	}
	msg := err.Error()
	for _, want := range []string{target, "deny_create", "sandbox.landlock_accept", "bwrap"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal does not mention %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, filepath.Join(work, ".env")) {
		t.Errorf("refusal names a missing denied name, which is moved aside instead:\n%s", msg)
	}
	if out.Len() != 0 {
		t.Errorf("something ran: %s", out.String())
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists: %v", target, err)
	}
	// Accepted, the same command runs and the loss is what was named.
	status, err := RunWith(context.Background(), Options{Backend: testBackendNamed(BackendLandlock), LandlockAccept: []string{landlock.AcceptDenyCreate}}, p,
		[]string{"/bin/sh", "-c", "echo x > secrets"}, f.env, Stdio{Stdout: &out, Stderr: &out})
	if err != nil || status != 0 {
		t.Fatalf("accepted: status %d, %v\n%s", status, err, out.String())
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("accepted loss: %s was not created: %v", target, err)
	}
}

// TestLandlockProtectedRestored: with the default protect list and deny
// names, in a workspace that holds none of guardrun's own files, ordinary
// work runs under landlock (new files in the workspace's root, git init,
// add and commit, make), and afterwards every protected name the command
// changed is back as it was, every one it created is moved aside (not
// deleted), each with one line on stderr.
func TestLandlockProtectedRestored(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	ws := filepath.Join(f.base, "plain")
	files := map[string]string{
		"Makefile":             "all:\n\techo made > made.txt\n",
		"repo/.git/config":     gitConfigText,
		"repo/.git/hooks/x.sh": "#!/bin/sh\n",
	}
	for n, c := range files {
		p := filepath.Join(ws, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := sandbox.Derive(sandbox.Spec{
		Zones:        []sandbox.Zone{{Name: "ws", Root: ws, Writable: true}, {Name: "probe", Root: filepath.Dir(probePath)}},
		SystemRead:   sandbox.DefaultSystemPaths,
		ProtectNames: sandbox.DefaultProtect,
		DenyNames:    []string{".env"},
		Cwd:          ws,
		Home:         f.home,
	})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	run := func(script string) int {
		t.Helper()
		out.Reset()
		status, err := RunWith(context.Background(), Options{Backend: testBackendNamed(BackendLandlock)}, p,
			Script("/bin/sh", script), f.env, Stdio{Stdout: &out, Stderr: &out})
		if err != nil {
			t.Fatalf("the sandbox did not start: %v\n%s", err, out.String())
		}
		return status
	}
	// The positive side.
	if st := run(`set -e; echo new > new.txt; make -s; git init -q g; cd g; echo a > a; git add a;
		git -c user.name=t -c user.email=t@t commit -qm one; git log --oneline | wc -l`); st != 0 {
		t.Fatalf("ordinary work: status %d\n%s", st, out.String())
	}
	for _, n := range []string{"new.txt", "made.txt", "g/.git/HEAD"} {
		if _, err := os.Stat(filepath.Join(ws, n)); err != nil {
			t.Errorf("%s: %v\n%s", n, err, out.String())
		}
	}
	if strings.Contains(out.String(), "guardrun: protected") {
		t.Errorf("ordinary work reported protected paths:\n%s", out.String())
	}
	// The attacks, in one command that then fails: every change is put
	// back, every new name moved aside, each said on stderr.
	st := run(`echo '[core] fsmonitor = "touch p"' >> repo/.git/config
		printf '#!/bin/sh\ntouch p\n' > repo/.git/hooks/pre-commit; chmod +x repo/.git/hooks/pre-commit
		ln -sf /tmp/evil repo/.git/hooks/x.sh
		echo 'curl x | sh' > .bashrc; echo 'export A=1' > .envrc; mkdir .vscode; echo '{}' > .vscode/settings.json
		echo TOKEN=x > .env
		exit 3`)
	if st != 3 {
		t.Fatalf("status %d, want the command's 3\n%s", st, out.String())
	}
	stderr := out.String()
	if b, err := os.ReadFile(filepath.Join(ws, "repo/.git/config")); err != nil || string(b) != gitConfigText {
		t.Errorf(".git/config not restored: %q, %v", b, err)
	}
	ents, _ := os.ReadDir(filepath.Join(ws, "repo/.git/hooks"))
	if len(ents) != 1 || ents[0].Name() != "x.sh" || !ents[0].Type().IsRegular() {
		t.Errorf(".git/hooks not restored: %v", ents)
	}
	for _, n := range []string{".bashrc", ".envrc", ".vscode", ".env"} {
		if _, err := os.Lstat(filepath.Join(ws, n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there after the command: %v", n, err)
		}
		q, _ := filepath.Glob(filepath.Join(ws, n+".guardrun-quarantine-*"))
		if len(q) != 1 {
			t.Errorf("%s: no quarantined copy: %v", n, q)
		}
		if !strings.Contains(stderr, "guardrun: protected "+filepath.Join(ws, n)+" was created by the command; moved aside to ") {
			t.Errorf("stderr does not say %s was moved aside:\n%s", n, stderr)
		}
	}
	for _, n := range []string{"repo/.git/config", "repo/.git/hooks"} {
		if !strings.Contains(stderr, "guardrun: protected "+filepath.Join(ws, n)+" was changed by the command; restored") {
			t.Errorf("stderr does not say %s was restored:\n%s", n, stderr)
		}
	}
	// The command's versions are kept, not deleted.
	q, _ := filepath.Glob(filepath.Join(ws, "repo/.git/config.guardrun-quarantine-*"))
	if len(q) != 1 {
		t.Fatalf("the changed config was not kept aside: %v", q)
	}
	if b, _ := os.ReadFile(q[0]); !strings.Contains(string(b), "fsmonitor") {
		t.Errorf("kept config: %q", b)
	}
	// Nothing changed: nothing said.
	if st := run(`cat repo/.git/config >/dev/null`); st != 0 || strings.Contains(out.String(), "guardrun:") {
		t.Errorf("status %d, output %q", st, out.String())
	}
}

// TestLandlockServedEntries: a writable directory holding a denied
// name (the workspace's .env) and guardrun's read-only config is not
// granted as a whole, but guardrun serves its entries: files and
// directories can be created, written, read again, renamed and removed
// there as under bwrap, while the denied file stays unreadable and
// where it is (no rename, removal, link or write through a link), the
// config stays read-only, and no denied or protected name can be made.
func TestLandlockServedEntries(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	mk := filepath.Join(f.ws, "Makefile")
	before, _ := os.ReadFile(mk)
	conf, _ := os.ReadFile(f.config)
	var out bytes.Buffer
	status, err := RunWith(context.Background(), Options{Backend: testBackendNamed(BackendLandlock)}, f.profile,
		[]string{"/bin/sh", "-c", `echo '# appended' >> Makefile && echo appended
			echo x > new.txt && cat new.txt >/dev/null && echo create-ok
			gcc -o prog hello.c 2>&1 && ./prog
			mkdir newdir && echo y > newdir/f && cat newdir/f >/dev/null && mkdir newdir/deeper && echo z > newdir/deeper/g && echo mkdir-ok
			mv new.txt renamed.txt && cat renamed.txt >/dev/null && echo rename-ok
			mv newdir moved && cat moved/deeper/g >/dev/null && echo rename-dir-ok
			rm renamed.txt && rm -r moved && echo remove-ok
			sed -i s/appended/edited/ Makefile && grep -q edited Makefile && echo sed-i-ok
			cat .env 2>/dev/null || echo read-refused
			mv .env x 2>/dev/null || echo rename-env-refused
			rm -f .env; test -e .env && echo remove-env-refused
			ln .env hard 2>/dev/null || echo link-env-refused
			ln -s .env sym && { cat sym 2>/dev/null || echo symlink-read-refused; }
			echo leak > sym 2>/dev/null || echo symlink-write-refused
			mv Makefile .ENV 2>/dev/null || echo rename-over-env-refused
			echo x > .npmrc 2>/dev/null || echo denied-name-refused
			echo x > .bashrc 2>/dev/null || echo protected-name-refused
			echo x >> .guardrun.yaml 2>/dev/null || echo config-refused
			mv .guardrun.yaml y 2>/dev/null || echo config-rename-refused
			rm -f .guardrun.yaml; test -e .guardrun.yaml && echo config-remove-refused
			mv sub s2 2>/dev/null || echo way-to-denied-refused
			python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
if libc.renameat2(AT_FDCWD, b"Makefile", AT_FDCWD, b".env", RENAME_EXCHANGE) != 0:
    print("exchange-refused")
fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600)
os.write(fd, b"planted")
here = os.open(".", os.O_RDONLY)
try:
    os.link("/proc/self/fd/%d" % fd, ".npmrc", dst_dir_fd=here, follow_symlinks=True)
except OSError:
    print("tmpfile-link-refused")
os.link("/proc/self/fd/%d" % fd, "anon-named", dst_dir_fd=here, follow_symlinks=True)
print(open("anon-named").read())
# The denied file through a descriptor that reads nothing (O_PATH is
# not checked), linked by another name, then opened through the name.
env = os.open(".env", os.O_PATH)
try:
    os.link("/proc/self/fd/%d" % env, "innocent", dst_dir_fd=here, follow_symlinks=True)
    print("LINKED", os.read(os.open("innocent", os.O_RDWR | os.O_CREAT), 100))
except OSError:
    print("link-through-fd-refused")
'
			ln -s sub/dir sd && mkdir sd/x && echo through-link-ok
			mkfifo sub/dir/ff && { cat sub/dir/ff > sub/dir/ff-out & } && echo through-a-fifo > sub/dir/ff && wait && cat sub/dir/ff-out
			echo y > sub/dir/new && echo deeper-ok`},
		f.env, Stdio{Stdout: &out, Stderr: &out})
	if err != nil || status != 0 {
		t.Fatalf("status %d, %v\n%s", status, err, out.String())
	}
	for _, want := range []string{"appended", "create-ok", "hello from gcc", "mkdir-ok", "rename-ok", "rename-dir-ok", "remove-ok", "sed-i-ok",
		"read-refused", "rename-env-refused", "remove-env-refused", "link-env-refused", "symlink-read-refused", "symlink-write-refused",
		"rename-over-env-refused", "denied-name-refused", "protected-name-refused", "config-refused", "config-rename-refused",
		"config-remove-refused", "way-to-denied-refused", "exchange-refused", "tmpfile-link-refused", "planted", "link-through-fd-refused",
		"through-link-ok", "through-a-fifo", "deeper-ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	if b, err := os.ReadFile(f.secret); err != nil || string(b) != secretText {
		t.Errorf(".env: %q, %v", b, err)
	}
	if b, _ := os.ReadFile(f.config); string(b) != string(conf) {
		t.Errorf(".guardrun.yaml: %q", b)
	}
	if strings.Contains(out.String(), "LINKED") || strings.Contains(out.String(), "do-not-leak") {
		t.Errorf("the denied file was reached:\n%s", out.String())
	}
	for _, gone := range []string{"new.txt", "renamed.txt", "moved", "hard", ".ENV", ".npmrc", ".bashrc", "x", "y", "innocent"} {
		if _, err := os.Lstat(filepath.Join(f.ws, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists: %v", gone, err)
		}
	}
	after, _ := os.ReadFile(mk)
	if want := strings.Replace(string(before)+"# appended\n", "appended", "edited", 1); string(after) != want {
		t.Errorf("Makefile: %q, want %q", after, want)
	}
	if l, err := os.Readlink(filepath.Join(f.ws, "sym")); err != nil || l != ".env" {
		t.Errorf("sym: %q, %v", l, err)
	}
}

// TestLandlockServedPools: in a served directory the command can
// create PoolSize new files that it can open again (past them, new
// files there are refused, and guardrun says so after the command), and
// DirPoolSize new directories that are as usable as any in the zone
// (more files in them than PoolSize); a directory made past those is
// served like its parent.
func TestLandlockServedPools(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	var out bytes.Buffer
	script := fmt.Sprintf(`set -e
		mkdir nm && i=0 && while [ $i -lt 300 ]; do echo $i > nm/$i; i=$((i+1)); done && cat nm/299
		i=0 && while [ $i -lt %d ]; do mkdir d$i; i=$((i+1)); done
		mkdir last && echo in-last > last/f && cat last/f
		i=0 && while [ $i -lt %d ]; do echo $i > f$i; i=$((i+1)); done && cat f%d
		echo x > one-too-many 2>/dev/null && echo created-past-the-pool || echo refused-past-the-pool`,
		landlock.DirPoolSize, landlock.PoolSize-1, landlock.PoolSize-2)
	status, err := RunWith(context.Background(), Options{Backend: testBackendNamed(BackendLandlock)}, f.profile,
		[]string{"/bin/sh", "-c", script}, f.env, Stdio{Stdout: &out, Stderr: &out})
	if err != nil || status != 0 {
		t.Fatalf("status %d, %v\n%s", status, err, out.String())
	}
	for _, want := range []string{"299\n", "in-last\n", fmt.Sprintf("%d\n", landlock.PoolSize-2), "refused-past-the-pool",
		fmt.Sprintf("guardrun: note: the command created more than %d new files directly in directories that hold denied or protected names", landlock.PoolSize)} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	if _, err := os.Lstat(filepath.Join(f.ws, "one-too-many")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file past the pool was left: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(testState, "landlock-pool")); len(ents) != 0 {
		t.Errorf("directory pools left in the state directory: %v", ents)
	}
}

// TestNoNamespaces is the environment check of the landlock run: inside
// the wrapper (GUARDRUN_TEST_NONS=1) bwrap must not be able to build its
// sandbox, so that the landlock run is where agents run without user
// namespaces.
func TestNoNamespaces(t *testing.T) {
	if os.Getenv("GUARDRUN_TEST_NONS") != "1" {
		t.Skip("only inside TestLandlockWithoutNamespaces's wrapper")
	}
	if err := bwrap.Check(); err == nil {
		t.Fatal("bwrap builds its sandbox here: this is not an environment without user namespaces")
	} else {
		t.Logf("bwrap here: %v", err)
	}
	b, err := Choose(BackendAuto, Config{})
	if err != nil {
		t.Fatalf("auto found no backend: %v", err)
	}
	if b.Name() != BackendLandlock {
		t.Errorf("auto chose %s, want landlock", b.Name())
	}
	// The failed bwrap check is remembered next to the success memory
	// (so that every command does not pay for a trial), and answers the
	// next time.
	cache := filepath.Join(t.TempDir(), "sandbox-ok")
	if b, err := Choose(BackendAuto, Config{CheckCache: cache}); err != nil || b.Name() != BackendLandlock {
		t.Fatalf("auto with a memory: %s, %v", backendName(b), err)
	}
	failed, err := os.ReadFile(cache + "-bwrap-failed")
	if err != nil || !strings.Contains(string(failed), "user namespaces") {
		t.Fatalf("the failure was not remembered: %q, %v", failed, err)
	}
	if _, err := os.Stat(cache); err == nil {
		t.Error("a success was remembered for bwrap")
	}
	if b, err := Choose(BackendAuto, Config{CheckCache: cache}); err != nil || b.Name() != BackendLandlock {
		t.Errorf("auto from memory: %s, %v", backendName(b), err)
	}
	if b, err := Choose(BackendBwrap, Config{CheckCache: cache}); err == nil {
		t.Errorf("bwrap asked for by name: %s without an error", backendName(b))
	}
}

// TestLandlockWithoutNamespaces runs the escape suite, the positive
// side, signals and survivors against the landlock backend where bwrap
// cannot start: inside `bwrap --dev-bind / / --unshare-user
// --disable-userns`, which is the host's file system with user
// namespaces disabled (Docker's default profile, Ubuntu 24.04's AppArmor
// rule, CI runners), as root and, when the suite runs as root, as an
// unprivileged user.
// testLogLine is a line a failing test logged (file.go:N: ...), the
// reason the inner run failed, shown even when its full output is cut.
var testLogLine = regexp.MustCompile(`^\s+\w+_test\.go:\d+: `)

func TestLandlockWithoutNamespaces(t *testing.T) {
	if os.Getenv("GUARDRUN_TEST_NONS") != "" || os.Getenv("GUARDRUN_TEST_CHILD") != "" {
		t.Skip("already inside")
	}
	requireSandbox(t) // bwrap builds the wrapper
	requireLandlock(t)
	if testBackend != BackendBwrap {
		t.Skip("the wrapper needs bwrap outside")
	}
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(suiteDir, "runner-nons.test")
	if err := copyFile(self, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := "^(TestNoNamespaces|TestEscapes|TestUnixSocketsListed|TestSandboxWorks|TestSignals|TestCancel|TestExitStatus|TestNoSurvivorsAfterSIGKILL|TestProbeRefusesOnHost|TestLandlockRefuses|TestLandlockProtectedRestored|TestEscapesAtGuardrun|TestDeniedNameRace|TestToolchains|TestToolchainEscapes|TestFileOpEscapes|TestTerminalEscapes|TestDeviceNodeEscapes|TestDeviceStdioEscapes|TestDeviceNodeOtherPaths|TestDevDirectory|TestDeviceTerminalOutput|TestLandlockServedEntries|TestLandlockServedPools|TestVerify|TestVerifyBind|TestVerifyRefusedOnce|TestVerifyReopensOwnOutput|TestVerifyReopensNullOutput|TestVerifyOwnOutputNotRead|TestVerifyExecFromRewritableFile|TestVerifiedStartUnderLandlock)$"
	inner := []string{bw, "--dev-bind", "/", "/", "--unshare-user", "--disable-userns", "--",
		"env", "GUARDRUN_TEST_NONS=1", "GUARDRUN_TEST_BACKEND=landlock", "GUARDRUN_REQUIRE_SANDBOX=1",
		"GUARDRUN_TEST_PROBE=" + probePath, "PATH=/usr/local/bin:/usr/bin:/bin",
		bin, "-test.v", "-test.count=1", "-test.run=" + tests}
	type as struct {
		name string
		argv []string
	}
	runs := []as{{"uid " + strconv.Itoa(os.Geteuid()), inner}}
	if os.Geteuid() == 0 {
		testenv.User(t, unprivUser)
		runs = append(runs, as{unprivUser, append([]string{"runuser", "-u", unprivUser, "--"}, inner...)})
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, r.argv[0], r.argv[1:]...)
			cmd.Dir = suiteDir
			out, err := cmd.CombinedOutput()
			text := string(out)
			for _, l := range strings.Split(text, "\n") {
				if strings.HasPrefix(l, "--- ") || strings.HasPrefix(strings.TrimSpace(l), "--- FAIL") ||
					strings.Contains(l, "summary (uid") || strings.HasPrefix(l, "          ") || strings.Contains(l, "bwrap here:") ||
					testLogLine.MatchString(l) {
					t.Log(l)
				}
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			for _, want := range []string{"--- PASS: TestNoNamespaces", "--- PASS: TestEscapes", "--- PASS: TestSandboxWorks", "--- PASS: TestLandlockRefuses"} {
				if !strings.Contains(text, want) {
					t.Errorf("no %q:\n%s", want, text)
				}
			}
		})
	}
}

// TestLandlockRefusesProxy: a profile with Proxy but no proxy address
// to route it to is refused before anything runs (neither the open
// network nor none instead of what the config says). Nothing here needs
// Landlock itself: the refusal comes first.
func TestLandlockRefusesProxy(t *testing.T) {
	f := newFixture(t)
	p := f.derive(t, f.ws)
	p.Proxy, p.Network = true, false
	p.Seccomp = sandbox.SeccompPolicy{AllowNetwork: true}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(f.ws, "ran")
	var out bytes.Buffer
	_, err := RunWith(context.Background(), Options{Backend: testBackendNamed(BackendLandlock)}, p,
		[]string{probePath, "write", marker}, f.env, Stdio{Stdout: &out, Stderr: &out})
	if !errors.Is(err, ErrLandlockProxy) || !strings.Contains(err.Error(), "needs the proxy's address") {
		t.Fatalf("err = %v, want ErrLandlockProxy", err)
	}
	if _, serr := os.Stat(marker); serr == nil || out.Len() != 0 {
		t.Errorf("the command ran: %s", out.String())
	}
}
