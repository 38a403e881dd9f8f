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
	"golang.org/x/sys/unix"
)

// shellEnvAttackConfig pre-approves echo and true; everything else asks,
// so --strict runs a script only when every command in it, as guardrun
// read it, is echo or true.
const shellEnvAttackConfig = `shell:
  program: /bin/bash
  default: {allowed: true, approval: true}
  rules:
    - {pattern: "true", approval: false}
    - {pattern: echo, approval: false}
sandbox:
  paths:
    workspace: {root: ., mode: rw}
`

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
	w := runWorld(t, shellEnvAttackConfig+landlockAccept)
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
	w := runWorld(t, shellEnvAttackConfig)
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
	w := runWorld(t, shellEnvAttackConfig+landlockAccept)
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

// TestRunShellEnvIgnoredAtStartup: variables bash honours only when the
// script assigns them (which asks) change nothing when inherited:
// EXECIGNORE does not hide a program from PATH search, GLOBIGNORE does
// not turn on dotglob or drop names from a glob, and an old-style
// exported function (a variable whose value starts with "() {") is a
// string. Under POSIXLY_CORRECT (posix mode, aliases on) an alias
// defined in the script is still read as guardrun read it: its touch
// asks and --strict refuses.
func TestRunShellEnvIgnoredAtStartup(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, shellEnvAttackConfig)
	dir := filepath.Join(w.work, "g")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".hidden", "a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	marker := filepath.Join(w.work, "startup")
	rows := []struct {
		env          []string
		script, want string
	}{
		{[]string{"EXECIGNORE=*"}, `true && echo ran`, "ran\n"},
		{[]string{"GLOBIGNORE=b"}, `echo *`, "a b\n"},
		{[]string{"GLOBIGNORE=:"}, `echo *`, "a b\n"},
		{[]string{"echo=() { touch " + marker + "; }"}, `echo hi`, "hi\n"},
		{[]string{"true=() { touch " + marker + "; }"}, `true; echo hi`, "hi\n"},
		{[]string{"TMOUT=1"}, `echo hi`, "hi\n"},
		{[]string{"BASH_ARGV0=touch"}, `echo hi`, "hi\n"},
	}
	for _, r := range rows {
		stdout, stderr, code := runPlain(t, w, dir, r.env, "--strict", "-c", r.script)
		if code != 0 || stdout != r.want {
			t.Errorf("%v %q: exit %d, stdout %q, want 0 and %q; stderr:\n%s", r.env, r.script, code, stdout, r.want, stderr)
		}
		if exists(marker) {
			t.Errorf("%v %q: %s was made", r.env, r.script, marker)
			os.Remove(marker)
		}
	}
	script := "alias echo='touch " + marker + "; echo'\necho hi"
	_, stderr, code := runPlain(t, w, "", []string{"POSIXLY_CORRECT=1"}, "--strict", "-c", script)
	if code != 77 || exists(marker) {
		t.Errorf("POSIXLY_CORRECT alias: exit %d (want 77), marker made %v; stderr:\n%s", code, exists(marker), stderr)
	}
}

// TestRunShellEnvShellLevel: at shell level 1 a bash -c whose standard
// input is a socket (pipes from Node-based agents are socket pairs) or
// that sees SSH_CLIENT runs ~/.bashrc before the script. guardrun's
// shell always starts at level 2 or more, whatever SHLVL it inherits
// (none, 0, 1000 which bash resets to 1, junk), under either backend;
// ~/.bashrc here is readable inside the sandbox through a ro zone.
func TestRunShellEnvShellLevel(t *testing.T) {
	requireSandbox(t)
	home := t.TempDir()
	w := runWorld(t, shellEnvAttackConfig+"    home: {root: "+home+", mode: ro}\n"+landlockAccept)
	landlockWorks(t, w, w.work)
	marker := filepath.Join(w.work, "bashrc-ran")
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("touch "+marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The .bashrc would run: bash outside guardrun shows it.
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	sock := os.NewFile(uintptr(fds[0]), "sock")
	peer := os.NewFile(uintptr(fds[1]), "peer")
	defer sock.Close()
	defer peer.Close()
	direct := exec.Command("/bin/bash", "-c", "true")
	direct.Env, direct.Stdin = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}, sock
	if err := direct.Run(); err != nil || !exists(marker) {
		testenv.Missing(t, "this bash does not run ~/.bashrc for a socket on its input (%v)", err)
	}
	os.Remove(marker)
	rows := []struct {
		env    []string
		socket bool
		// script is true unless set; a script that starts a bash
		// without SHLVL, through wrappers, is refused (exit 77).
		script string
	}{
		{nil, true, ""},
		{[]string{"SHLVL=0"}, true, ""},
		{[]string{"SHLVL=1000"}, true, ""},
		{[]string{"SHLVL=-3"}, true, ""},
		{[]string{"SHLVL=x"}, true, ""},
		{[]string{"SSH_CLIENT=10.0.0.1 22 22"}, false, ""},
		{[]string{"SSH2_CLIENT=x", "SHLVL=0"}, false, ""},
		{nil, true, "env -u SHLVL env bash -c true"},
		{nil, true, "env -u SHLVL nice bash -c true"},
		{nil, true, "env -u SHLVL timeout 5 bash -c true"},
		{nil, true, "env -u SHLVL xargs -a /dev/null bash -c true"},
		{nil, true, "env -u SHLVL find . -maxdepth 0 -exec bash -c true \\;"},
		{nil, true, "env -u SHLVL dash -c 'bash -c true'"},
		{nil, true, "env -i dash -c 'bash -c true'"},
	}
	for _, r := range rows {
		for _, backend := range []string{"bwrap", "landlock"} {
			script := r.script
			if script == "" {
				script = "true"
			}
			cmd := exec.Command(guardrunBin, "--backend", backend, "--strict", "-c", script)
			cmd.Dir = w.work
			cmd.Env = append(append(append([]string{}, w.env...), "HOME="+home), r.env...)
			if r.socket {
				cmd.Stdin = sock
			}
			out, err := cmd.CombinedOutput()
			if r.script == "" && err != nil {
				t.Errorf("%s %v (socket %v): %v\n%s", backend, r.env, r.socket, err, out)
			}
			if r.script != "" && cmd.ProcessState.ExitCode() != 77 {
				t.Errorf("%s %q (socket %v): exit %d, want 77 (refused)\n%s", backend, script, r.socket, cmd.ProcessState.ExitCode(), out)
			}
			if exists(marker) {
				t.Errorf("%s %v %q (socket %v): ~/.bashrc ran before the script", backend, r.env, script, r.socket)
				os.Remove(marker)
			}
		}
	}
}

// TestRunShellEnvZshStartup: zsh runs $ZDOTDIR/.zshenv before every
// script, -c included, and $NULLCMD or $READNULLCMD for a redirection
// without a command. With shell.program zsh, inherited values naming
// files the project holds do not reach it.
func TestRunShellEnvZshStartup(t *testing.T) {
	requireSandbox(t)
	zsh := testenv.LookPath(t, "zsh")
	w := runWorld(t, strings.Replace(shellEnvAttackConfig, "/bin/bash", zsh, 1))
	marker := filepath.Join(w.work, "zshenv-ran")
	zd := filepath.Join(w.work, "zd")
	if err := os.Mkdir(zd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(zd, ".zshenv"), []byte("touch "+marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runPlain(t, w, "", []string{"ZDOTDIR=" + zd}, "--strict", "-c", "echo hi")
	if code != 0 || stdout != "hi\n" {
		t.Errorf("exit %d, stdout %q, want 0 and \"hi\\n\"; stderr:\n%s", code, stdout, stderr)
	}
	if exists(marker) {
		t.Errorf("$ZDOTDIR/.zshenv ran before the script")
		os.Remove(marker)
	}
	// zsh runs $NULLCMD for > file and $READNULLCMD for < file.
	prog := filepath.Join(w.work, "nullcmd")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]string{{"NULLCMD", "> out"}, {"READNULLCMD", "< nullcmd"}} {
		_, stderr, code := runPlain(t, w, "", []string{r[0] + "=" + prog}, "--strict", "-c", r[1])
		if code != 0 {
			t.Errorf("%s %q: exit %d; stderr:\n%s", r[0], r[1], code, stderr)
		}
		if exists(marker) {
			t.Errorf("%s %q: the inherited %s ran", r[0], r[1], r[0])
			os.Remove(marker)
		}
	}
}
