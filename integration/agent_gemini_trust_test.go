//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

// folderTrustOn turns Gemini CLI's folder trust on in the rig's user
// settings and drops the variable that trusts every workspace.
func folderTrustOn(t *testing.T, r *rig) {
	t.Helper()
	p := filepath.Join(r.w.Home, ".gemini", "settings.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), `"security":{`, `"security":{"folderTrust":{"enabled":true},`, 1)
	if s == string(b) {
		t.Fatalf("no security settings to turn folder trust on in: %s", b)
	}
	fakemodel.WriteFile(t, p, s)
	r.env = unsetEnv(r.env, "GEMINI_CLI_TRUST_WORKSPACE")
}

// TestAgentsGeminiSkipsProjectHooksOutsideTrustedFolders measures that
// Gemini CLI, with folder trust on and --skip-trust, does not run the
// hook of the project's settings (guardrun integrate gemini --project):
// the command runs as without guardrun.
// TestSuperviseGeminiCountsProjectHooksOnlyInTrustedFolders holds
// supervise to it.
func TestAgentsGeminiSkipsProjectHooksOutsideTrustedFolders(t *testing.T) {
	a := fakemodel.Gemini
	var marker string
	r := newRigWith(t, a, openRules, func(r *rig) []fakemodel.Step {
		marker = filepath.Join(filepath.Dir(r.w.Home), "ran-outside")
		return []fakemodel.Step{a.Shell("echo ran > " + marker), fakemodel.Say("done")}
	})
	folderTrustOn(t, r)
	if out, code := r.guardrun("integrate", "gemini", "--project"); code != 0 {
		t.Fatalf("integrate: %d %s", code, out)
	}
	r.argv = append(r.argv, "--skip-trust")
	r.run()
	t.Logf("step 0: %q", r.result(0))
	if !fileExists(marker) {
		t.Errorf("Gemini CLI ran the project's hook outside a trusted folder")
	}
}

// TestSuperviseGeminiCountsProjectHooksOnlyInTrustedFolders: with folder
// trust on, or --skip-trust, supervise does not take guardrun's hook in
// the project's settings as wired (Gemini CLI may not read it), and
// without a terminal to offer guardrun integrate on, does not start.
func TestSuperviseGeminiCountsProjectHooksOnlyInTrustedFolders(t *testing.T) {
	tests := []struct {
		name       string
		trust      bool // folder trust on in the user's settings
		argv       []string
		wantStarts bool
	}{
		{"folder trust off", false, nil, true},
		{"folder trust on", true, nil, false},
		{"--skip-trust", false, []string{"--skip-trust"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := hookWorld(t)
			bin := filepath.Join(filepath.Dir(w.work), "bin")
			started := filepath.Join(filepath.Dir(w.work), "started")
			fakemodel.WriteFile(t, filepath.Join(bin, "gemini"), "#!/bin/sh\necho started > "+started+"\n")
			os.Chmod(filepath.Join(bin, "gemini"), 0o755)
			w.env = append(unsetEnv(w.env, "PATH"), "PATH="+bin+":"+filepath.Dir(guardrunBin)+":/usr/bin:/bin")
			if tt.trust {
				fakemodel.WriteFile(t, filepath.Join(w.getenv("HOME"), ".gemini", "settings.json"), `{"security": {"folderTrust": {"enabled": true}}}`)
			}
			if out, code := integrate(t, w, "gemini", "--project"); code != 0 {
				t.Fatalf("integrate: %d %s", code, out)
			}
			devnull, _ := os.Open(os.DevNull)
			defer devnull.Close()
			outFile, _ := os.Create(filepath.Join(t.TempDir(), "out"))
			defer outFile.Close()
			cmd := exec.Command(guardrunBin, append([]string{"supervise", "--", "gemini"}, tt.argv...)...)
			cmd.Dir, cmd.Env = w.work, w.env
			cmd.Stdin, cmd.Stdout = devnull, outFile
			var stderr strings.Builder
			cmd.Stderr = &stderr
			cmd.Run()
			if diff := cmp.Diff(fileExists(started), tt.wantStarts); diff != "" {
				t.Errorf("started (-got +want):\n%s\nstderr: %s", diff, stderr.String())
			}
		})
	}
}
