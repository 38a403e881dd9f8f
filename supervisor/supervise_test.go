package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/approval"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// person is the other end of the terminal a supervisor runs on: what the
// person sees (screen) and types (type).
type person struct {
	t    *testing.T
	pm   *os.File // master: the test's side
	ps   *os.File // slave: the supervisor's In and Out
	mu   sync.Mutex
	seen bytes.Buffer
	done chan struct{}
}

func newPerson(t *testing.T) *person {
	t.Helper()
	pm, ps, err := openPTY()
	if err != nil {
		testenv.Missing(t, "no pty: %v", err)
	}
	setSize(pm, sizeOf(40, 100))
	p := &person{t: t, pm: pm, ps: ps, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 32<<10)
		for {
			n, err := pm.Read(buf)
			p.mu.Lock()
			p.seen.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		pm.Close()
		ps.Close()
	})
	return p
}

func (p *person) screen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen.String()
}

// waitFor waits until the screen matches re after offset from, and
// returns the offset just past the match.
func (p *person) waitFor(from int, re string) int {
	p.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := p.screen()
		if from > len(s) {
			from = len(s)
		}
		if loc := rx.FindStringIndex(s[from:]); loc != nil {
			return from + loc[1]
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("screen never showed %q; it shows:\n%s", re, s[from:])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *person) typ(s string) {
	p.t.Helper()
	if _, err := p.pm.Write([]byte(s)); err != nil {
		p.t.Fatal(err)
	}
}

func (p *person) termios() *unix.Termios {
	p.t.Helper()
	tio, err := unix.IoctlGetTermios(int(p.ps.Fd()), ioctlGetTermios)
	if err != nil {
		p.t.Fatal(err)
	}
	return tio
}

// supervise runs an agent on the person's terminal in the background.
type run struct {
	status int
	err    error
	done   chan struct{}
	pid    int
	socket string
}

func supervise(t *testing.T, p *person, sv *Supervisor, argv ...string) *run {
	t.Helper()
	sv.In, sv.Out = p.ps, p.ps
	sv.SocketBase = t.TempDir()
	if sv.Settle == 0 {
		sv.Settle = -1
	}
	r := &run{done: make(chan struct{})}
	started := make(chan struct{})
	sv.Started = func(pid int, socket string) {
		r.pid, r.socket = pid, socket
		close(started)
	}
	go func() {
		defer close(r.done)
		r.status, r.err = sv.Run(context.Background(), exec.Command(argv[0], argv[1:]...))
	}()
	select {
	case <-started:
	case <-r.done:
		t.Fatalf("supervisor ended before the agent started: %v", r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("agent did not start")
	}
	return r
}

func (r *run) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(20 * time.Second):
		t.Fatal("supervisor did not end")
	}
	if r.err != nil {
		t.Fatalf("Run: %v", r.err)
	}
	return r.status
}

func sizeOf(rows, cols uint16) *pty.Winsize { return &pty.Winsize{Rows: rows, Cols: cols} }

func TestRunStatusAndOutput(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         int
	}{
		{"exit 0", "echo hello from the agent", 0},
		{"exit 3", "echo hello from the agent; exit 3", 3},
		{"killed by TERM", "echo hello from the agent; kill -TERM $$", 128 + 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPerson(t)
			r := supervise(t, p, &Supervisor{}, "sh", "-c", tc.script)
			if got := r.wait(t); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
			p.waitFor(0, "hello from the agent")
		})
	}
}

func TestRunEnvironmentAndSize(t *testing.T) {
	p := newPerson(t)
	r := supervise(t, p, &Supervisor{}, "sh", "-c", `echo "sock=$GUARDRUN_SOCKET"; stty size`)
	r.wait(t)
	p.waitFor(0, "sock="+regexp.QuoteMeta(r.socket))
	p.waitFor(0, "40 100")
}

func TestRawModeRestored(t *testing.T) {
	t.Run("agent exits", func(t *testing.T) {
		p := newPerson(t)
		before := p.termios()
		end := filepath.Join(t.TempDir(), "end")
		r := supervise(t, p, &Supervisor{}, "sh", "-c", `while [ ! -e "$1" ]; do sleep 0.01; done`, "sh", end)
		if during := p.termios(); during.Lflag&unix.ICANON != 0 {
			t.Error("terminal not raw while supervising")
		}
		touch(t, end)
		r.wait(t)
		if after := p.termios(); *after != *before {
			t.Errorf("termios not restored:\nbefore %+v\nafter  %+v", before, after)
		}
	})
	t.Run("agent killed", func(t *testing.T) {
		p := newPerson(t)
		before := p.termios()
		r := supervise(t, p, &Supervisor{}, "sleep", "30")
		syscall.Kill(r.pid, syscall.SIGKILL)
		if got := r.wait(t); got != 128+9 {
			t.Errorf("status %d, want 137", got)
		}
		if after := p.termios(); *after != *before {
			t.Errorf("termios not restored:\nbefore %+v\nafter  %+v", before, after)
		}
	})
}

func TestWindowSizeForwarded(t *testing.T) {
	p := newPerson(t)
	r := supervise(t, p, &Supervisor{}, "sh", "-c", `trap 'stty size' WINCH; echo ready; while :; do sleep 0.05; done`)
	p.waitFor(0, "ready")
	setSize(p.pm, sizeOf(33, 77))
	syscall.Kill(os.Getpid(), syscall.SIGWINCH) // the person's terminal tells its foreground group
	p.waitFor(0, "33 77")
	syscall.Kill(r.pid, syscall.SIGKILL)
	r.wait(t)
}

func TestSignalsRelayed(t *testing.T) {
	p := newPerson(t)
	r := supervise(t, p, &Supervisor{}, "sh", "-c", `trap 'echo got HUP; exit 7' HUP; echo ready; while :; do sleep 0.05; done`)
	p.waitFor(0, "ready")
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	if got := r.wait(t); got != 7 {
		t.Errorf("status %d, want 7", got)
	}
	p.waitFor(0, "got HUP")
}

// touch creates an empty file: an event a waiting agent sees.
func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFile waits until path exists: an event the agent signals.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkInterleave checks that screen is the agent's output with only the
// prompt drawn into it, between two parts of it (at a line end or
// mid-line): screen = agent[:k] + drawn + agent[k:], and drawn holds the
// prompt. Not a byte of the agent's output is lost, repeated or
// reordered, and none of it appears inside the prompt.
func checkInterleave(t *testing.T, screen, agent, prompt string) {
	t.Helper()
	if len(screen) < len(agent) {
		t.Fatalf("screen (%d bytes) is shorter than the agent's output (%d bytes)", len(screen), len(agent))
	}
	pre := 0
	for pre < len(agent) && screen[pre] == agent[pre] {
		pre++
	}
	suf := 0
	for suf < len(agent)-pre && screen[len(screen)-1-suf] == agent[len(agent)-1-suf] {
		suf++
	}
	if pre+suf != len(agent) {
		t.Fatalf("agent output lost or reordered: the screen agrees with it for %d bytes from the start and %d from the end of %d; the screen has %q where the agent wrote %q",
			pre, suf, len(agent), excerpt(screen, pre), excerpt(agent, pre))
	}
	if drawn := screen[pre : len(screen)-suf]; !strings.Contains(drawn, prompt) {
		t.Fatalf("the prompt %q is not where the agent's output was held; drawn there: %q", prompt, excerpt(drawn, 0))
	}
}

func excerpt(s string, at int) string { return s[at:min(len(s), at+80)] }

func clientAsk(t *testing.T, socket string, r *approval.Request) chan approval.Answer {
	t.Helper()
	out := make(chan approval.Answer, 1)
	c, err := Dial(socket)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer c.Close()
		a, err := c.Prompt(context.Background(), r)
		if err != nil {
			a.Note = "error: " + err.Error()
		}
		out <- a
	}()
	return out
}

func answer(t *testing.T, ch chan approval.Answer) approval.Answer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
		return approval.Answer{}
	}
}

// While a prompt is shown the agent's output waits, and afterwards all of
// it comes, in order. The agent stops mid-line until the prompt is
// shown, then writes far more than the hold limit: the agent must be made
// to wait rather than have its output dropped.
func TestPromptHoldsOutput(t *testing.T) {
	const last = 20000
	dir := t.TempDir()
	// Lines 0..99, half of a line, (once go exists) the rest of it, then
	// lines 100..last; the file held is written after line 508.
	p := newPerson(t)
	r := supervise(t, p, &Supervisor{HoldLimit: 4096}, "sh", "-c", `
i=0; while [ $i -lt 100 ]; do echo "line $i"; i=$((i+1)); done
printf 'half of a'
while [ ! -e "$1/go" ]; do sleep 0.01; done
echo ' line'
while [ $i -le `+strconv.Itoa(last)+` ]; do
	echo "line $i"
	[ $i = 508 ] && : > "$1/held"
	i=$((i+1))
done
echo COUNTER-DONE`, "sh", dir)
	var agent strings.Builder
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&agent, "line %d\r\n", i)
	}
	agent.WriteString("half of a line\r\n")
	for i := 100; i <= last; i++ {
		fmt.Fprintf(&agent, "line %d\r\n", i)
	}
	agent.WriteString("COUNTER-DONE\r\n")
	// The rest of the half line and lines 100..508 are beyond the hold
	// limit, and the supervisor takes output until it holds the limit:
	// once held exists, the held output reaches the limit.
	if n := len(" line\r\n") + 409*len("line 100\r\n"); n <= 4096 {
		t.Fatalf("the marker is written after %d bytes, not beyond the hold limit", n)
	}

	p.waitFor(0, "half of a")
	ans := clientAsk(t, r.socket, request("touch held", testKey))
	at := p.waitFor(0, `\[y\] approve once.*> `)
	touch(t, filepath.Join(dir, "go"))
	waitFile(t, filepath.Join(dir, "held"))
	if after := p.screen()[at:]; after != "" {
		t.Fatalf("agent output shown during the prompt: %q", excerpt(after, 0))
	}
	p.typ("y")
	if a := answer(t, ans); !a.Approve || a.Session {
		t.Fatalf("answer %+v", a)
	}
	p.waitFor(at, "COUNTER-DONE\r\n")
	r.wait(t)
	screen := p.screen()
	// What the terminal gets after the agent's last line is not its output.
	screen = screen[:strings.LastIndex(screen, "COUNTER-DONE\r\n")+len("COUNTER-DONE\r\n")]
	checkInterleave(t, screen, agent.String(), "approval needed")
}

// Keys typed at a prompt go to the prompt; the note comes back to the
// asker; what is typed after goes to the agent again.
func TestPromptOwnsKeyboard(t *testing.T) {
	p := newPerson(t)
	r := supervise(t, p, &Supervisor{}, "sh", "-c", `stty -echo; echo ready; while read -r l; do echo "agent read [$l]"; done`)
	p.waitFor(0, "ready")
	p.typ("before\r")
	p.waitFor(0, `agent read \[before\]`)
	ans := clientAsk(t, r.socket, request("touch x", testKey))
	at := p.waitFor(0, `\[n\] deny.*> `)
	p.typ("n")
	p.waitFor(at, "note for the agent")
	p.typ("zebra stripes\r")
	if a := answer(t, ans); a.Approve || a.Note != "zebra stripes" {
		t.Fatalf("answer %+v", a)
	}
	p.typ("after\r")
	p.waitFor(at, `agent read \[after\]`)
	if strings.Contains(p.screen(), "agent read [zebra") || strings.Contains(p.screen(), "agent read [n") {
		t.Errorf("the agent got the prompt's keys:\n%s", p.screen())
	}
	p.pm.Write([]byte{4})
	r.wait(t)
}

// A second request waits for the first; both are shown and answered.
func TestPromptsQueue(t *testing.T) {
	p := newPerson(t)
	r := supervise(t, p, &Supervisor{}, "sh", "-c", "sleep 30")
	a1 := clientAsk(t, r.socket, request("touch first", testKey))
	at := p.waitFor(0, `touch first[\s\S]*> `)
	a2 := clientAsk(t, r.socket, request("touch second", strings.Repeat("d", 64)))
	p.typ("s")
	if a := answer(t, a1); !a.Approve || !a.Session {
		t.Fatalf("first: %+v", a)
	}
	answered := p.waitFor(at, `s\r\n`)
	p.waitFor(at, `touch second[\s\S]*> `)
	// Whenever the second request arrived, it was drawn only after the
	// first was answered.
	if strings.Contains(p.screen()[:answered], "touch second") {
		t.Fatalf("second prompt drawn over the first:\n%s", p.screen())
	}
	p.typ("y")
	if a := answer(t, a2); !a.Approve || a.Session {
		t.Fatalf("second: %+v", a)
	}
	// The first was granted for the session.
	if a := answer(t, clientAsk(t, r.socket, request("touch first", testKey))); !a.Approve || a.By != "session" {
		t.Fatalf("repeat: %+v", a)
	}
	syscall.Kill(r.pid, syscall.SIGKILL)
	r.wait(t)
}

// A prompt whose asker goes away is withdrawn and the held output is
// released.
func TestPromptWithdrawn(t *testing.T) {
	p := newPerson(t)
	dir := t.TempDir()
	r := supervise(t, p, &Supervisor{}, "sh", "-c", `while [ ! -e "$1/go" ]; do sleep 0.01; done; echo LATE OUTPUT; : > "$1/said"; sleep 30`, "sh", dir)
	c, err := Dial(r.socket)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go c.Prompt(ctx, request("touch gone", ""))
	at := p.waitFor(0, `touch gone[\s\S]*> `)
	touch(t, filepath.Join(dir, "go"))
	waitFile(t, filepath.Join(dir, "said")) // the agent wrote it: now held
	if strings.Contains(p.screen()[at:], "LATE OUTPUT") {
		t.Fatal("agent output shown during the prompt")
	}
	cancel()
	p.waitFor(at, `withdrawn[\s\S]*LATE OUTPUT`)
	syscall.Kill(r.pid, syscall.SIGKILL)
	r.wait(t)
}

// Keys already on their way when a prompt appears are the agent's.
func TestSettle(t *testing.T) {
	p := newPerson(t)
	// The settle time starts when the prompt is drawn: after the request
	// is sent, before the test sees the prompt. So keys typed less than
	// settle after sending are the agent's, and keys typed settle after
	// the prompt was seen are the prompt's. settle is long so that a
	// loaded machine still types the first in time.
	const settle = 2 * time.Second
	r := supervise(t, p, &Supervisor{Settle: settle}, "sh", "-c", `stty -echo; echo ready; while read -r l; do echo "agent read [$l]"; done`)
	p.waitFor(0, "ready")
	sent := time.Now()
	ans := clientAsk(t, r.socket, request("touch x", ""))
	at := p.waitFor(0, `\[n\] deny.*> `)
	seen := time.Now()
	p.typ("y\r") // too soon: for the agent, whose output waits
	if late := time.Since(sent); late >= settle {
		t.Fatalf("the prompt took %v to show and answer, longer than the settle time %v", late, settle)
	}
	time.Sleep(time.Until(seen.Add(settle + 50*time.Millisecond))) // the settle time is over
	p.typ("n\r")
	if a := answer(t, ans); a.Approve {
		t.Fatalf("answer %+v", a)
	}
	p.waitFor(at, `agent read \[y\]`)
	p.pm.Write([]byte{4})
	r.wait(t)
}

func TestViewPages(t *testing.T) {
	p := newPerson(t)
	r := supervise(t, p, &Supervisor{}, "sleep", "30")
	req := request("long", "")
	var b strings.Builder
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "echo %d\n", i)
	}
	req.Display = b.String()
	ans := clientAsk(t, r.socket, req)
	at := p.waitFor(0, `more lines[\s\S]*> `)
	p.typ("v")
	at = p.waitFor(at, `space for more`)
	p.typ("q")
	at = p.waitFor(at, `\[v\] view.*> `)
	p.typ("v")
	at = p.waitFor(at, `space for more`)
	p.typ(" ")
	at = p.waitFor(at, `space for more`)
	p.typ(" ")
	// The last page waits for a key too.
	at = p.waitFor(at, `echo 99[\s\S]*-- end`)
	time.Sleep(200 * time.Millisecond)
	if strings.Contains(p.screen()[at:], "[v] view") {
		t.Fatal("the last page was drawn over at once")
	}
	p.typ(" ")
	p.waitFor(at, `\[v\] view.*> `)
	p.typ("y")
	if a := answer(t, ans); !a.Approve {
		t.Fatalf("answer %+v", a)
	}
	syscall.Kill(r.pid, syscall.SIGKILL)
	r.wait(t)
}

// What a terminal sends for the mouse, a paste or a function key never
// answers a prompt.
func TestPromptIgnoresEscapeSequences(t *testing.T) {
	p := newPerson(t)
	r := supervise(t, p, &Supervisor{}, "sleep", "30")
	ans := clientAsk(t, r.socket, request("touch x", testKey))
	p.waitFor(0, `\[n\] deny.*> `)
	p.typ("\x1b[My!!")                   // X10 mouse click in column 89: a 'y'
	p.typ("\x1b[<0;115;5M")              // SGR mouse
	p.typ("\x1b[200~y\rs\x1b[201~")      // bracketed paste
	p.typ("\x1bOy\x1b[1;5y\x1b]0;s\x07") // SS3, CSI, OSC
	p.typ("\x1by")                       // Alt+y
	p.typ("n\r")
	if a := answer(t, ans); a.Approve || a.Note != "" {
		t.Fatalf("answer %+v", a)
	}
	syscall.Kill(r.pid, syscall.SIGKILL)
	r.wait(t)
}

// TestRunWithoutTerminalAsksNobody: with no terminal on its input (a
// pipe, a file), the supervisor shows no prompt and reads no answer from
// that input: every request is answered that nobody can be asked.
func TestRunWithoutTerminalAsksNobody(t *testing.T) {
	in, keys, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	keys.WriteString("y\ry\r") // what a pipe would otherwise answer
	screen, err := os.CreateTemp(t.TempDir(), "screen")
	if err != nil {
		t.Fatal(err)
	}
	sv := &Supervisor{In: in, Out: screen, SocketBase: t.TempDir(), Settle: -1}
	started := make(chan [2]any, 1)
	sv.Started = func(pid int, socket string) { started <- [2]any{pid, socket} }
	done := make(chan error, 1)
	go func() {
		_, err := sv.Run(context.Background(), exec.Command("sleep", "30"))
		done <- err
	}()
	var pid int
	var socket string
	select {
	case s := <-started:
		pid, socket = s[0].(int), s[1].(string)
	case err := <-done:
		t.Fatalf("supervisor ended before the agent started: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("agent did not start")
	}
	c, err := Dial(socket)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Prompt(context.Background(), request("touch x", testKey))
	c.Close()
	var np *approval.NoPersonError
	if !errors.As(err, &np) || !errors.Is(err, approval.ErrNoPerson) || !strings.Contains(np.Why, "no terminal to ask on") {
		t.Errorf("Prompt: %v; want nobody can be asked, as the supervisor has no terminal", err)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(screen.Name()); strings.Contains(string(b), "touch x") {
		t.Errorf("a prompt was drawn:\n%q", b)
	}
}
