//go:build linux

package integration

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
	"github.com/guardrun/guardrun/shellparse"
)

// TestShellEnvSafeLocaleGlibc: every locale name shellparse.SafeLocale
// accepts loads, as glibc reads it, a charset other than BIG5 when the
// only locale there is zh_TW in BIG5 (under the names a system gives
// it): a name glibc reads without a codeset (zh_TW@x.UTF-8: the dot is
// the modifier's) falls back to zh_TW, and one without a language
// (_TW.UTF-8) is looked up whole, codeset unchecked: neither is safe.
func TestShellEnvSafeLocaleGlibc(t *testing.T) {
	testenv.LookPath(t, "locale")
	loc := t.TempDir()
	big5Locales(t, loc, "zh_TW", "zh_TW.big5", "zh_TW@x", "_TW.UTF-8", ".UTF-8")
	charmap := func(name string) string {
		cmd := exec.Command("locale", "charmap")
		cmd.Env = []string{"LOCPATH=" + loc, "LC_ALL=" + name, "PATH=" + os.Getenv("PATH")}
		out, _ := cmd.Output()
		return strings.TrimSpace(string(out))
	}
	if got := charmap("zh_TW"); got != "BIG5" {
		testenv.Missing(t, "locale does not load zh_TW from LOCPATH (charmap %q)", got)
	}
	names := []string{
		"zh_TW@x.UTF-8", "zh_TW@.UTF-8", "zh_TW@euro.utf8", "zh_TW@x.ISO-8859-1",
		"zh_TW@x.eucTW", "zh_TW.UTF-8", "zh_TW.utf8@x", "zh_TW.UTF-8@x",
		"zh_TW.ISO-8859-1", "zh_TW.euc", "zh_TW.eucTW@x", "zh_TW.big5", "zh_TW.BIG5",
		"zh_TW.Big5@x", "zh_TW.UTF-8.BIG5", "zh_TW", "zh_TW@x", "zh", "C.UTF-8",
		"zh_TW.UTF-8@x.BIG5", "zh_TW_x.UTF-8", "zh_TW.ANSI_X3.4-1968",
		"_TW.UTF-8", ".UTF-8", "_.utf8", "@x.UTF-8",
	}
	for _, n := range names {
		if got := charmap(n); shellparse.SafeLocale(n) && got == "BIG5" {
			t.Errorf("SafeLocale(%q) is true, but glibc loads it as %s", n, got)
		}
	}
}
