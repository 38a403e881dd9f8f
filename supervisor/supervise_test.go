package supervisor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
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
		t.Skipf("no pty: %v", err)
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
		r := supervise(t, p, &Supervisor{}, "sh", "-c", "sleep 0.2")
		if during := p.termios(); during.Lflag&unix.ICANON != 0 {
			t.Error("terminal not raw while supervising")
		}
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
	r := supervise(t, p, &Supervisor{}, "sh", "-c", `trap 'stty size' WINCH; echo ready; i=0; while [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done`)
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

// counter prints numbered lines steadily until told to stop.
const counter = `i=0; while [ $i -lt 100000 ]; do echo "line $i"; i=$((i+1)); done; echo COUNTER-DONE`

// checkSequence checks that the numbered lines on screen run from 0 to
// last without a gap, a repeat or a reordering.
func checkSequence(t *testing.T, screen string, last int) {
	t.Helper()
	want := 0
	// A prompt may come between any two bytes of the agent's output:
	// from opening its stage to giving the terminal back its title.
	screen = regexp.MustCompile(`\x1b\[\?2026l[\s\S]*?\x1b\[23;0t`).ReplaceAllString(screen, "")
	for _, m := range regexp.MustCompile(`line (\d+)\r\n`).FindAllStringSubmatch(screen, -1) {
		n, _ := strconv.Atoi(m[1])
		if n != want {
			t.Fatalf("line %d after line %d", n, want-1)
		}
		want++
	}
	if want != last+1 {
		t.Fatalf("saw lines 0..%d, want 0..%d", want-1, last)
	}
}

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
// it comes, in order. The hold limit is small, so the agent must be made
// to wait rather than have its output dropped.
func TestPromptHoldsOutput(t *testing.T) {
	p := newPerson(t)
	r := supervise(t, p, &Supervisor{HoldLimit: 4096}, "sh", "-c", counter)
	p.waitFor(0, "line 100\r\n")
	ans := clientAsk(t, r.socket, request("touch held", testKey))
	at := p.waitFor(0, `\[y\] approve once.*> `)
	time.Sleep(300 * time.Millisecond)
	if after := p.screen()[at:]; strings.Contains(after, "line ") {
		t.Fatalf("agent output shown during the prompt: %q", after[:min(len(after), 200)])
	}
	p.typ("y")
	if a := answer(t, ans); !a.Approve || a.Session {
		t.Fatalf("answer %+v", a)
	}
	p.waitFor(at, "COUNTER-DONE")
	r.wait(t)
	screen := p.screen()
	checkSequence(t, screen, 99999)
	prompt := strings.Index(screen, "approval needed")
	if strings.Contains(screen[prompt:], "line 100000") {
		t.Fatal("impossible line")
	}
}

// Keys typed at a prompt go to the prompt; the note comes back to the
// asker; what is typed after goes to the agent again.
func TestPromptOwnsKeyboard(t *testing.T) {
	p := newPerson(t)
	r := supervise(t, p, &Supervisor{}, "sh", "-c", `stty -echo; while read -r l; do echo "agent read [$l]"; done`)
	time.Sleep(100 * time.Millisecond)
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
	time.Sleep(100 * time.Millisecond)
	if strings.Contains(p.screen()[at:], "touch second") {
		t.Fatal("second prompt drawn over the first")
	}
	p.typ("s")
	if a := answer(t, a1); !a.Approve || !a.Session {
		t.Fatalf("first: %+v", a)
	}
	at = p.waitFor(at, `touch second[\s\S]*> `)
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
	r := supervise(t, p, &Supervisor{}, "sh", "-c", `sleep 0.5; echo LATE OUTPUT; sleep 30`)
	c, err := Dial(r.socket)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go c.Prompt(ctx, request("touch gone", ""))
	at := p.waitFor(0, `touch gone[\s\S]*> `)
	time.Sleep(700 * time.Millisecond)
	cancel()
	p.waitFor(at, `withdrawn[\s\S]*LATE OUTPUT`)
	syscall.Kill(r.pid, syscall.SIGKILL)
	r.wait(t)
}

// Keys already on their way when a prompt appears are the agent's.
func TestSettle(t *testing.T) {
	p := newPerson(t)
	r := supervise(t, p, &Supervisor{Settle: 400 * time.Millisecond}, "sh", "-c", `stty -echo; while read -r l; do echo "agent read [$l]"; done`)
	ans := clientAsk(t, r.socket, request("touch x", ""))
	at := p.waitFor(0, `\[n\] deny.*> `)
	p.typ("y\r") // too soon: for the agent, whose output waits
	time.Sleep(500 * time.Millisecond)
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
	at = p.waitFor(at, `\[v\] view.*> `)
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
	time.Sleep(100 * time.Millisecond)
	p.typ("n\r")
	if a := answer(t, ans); a.Approve || a.Note != "" {
		t.Fatalf("answer %+v", a)
	}
	syscall.Kill(r.pid, syscall.SIGKILL)
	r.wait(t)
}
