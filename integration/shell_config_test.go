//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const shellUserConfig = `shell:
  rules:
    - {pattern: touch, approval: false}
    - {pattern: echo, approval: false}
    - {pattern: cd, approval: false}
sandbox:
  paths:
    workspace: {root: $PWD, mode: rw}
`

// TestShellCdLoadsConfig: after cd, guardrun shell runs the lines that
// follow under the config of the new directory, with trust as at start:
// a trusted project config in full, an untrusted one only tightening.
func TestShellCdLoadsConfig(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t, "")
	// No $GUARDRUN_CONFIG: the config is discovered, as by an agent's
	// shell; the user config is the base.
	w.env = append(w.env, "GUARDRUN_CONFIG=")
	home := ""
	for _, kv := range w.env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			home = v
		}
	}
	os.MkdirAll(filepath.Join(home, "guardrun"), 0o700)
	if err := os.WriteFile(filepath.Join(home, "guardrun", "config.yaml"), []byte(shellUserConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, cfg := range map[string]string{
		// Trusted below: touch is blocked here.
		"trusted": "shell:\n  rules:\n    - {pattern: touch, allowed: false, description: no touching here}\n    - {pattern: echo, approval: false}\n    - {pattern: cd, approval: false}\nsandbox:\n  paths:\n    here: {root: .., mode: rw}\n",
		// Never trusted: it may only tighten, and does: echo is blocked.
		"untrusted": "shell:\n  rules:\n    - {pattern: echo, allowed: false}\n",
	} {
		os.Mkdir(filepath.Join(w.work, dir), 0o755)
		if err := os.WriteFile(filepath.Join(w.work, dir, ".guardrun.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr := startOnPTY(t, filepath.Join(w.work, "trusted"), w.env, strings.NewReader(""), "trust")
	tr.waitFor("Trust this file? [y/N]", 1)
	tr.send("y\r")
	if code := tr.wait(); code != 0 {
		t.Fatalf("guardrun trust: exit %d\n%s", code, tr.screen())
	}

	tt := startOnTTY(t, w, guardrunBin, "shell")
	at := tt.waitFor(0, `guardrun:.*\$ `)
	tt.typ("touch t1\n")
	at = tt.waitFor(at, `guardrun:.*\$ `)

	tt.typ("cd trusted\n")
	at = tt.waitFor(at, `config: .*trusted/\.guardrun\.yaml \(project \(trusted\)\)`)
	at = tt.waitFor(at, `guardrun:.*trusted\$ `)
	tt.typ("touch t2\n")
	at = tt.waitFor(at, `blocked`)
	at = tt.waitFor(at, `guardrun:.*trusted\$ `)

	tt.typ("cd ../untrusted\n")
	at = tt.waitFor(at, `config: .*untrusted/\.guardrun\.yaml \(project \(untrusted: only tightens user config( \(\$XDG_CONFIG_HOME\))?\)\)`)
	at = tt.waitFor(at, `guardrun:.*untrusted\$ `)
	tt.typ("echo from-untrusted\n")
	at = tt.waitFor(at, `blocked`)
	at = tt.waitFor(at, `guardrun:.*untrusted\$ `)

	tt.typ("cd ..\n")
	at = tt.waitFor(at, `config: .*config\.yaml \(user config( \(\$XDG_CONFIG_HOME\))?\)`)
	at = tt.waitFor(at, `guardrun:.*\$ `)
	tt.typ("touch t3\n")
	tt.waitFor(at, `guardrun:.*\$ `)
	tt.typ("exit\n")
	tt.wait()

	for name, want := range map[string]bool{"t1": true, "trusted/t2": false, "t3": true} {
		_, err := os.Stat(filepath.Join(w.work, name))
		if got := err == nil; got != want {
			t.Errorf("%s exists: %v, want %v\nscreen:\n%s", name, got, want, tt.screen())
		}
	}
	if strings.Contains(tt.screen(), "\r\nfrom-untrusted") {
		t.Errorf("echo ran under the untrusted config that blocks it:\n%s", tt.screen())
	}
}
