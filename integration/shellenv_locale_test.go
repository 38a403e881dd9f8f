//go:build linux

package integration

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
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

// big5Locales compiles zh_TW in BIG5 into dir under each name, for
// LOCPATH, or skips.
func big5Locales(t *testing.T, dir string, names ...string) {
	t.Helper()
	testenv.LookPath(t, "localedef")
	for _, n := range names {
		out, _ := exec.Command("localedef", "-i", "zh_TW", "-f", "BIG5", filepath.Join(dir, n)).CombinedOutput()
		if _, err := os.Stat(filepath.Join(dir, n, "LC_CTYPE")); err != nil {
			testenv.Missing(t, "localedef cannot build zh_TW.BIG5: %s", out)
		}
	}
}

// TestRunShellEnvMultibyteLocale: in BIG5, 0xa4 0x5c is one character,
// so bash started in that locale reads echo "\xa4\" ; touch m ; echo
// "\xa4\" as three commands where guardrun read one echo. A locale
// variable naming a charset whose second bytes can be ASCII is not
// passed to the command (LC_CTYPE becomes UTF-8), nor is LOCPATH: the
// echo runs, the touch does not, under either backend.
func TestRunShellEnvMultibyteLocale(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, shellEnvConfig+landlockAccept)
	landlockWorks(t, w, w.work)
	loc := filepath.Join(w.work, "locales")
	if err := os.Mkdir(loc, 0o755); err != nil {
		t.Fatal(err)
	}
	big5Locales(t, loc, "zh_TW.BIG5", "zh_TW")
	marker := filepath.Join(w.work, "multibyte")
	script := "echo \"\xa4\\\" ; touch " + marker + " ; echo \"\xa4\\\""
	want := "\xa4\" ; touch " + marker + " ; echo \xa4\"\n"
	rows := [][]string{
		{"LC_ALL=zh_TW.BIG5"},
		{"LC_CTYPE=zh_TW.BIG5"},
		{"LANG=zh_TW.BIG5"},
		{"LANG=zh_TW"},
		{"LC_ALL=zh_TW.big5"},
		{"LC_ALL=C.UTF-8", "LC_ALL=zh_TW.BIG5"},
		{"LC_ALL=", "LC_CTYPE=en_US.UTF-8", "LANG=zh_TW.BIG5"},
	}
	for _, row := range rows {
		for _, backend := range []string{"bwrap", "landlock"} {
			extra := append([]string{"LOCPATH=" + loc}, row...)
			stdout, stderr, code := runPlain(t, w, "", extra, "--backend", backend, "--strict", "-c", script)
			if code != 0 || stdout != want {
				t.Errorf("%s %v: exit %d, stdout %q, want 0 and %q; stderr:\n%s", backend, row, code, stdout, want, stderr)
			}
			if exists(marker) {
				t.Errorf("%s %v: the touch guardrun read as echo's argument ran", backend, row)
				os.Remove(marker)
			}
		}
	}
	// The argv form, guardrun -- bash -c SCRIPT, with a script that is
	// valid UTF-8: in BIG5, 中 (e4 b8 ad) followed by \ reads as e4b8
	// and ad5c, two characters, and the quote after them closes.
	script = "echo \"中\\\" ; touch " + marker + " ; echo \"中\\\""
	want = "中\" ; touch " + marker + " ; echo 中\"\n"
	extra := []string{"LOCPATH=" + loc, "LC_ALL=zh_TW.BIG5"}
	stdout, stderr, code := runPlain(t, w, "", extra, "--strict", "--", "/bin/bash", "-c", script)
	if code != 0 || stdout != want {
		t.Errorf("argv form: exit %d, stdout %q, want 0 and %q; stderr:\n%s", code, stdout, want, stderr)
	}
	if exists(marker) {
		t.Errorf("argv form: the touch guardrun read as echo's argument ran")
		os.Remove(marker)
	}
}

// TestRunShellEnvLocalePassed: locale variables whose charset reads
// ASCII bytes as ASCII reach the command as set; the others are replaced
// by LC_CTYPE=C.UTF-8, and LOCPATH is dropped.
func TestRunShellEnvLocalePassed(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, shellEnvConfig)
	script := `echo "${LC_ALL-unset} ${LC_CTYPE-unset} ${LANG-unset} ${LOCPATH-unset}"`
	rows := []struct {
		env  []string
		want string
	}{
		{[]string{"LC_ALL=C.UTF-8", "LANG=en_US.UTF-8"}, "C.UTF-8 unset en_US.UTF-8 unset"},
		{[]string{"LC_CTYPE=de_DE.ISO-8859-1", "LANG=ja_JP.eucJP"}, "unset de_DE.ISO-8859-1 ja_JP.eucJP unset"},
		{[]string{"LC_ALL=POSIX", "LOCPATH=/nonexistent"}, "POSIX unset unset unset"},
		{[]string{"LC_ALL=zh_TW.BIG5", "LANG=zh_CN.GBK"}, "unset C.UTF-8 unset unset"},
		{[]string{"LC_CTYPE=ja_JP.SJIS", "LANG=en_US.UTF-8"}, "unset C.UTF-8 en_US.UTF-8 unset"},
		{[]string{"LC_ALL=zh_CN.GB18030", "LC_CTYPE=C.UTF-8"}, "unset C.UTF-8 unset unset"},
		{[]string{"LANG=en_US"}, "unset C.UTF-8 unset unset"},
	}
	for _, r := range rows {
		stdout, stderr, code := runPlain(t, w, "", r.env, "--strict", "-c", script)
		if code != 0 || stdout != r.want+"\n" {
			t.Errorf("%v: exit %d, stdout %q, want %q; stderr:\n%s", r.env, code, stdout, r.want, stderr)
		}
	}
}

// writeMO writes a GNU message catalog translating each msgid to its
// msgstr.
func writeMO(t *testing.T, path string, msgs [][2]string) {
	t.Helper()
	// Sorted by msgid, the header entry ("") first.
	entries := append([][2]string{{"", "Content-Type: text/plain; charset=UTF-8\n"}}, msgs...)
	n := uint32(len(entries))
	hdr := uint32(28)
	origTab, transTab := hdr, hdr+8*n
	data := transTab + 8*n
	var strs []byte
	var orig, trans []uint32
	for _, e := range entries {
		orig = append(orig, uint32(len(e[0])), data+uint32(len(strs)))
		strs = append(append(strs, e[0]...), 0)
	}
	for _, e := range entries {
		trans = append(trans, uint32(len(e[1])), data+uint32(len(strs)))
		strs = append(append(strs, e[1]...), 0)
	}
	var b []byte
	for _, v := range append(append([]uint32{0x950412de, 0, n, origTab, transTab, 0, data}, orig...), trans...) {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, strs...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunShellEnvTextDomain: bash translates $"hello" from the catalog
// TEXTDOMAIN and TEXTDOMAINDIR name and expands the translation, $(...)
// included; guardrun read a quoted string. Neither variable reaches the
// command's shell, under either backend and through a served request.
func TestRunShellEnvTextDomain(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, shellEnvConfig+landlockAccept)
	landlockWorks(t, w, w.work)
	marker := filepath.Join(w.work, "translated")
	td := filepath.Join(w.work, "td")
	for _, l := range []string{"C.UTF-8", "C.utf8", "C", "en"} {
		writeMO(t, filepath.Join(td, l, "LC_MESSAGES", "evil.mo"), [][2]string{{"hello", "$(touch " + marker + ")hi"}})
	}
	extra := []string{"TEXTDOMAIN=evil", "TEXTDOMAINDIR=" + td, "LC_ALL=C.UTF-8", "LANGUAGE=en"}
	// The catalog works: bash outside guardrun runs it.
	cmd := exec.Command("/bin/bash", "-c", `echo $"hello"`)
	cmd.Env = append(os.Environ(), extra...)
	if out, err := cmd.Output(); err != nil || string(out) != "hi\n" || !exists(marker) {
		testenv.Missing(t, "bash does not translate $\"...\" here: %q %v", out, err)
	}
	os.Remove(marker)
	for _, backend := range []string{"bwrap", "landlock"} {
		stdout, stderr, code := runPlain(t, w, "", extra, "--backend", backend, "--strict", "-c", `echo $"hello"`)
		if code != 0 || stdout != "hello\n" {
			t.Errorf("%s: exit %d, stdout %q, want 0 and \"hello\\n\"; stderr:\n%s", backend, code, stdout, stderr)
		}
		if exists(marker) {
			t.Errorf("%s: the translation's $(...) ran", backend)
			os.Remove(marker)
		}
	}
	inner := `echo $"hello"; true`
	stdout, stderr, code := serveTimed(t, w, guardrunBin, `"$GR" --strict -c "$INNER"`, append(extra, "GR="+guardrunBin, "INNER="+inner)...)
	if code != 0 || stdout != "hello\n" {
		t.Errorf("served: exit %d, stdout %q, want 0 and \"hello\\n\"; stderr:\n%s", code, stdout, stderr)
	}
	servedUnder(t, w, inner, "bwrap")
	if exists(marker) {
		t.Errorf("served: the translation's $(...) ran")
	}
}
