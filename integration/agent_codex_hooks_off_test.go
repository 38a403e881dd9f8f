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

// codexHooksOff are Codex configs that may switch its hooks off: where,
// what, and whether Codex does (measured by
// TestAgentsCodexHooksOffInItsConfig).
var codexHooksOff = []struct {
	name string
	// project puts text in the project's .codex/config.toml (the
	// project trusted in the user's config), else in the user's
	// config.toml's [features].
	project bool
	text    string
	off     bool
}{
	{"the user's features.hooks false", false, "hooks = false\n", true},
	{"the user's features.codex_hooks false", false, "codex_hooks = false\n", true},
	{"the user's features.hooks true", false, "hooks = true\n", false},
	{"a trusted project's features.hooks false", true, "[features]\nhooks = false\n", true},
	{"a trusted project's features.codex_hooks false", true, "[features]\ncodex_hooks = false\n", true},
}

// TestAgentsCodexHooksOffInItsConfig measures which of codexHooksOff
// switch Codex's hooks off: a command then runs as without guardrun.
func TestAgentsCodexHooksOffInItsConfig(t *testing.T) {
	for _, tt := range codexHooksOff {
		t.Run(tt.name, func(t *testing.T) {
			a := fakemodel.Codex
			var marker string
			r := newRigWith(t, a, openRules, func(r *rig) []fakemodel.Step {
				marker = filepath.Join(filepath.Dir(r.w.Home), "ran-outside")
				return []fakemodel.Step{a.Shell("echo ran > " + marker), fakemodel.Say("done")}
			})
			if out, code := r.guardrun("integrate", "codex"); code != 0 {
				t.Fatalf("integrate: %d %s", code, out)
			}
			cfg := filepath.Join(r.w.Home, ".codex", "config.toml")
			b, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := string(b)
			if tt.project {
				fakemodel.WriteFile(t, filepath.Join(r.w.Project, ".codex", "config.toml"), tt.text)
				s += "\n[projects.\"" + r.w.Project + "\"]\ntrust_level = \"trusted\"\n"
			} else {
				s = strings.Replace(s, "[features]\n", "[features]\n"+tt.text, 1)
			}
			fakemodel.WriteFile(t, cfg, s)
			r.run()
			if fileExists(marker) != tt.off {
				t.Errorf("Codex's hooks off: %v, want %v (step 0: %q)", fileExists(marker), tt.off, r.result(0))
			}
		})
	}
}

// TestSuperviseRefusesCodexConfigThatSwitchesHooksOff: guardrun supervise
// does not start Codex where its config switches hooks off.
func TestSuperviseRefusesCodexConfigThatSwitchesHooksOff(t *testing.T) {
	for _, tt := range codexHooksOff {
		t.Run(tt.name, func(t *testing.T) {
			w := hookWorld(t)
			bin := filepath.Join(filepath.Dir(w.work), "bin")
			fakemodel.WriteFile(t, filepath.Join(bin, "codex"), "#!/bin/sh\nexit 0\n")
			os.Chmod(filepath.Join(bin, "codex"), 0o755)
			w.env = append(unsetEnv(w.env, "PATH"), "PATH="+bin+":/usr/bin:/bin")
			user := filepath.Join(w.getenv("HOME"), ".codex", "config.toml")
			if tt.project {
				fakemodel.WriteFile(t, filepath.Join(w.work, ".codex", "config.toml"), tt.text)
			} else {
				fakemodel.WriteFile(t, user, "[features]\n"+tt.text)
			}
			devnull, _ := os.Open(os.DevNull)
			defer devnull.Close()
			outFile, _ := os.Create(filepath.Join(t.TempDir(), "out"))
			defer outFile.Close()
			cmd := exec.Command(guardrunBin, "supervise", "--", "codex")
			cmd.Dir, cmd.Env = w.work, w.env
			cmd.Stdin, cmd.Stdout = devnull, outFile
			var stderr strings.Builder
			cmd.Stderr = &stderr
			cmd.Run()
			refused := strings.Contains(stderr.String(), "turns Codex's hooks off")
			if diff := cmp.Diff(refused, tt.off); diff != "" {
				t.Errorf("refused for hooks off (-got +want):\n%s\nstderr: %s", diff, stderr.String())
			}
			status, _ := integrate(t, w, "--status")
			if says := strings.Contains(status, "turns Codex's hooks off"); says != tt.off {
				t.Errorf("--status says Codex's hooks are off: %v, want %v:\n%s", says, tt.off, status)
			}
		})
	}
}
