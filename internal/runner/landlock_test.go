//go:build linux

package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/landlock"
	"github.com/guardrun/guardrun/sandbox"
)

// requireLandlock skips unless the landlock backend works here (and
// fails instead under GUARDRUN_REQUIRE_SANDBOX=1 when the suite runs
// against landlock).
func requireLandlock(t *testing.T) {
	t.Helper()
	if err := landlock.Check(); err != nil {
		if os.Getenv("GUARDRUN_REQUIRE_SANDBOX") == "1" && landlockTest() {
			t.Fatalf("landlock unavailable (GUARDRUN_REQUIRE_SANDBOX=1): %v", err)
		}
		t.Skipf("landlock unavailable: %v", err)
	}
}

// TestLandlockRefuses: a profile landlock cannot enforce in full (a
// denied name missing in a writable working directory could be created)
// is refused before anything runs, naming each part and the way out.
func TestLandlockRefuses(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	work := filepath.Join(f.ws, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	p := f.derive(t, work)
	var out bytes.Buffer
	target := filepath.Join(work, ".npmrc")
	_, err := RunWith(context.Background(), Options{Backend: BackendLandlock}, p,
		[]string{probePath, "write", target}, f.env, Stdio{Stdout: &out, Stderr: &out})
	var ue *landlock.UnenforceableError
	if !errors.As(err, &ue) {
		t.Fatalf("want a refusal naming the parts, got %v\n%s", err, out.String())
	}
	msg := err.Error()
	for _, want := range []string{filepath.Join(work, ".env"), target, "deny_create", "sandbox.landlock_accept", "bwrap"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal does not mention %q:\n%s", want, msg)
		}
	}
	if out.Len() != 0 {
		t.Errorf("something ran: %s", out.String())
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists: %v", target, err)
	}
	// Accepted, the same command runs and the loss is what was named.
	status, err := RunWith(context.Background(), Options{Backend: BackendLandlock, LandlockAccept: []string{landlock.AcceptDenyCreate}}, p,
		[]string{"/bin/sh", "-c", "echo x > .npmrc"}, f.env, Stdio{Stdout: &out, Stderr: &out})
	if err != nil || status != 0 {
		t.Fatalf("accepted: status %d, %v\n%s", status, err, out.String())
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("accepted loss: %s was not created: %v", target, err)
	}
}

// TestLandlockFixedEntries: a writable directory holding a denied name is
// not granted as a whole: its files stay usable, nothing can be created,
// removed or renamed in it, and the denied file stays unreadable.
func TestLandlockFixedEntries(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	mk := filepath.Join(f.ws, "Makefile")
	before, _ := os.ReadFile(mk)
	var out bytes.Buffer
	status, err := RunWith(context.Background(), Options{Backend: BackendLandlock}, f.profile,
		[]string{"/bin/sh", "-c", `echo '# appended' >> Makefile && echo appended;
			echo x > new.txt || echo create-refused;
			rm -f Makefile 2>/dev/null || echo remove-refused;
			mv Makefile M 2>/dev/null || echo rename-refused;
			cat .env 2>/dev/null || echo read-refused;
			echo y > sub/dir/new && echo deeper-ok`},
		f.env, Stdio{Stdout: &out, Stderr: &out})
	if err != nil || status != 0 {
		t.Fatalf("status %d, %v\n%s", status, err, out.String())
	}
	for _, want := range []string{"appended", "create-refused", "remove-refused", "rename-refused", "read-refused", "deeper-ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	if _, err := os.Lstat(filepath.Join(f.ws, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("new.txt was created in a directory with fixed entries")
	}
	after, _ := os.ReadFile(mk)
	if !bytes.Equal(after, append(before, "# appended\n"...)) {
		t.Errorf("Makefile: %q", after)
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
	if _, err := Choose(BackendAuto, ""); err != nil {
		t.Fatalf("auto found no backend: %v", err)
	}
	if b, _ := Choose(BackendAuto, ""); b != BackendLandlock {
		t.Errorf("auto chose %s, want landlock", b)
	}
	// The failed bwrap check is remembered next to the success memory
	// (so that every command does not pay for a trial), and answers the
	// next time.
	cache := filepath.Join(t.TempDir(), "sandbox-ok")
	if b, err := Choose(BackendAuto, cache); err != nil || b != BackendLandlock {
		t.Fatalf("auto with a memory: %s, %v", b, err)
	}
	b, err := os.ReadFile(cache + "-bwrap-failed")
	if err != nil || !strings.Contains(string(b), "user namespaces") {
		t.Fatalf("the failure was not remembered: %q, %v", b, err)
	}
	if _, err := os.Stat(cache); err == nil {
		t.Error("a success was remembered for bwrap")
	}
	if b, err := Choose(BackendAuto, cache); err != nil || b != BackendLandlock {
		t.Errorf("auto from memory: %s, %v", b, err)
	}
	if b, err := Choose(BackendBwrap, cache); err == nil {
		t.Errorf("bwrap asked for by name: %s without an error", b)
	}
}

// TestLandlockWithoutNamespaces runs the escape suite, the positive
// side, signals and survivors against the landlock backend where bwrap
// cannot start: inside `bwrap --dev-bind / / --unshare-user
// --disable-userns`, which is the host's file system with user
// namespaces disabled (Docker's default profile, Ubuntu 24.04's AppArmor
// rule, CI runners), as root and, when the suite runs as root, as an
// unprivileged user.
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
	tests := "^(TestNoNamespaces|TestEscapes|TestSandboxWorks|TestSignals|TestCancel|TestNoSurvivorsAfterSIGKILL|TestProbeRefusesOnHost|TestLandlockRefuses|TestLandlockFixedEntries)$"
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
		if exec.Command("id", "-u", unprivUser).Run() != nil {
			if out, err := exec.Command("useradd", "-m", unprivUser).CombinedOutput(); err != nil {
				t.Fatalf("useradd %s: %v\n%s", unprivUser, err, out)
			}
		}
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
					strings.Contains(l, "summary (uid") || strings.HasPrefix(l, "          ") || strings.Contains(l, "bwrap here:") {
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

// TestLandlockRefusesProxy: landlock has no route to guardrun's proxy
// yet, so a profile with Proxy is refused before anything runs (neither
// the open network nor none instead of what the config says). Nothing
// here needs Landlock itself: the refusal comes first.
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
	_, err := RunWith(context.Background(), Options{Backend: BackendLandlock}, p,
		[]string{probePath, "write", marker}, f.env, Stdio{Stdout: &out, Stderr: &out})
	if !errors.Is(err, ErrLandlockProxy) || !strings.Contains(err.Error(), "does not support network: proxy") {
		t.Fatalf("err = %v, want ErrLandlockProxy", err)
	}
	if _, serr := os.Stat(marker); serr == nil || out.Len() != 0 {
		t.Errorf("the command ran: %s", out.String())
	}
}
