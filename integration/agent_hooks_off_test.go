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

// hooksOff are project settings that may switch an agent's hooks off:
// the documented forms, and values of other types, which Gemini CLI
// keeps when they fail its own validation and reads as JavaScript reads
// them (0 and "" are false).
var hooksOff = []struct {
	name  string
	agent fakemodel.Agent
	file  string // in the project
	text  string
	// off says the agent does switch its hooks off (measured by
	// TestAgentsHooksOffInTheProject); refused that guardrun supervise
	// does not start it: where hooks are off, and where the value is not
	// one guardrun can be sure leaves them on (another release of the
	// agent may read it otherwise).
	off, refused bool
}{
	{"claude-code disableAllHooks true", fakemodel.Claude, ".claude/settings.json", `{"disableAllHooks": true}`, true, true},
	{"claude-code disableAllHooks true in the local settings", fakemodel.Claude, ".claude/settings.local.json", `{"disableAllHooks": true}`, true, true},
	{"claude-code disableAllHooks 1", fakemodel.Claude, ".claude/settings.json", `{"disableAllHooks": 1}`, false, true},
	{"claude-code disableAllHooks a string", fakemodel.Claude, ".claude/settings.json", `{"disableAllHooks": "true"}`, false, true},
	{"gemini enabled false", fakemodel.Gemini, ".gemini/settings.json", `{"hooksConfig": {"enabled": false}}`, true, true},
	{"gemini enabled 0", fakemodel.Gemini, ".gemini/settings.json", `{"hooksConfig": {"enabled": 0}}`, true, true},
	{"gemini enabled an empty string", fakemodel.Gemini, ".gemini/settings.json", `{"hooksConfig": {"enabled": ""}}`, true, true},
	{"gemini enabled an unset variable", fakemodel.Gemini, ".gemini/settings.json", `{"hooksConfig": {"enabled": "$GUARDRUN_TEST_UNSET"}}`, false, true},
	{"gemini enabled the string false", fakemodel.Gemini, ".gemini/settings.json", `{"hooksConfig": {"enabled": "false"}}`, true, true},
	{"gemini enabled true", fakemodel.Gemini, ".gemini/settings.json", `{"hooksConfig": {"enabled": true}}`, false, false},
	{"gemini disabled names another hook", fakemodel.Gemini, ".gemini/settings.json", `{"hooksConfig": {"disabled": ["guardrun-old", "lint"]}}`, false, false},
	{"claude-code disableAllHooks false", fakemodel.Claude, ".claude/settings.json", `{"disableAllHooks": false}`, false, false},
	{"gemini enabled null", fakemodel.Gemini, ".gemini/settings.json", `{"hooksConfig": {"enabled": null}}`, false, false},
	{"gemini disabled names guardrun", fakemodel.Gemini, ".gemini/settings.json", `{"hooksConfig": {"disabled": ["guardrun"]}}`, true, true},
	{"gemini disabled a string holding guardrun", fakemodel.Gemini, ".gemini/settings.json", `{"hooksConfig": {"disabled": "not-guardrun-here"}}`, false, true},
}

// TestAgentsHooksOffInTheProject measures, for each form in hooksOff,
// whether the agent switches its hooks off (a command then runs as
// without guardrun: a file outside every zone is made), so that what
// guardrun supervise refuses to start on
// (TestSuperviseRefusesProjectsThatSwitchHooksOff) is what the agent
// does.
func TestAgentsHooksOffInTheProject(t *testing.T) {
	for _, tt := range hooksOff {
		t.Run(tt.name, func(t *testing.T) {
			var marker string
			r := newRig(t, tt.agent, func(r *rig) []fakemodel.Step {
				marker = filepath.Join(filepath.Dir(r.w.Home), "ran-outside")
				return []fakemodel.Step{tt.agent.Shell("echo ran > " + marker), fakemodel.Say("done")}
			})
			if out, code := r.guardrun("integrate", r.agentName()); code != 0 {
				t.Fatalf("integrate: %d %s", code, out)
			}
			fakemodel.WriteFile(t, filepath.Join(r.w.Project, tt.file), tt.text)
			r.run()
			t.Logf("step 0: %q", r.result(0))
			if fileExists(marker) != tt.off {
				t.Errorf("%s in %s: %s's hooks off %v, want %v", tt.text, tt.file, tt.agent.Name, fileExists(marker), tt.off)
			}
		})
	}
}

// TestSuperviseRefusesProjectsThatSwitchHooksOff: guardrun supervise
// does not start an agent whose project switches its hooks off, in any
// of the forms the agent takes as off, and starts it on the others.
func TestSuperviseRefusesProjectsThatSwitchHooksOff(t *testing.T) {
	for _, tt := range hooksOff {
		t.Run(tt.name, func(t *testing.T) {
			w := hookWorld(t)
			bin := filepath.Join(filepath.Dir(w.work), "bin")
			started := filepath.Join(filepath.Dir(w.work), "started")
			// A stand-in for the agent: supervise knows it by its name.
			fakemodel.WriteFile(t, filepath.Join(bin, tt.agent.Name), "#!/bin/sh\necho started > "+started+"\n")
			os.Chmod(filepath.Join(bin, tt.agent.Name), 0o755)
			home := w.getenv("HOME")
			// guardrun's hook in the user's settings: supervise need not
			// offer to wire it.
			env := append(unsetEnv(w.env, "PATH"), "PATH="+bin+":"+filepath.Dir(guardrunBin)+":/usr/bin:/bin")
			integ := exec.Command(guardrunBin, "integrate", map[string]string{"claude": "claude-code", "gemini": "gemini"}[tt.agent.Name])
			integ.Dir, integ.Env = w.work, env
			if out, err := integ.CombinedOutput(); err != nil {
				t.Fatalf("integrate: %v: %s", err, out)
			}
			fakemodel.WriteFile(t, filepath.Join(w.work, tt.file), tt.text)
			devnull, _ := os.Open(os.DevNull)
			defer devnull.Close()
			outFile, _ := os.Create(filepath.Join(t.TempDir(), "out"))
			defer outFile.Close()
			cmd := exec.Command(guardrunBin, "supervise", "--", tt.agent.Name)
			cmd.Dir, cmd.Env = w.work, env
			cmd.Stdin, cmd.Stdout = devnull, outFile
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			type outcome struct{ Started, Refused bool }
			got := outcome{fileExists(started), err != nil && strings.Contains(stderr.String(), "hooks off")}
			if diff := cmp.Diff(got, outcome{Started: !tt.refused, Refused: tt.refused}); diff != "" {
				t.Errorf("supervise with %s in %s (home %s) (-got +want):\n%s\nstderr: %s", tt.text, tt.file, home, diff, stderr.String())
			}
		})
	}
}

// TestIntegrateStatusSaysWhereHooksAreOff: guardrun integrate --status
// says that the project switches the agent's hooks off, however wired
// guardrun is.
func TestIntegrateStatusSaysWhereHooksAreOff(t *testing.T) {
	for _, tt := range hooksOff {
		t.Run(tt.name, func(t *testing.T) {
			w := hookWorld(t)
			agent := map[string]string{"claude": "claude-code", "gemini": "gemini"}[tt.agent.Name]
			if out, code := integrate(t, w, agent); code != 0 {
				t.Fatalf("integrate: %d %s", code, out)
			}
			fakemodel.WriteFile(t, filepath.Join(w.work, tt.file), tt.text)
			out, code := integrate(t, w, "--status")
			says := false
			for _, line := range strings.Split(out, "\n") {
				says = says || strings.HasPrefix(line, agent) && strings.Contains(line, " off ") && strings.Contains(line, "hooks off")
			}
			if code != 0 || says != tt.refused {
				t.Errorf("--status (exit %d) says the hooks are off: %v, want %v:\n%s", code, says, tt.refused, out)
			}
		})
	}
}
