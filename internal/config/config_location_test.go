package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guardrun/guardrun/rules"
)

// TestConfigDiscovery: the environment (a Makefile's `export`,
// run with SHELL=guardrun) points guardrun's locations or
// $GUARDRUN_CONFIG into the working directory, the embedded default's rw
// workspace. Each row is refused, or what it wrote there only tightens:
// the discovery that decodes the default's zones alone must not weaken
// either check.
func TestConfigDiscovery(t *testing.T) {
	loosen := "shell:\n  default: {allowed: true}\n  rules:\n    - {pattern: sudo, allowed: true}\n    - {pattern: make, allowed: false}\n"
	rows := []struct {
		name, class string
		vars        map[string]string // the environment; WORK and ROOT replaced
		homeVar     bool              // $HOME differs from the account's
		refused     string            // Load's error holds this, or "" for none
	}{
		{name: "XDG_STATE_HOME in the workspace", class: "state location",
			vars: map[string]string{"XDG_STATE_HOME": "WORK/x"}, refused: "XDG_STATE_HOME"},
		{name: "XDG_STATE_HOME in the workspace, $GUARDRUN_CONFIG outside", class: "state location",
			vars: map[string]string{"XDG_STATE_HOME": "WORK/x", "GUARDRUN_CONFIG": "ROOT/outside.yaml"}, refused: "XDG_STATE_HOME"},
		{name: "XDG_STATE_HOME in the workspace, $GUARDRUN_CONFIG inside", class: "state location",
			vars: map[string]string{"XDG_STATE_HOME": "WORK/x", "GUARDRUN_CONFIG": "WORK/evil.yaml"}, refused: "XDG_STATE_HOME"},
		{name: "HOME in the workspace", class: "state location",
			vars: map[string]string{"HOME": "WORK/h"}, homeVar: true, refused: "$HOME"},
		{name: "HOME in the workspace, $GUARDRUN_CONFIG inside", class: "state location",
			vars: map[string]string{"HOME": "WORK/h", "GUARDRUN_CONFIG": "WORK/evil.yaml"}, homeVar: true, refused: "$HOME"},
		{name: "XDG_CONFIG_HOME in the workspace with a loosening user config", class: "user config",
			vars: map[string]string{"XDG_CONFIG_HOME": "WORK/c"}},
		{name: "XDG_CONFIG_HOME in the workspace, $GUARDRUN_CONFIG inside", class: "user config",
			vars: map[string]string{"XDG_CONFIG_HOME": "WORK/c", "GUARDRUN_CONFIG": "WORK/evil.yaml"}},
		{name: "$GUARDRUN_CONFIG inside, XDG_STATE_HOME outside", class: "untrusted GUARDRUN_CONFIG",
			vars: map[string]string{"XDG_STATE_HOME": "ROOT/state", "GUARDRUN_CONFIG": "WORK/evil.yaml"}},
		{name: "XDG_RUNTIME_DIR in the workspace", class: "state location",
			vars: map[string]string{"XDG_RUNTIME_DIR": "WORK/run"}, refused: "XDG_RUNTIME_DIR"},
		{name: "XDG_RUNTIME_DIR in the workspace, $GUARDRUN_CONFIG outside", class: "state location",
			vars: map[string]string{"XDG_RUNTIME_DIR": "WORK/run", "GUARDRUN_CONFIG": "ROOT/outside.yaml"}, refused: "XDG_RUNTIME_DIR"},
		{name: "$GUARDRUN_CONFIG inside, XDG_RUNTIME_DIR outside", class: "untrusted GUARDRUN_CONFIG",
			vars: map[string]string{"XDG_RUNTIME_DIR": "ROOT/run", "GUARDRUN_CONFIG": "WORK/evil.yaml"}},
		{name: "$GUARDRUN_CONFIG inside, HOME outside but not the account's", class: "untrusted GUARDRUN_CONFIG",
			vars: map[string]string{"HOME": "ROOT/h2", "GUARDRUN_CONFIG": "WORK/evil.yaml"}, homeVar: true},
		{name: "$GUARDRUN_CONFIG inside through ..", class: "untrusted GUARDRUN_CONFIG",
			vars: map[string]string{"GUARDRUN_CONFIG": "ROOT/home/../work/evil.yaml"}},
		{name: "$GUARDRUN_CONFIG through a link outside into the workspace", class: "untrusted GUARDRUN_CONFIG",
			vars: map[string]string{"GUARDRUN_CONFIG": "ROOT/link/evil.yaml"}},
	}
	for _, r := range rows {
		t.Run(strings.ReplaceAll(r.class+"/"+r.name, "$", ""), func(t *testing.T) {
			root := t.TempDir()
			home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
			for _, d := range []string{home, work, filepath.Join(work, "c", "guardrun")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range []string{filepath.Join(work, "evil.yaml"), filepath.Join(work, "c", "guardrun", "config.yaml")} {
				if err := os.WriteFile(f, []byte(loosen), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(root, "outside.yaml"), []byte("sandbox:\n  zones:\n    - {name: w, root: "+root+"/other, mode: rw}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(work, filepath.Join(root, "link")); err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{}
			for k, v := range r.vars {
				vars[k] = strings.NewReplacer("WORK", work, "ROOT", root).Replace(v)
			}
			e := &Env{Cwd: work, Home: home, pwHome: home, Getenv: func(k string) string { return vars[k] }}
			if h := vars["HOME"]; h != "" {
				e.Home = h
			}
			homeVar := ""
			if r.homeVar {
				homeVar = "HOME"
			}
			e.ConfigHome, e.configVar = filepath.Join(e.Home, ".config"), homeVar
			if c := vars["XDG_CONFIG_HOME"]; c != "" {
				e.ConfigHome, e.configVar = c, "XDG_CONFIG_HOME"
			}
			e.StateDir, e.stateVar = filepath.Join(e.Home, ".local", "state", "guardrun"), homeVar
			if s := vars["XDG_STATE_HOME"]; s != "" {
				e.StateDir, e.stateVar = filepath.Join(s, "guardrun"), "XDG_STATE_HOME"
			}
			e.StoreDir, e.storeVar = filepath.Join(e.StateDir, "sessions"), e.stateVar
			if r := vars["XDG_RUNTIME_DIR"]; r != "" {
				e.StoreDir, e.storeVar = filepath.Join(r, "guardrun", "sessions"), "XDG_RUNTIME_DIR"
			}
			l, err := Load(Flags{}, e)
			if r.refused != "" {
				if err == nil || !strings.Contains(err.Error(), r.refused) {
					t.Fatalf("Load: %v, want it refused naming %s", err, r.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for cmd, want := range map[string]rules.Verdict{"sudo ls": rules.Block, "make": rules.Block} {
				if d := l.Engine.Script(cmd, work); d.Decision != want {
					t.Errorf("%s: %s, want %s (source %s)", cmd, d.Decision, want, l.Source)
				}
			}
			if d := l.Engine.Script("frobnicate-unknown", work); d.Decision == rules.Allow {
				t.Errorf("an unknown command: allow (source %s), want it asked", l.Source)
			}
		})
	}
}

// TestRelativeConfigHome: a relative $XDG_CONFIG_HOME or $HOME (`export
// XDG_CONFIG_HOME := c` in a Makefile) names a user config under the
// working directory, in the workspace: it only tightens, as an absolute
// one there does.
func TestRelativeConfigHome(t *testing.T) {
	for _, r := range []struct{ name, home, config, dir string }{
		{name: "relative XDG_CONFIG_HOME", home: "ROOT/home", config: "c", dir: "c/guardrun"},
		{name: "relative HOME", home: "h", dir: "h/.config/guardrun"},
	} {
		t.Run(r.name, func(t *testing.T) { relativeConfigHome(t, r.home, r.config, r.dir) })
	}
}

func relativeConfigHome(t *testing.T, homeVar, configVar, dir string) {
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	if err := os.MkdirAll(filepath.Join(work, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	loosen := "shell:\n  default: {allowed: true}\n  rules:\n    - {pattern: sudo, allowed: true}\n"
	if err := os.WriteFile(filepath.Join(work, dir, "config.yaml"), []byte(loosen), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	t.Setenv("HOME", strings.ReplaceAll(homeVar, "ROOT", root))
	t.Setenv("XDG_CONFIG_HOME", configVar)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("GUARDRUN_CONFIG", "")
	e, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	l, err := Load(Flags{}, e)
	if err != nil {
		return // refused: as good as tightening only
	}
	if d := l.Engine.Script("sudo ls", work); d.Decision != rules.Block {
		t.Errorf("sudo ls: %s, want block (source %s, chain %+v)", d.Decision, l.Source, l.Chain)
	}
}

// TestGuardrunConfigLinkFlipped: $GUARDRUN_CONFIG names a link in
// the workspace that a concurrent sandboxed command (make -j) flips
// between a file of its own there and a file outside every rw zone. The
// file read must be the one checked: the workspace's file is never
// trusted in full.
func TestGuardrunConfigLinkFlipped(t *testing.T) {
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	evil, outside := filepath.Join(work, "evil.yaml"), filepath.Join(root, "outside.yaml")
	if err := os.WriteFile(evil, []byte("shell:\n  rules:\n    - {pattern: evilmarker, allowed: true, approval: false}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, []byte("shell:\n  rules:\n    - {pattern: make, allowed: false}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(work, "link.yaml")
	point := repointer(t, link)
	point(outside)
	defer flipping(func() { point(evil); point(outside) })()
	e := &Env{Cwd: work, Home: home, pwHome: home, ConfigHome: filepath.Join(home, ".config"),
		StateDir: filepath.Join(home, ".local", "state", "guardrun"),
		Getenv: func(k string) string {
			if k == "GUARDRUN_CONFIG" {
				return link
			}
			return ""
		}}
	loadsFor2s(t, func() *Env { return e }, func(n int, l *Loaded) {
		if d := l.Engine.Script("evilmarker", work); d.Decision == rules.Allow {
			t.Fatalf("load %d: the workspace's file was trusted in full (source %s, chain %+v)", n, l.Source, l.Chain)
		}
	})
}

// TestConfigHomeLinkFlipped: $XDG_CONFIG_HOME names a link in the
// workspace that a concurrent sandboxed command flips between a
// directory of its own there and one outside every rw zone: the user
// config read is the one checked, never the workspace's trusted in full.
func TestConfigHomeLinkFlipped(t *testing.T) {
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	evil, outside := filepath.Join(work, "c"), filepath.Join(root, "c")
	for _, d := range []string{home, filepath.Join(evil, "guardrun"), filepath.Join(outside, "guardrun")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(evil, "guardrun", "config.yaml"), []byte("shell:\n  rules:\n    - {pattern: evilmarker, allowed: true, approval: false}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "guardrun", "config.yaml"), []byte("shell:\n  rules:\n    - {pattern: make, allowed: false}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(work, "link")
	point := repointer(t, link)
	point(outside)
	t.Chdir(work)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", link)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("GUARDRUN_CONFIG", "")
	defer flipping(func() { point(evil); point(outside) })()
	loadsFor2s(t, newEnv(t), func(n int, l *Loaded) {
		if d := l.Engine.Script("evilmarker", work); d.Decision == rules.Allow {
			t.Fatalf("load %d: the workspace's user config was trusted in full (source %s, chain %+v)", n, l.Source, l.Chain)
		}
	})
}

// TestStateHomeLinkFlipped: $XDG_STATE_HOME names a link in the
// workspace that a concurrent sandboxed command flips between a state
// directory of its own there (a trust store that trusts its
// .guardrun.yaml) and one outside every rw zone: the trust store read is
// the one checked, and the project file only tightens.
func TestStateHomeLinkFlipped(t *testing.T) {
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	evil, outside := filepath.Join(work, "s"), filepath.Join(root, "s")
	for _, d := range []string{home, evil, outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	proj := filepath.Join(work, ProjectFile)
	data := []byte("shell:\n  rules:\n    - {pattern: evilmarker, allowed: true, approval: false}\n")
	if err := os.WriteFile(proj, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := OpenTrustStore(filepath.Join(evil, "guardrun")).Trust(proj, data); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(work, "link")
	point := repointer(t, link)
	point(outside)
	t.Chdir(work)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_STATE_HOME", link)
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("GUARDRUN_CONFIG", "")
	defer flipping(func() { point(evil); point(outside) })()
	loadsFor2s(t, newEnv(t), func(n int, l *Loaded) {
		if d := l.Engine.Script("evilmarker", work); d.Decision == rules.Allow || l.ProjectTrusted {
			t.Fatalf("load %d: the workspace's trust store trusted its project file (source %s)", n, l.Source)
		}
	})
}

// flipping calls flip over and over on another goroutine until the
// returned stop is called; stop waits for the last flip to end.
func flipping(flip func()) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			default:
			}
			flip()
		}
	}()
	return func() { close(quit); <-done }
}

// repointer returns a func that points the symbolic link at link to its
// argument, atomically (a new link renamed over it).
func repointer(t *testing.T, link string) func(to string) {
	return func(to string) {
		tmp := link + ".new"
		os.Remove(tmp)
		if err := os.Symlink(to, tmp); err != nil {
			t.Error(err)
		}
		if err := os.Rename(tmp, link); err != nil {
			t.Error(err)
		}
	}
}

// loadsFor2s loads the config over and over for two seconds, each time
// in the environment env gives, and hands check every load that
// succeeded (a half-made link refused is fine).
func loadsFor2s(t *testing.T, env func() *Env, check func(n int, l *Loaded)) {
	deadline := time.Now().Add(2 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		l, err := Load(Flags{}, env())
		if err == nil {
			check(n, l)
		}
	}
}

// newEnv is an environment read afresh from the process's each call.
func newEnv(t *testing.T) func() *Env {
	return func() *Env {
		e, err := NewEnv()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
}
