//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tmuxScreen is a real terminal emulator (tmux, 120x30) running a
// command; tests read what a person would see on it (capture-pane) and
// type on it (send-keys).
type tmuxScreen struct {
	t    testing.TB
	sock string
	// status is where an attackAgent writes its request's exit status.
	status string
}

var tmuxCount atomic.Int64

// needTmux skips without tmux, or fails under GUARDRUN_REQUIRE_SANDBOX=1,
// where CI installs it.
func needTmux(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("GUARDRUN_REQUIRE_SANDBOX") == "1" {
			t.Fatal("tmux is required for the prompt integrity tests (GUARDRUN_REQUIRE_SANDBOX=1)")
		}
		t.Skip("needs tmux")
	}
}

// startTmux runs script (bash) in a new tmux server of its own with the
// world's environment plus env, in the world's work directory.
func startTmux(t testing.TB, w *world, env []string, script string) *tmuxScreen {
	t.Helper()
	needTmux(t)
	m := &tmuxScreen{t: t, sock: fmt.Sprintf("guardrun-test-%d-%d", os.Getpid(), tmuxCount.Add(1))}
	var b strings.Builder
	b.WriteString("cd " + shq(w.work) + " || exit 1\n")
	for _, kv := range append(append([]string{}, w.env...), env...) {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "export %s=%s\n", k, shq(v))
	}
	b.WriteString(script + "\n")
	run := filepath.Join(w.tmp, fmt.Sprintf("tmux-run-%d.sh", tmuxCount.Load()))
	if err := os.WriteFile(run, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	// The pane stays after the command ends, so its last screen can be
	// read.
	m.tmux("-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "30", "-s", "main", "env -i TERM=xterm-256color bash "+shq(run)+"; echo PANE-END; sleep 600")
	t.Cleanup(func() {
		exec.Command("tmux", "-L", m.sock, "kill-server").Run()
		// The agent's commands end on the hangup, and guardrun then
		// removes what it made for the sandbox in the work directory:
		// wait for them before the test's directory is removed.
		waitNoProcessIn(t, w.work)
	})
	return m
}

// waitNoProcessIn waits (up to 20 s) until no process has its working
// directory in dir or below.
func waitNoProcessIn(t testing.TB, dir string) {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		busy := false
		procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
		for _, p := range procs {
			if cwd, err := os.Readlink(p); err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+"/")) {
				busy = true
				break
			}
		}
		if !busy {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("processes still work in %s after 20 s", dir)
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (m *tmuxScreen) tmux(args ...string) string {
	m.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", m.sock}, args...)...).CombinedOutput()
	if err != nil {
		m.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// screen is the visible screen as text; withAttrs keeps the escape
// sequences of colours and attributes.
func (m *tmuxScreen) screen(withAttrs bool) string {
	m.t.Helper()
	if withAttrs {
		return m.tmux("capture-pane", "-p", "-e", "-t", "main")
	}
	return m.tmux("capture-pane", "-p", "-t", "main")
}

func (m *tmuxScreen) format(f string) string {
	return strings.TrimSpace(m.tmux("display-message", "-p", "-t", "main", f))
}

// waitScreen waits until the visible screen matches re, and returns it.
func (m *tmuxScreen) waitScreen(re string) string {
	m.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := m.screen(false)
		if rx.MatchString(s) {
			return s
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("the screen never showed %q; it shows:\n%s", re, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// keys types text as a terminal would send it (literally, UTF-8).
func (m *tmuxScreen) keys(text string) {
	m.t.Helper()
	m.tmux("send-keys", "-t", "main", "-l", text)
}

// promptKeyLine matches a prompt waiting for its answer.
const promptKeyLine = `\[y\] approve once.*>`

// settled waits out the quiet time a prompt needs before it takes a key
// (DefaultSettle, 300 ms, from when the key line was drawn); the key line
// was already seen, so this is a lower bound, not a guess.
func settled() { time.Sleep(450 * time.Millisecond) }

// waitPrompt waits for a prompt showing want (a regexp) above its key
// line, checks that it reads on screen as plain text, and returns the
// screen.
func (m *tmuxScreen) waitPrompt(want string) string {
	m.t.Helper()
	s := m.waitScreen(`(?s)approval needed.*` + want + `.*` + promptKeyLine)
	return s
}

func fileIn(t testing.TB, w *world, name string) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(w.work, name))
	return err == nil
}

// attackAgent is a bash "agent" run under `guardrun supervise`: its
// attack, then its request, then its status and a pause.
func attackAgent(t testing.TB, w *world, env []string, attack, request string) *tmuxScreen {
	t.Helper()
	agent := filepath.Join(w.tmp, fmt.Sprintf("agent-%d.sh", tmuxCount.Load()+1))
	status := agent + ".status"
	body := "stty -echo\n" + attack + "\n\"$SHELL\" -c " + shq(request) + "\ns=$?\necho \"$s\" > " + shq(status) + "\necho \"agent: status $s\"\nsleep 600\n"
	if err := os.WriteFile(agent, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	m := startTmux(t, w, env, "exec "+shq(guardrunBin)+" supervise -- bash "+shq(agent))
	m.status = status
	return m
}

// waitStatus waits (up to 60 s) for an attackAgent's request to end and
// returns its exit status. Unlike the status line on screen it does not
// depend on what the agent's own output leaves the terminal in: bytes
// the agent wrote just before its request can reach the terminal after
// the prompt (the pty and the request are two channels), and a sequence
// they leave open takes the agent's status line as its payload, with or
// without guardrun.
func (m *tmuxScreen) waitStatus() string {
	m.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(m.status); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("the agent's request did not end; the screen shows:\n%s", m.screen(false))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// approveVisible waits for the prompt for want, checks it is readable on
// screen, types y after the quiet time, and waits for the agent to get
// its answer and the prompt to leave the screen.
func (m *tmuxScreen) approveVisible(want string) string {
	m.t.Helper()
	s := m.waitPrompt(want)
	settled()
	m.keys("y")
	m.waitStatus()
	m.waitScreenNot(promptKeyLine)
	return s
}

// waitScreenNot waits (up to 60 s) until the visible screen no longer
// matches re.
func (m *tmuxScreen) waitScreenNot(re string) {
	m.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := m.screen(false)
		if !rx.MatchString(s) {
			return
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("the screen still shows %q:\n%s", re, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// enter presses Enter.
func (m *tmuxScreen) enter() {
	m.t.Helper()
	m.tmux("send-keys", "-t", "main", "Enter")
}
