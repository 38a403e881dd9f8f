package landlock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackTmpDirLinkedBase: guardrun's $TMPDIR is in the workspace,
// and an earlier command replaced it with a link to a directory some
// program loads everything under (here: elsewhere). The next command's
// own $TMPDIR, which it writes, is made in /tmp, not where the link
// points, and nothing is left behind in either.
func TestAttackTmpDirLinkedBase(t *testing.T) {
	requireLandlock(t)
	root := t.TempDir()
	elsewhere := filepath.Join(root, "elsewhere")
	if err := os.Mkdir(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{"link", "link/sub", "/proc/self/cwd"} {
		if !strings.HasPrefix(base, "/") {
			os.Remove(filepath.Join(root, "link"))
			if err := os.Symlink(elsewhere, filepath.Join(root, "link")); err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Join(elsewhere, "sub"), 0o755)
			base = filepath.Join(root, base)
		}
		t.Setenv("TMPDIR", base)
		p := workspace(t, false)
		p.PrivateTmp = true
		st, out := run(t, p, nil, `echo x > "$TMPDIR/f" && echo "$TMPDIR"`)
		dir := strings.TrimSpace(out)
		if st != 0 || filepath.Dir(dir) != "/tmp" {
			t.Errorf("TMPDIR=%s: status %d, %q; want the command's $TMPDIR in /tmp", base, st, out)
		}
		for _, d := range []string{elsewhere, filepath.Join(elsewhere, "sub")} {
			if ents, _ := os.ReadDir(d); len(ents) > 0 && !(d == elsewhere && len(ents) == 1 && ents[0].Name() == "sub") {
				t.Errorf("TMPDIR=%s: %s holds %v, want nothing of guardrun's", base, d, ents)
			}
		}
	}
}
