package supervisor

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/approval"
)

// A key answers only once the prompt is drawn and the keyboard has been
// quiet for the settle time: someone typing "yes" at the agent when the
// prompt appears answers nothing, and their keys reach the agent.
func TestKeyboardQuietBeforeKeysCount(t *testing.T) {
	const settle = 100 * time.Millisecond
	k := newKeyboard(settle)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pk := k.beginPrompt(ctx, false)
	k.typed([]byte("y")) // before the prompt is drawn
	k.drawnNow()
	k.typed([]byte("e")) // drawn, but the keyboard was not quiet
	time.Sleep(settle / 2)
	k.typed([]byte("s")) // still typing
	time.Sleep(settle + settle/2)
	k.typed([]byte("n")) // quiet for longer than settle: for the prompt
	k.mu.Lock()
	agent, prompt := string(k.agent), string(k.prompt)
	k.mu.Unlock()
	if agent != "yes" || prompt != "n" {
		t.Errorf("agent got %q, prompt got %q; want \"yes\" and \"n\"", agent, prompt)
	}
	// Once it takes keys, the prompt keeps taking them (paging through
	// the viewer quickly).
	k.typed([]byte(" "))
	k.typed([]byte("q"))
	k.mu.Lock()
	prompt = string(k.prompt)
	k.mu.Unlock()
	if prompt != "n q" {
		t.Errorf("prompt got %q after arming, want \"n q\"", prompt)
	}
	k.endPrompt(pk)
}

// N denies the request shown and every one waiting, with the note, after
// one prompt.
func TestDenyAllWaiting(t *testing.T) {
	f := newFake()
	s := startServer(t, f)
	const n = 6
	var wg sync.WaitGroup
	results := make([]approval.Answer, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = askVia(t, s, request(fmt.Sprintf("touch flood-%d", i), ""))
		}()
		if i == 0 {
			waitShown(t, f)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.waitingNow() != n-1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiting, want %d", s.waitingNow(), n-1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.answers <- approval.Answer{DenyAll: true, Note: "stop the flood"}
	wg.Wait()
	for i := range results {
		if errs[i] != nil || results[i].Approve || results[i].Note != "stop the flood" {
			t.Errorf("request %d: %+v %v", i, results[i], errs[i])
		}
	}
	if f.count() != 1 {
		t.Errorf("%d prompts for a deny-all, want 1", f.count())
	}
}

// vtState follows what the agent's output leaves the terminal in, and the
// stage undoes it for the prompt and puts it back afterwards.
func TestStageUndoesAndRestores(t *testing.T) {
	var v vtState
	v.feed([]byte("\x1b[?1003h\x1b[?10"))
	v.feed([]byte("05h\x1b[?7l\x1b[4h\x1b[3;20r\x1b[?25l\x1b]0;guardrun: all pre-approved\x07\x1b]11;rgb:00/00/00\x1b\\\x1b]4;2;rgb:00/00/00\x07"))
	if !v.utf8Mouse() || !v.noWrap || !v.insert || v.region != "3;20" || !v.hidden || v.title != "guardrun: all pre-approved" {
		t.Fatalf("state not followed: %+v", v)
	}
	open, close := v.stageOpen(), v.stageClose()
	if !strings.HasPrefix(open, "\x1b\\\x1b\\") {
		t.Errorf("the stage does not start by ending a string left open: %q", open[:min(len(open), 20)])
	}
	for _, want := range []string{"\x1b[3g\x1b[9G\x1bH\x1b[17G\x1bH", "\x1b[?1049h", "\x1b[r", "\x1b[?7h", "\x1b[4l", "\x1b(B\x1b)B", "\x0f", "\x1b[0m", "\x1b]111\x07", "\x1b]104\x07", "\x1b[?25h", "\x1b[?1003l", "\x1b]0;guardrun: approval needed\x07"} {
		if !strings.Contains(open, want) {
			t.Errorf("the stage does not reset with %q", want)
		}
	}
	for _, want := range []string{"\x1b[?1049l", "\x1b[3;20r", "\x1b[?7l", "\x1b[4h", "\x1b[?25l", "\x1b[?1003h", "\x1b[?1005h", "\x1b]11;rgb:00/00/00\x07", "\x1b]4;2;rgb:00/00/00\x07", "\x1b]0;guardrun: all pre-approved\x07"} {
		if !strings.Contains(close, want) {
			t.Errorf("the agent's %q is not put back", want)
		}
	}
	// An agent on the alternate screen: the prompt clears it rather
	// than leaving it.
	v.feed([]byte("\x1b[?1049h"))
	if strings.Contains(v.stageOpen(), "\x1b[?1049h") || strings.Contains(v.stageClose(), "\x1b[?1049l") {
		t.Error("the stage switches screens under an agent on the alternate screen")
	}
	// A mode change carried inside a DCS string is its payload.
	var d vtState
	d.feed([]byte("\x1bPq\x1b[?1049h\x1b\\\x1b_x\x1b\\\x1b[?7l"))
	if d.alt || !d.noWrap {
		t.Errorf("a DCS payload counted as a mode change, or what follows the strings did not: %+v", d)
	}
	// A control inside a CSI acts and the sequence goes on.
	var c vtState
	c.feed([]byte("\x1b[?10\x0849h"))
	if !c.alt {
		t.Error("a control inside a CSI hid the mode change that followed")
	}
	v.feed([]byte("\x1bc"))
	if v.alt || v.noWrap || v.title != "" {
		t.Errorf("a full reset is not followed: %+v", v)
	}
}

// The viewer cuts long lines into rows, so every part of them is on a
// page.
func TestWrapRows(t *testing.T) {
	rows := wrapRows("short\n"+strings.Repeat("x", 250)+"DANGER\n\nend", 100)
	want := []string{"short", strings.Repeat("x", 100), strings.Repeat("x", 100), strings.Repeat("x", 50) + "DANGER", "", "end"}
	if strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("rows %q", rows)
	}
}

// The prompt names the process that asked, as the kernel reported it on
// the socket: here, this test binary.
func TestPromptNamesTheAsker(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the asker is read through SO_PEERCRED and /proc, on Linux")
	}
	p := newPerson(t)
	r := supervise(t, p, &Supervisor{}, "sleep", "30")
	ans := clientAsk(t, r.socket, request("touch x", testKey))
	p.waitFor(0, fmt.Sprintf(`asked by pid %d: \S*supervisor\.test`, os.Getpid()))
	p.waitFor(0, `\[n\] deny.*> `)
	p.typ("n\r")
	if a := answer(t, ans); a.Approve {
		t.Fatalf("answer %+v", a)
	}
	syscall.Kill(r.pid, syscall.SIGKILL)
	r.wait(t)
}
