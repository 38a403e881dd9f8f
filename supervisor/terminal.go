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

// DefaultSettle is how long the keyboard must have been quiet, after a
// prompt is fully drawn, before a key answers it. Keys typed sooner were
// typed for the agent (someone typing "yes" at the agent's own question
// when the prompt appears) and go to the agent.
const DefaultSettle = 300 * time.Millisecond

// replacePause is how long a prompt that follows another one shows that
// a new request is coming, so the change cannot pass unnoticed.
const replacePause = 400 * time.Millisecond

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
	// vt is the terminal state the agent's output left.
	vt vtState
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
	s.vt.feed(p)
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

// hold keeps agent output back from now on and returns the terminal
// state it left.
func (s *screen) hold() vtState {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = true
	v := s.vt
	v.modes = make(map[int]bool, len(s.vt.modes))
	for k, on := range s.vt.modes {
		v.modes[k] = on
	}
	return v
}

// release shows what was kept, then lets output through again.
func (s *screen) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held {
		return
	}
	s.vt.feed(s.buf)
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

	prompting bool
	// drawn is when the prompt was last fully drawn (zero: not yet);
	// lastKey is when the last input arrived. A key answers only when
	// both are at least settle ago.
	drawn   time.Time
	lastKey time.Time
	armed   bool // the prompt takes keys
	settle  time.Duration
	prompt  []byte // for the prompt being shown
	filter  keyFilter

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
	now := time.Now()
	if k.prompting && !k.armed && !k.drawn.IsZero() && now.Sub(k.drawn) >= k.settle && now.Sub(k.lastKey) >= k.settle {
		k.armed = true
	}
	armed := k.prompting && k.armed
	k.lastKey = now
	switch {
	case armed:
		k.prompt = k.filter.filter(p, k.prompt)
	case k.prompting:
		// Typed before the prompt was drawn, or while the person was
		// still typing: meant for the agent. The filter still follows
		// escape sequences, so one split across the moment the prompt
		// takes keys does not leak into it.
		k.filter.filter(p, nil)
		k.agent = append(k.agent, p...)
	default:
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

// beginPrompt routes keys to a prompt once it is drawn and the keyboard
// was quiet (see typed). Keys typed ahead are never an answer. utf8Mouse
// tells the filter how the terminal encodes mouse reports.
func (k *keyboard) beginPrompt(ctx context.Context, utf8Mouse bool) *promptKeys {
	k.mu.Lock()
	k.prompting = true
	k.drawn, k.armed = time.Time{}, false
	k.prompt = nil
	k.filter = keyFilter{utf8Mouse: utf8Mouse}
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

// drawnNow records that the prompt is first fully on screen: the settle
// time counts from here. Once a key was taken, the prompt's own redraws
// (after the viewer) keep taking keys, so a person can page and answer
// at their own pace.
func (k *keyboard) drawnNow() {
	k.mu.Lock()
	if k.drawn.IsZero() {
		k.drawn = time.Now()
		k.prompt = nil
	}
	k.mu.Unlock()
}

// inject hands the prompt a key of the supervisor's own (^L to redraw),
// whatever the settle time.
func (k *keyboard) inject(c byte) {
	k.mu.Lock()
	if k.prompting {
		k.prompt = append(k.prompt, c)
		k.cond.Broadcast()
	}
	k.mu.Unlock()
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
// bufio.Reader inside approval.Dialog.Run never takes more than it uses.
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
	// size is the terminal's rows and columns.
	size func() (rows, cols int)
	// redraw asks the agent to repaint after a prompt drew over it.
	redraw func()

	mu sync.Mutex
	// staged is the stage of the prompt on screen, nil when none is.
	staged *vtState
}

// suspend takes a prompt off the screen while the supervisor is stopped:
// the person's shell gets their ordinary screen back.
func (t *Terminal) suspend() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.staged == nil {
		return
	}
	seq := "\x1b[H\x1b[2J"
	if !t.staged.alt {
		seq += "\x1b[?1049l"
	}
	io.WriteString(promptWriter{t.screen}, seq)
}

// resume puts a prompt back on a fresh stage after the supervisor was
// continued, and has it drawn again (^L to the dialog).
func (t *Terminal) resume() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.staged == nil {
		return
	}
	io.WriteString(promptWriter{t.screen}, t.staged.stageOpen())
	t.keys.inject(0x0c)
}

func (t *Terminal) dims() (rows, cols int) {
	rows, cols = 24, 80
	if t.size != nil {
		if r, c := t.size(); r > 3 && c > 10 {
			rows, cols = r, c
		}
	}
	return rows, cols
}

// Prompt shows one request and returns the person's answer. A cancelled
// ctx (the asking process went away) withdraws the prompt.
//
// The prompt is drawn on a clean stage (vtState.stageOpen): on the
// alternate screen where the agent's earlier output cannot reach, with
// every mode the agent can leave reset, each line erased before it is
// written, and fitted to the screen so nothing scrolls. A prompt that
// follows another one first shows for a moment that a new request comes,
// and says which of how many it is.
func (t *Terminal) Prompt(ctx context.Context, r *approval.Request) (approval.Answer, error) {
	vt := t.screen.hold()
	keys := t.keys.beginPrompt(ctx, vt.utf8Mouse())
	// Deferred, so that even a panic gives back the keyboard and the
	// held output; last in, first out: redraw after release.
	if t.redraw != nil {
		defer t.redraw()
	}
	defer t.screen.release()
	defer t.keys.endPrompt(keys)
	out := promptWriter{t.screen}
	t.mu.Lock()
	io.WriteString(out, vt.stageOpen())
	t.staged = &vt
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		io.WriteString(out, vt.stageClose())
		t.staged = nil
		t.mu.Unlock()
	}()

	q := queueOf(ctx)
	if q.position > 1 {
		fmt.Fprintf(out, "\x1b[2K%s\r\n", paint(t.style, "1;33", fmt.Sprintf("── guardrun: next request (%d) ──", q.position)))
		select {
		case <-time.After(replacePause):
		case <-ctx.Done():
		}
	}
	rows, cols := t.dims()
	heading := func() string {
		return headingLine(q)
	}
	headings := []string{heading()}
	if a := askerOf(ctx); a != "" {
		if r := []rune(a); len(r) >= cols {
			a = string(r[:cols-2]) + "…"
		}
		headings = append(headings, a)
	}
	st := t.style
	st.Cols = cols
	// The body gets what the heading, the key line (two rows at most)
	// and the answer line leave.
	st.Rows = rows - len(headings) - 3
	var liveHeading string
	var mu sync.Mutex
	d := &approval.Dialog{
		In: keys, Out: out, Style: st, Heading: headings, Waiting: q.waiting,
		View: func(text string) error {
			// The viewer has row 1 to itself; the next draw brings the
			// live heading back.
			mu.Lock()
			liveHeading = ""
			mu.Unlock()
			return t.page(ctx, keys, out, text, rows, cols)
		},
		Draw: func(lines []string) error {
			var b strings.Builder
			b.WriteString("\x1b[H\x1b[2J")
			for i, l := range lines {
				if i == len(lines)-1 {
					break
				}
				b.WriteString("\x1b[2K" + l + "\r\n")
			}
			io.WriteString(out, b.String())
			// The key line last: keys count from when it is on screen.
			t.keys.drawnNow()
			_, err := io.WriteString(out, "\x1b[2K"+lines[len(lines)-1])
			mu.Lock()
			liveHeading = heading()
			mu.Unlock()
			return err
		},
	}
	// The count of waiting requests is live: the heading (row 1) is
	// rewritten when it changes.
	stopLive := make(chan struct{})
	liveDone := make(chan struct{})
	go func() {
		defer close(liveDone)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopLive:
				return
			case <-tick.C:
			}
			h := heading()
			mu.Lock()
			if liveHeading != "" && h != liveHeading {
				liveHeading = h
				io.WriteString(out, "\x1b7\x1b[1;1H\x1b[2K"+h+"\x1b8")
			}
			mu.Unlock()
		}
	}()
	a, err := d.Run(ctx, r)
	close(stopLive)
	<-liveDone
	if err != nil && ctx.Err() != nil {
		why := "(request withdrawn: the command that asked is gone)"
		if context.Cause(ctx) == errAnsweredElsewhere {
			why = "(answered elsewhere: on another of your fronts, such as guardrun web)"
		}
		io.WriteString(out, "\r\n"+paint(t.style, "2", why)+"\r\n")
		time.Sleep(replacePause)
	}
	return a, err
}

// headingLine is "request 2 of 5 (3 more waiting; [N] denies all)".
func headingLine(q queueInfo) string {
	n := q.waiting()
	s := fmt.Sprintf("request %d of %d", max(q.position, 1), max(q.position, 1)+n)
	if n > 0 {
		s += fmt.Sprintf(" (%d more waiting; [N] denies all)", n)
	}
	return s
}

// page shows text a screen at a time, counting the rows wrapped lines
// take (a long line is cut into rows, so every part of it is on some
// page), and waits on the last page too. The supervisor owns the
// keyboard, so an external pager would fight it for keys.
func (t *Terminal) page(ctx context.Context, keys io.Reader, out io.Writer, text string, rows, cols int) error {
	screenRows := wrapRows(strings.TrimRight(text, "\n"), cols)
	per := max(rows-1, 1)
	var b [1]byte
	for i := 0; ; {
		end := min(i+per, len(screenRows))
		var sb strings.Builder
		sb.WriteString("\x1b[H\x1b[2J")
		for _, l := range screenRows[i:end] {
			sb.WriteString("\x1b[2K" + l + "\r\n")
		}
		last := end == len(screenRows)
		status := fmt.Sprintf("-- rows %d-%d of %d: space for more, b back, q to go back --", i+1, end, len(screenRows))
		if last {
			status = fmt.Sprintf("-- end (rows %d-%d of %d): b back, q or space to go back --", i+1, end, len(screenRows))
		}
		sb.WriteString("\x1b[2K" + paint(t.style, "7", status))
		io.WriteString(out, sb.String())
		if _, err := keys.Read(b[:]); err != nil {
			return err
		}
		switch b[0] {
		case 'q', 'Q', 0x1b, 0x03:
			return ctx.Err()
		case 'b', 'B':
			i = max(i-per, 0)
		default:
			if last {
				return ctx.Err()
			}
			i = end
		}
	}
}

// wrapRows cuts text into screen rows of at most cols columns.
func wrapRows(text string, cols int) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l == "" {
			out = append(out, "")
			continue
		}
		var row strings.Builder
		w := 0
		for _, r := range l {
			if r == '\t' {
				r = ' '
			}
			rw := approval.RuneWidth(r)
			if w+rw > cols {
				out = append(out, row.String())
				row.Reset()
				w = 0
			}
			row.WriteRune(r)
			w += rw
		}
		out = append(out, row.String())
	}
	return out
}

func paint(st approval.Style, code, text string) string {
	if !st.Color {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}
