//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// integrate runs guardrun integrate with args in the world's home.
func integrate(t *testing.T, w *world, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(guardrunBin, append([]string{"integrate"}, args...)...)
	cmd.Dir, cmd.Env = w.work, w.env
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return string(out), code
}

func TestIntegrateKeepsThePersonsSettings(t *testing.T) {
	w := newWorld(t, superviseConfig)
	settings := filepath.Join(w.getenv("HOME"), ".gemini", "settings.json")
	mine := "{\n    // not JSON's, but Gemini CLI's files may hold comments\n    \"model\": {\"name\": \"gemini-2.5-pro\"},\n    \"tools\": {\"allowed\": [\"run_shell_command(ls)\"]}\n}\n"
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(mine), 0o640); err != nil {
		t.Fatal(err)
	}
	read := func(p string) string {
		b, _ := os.ReadFile(p)
		return string(b)
	}
	type step struct {
		Status  int
		Says    bool
		Changed bool
	}
	var got []step
	do := func(says string, args ...string) string {
		before := read(settings)
		out, code := integrate(t, w, args...)
		t.Logf("integrate %s: %s", strings.Join(args, " "), out)
		got = append(got, step{code, strings.Contains(out, says), read(settings) != before})
		return out
	}
	do("+    \"hooks\": {", "gemini", "--dry-run")
	do("guardrun's hook written to "+settings, "gemini")
	wired := read(settings)
	do("already wired", "gemini")
	do("guardrun's hook removed", "gemini", "--remove")
	want := []step{{0, true, false}, {0, true, true}, {0, true, false}, {0, true, true}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("integrate, step by step (-got +want):\n%s", diff)
	}
	if !strings.HasPrefix(wired, "{\n    // not JSON's") || !strings.Contains(wired, "\"tools\": {\"allowed\": [\"run_shell_command(ls)\"]},\n    \"hooks\": {\n        \"BeforeTool\": [") {
		t.Errorf("the wired file does not keep the person's text and indentation:\n%s", wired)
	}
	if diff := cmp.Diff(read(settings), mine); diff != "" {
		t.Errorf("after --remove the file is not as it was (-got +want):\n%s", diff)
	}
	if fi, err := os.Stat(settings); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the file's mode is not kept: %v %v", fi.Mode(), err)
	}
	if b := read(settings + ".guardrun.bak"); b != wired {
		t.Errorf("the backup is not the file before the last change:\n%s", b)
	}
}

// TestIntegrateRefusesAClaudeSettingsFileWithComments: Claude Code
// reads its settings as plain JSON and ignores a file with a comment
// whole; guardrun's hook would be in a file no one reads, and --status
// would call it wired.
func TestIntegrateRefusesAClaudeSettingsFileWithComments(t *testing.T) {
	w := newWorld(t, superviseConfig)
	settings := filepath.Join(w.getenv("HOME"), ".claude", "settings.json")
	mine := "{\n  // mine\n  \"model\": \"opus\"\n}\n"
	os.MkdirAll(filepath.Dir(settings), 0o755)
	os.WriteFile(settings, []byte(mine), 0o644)
	out, code := integrate(t, w, "claude-code")
	b, _ := os.ReadFile(settings)
	if code != 125 || !strings.Contains(out, settings+":2:3: Claude Code reads its settings as plain JSON and ignores this file whole") || string(b) != mine {
		t.Errorf("exit %d, output %q; the file now %q", code, out, b)
	}
	status, _ := integrate(t, w, "--status")
	if !strings.Contains(status, settings+": unreadable: "+settings+":2:3: Claude Code reads its settings as plain JSON") {
		t.Errorf("--status:\n%s", status)
	}
}

func TestIntegrateRefusesAFileItCannotRead(t *testing.T) {
	w := newWorld(t, superviseConfig)
	settings := filepath.Join(w.getenv("HOME"), ".gemini", "settings.json")
	bad := "{\n  \"ui\": {\"theme\": \"Dark\"},\n}\n"
	os.MkdirAll(filepath.Dir(settings), 0o755)
	os.WriteFile(settings, []byte(bad), 0o644)
	out, code := integrate(t, w, "gemini")
	b, _ := os.ReadFile(settings)
	if code != 125 || !strings.Contains(out, settings+":3:1: unexpected '}', want a member name") || string(b) != bad {
		t.Errorf("exit %d, output %q; the file now %q", code, out, b)
	}
	if _, err := os.Stat(settings + ".guardrun.bak"); err == nil {
		t.Errorf("a backup was written for a file that was not changed")
	}
}

func TestIntegrateCodexWithoutCodexSaysTheHookIsNotTrusted(t *testing.T) {
	w := newWorld(t, superviseConfig)
	// No codex on PATH: guardrun cannot ask it for the hook's hash.
	w.env = append(unsetEnv(w.env, "PATH"), "PATH=/usr/bin:/bin")
	config := filepath.Join(w.getenv("HOME"), ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(config), 0o755)
	mine := "model = \"gpt-5.5\"\n"
	os.WriteFile(config, []byte(mine), 0o600)
	out, code := integrate(t, w, "codex")
	b, _ := os.ReadFile(config)
	if code != 0 || !strings.Contains(out, "codex is not on PATH") || !strings.HasPrefix(string(b), mine+"\n# >>> guardrun hook") || strings.Contains(string(b), "trusted_hash") {
		t.Errorf("exit %d, output %q; config.toml:\n%s", code, out, b)
	}
	status, _ := integrate(t, w, "--status")
	if !strings.Contains(status, "(not trusted: Codex skips it)") {
		t.Errorf("--status does not say the hook is not trusted:\n%s", status)
	}
	if out, code := integrate(t, w, "codex", "--project"); code != 2 || !strings.Contains(out, "Codex trusts a project's hooks only from the user's config.toml") {
		t.Errorf("--project for codex: exit %d: %s", code, out)
	}
}

func TestIntegrateStatusNamesAStaleGuardrun(t *testing.T) {
	w := newWorld(t, superviseConfig)
	settings := filepath.Join(w.getenv("HOME"), ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	os.WriteFile(settings, []byte(`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/gone/guardrun hook claude-code"}]}]}}`), 0o644)
	out, _ := integrate(t, w, "--status")
	if !strings.Contains(out, "wired at line 1: /gone/guardrun hook claude-code (stale: /gone/guardrun does not exist; run guardrun integrate claude-code again)") {
		t.Errorf("--status:\n%s", out)
	}
	integrate(t, w, "claude-code")
	b, _ := os.ReadFile(settings)
	if strings.Contains(string(b), "/gone/guardrun") || !strings.Contains(string(b), guardrunBin+" hook claude-code") {
		t.Errorf("integrating again does not replace the stale hook:\n%s", b)
	}
}
