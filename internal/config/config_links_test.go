package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProjectFileLinks: a sandboxed command leaves .guardrun.yaml
// in the workspace as a link to a file it cannot read itself (a
// credentials file the sandbox denies) or to one of the kernel's files
// about guardrun. The next guardrun, unsandboxed, reads project files
// before it knows whether they are trusted, and parses them: the first
// bytes of the target came back quoted in the parse error the agent
// reads ("want a mapping, got the string \"aws_secret_access_key =
// ...\""). Each is refused as a link, and the error holds nothing read.
func TestProjectFileLinks(t *testing.T) {
	const secret = "s3cr3t-token-in-guardruns-environment"
	t.Setenv("GUARDRUN_ATTACK_TOKEN", secret)
	creds := []string{
		"aws_secret_access_key = " + secret + "\n",
		secret + "\n",
		"mode: " + secret + "\n",
		secret + ": x\n",
		"-----BEGIN OPENSSH PRIVATE KEY-----\n" + secret + "\n",
	}
	targets := []string{"/proc/self/environ", "/proc/self/cmdline", "/proc/thread-self/environ", "/proc/self/root/proc/self/environ"}
	for i := range creds {
		targets = append(targets, "cred"+string(rune('0'+i)))
	}
	for _, target := range targets {
		root := t.TempDir()
		home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
		for _, d := range []string{home, work} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		to := target
		if strings.HasPrefix(target, "cred") {
			to = filepath.Join(home, target)
			if err := os.WriteFile(to, []byte(creds[target[4]-'0']), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		project := filepath.Join(work, ProjectFile)
		if err := os.Symlink(to, project); err != nil {
			t.Fatal(err)
		}
		env := &Env{Cwd: work, Home: home, pwHome: home, Getenv: os.Getenv,
			ConfigHome: filepath.Join(home, ".config"), configVar: "HOME",
			StateDir: filepath.Join(home, ".local", "state", "guardrun"), stateVar: "XDG_STATE_HOME"}
		_, err := Load(Flags{}, env)
		if err == nil || !strings.Contains(err.Error(), project+" is not a regular file (a symbolic link)") {
			t.Errorf("%s as the project file: %v; want refused as a link", to, err)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s as the project file: the error shows what it holds: %v", to, err)
		}
		if _, err := ReadProject(project); err == nil {
			t.Errorf("%s: ReadProject read it, want refused as `guardrun trust` reads it", to)
		}
	}
}

// TestProjectFileRegular: a project file that is a regular file
// is still read, and one under a link to a directory of the workspace
// (a path with a linked directory in it) too: only its last component
// must not be a link.
func TestProjectFileRegular(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, ProjectFile), []byte("mode: strict\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(root, "via")); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{real, filepath.Join(root, "via")} {
		data, err := ReadProject(filepath.Join(dir, ProjectFile))
		if err != nil || string(data) != "mode: strict\n" {
			t.Errorf("ReadProject in %s: %q, %v", dir, data, err)
		}
	}
}

// TestGuardrunConfigLink: $GUARDRUN_CONFIG names a file inside
// the workspace (an rw zone), which only tightens. A sandboxed command
// replaces it, or a directory on its way, with a link to a file outside
// every rw zone: a looser config the user keeps for another project, or
// a credentials file. The next guardrun must not take the link's target
// for a file outside every zone (trusted in full), nor quote what it
// holds: a path reached through a link inside an rw zone is refused.
func TestGuardrunConfigLink(t *testing.T) {
	const secret = "s3cr3t-aws-key-of-the-user"
	root := t.TempDir()
	home, work, other := filepath.Join(root, "home"), filepath.Join(root, "work"), filepath.Join(root, "other")
	for _, d := range []string{home, work, other, filepath.Join(work, "cfgdir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	loose := filepath.Join(other, "loose.yaml")
	if err := os.WriteFile(loose, []byte("mode: approve-all\nshell:\n  default: {allowed: true, approval: false}\nsandbox:\n  paths:\n    workspace: {root: "+work+", mode: rw}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(home, "credentials")
	if err := os.WriteFile(creds, []byte("aws_secret_access_key = "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(root, "other-link")); err != nil {
		t.Fatal(err)
	}
	env := func(gc string) *Env {
		return &Env{Cwd: work, Home: home, pwHome: home, Getenv: func(k string) string {
			if k == "GUARDRUN_CONFIG" {
				return gc
			}
			return ""
		}, ConfigHome: filepath.Join(home, ".config"), StateDir: filepath.Join(home, ".local", "state", "guardrun")}
	}
	rows := []struct{ name, link, to, gc string }{
		{"the file, a link to a looser config", "guardrun.yaml", loose, "guardrun.yaml"},
		{"the file, a link to credentials", "creds.yaml", creds, "creds.yaml"},
		{"a directory on its way, a link", "cfg", other, "cfg/loose.yaml"},
		{"the file, a link to a link outside", "viaout.yaml", filepath.Join(root, "other-link", "loose.yaml"), "viaout.yaml"},
		{"a relative link", "rel.yaml", "../other/loose.yaml", "rel.yaml"},
	}
	for _, r := range rows {
		if err := os.Symlink(r.to, filepath.Join(work, r.link)); err != nil {
			t.Fatal(err)
		}
		l, err := Load(Flags{}, env(filepath.Join(work, r.gc)))
		if err == nil {
			t.Errorf("%s: source %q, mode %q; want refused", r.name, l.Source, l.Cfg.Mode)
			continue
		}
		if !strings.Contains(err.Error(), "link") || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: %v; want refused as reached through a link in an rw zone, nothing read quoted", r.name, err)
		}
	}
	// A link outside every rw zone to a file outside them is the user's
	// own: still the config in force.
	if err := os.Symlink(loose, filepath.Join(home, "guardrun.yaml")); err != nil {
		t.Fatal(err)
	}
	l, err := Load(Flags{}, env(filepath.Join(home, "guardrun.yaml")))
	if err != nil || l.Source != "$GUARDRUN_CONFIG" {
		t.Errorf("a link outside every rw zone: %v; want the config in force", err)
	}
	// The file itself inside the workspace only tightens, as before.
	inside := filepath.Join(work, "cfgdir", "tight.yaml")
	if err := os.WriteFile(inside, []byte("shell:\n  rules:\n    - {pattern: make, allowed: false}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err = Load(Flags{}, env(inside))
	if err != nil || !strings.Contains(l.Source, "untrusted: only tightens") {
		t.Errorf("a regular file inside the workspace: %v, %v; want it to only tighten", l, err)
	}
}

// TestUserConfigLink: $XDG_CONFIG_HOME inside the workspace (the
// user config there only tightens); a command makes its
// guardrun/config.yaml, or guardrun/ itself, a link to a looser config
// outside every rw zone. Refused, not trusted in full.
func TestUserConfigLink(t *testing.T) {
	root := t.TempDir()
	home, work, other := filepath.Join(root, "home"), filepath.Join(root, "work"), filepath.Join(root, "other")
	for _, d := range []string{home, other, filepath.Join(work, "a", "guardrun"), filepath.Join(work, "b"), filepath.Join(work, "c", "guardrun")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	loose := filepath.Join(other, "config.yaml")
	if err := os.WriteFile(loose, []byte("mode: approve-all\nshell:\n  default: {allowed: true, approval: false}\nsandbox:\n  paths:\n    workspace: {root: "+work+", mode: rw}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(loose, filepath.Join(work, "a", "guardrun", "config.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(work, "b", "guardrun")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "c", "guardrun", "config.yaml"), []byte("shell:\n  rules:\n    - {pattern: make, allowed: false}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(ch string) *Env {
		return &Env{Cwd: work, Home: home, pwHome: home, Getenv: func(string) string { return "" },
			ConfigHome: ch, configVar: "XDG_CONFIG_HOME", StateDir: filepath.Join(home, ".local", "state", "guardrun")}
	}
	for _, d := range []string{"a", "b"} {
		l, err := Load(Flags{}, env(filepath.Join(work, d)))
		if err == nil {
			t.Errorf("XDG_CONFIG_HOME=work/%s through a link: source %q, mode %q; want refused", d, l.Source, l.Cfg.Mode)
		} else if !strings.Contains(err.Error(), "link") {
			t.Errorf("XDG_CONFIG_HOME=work/%s: %v; want refused for the link", d, err)
		}
	}
	l, err := Load(Flags{}, env(filepath.Join(work, "c")))
	if err != nil || l.Cfg.Mode == "approve-all" || len(l.Chain) < 2 || l.Chain[len(l.Chain)-1].Trusted {
		t.Errorf("a regular user config inside the workspace: %v; want it to only tighten", err)
	}
}
