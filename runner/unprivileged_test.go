//go:build linux

package runner

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// unprivUser runs the sandbox tests a second time when the suite runs as
// root: guardrun must work, and refuse the same escapes, for an ordinary
// user (SPEC §5), where bwrap has no privileges of its own to fall back on.
const unprivUser = "guardrun-test"

// TestAsUnprivilegedUser re-runs the sandbox tests as an unprivileged user
// created for the purpose. The test binary and the probe are copied to a
// 0755 directory that user can read.
func TestAsUnprivilegedUser(t *testing.T) {
	if os.Getenv("GUARDRUN_TEST_CHILD") != "" {
		t.Skip("already the re-executed copy")
	}
	if os.Geteuid() != 0 {
		t.Skip("running as an unprivileged user already: the other tests cover it")
	}
	requireSandbox(t)
	testenv.LookPath(t, "runuser") // util-linux
	testenv.User(t, unprivUser)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(suiteDir, "runner.test")
	if err := copyFile(self, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"-u", unprivUser, "--", "env",
		"GUARDRUN_TEST_CHILD=1",
		"GUARDRUN_TEST_PROBE=" + probePath,
		"GUARDRUN_REQUIRE_SANDBOX=" + os.Getenv("GUARDRUN_REQUIRE_SANDBOX"),
		"PATH=/usr/local/bin:/usr/bin:/bin",
		bin, "-test.v", "-test.count=1",
		"-test.run=^(TestEscapes|TestUnixSocketsListed|TestSandboxWorks|TestSignals|TestSignalDuringSetup|TestCancel|TestExitStatus|TestNoSurvivorsAfterSIGKILL|TestProbeRefusesOnHost|TestEscapesAtGuardrun|TestDeniedNameRace|TestToolchains|TestToolchainEscapes|TestFileOpEscapes|TestTerminalEscapes|TestDeviceNodeEscapes|TestDeviceStdioEscapes|TestDeviceNodeOtherPaths|TestDevDirectory|TestDeviceTerminalOutput|TestVerify|TestVerifyBind|TestVerifyRefusedOnce|TestVerifyReopensOwnOutput|TestVerifyReopensNullOutput|TestVerifyOwnOutputNotRead|TestVerifyExecFromRewritableFile|TestVerifiedStartUnderLandlock)$",
	}
	cmd := exec.Command("runuser", args...)
	cmd.Dir = suiteDir
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err != nil {
		t.Fatalf("as %s: %v\n%s", unprivUser, err, text)
	}
	if strings.Contains(text, "--- SKIP") && !strings.Contains(text, "--- PASS: TestEscapes") {
		testenv.Missing(t, "as %s the sandbox is unavailable:\n%s", unprivUser, text)
	}
	// The child's escape summary and its top-level results.
	inSummary := false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.Contains(l, "summary (uid"):
			inSummary = true
			t.Log(strings.TrimSpace(l))
		case inSummary && strings.HasPrefix(l, "          "):
			t.Log(l)
		case strings.HasPrefix(l, "--- "):
			inSummary = false
			t.Log(l)
		default:
			inSummary = false
		}
	}
	if !strings.Contains(text, "--- PASS: TestEscapes") {
		t.Errorf("TestEscapes did not pass as %s:\n%s", unprivUser, text)
	}
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
