package supervisor

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/guardrun/guardrun/approval"
)

// DefaultHoldLimit is how much agent output is kept while a prompt is
// shown before the agent is made to wait (its writes to the pty block).
const DefaultHoldLimit = 4 << 20

// DefaultSettle is how long after a prompt appears keystrokes still go to
// the agent: keys already on their way were typed for the agent, and must
// not answer a prompt the person has not seen yet.
const DefaultSettle = 250 * time.Millisecond

// screen is the person's screen, shared by the agent's output and the
// prompts. While held, agent output is buffered in order, up to limit;
// beyond that the writer waits, so nothing is dropped or reordered.
type screen struct {
	mu    sync.Mutex
	cond  *sync.Cond
	out   io.Writer
	held  bool
	buf   []byte
	limit int
	// failed is set once out failed (the terminal is gone); later output
	// is discarded so the agent never blocks on a dead screen.
	failed bool
}

func newScreen(out io.Writer, limit int) *screen {
	if limit <= 0 {
		limit = DefaultHoldLimit
	}
	s := &screen{out: out, limit: limit}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// agentOutput shows p, or keeps it while a prompt is shown. It blocks
// while the kept output is at the limit.
func (s *screen) agentOutput(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.held && len(s.buf) >= s.limit {
		s.cond.Wait()
	}
	if s.held {
		s.buf = append(s.buf, p...)
		return
	}
	s.write(p)
}

// write sends p to the terminal; s.mu is held.
func (s *screen) write(p []byte) {
	if s.failed {
		return
	}
	if _, err := s.out.Write(p); err != nil {
		s.failed = true
	}
}

func (s *screen) hold() {
	s.mu.Lock()
	s.held = true
	s.mu.Unlock()
}

// release shows what was kept, then lets output through again.
func (s *screen) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held {
		return
	}
	s.write(s.buf)
	if cap(s.buf) > 64<<10 {
		s.buf = nil
	} else {
		s.buf = s.buf[:0]
	}
	s.held = false
	s.cond.Broadcast()
}

// promptWriter writes a prompt: straight to the terminal, which agent
// output does not reach while held.
type promptWriter struct{ s *screen }

func (w promptWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.write(p)
	return len(p), nil
}

// keyboard routes the person's keystrokes: to the agent, or to the
// prompt being shown. Keys meant for the agent are queued for the agent
// writer, so reading the keyboard never waits on the agent and a prompt
// can always be answered.
type keyboard struct {
	mu   sync.Mutex
	cond *sync.Cond

	agent []byte // for the agent, in order
	limit int    // reading pauses while agent holds this much, unless prompting

	prompting   bool
	promptSince time.Time
	settle      time.Duration
	prompt      []byte // for the prompt being shown
	filter      keyFilter

	eof  bool // the keyboard ended
	done bool // the supervisor is ending
}

func newKeyboard(settle time.Duration) *keyboard {
	k := &keyboard{limit: 1 << 20, settle: settle}
	k.cond = sync.NewCond(&k.mu)
	return k
}

// typed takes a chunk read from the keyboard. It waits while the agent
// has a backlog and no prompt needs the keyboard.
func (k *keyboard) typed(p []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.prompting && time.Since(k.promptSince) >= k.settle {
		k.prompt = k.filter.filter(p, k.prompt)
	} else {
		k.agent = append(k.agent, p...)
	}
	k.cond.Broadcast()
	for len(k.agent) >= k.limit && !k.prompting && !k.done {
		k.cond.Wait()
	}
}

func (k *keyboard) ended() {
	k.mu.Lock()
	k.eof = true
	k.cond.Broadcast()
	k.mu.Unlock()
}

func (k *keyboard) stop() {
	k.mu.Lock()
	k.done = true
	k.cond.Broadcast()
	k.mu.Unlock()
}

// forAgent waits for keys for the agent. eof reports that the keyboard
// ended and everything was handed over; ok is false when the supervisor
// is ending.
func (k *keyboard) forAgent() (p []byte, eof, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for len(k.agent) == 0 && !k.eof && !k.done {
		k.cond.Wait()
	}
	if k.done {
		return nil, false, false
	}
	if len(k.agent) == 0 {
		return nil, true, true
	}
	p, k.agent = k.agent, nil
	k.cond.Broadcast()
	return p, false, true
}

// beginPrompt routes keys to a prompt from now on (after the settle
// time). Keys typed ahead are never an answer.
func (k *keyboard) beginPrompt(ctx context.Context) *promptKeys {
	k.mu.Lock()
	k.prompting = true
	k.promptSince = time.Now()
	k.prompt = nil
	k.filter = keyFilter{}
	k.cond.Broadcast()
	k.mu.Unlock()
	pk := &promptKeys{k: k, ctx: ctx}
	pk.stop = context.AfterFunc(ctx, func() {
		k.mu.Lock()
		k.cond.Broadcast()
		k.mu.Unlock()
	})
	return pk
}

// endPrompt gives the keyboard back to the agent. Keys typed during the
// prompt that it did not use (a stray Enter after y) are dropped: they
// were typed at the prompt, not at the agent.
func (k *keyboard) endPrompt(pk *promptKeys) {
	pk.stop()
	k.mu.Lock()
	k.prompting = false
	k.prompt = nil
	k.cond.Broadcast()
	k.mu.Unlock()
}

// promptKeys reads the keys typed at a prompt, one byte per Read, so the
// bufio.Reader inside approval.Converse never takes more than it uses.
type promptKeys struct {
	k    *keyboard
	ctx  context.Context
	stop func() bool
}

func (pk *promptKeys) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	k := pk.k
	k.mu.Lock()
	defer k.mu.Unlock()
	for len(k.prompt) == 0 && !k.eof && !k.done && pk.ctx.Err() == nil {
		k.cond.Wait()
	}
	switch {
	case pk.ctx.Err() != nil:
		return 0, pk.ctx.Err()
	case len(k.prompt) > 0:
		p[0] = k.prompt[0]
		k.prompt = k.prompt[1:]
		return 1, nil
	case k.done:
		return 0, context.Canceled
	}
	return 0, io.EOF
}

// Terminal is the approval.Prompter of a supervisor: it draws prompts on
// the person's terminal, holds the agent's output back meanwhile, and
// takes the answer from the keyboard.
type Terminal struct {
	screen *screen
	keys   *keyboard
	style  approval.Style
	// rows is the terminal's height, for the pager.
	rows func() int
	// redraw asks the agent to repaint after a prompt drew over it.
	redraw func()
}

// Prompt shows one request and returns the person's answer. A cancelled
// ctx (the asking process went away) withdraws the prompt.
func (t *Terminal) Prompt(ctx context.Context, r *approval.Request) (approval.Answer, error) {
	t.screen.hold()
	keys := t.keys.beginPrompt(ctx)
	// Deferred, so that even a panic gives back the keyboard and the
	// held output; last in, first out: redraw after release.
	if t.redraw != nil {
		defer t.redraw()
	}
	defer t.screen.release()
	defer t.keys.endPrompt(keys)
	out := promptWriter{t.screen}
	view := func(text string) error { return t.page(ctx, keys, out, text) }

	if t.style.Color {
		// Agent output may have left colours on or the cursor hidden.
		io.WriteString(out, "\x1b[0m\x1b[?25h")
	}
	if n := Waiting(ctx); n > 0 {
		fmt.Fprintf(out, "\r\n(%d more waiting)", n)
	}
	a, err := approval.Converse(ctx, keys, out, r, t.style, view, nil)
	if err != nil && ctx.Err() != nil {
		io.WriteString(out, "\r\n"+paint(t.style, "2", "(request withdrawn: the command that asked is gone)")+"\r\n")
	}
	return a, err
}

// page shows text a screen at a time: the supervisor owns the keyboard,
// so an external pager would fight it for keys.
func (t *Terminal) page(ctx context.Context, keys io.Reader, out io.Writer, text string) error {
	rows := 24
	if t.rows != nil {
		if r := t.rows(); r > 3 {
			rows = r
		}
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	per := rows - 1
	var b [1]byte
	for i := 0; i < len(lines); i += per {
		end := min(i+per, len(lines))
		for _, l := range lines[i:end] {
			io.WriteString(out, l+"\r\n")
		}
		if end == len(lines) {
			break
		}
		io.WriteString(out, paint(t.style, "7", fmt.Sprintf("-- %d/%d lines: space for more, q to go back --", end, len(lines))))
		if _, err := keys.Read(b[:]); err != nil {
			return err
		}
		if t.style.Color {
			io.WriteString(out, "\r\x1b[K") // erase the "more" line
		} else {
			io.WriteString(out, "\r\n")
		}
		if b[0] == 'q' || b[0] == 'Q' || b[0] == 0x1b || b[0] == 0x03 {
			break
		}
	}
	return ctx.Err()
}

func paint(st approval.Style, code, text string) string {
	if !st.Color {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}
