//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
	"golang.org/x/sys/unix"
)

// shellEnvConfig pre-approves echo and true; everything else asks,
// so --strict runs a script only when every command in it, as guardrun
// read it, is echo or true.
const shellEnvConfig = `shell:
  program: /bin/bash
  default: {allowed: true, approval: true}
  rules:
    - {pattern: "true", approval: false}
    - {pattern: echo, approval: false}
sandbox:
  paths:
    workspace: {root: ., mode: rw}
`

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
	w := runWorld(t, shellEnvConfig)
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
	w := runWorld(t, shellEnvConfig+"    home: {root: "+home+", mode: ro}\n"+landlockAccept)
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
	w := runWorld(t, strings.Replace(shellEnvConfig, "/bin/bash", zsh, 1))
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
