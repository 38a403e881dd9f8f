package request

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackProjectFileLinks: a sandboxed command leaves .guardrun.yaml
// in the workspace as a link to a file it cannot read itself (a
// credentials file the sandbox denies) or to one of the kernel's files
// about guardrun. The next guardrun, unsandboxed, reads project files
// before it knows whether they are trusted, and parses them: the first
// bytes of the target came back quoted in the parse error the agent
// reads ("want a mapping, got the string \"aws_secret_access_key =
// ...\""). Each is refused as a link, and the error holds nothing read.
func TestAttackProjectFileLinks(t *testing.T) {
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
		_, err := Load(Options{}, env)
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

// TestAttackProjectFileRegular: a project file that is a regular file
// is still read, and one under a link to a directory of the workspace
// (a path with a linked directory in it) too: only its last component
// must not be a link.
func TestAttackProjectFileRegular(t *testing.T) {
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
