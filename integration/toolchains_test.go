//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolchainsOnPath: with the default system_read, a node installed
// by nvm in the person's home directory is found through PATH inside the
// sandbox, under each backend, and its version's global npmrc (where
// `npm config set -g` keeps a token) is not readable; guardrun profile
// says, in text and JSON, which home directories are visible and why.
func TestToolchainsOnPath(t *testing.T) {
	w := runWorld(t, runConfig)
	home := w.getenv("HOME")
	bin := filepath.Join(home, ".nvm/versions/node/v20.0.0/bin")
	for rel, c := range map[string]string{
		".nvm/nvm.sh":                          "nvm() { :; }\n",
		".nvm/versions/node/v20.0.0/bin/node":  "#!/bin/sh\necho \"node v20.0.0 from nvm\"\n",
		".nvm/versions/node/v20.0.0/etc/npmrc": "//registry.npmjs.org/:_authToken=secret-token\n",
	} {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin"}
	// The file name is dynamic, so that the policy asks (and
	// --approve-all says yes) instead of refusing the read itself: the
	// sandbox must.
	script := `command -v node; node; f=npmrc; cat "$HOME/.nvm/versions/node/v20.0.0/etc/$f" || echo unreadable`
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			var out, stderr string
			if backend == "landlock" {
				pre := noNamespaces(t)
				landlockWorks(t, w, w.work)
				ww := *w
				ww.env = append(append([]string{}, w.env...), env...)
				out, stderr, _ = runLandlock(t, pre, &ww, "--approve-all", "-c", script)
			} else {
				requireSandbox(t)
				out, stderr, _ = runPlain(t, w, "", env, "--backend", "bwrap", "--approve-all", "-c", script)
			}
			for _, want := range []string{filepath.Join(bin, "node"), "node v20.0.0 from nvm", "unreadable"} {
				if !strings.Contains(out, want) {
					t.Errorf("no %q:\n%s\n%s", want, out, stderr)
				}
			}
			if strings.Contains(out, "secret-token") {
				t.Errorf("the npmrc's token was read inside:\n%s", out)
			}
		})
	}

	text, stderr, code := runPlain(t, w, "", env, "profile")
	if code != 0 || !strings.Contains(text, "home read-only") || !strings.Contains(text, filepath.Join(home, ".nvm")+"  (nvm: PATH has "+bin+")") {
		t.Errorf("guardrun profile (exit %d) does not say why ~/.nvm is visible:\n%s\n%s", code, text, stderr)
	}
	js, stderr, code := runPlain(t, w, "", env, "profile", "--json")
	var rep struct {
		Profile struct {
			HomeRead []struct{ Path, Why string } `json:"home_read"`
			Deny     []string                     `json:"deny"`
		} `json:"profile"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil || code != 0 {
		t.Fatalf("guardrun profile --json (exit %d): %v\n%s\n%s", code, err, js, stderr)
	}
	if len(rep.Profile.HomeRead) != 1 || rep.Profile.HomeRead[0].Path != filepath.Join(home, ".nvm") || !strings.Contains(rep.Profile.HomeRead[0].Why, "PATH has "+bin) {
		t.Errorf("home_read: %+v", rep.Profile.HomeRead)
	}
	npmrc := filepath.Join(home, ".nvm/versions/node/v20.0.0/etc/npmrc")
	if !strings.Contains(strings.Join(rep.Profile.Deny, " "), npmrc) {
		t.Errorf("deny does not list %s: %v", npmrc, rep.Profile.Deny)
	}
}
