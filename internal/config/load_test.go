package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/rules"
)

// testConfig allows true and echo without asking, blocks rm, and asks
// about everything else; the workspace is the one rw zone.
const testConfig = `shell:
  program: /bin/sh
  default: {allowed: true, approval: true}
  rules:
    - {pattern: "true", approval: false}
    - {pattern: echo, approval: false}
    - {pattern: exit, approval: false}
    - {pattern: rm, allowed: false, description: "no rm here"}
sandbox:
  paths:
    workspace: {root: WORK, mode: rw}
`

// storeOnlyEnv is an environment in which only $XDG_RUNTIME_DIR chose a
// location (a systemd login session): the session store is in dir, the
// rest where guardrun finds it without variables.
func storeOnlyEnv(t *testing.T, cwd, home, store string) *Env {
	t.Helper()
	e := &Env{Cwd: cwd, Home: home, pwHome: home, Getenv: func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return filepath.Dir(filepath.Dir(store))
		}
		return ""
	}}
	e.ConfigHome = filepath.Join(home, ".config")
	e.StateDir = filepath.Join(home, ".local", "state", "guardrun")
	e.StoreDir, e.storeVar = store, "XDG_RUNTIME_DIR"
	return e
}

// TestLoadStoreChosen: with only the session store's place chosen by
// the environment, the config in force is the one found without it (an
// untrusted project file tightening the user config here), and a store
// inside one of its rw zones is still refused.
func TestLoadStoreChosen(t *testing.T) {
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	user := filepath.Join(home, ".config", "guardrun", "config.yaml")
	for _, d := range []string{work, filepath.Dir(user)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(user, []byte(strings.ReplaceAll(testConfig, "WORK", work)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, ProjectFile), []byte("shell:\n  rules:\n    - {pattern: make, allowed: false}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := storeOnlyEnv(t, work, home, "")
	plain.StoreDir, plain.storeVar = filepath.Join(plain.StateDir, "sessions"), ""
	want, err := Load(Flags{}, plain)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(Flags{}, storeOnlyEnv(t, work, home, filepath.Join(root, "run", "guardrun", "sessions")))
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != want.Source || !reflect.DeepEqual(got.Chain, want.Chain) || got.Project != want.Project ||
		got.ProjectTrusted != want.ProjectTrusted || !reflect.DeepEqual(got.Files, want.Files) || !reflect.DeepEqual(got.Cfg, want.Cfg) {
		t.Errorf("with $XDG_RUNTIME_DIR: source %q chain %+v project %q; without: %q %+v %q", got.Source, got.Chain, got.Project, want.Source, want.Chain, want.Project)
	}
	if !strings.Contains(got.Source, "untrusted") || len(got.Chain) != 2 {
		t.Errorf("source %q, chain %+v: want the user config tightened by the project file", got.Source, got.Chain)
	}
	if d := got.Engine.Script("make", work); d.Decision != rules.Block {
		t.Errorf("make: %s, want block (the project file's rule)", d.Decision)
	}

	_, err = Load(Flags{}, storeOnlyEnv(t, work, home, filepath.Join(work, "run", "guardrun", "sessions")))
	if err == nil || !strings.Contains(err.Error(), "$XDG_RUNTIME_DIR puts guardrun's session grants in") {
		t.Errorf("store inside the workspace: %v, want a refusal", err)
	}
}

// TestLoadHomeChosen: with $HOME and $XDG_STATE_HOME other than the
// account's, the config found without them (here the embedded default,
// decoded for its zones only) still refuses a state directory inside its
// workspace, and the config in force is the one the environment names.
func TestLoadHomeChosen(t *testing.T) {
	root := t.TempDir()
	account, home, work := filepath.Join(root, "account"), filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{account, home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := func(state string) *Env {
		return &Env{Cwd: work, Home: home, pwHome: account, Getenv: func(string) string { return "" },
			ConfigHome: filepath.Join(home, ".config"), configVar: "HOME",
			StateDir: state, stateVar: "XDG_STATE_HOME"}
	}
	_, err := Load(Flags{}, env(filepath.Join(work, "state", "guardrun")))
	if err == nil || !strings.Contains(err.Error(), "$XDG_STATE_HOME puts guardrun's trust store and audit log in") ||
		!strings.Contains(err.Error(), rules.DefaultName) {
		t.Errorf("state inside the working directory: %v, want a refusal naming the embedded default's rw zone", err)
	}
	l, err := Load(Flags{}, env(filepath.Join(home, ".local", "state", "guardrun")))
	if err != nil {
		t.Fatal(err)
	}
	if l.Source != "embedded default" || len(l.Cfg.Shell.Rules) == 0 {
		t.Errorf("source %q with %d rules, want the whole embedded default", l.Source, len(l.Cfg.Shell.Rules))
	}
	if d := l.Engine.Script("sudo ls", work); d.Decision != rules.Block {
		t.Errorf("sudo ls: %s, want block (the default's rule)", d.Decision)
	}
}

// TestLoadGuardrunConfig: $GUARDRUN_CONFIG outside every rw zone is the
// config in force; inside the working directory (the embedded default's
// workspace) it only tightens the whole default, whose rules stay.
func TestLoadGuardrunConfig(t *testing.T) {
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tighten := "shell:\n  rules:\n    - {pattern: make, allowed: false}\n"
	outside, inside := filepath.Join(root, "guardrun.yaml"), filepath.Join(work, "guardrun.yaml")
	if err := os.WriteFile(outside, []byte(strings.ReplaceAll(testConfig, "WORK", work)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inside, []byte(tighten), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, chosen := range []bool{false, true} {
		env := func(gc string) *Env {
			e := &Env{Cwd: work, Home: home, pwHome: home, Getenv: func(k string) string {
				if k == "GUARDRUN_CONFIG" {
					return gc
				}
				return ""
			}, ConfigHome: filepath.Join(home, ".config"), StateDir: filepath.Join(home, ".local", "state", "guardrun")}
			if chosen {
				e.pwHome = filepath.Join(root, "account")
				e.configVar, e.stateVar = "HOME", "HOME"
			}
			return e
		}
		l, err := Load(Flags{}, env(outside))
		if err != nil {
			t.Fatal(err)
		}
		if l.Source != "$GUARDRUN_CONFIG" || len(l.Chain) != 1 || l.Chain[0].File != outside {
			t.Errorf("chosen %v, outside: source %q chain %+v", chosen, l.Source, l.Chain)
		}
		if d := l.Engine.Script("rm x", work); d.Decision != rules.Block {
			t.Errorf("chosen %v, outside: rm: %s, want block (its rule)", chosen, d.Decision)
		}
		l, err = Load(Flags{}, env(inside))
		if err != nil {
			t.Fatal(err)
		}
		if l.Source != "$GUARDRUN_CONFIG (untrusted: only tightens embedded default)" || len(l.Chain) != 2 || l.Chain[1].Trusted {
			t.Errorf("chosen %v, inside: source %q chain %+v", chosen, l.Source, l.Chain)
		}
		for cmd, want := range map[string]rules.Verdict{"make": rules.Block, "sudo ls": rules.Block, "ls": rules.Allow} {
			if d := l.Engine.Script(cmd, work); d.Decision != want {
				t.Errorf("chosen %v, inside: %s: %s, want %s", chosen, cmd, d.Decision, want)
			}
		}
	}
}
