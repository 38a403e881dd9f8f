//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guardrun/guardrun/approval"
)

// Without a supervisor (SHELL=guardrun agent) the agent shares the
// person's terminal. These play the three attacks seen there, in tmux.

// sharedAgent runs a bash "agent" directly on the terminal, with guardrun
// as its SHELL: its attack, then its request, then its status.
func sharedAgent(t *testing.T, w *world, attack, request string) *tmuxScreen {
	t.Helper()
	script := "export SHELL=" + shq(guardrunBin) + "\nstty -echo\n" + attack + "\n\"$SHELL\" -c " + shq(request) +
		"\necho \"agent: status $?\"\nwait\nsleep 600"
	return startTmux(t, w, nil, script)
}

// approveWithCode types y and, where the prompt asks for it, the code it
// shows.
func (m *tmuxScreen) approveWithCode() {
	m.t.Helper()
	settled()
	m.keys("y")
	if approval.InjectionPossible() {
		s := m.waitScreen(`to confirm, type [a-z]+`)
		m.keys(regexp.MustCompile(`to confirm, type ([a-z]+)`).FindStringSubmatch(s)[1])
	}
}

// writerScript is an agent's process that waits for the file "go", then
// tries to repaint the top of the screen, and records in "wrote" what
// happened. It takes SIGTTOU's default action, as programs do unless
// they ignore it (bash ignores it in its background jobs; see
// docs/limitations.md).
const writerScript = `import os, signal, time
signal.signal(signal.SIGTTOU, signal.SIG_DFL)
while not os.path.exists("go"):
    time.sleep(0.05)
open("writer.pid", "w").write(str(os.getpid()))
try:
    os.write(1, b"\x1b[H\x1b[2K$ touch notes.txt\x1b[K\r\n\x1b[2K  (safe)\x1b[K")
    r = "written"
except OSError as e:
    r = "refused: " + e.strerror
open("wrote", "w").write(r)
`

// The agent rewrites the prompt's lines after it is drawn: the terminal
// stops its writer (or refuses the write, when the agent's process group
// has no parent on the terminal) until the prompt is answered, the screen
// keeps the real request, and the approval goes to it.
func TestUnsupervisedRewrite(t *testing.T) {
	w := integrityWorld(t)
	if err := os.WriteFile(filepath.Join(w.work, "writer.py"), []byte(writerScript), 0o644); err != nil {
		t.Fatal(err)
	}
	m := sharedAgent(t, w, `python3 writer.py &`, "touch DANGEROUS")
	m.waitPrompt(`\$ touch DANGEROUS`)
	if err := os.WriteFile(filepath.Join(w.work, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(w.work, "writer.pid"))
		pid, _ := strconv.Atoi(string(b))
		res, _ := os.ReadFile(filepath.Join(w.work, "wrote"))
		if pid > 0 && procState(pid) == "T" || strings.HasPrefix(string(res), "refused") {
			break
		}
		if string(res) == "written" {
			t.Fatalf("the agent wrote over the prompt:\n%s", m.screen(false))
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent's writer neither stopped nor was refused (pid %d, result %q)", pid, res)
		}
		time.Sleep(30 * time.Millisecond)
	}
	s := m.screen(false)
	if strings.Contains(s, "notes.txt") || !strings.Contains(s, "$ touch DANGEROUS") {
		t.Fatalf("the agent rewrote the prompt:\n%s", s)
	}
	m.approveWithCode()
	m.waitScreen(`agent: status 0`)
	if !fileIn(t, w, "DANGEROUS") {
		t.Error("the approved request did not run")
	}
	// Given back the terminal, a stopped writer goes on.
	deadline = time.Now().Add(30 * time.Second)
	for !fileIn(t, w, "wrote") {
		if time.Now().After(deadline) {
			t.Fatal("the agent's writer was not continued after the prompt")
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// The agent pushes "y" and a guessed code into its own terminal with
// TIOCSTI once the prompt waits: it cannot approve.
func TestUnsupervisedTIOCSTI(t *testing.T) {
	w := integrityWorld(t)
	if !approval.InjectionPossible() {
		t.Skip("this kernel refuses TIOCSTI (dev.tty.legacy_tiocsti=0): nothing to inject with")
	}
	m := sharedAgent(t, w, `( while [ ! -e go ]; do sleep 0.05; done
python3 -c 'import fcntl, termios
for c in b"yaaa": fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))' && touch injected ) </dev/tty &`, "touch DANGEROUS")
	m.waitPrompt(`\$ touch DANGEROUS`)
	settled()
	if err := os.WriteFile(filepath.Join(w.work, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !fileIn(t, w, "injected") {
		if time.Now().After(deadline) {
			t.Fatalf("the injection did not happen (is python3 installed?); screen:\n%s", m.screen(false))
		}
		time.Sleep(30 * time.Millisecond)
	}
	s := m.waitScreen(`agent: status \d+`)
	if !strings.Contains(s, "agent: status 77") || fileIn(t, w, "DANGEROUS") {
		t.Fatalf("injected keys approved the request:\n%s", s)
	}
}

// The agent asks its own question and fires its request at once; the
// person's "y" for the agent does not answer the prompt.
func TestUnsupervisedTypedForAgent(t *testing.T) {
	w := integrityWorld(t)
	// The agent fires its request once the person has typed: their "y"
	// waits in the terminal's input when guardrun starts.
	m := sharedAgent(t, w, `echo 'Proceed? [y/n]'
while [ ! -e typed ]; do sleep 0.05; done`, "touch DANGEROUS")
	m.waitScreen(`Proceed\? \[y/n\]`)
	m.keys("y")
	if err := os.WriteFile(filepath.Join(w.work, "typed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m.waitPrompt(`\$ touch DANGEROUS`)
	time.Sleep(time.Second)
	s := m.screen(false)
	if !regexp.MustCompile(promptKeyLine).MatchString(s) || strings.Contains(s, "to confirm") || fileIn(t, w, "DANGEROUS") {
		t.Fatalf("the y typed for the agent answered the prompt:\n%s", s)
	}
	settled()
	m.keys("n")
	m.waitScreen(`note for the agent`)
	m.enter()
	m.waitScreen(`agent: status 77`)
	if fileIn(t, w, "DANGEROUS") {
		t.Error("denied request ran")
	}
}
