package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/sys/ipc"
	"github.com/guardrun/guardrun/rules"
)

// fakePrompter answers from a script of answers, one prompt at a time,
// and records what it was asked.
type fakePrompter struct {
	mu      sync.Mutex
	answers chan approval.Answer
	asked   []string
	active  atomic.Int32
	overlap atomic.Bool
	// shown is told each request as its prompt starts.
	shown chan string
	// nobody, when set, makes every prompt answer that nobody can be
	// asked (a supervisor with no terminal).
	nobody bool
}

func newFake() *fakePrompter {
	return &fakePrompter{answers: make(chan approval.Answer, 16), shown: make(chan string, 16)}
}

func (f *fakePrompter) Prompt(ctx context.Context, r *approval.Request) (approval.Answer, error) {
	if f.active.Add(1) > 1 {
		f.overlap.Store(true)
	}
	defer f.active.Add(-1)
	f.mu.Lock()
	f.asked = append(f.asked, r.Display)
	f.mu.Unlock()
	f.shown <- r.Display
	if f.nobody {
		return approval.Answer{}, &approval.NoPersonError{Why: "no terminal to ask on"}
	}
	select {
	case a := <-f.answers:
		return a, nil
	case <-ctx.Done():
		return approval.Answer{}, ctx.Err()
	}
}

// waitIdle waits until no prompt is on screen: a withdrawn one has
// returned.
func (f *fakePrompter) waitIdle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for f.active.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the prompt was not withdrawn")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *fakePrompter) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.asked)
}

func startServer(t *testing.T, p approval.Prompter) *Server {
	t.Helper()
	s, err := Listen(t.TempDir(), p)
	if err != nil {
		t.Fatal(err)
	}
	s.ReadTimeout = 300 * time.Millisecond
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	return s
}

func request(display, key string) *approval.Request {
	return &approval.Request{
		Display: display, Cwd: "/w", Key: key,
		Decision: &rules.Decision{Decision: rules.Ask, Parts: []rules.Part{{Kind: "command", Text: display, Decision: rules.Ask}}},
	}
}

func askVia(t *testing.T, s *Server, r *approval.Request) (approval.Answer, error) {
	t.Helper()
	c, err := Dial(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Prompt(ctx, r)
}

func waitShown(t *testing.T, f *fakePrompter) string {
	t.Helper()
	select {
	case d := <-f.shown:
		return d
	case <-time.After(5 * time.Second):
		t.Fatal("no prompt shown")
		return ""
	}
}

// waitQueue waits until the requests waiting behind the prompt (the
// server's queue) satisfy ok.
func waitQueue(t *testing.T, s *Server, what string, ok func(q []*pending) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		done := ok(s.queue)
		s.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's queue never showed %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func queued(n int) func([]*pending) bool {
	return func(q []*pending) bool { return len(q) == n }
}

func TestSocketIsPrivate(t *testing.T) {
	s := startServer(t, newFake())
	dir := filepath.Dir(s.Path())
	for path, want := range map[string]os.FileMode{dir: 0o700, s.Path(): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", path, got, want)
		}
	}
	s.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("socket directory left behind: %v", err)
	}
}

func TestAnswersAndNotes(t *testing.T) {
	f := newFake()
	s := startServer(t, f)
	f.answers <- approval.Answer{Approve: true}
	a, err := askVia(t, s, request("touch a", testKey))
	if err != nil || !a.Approve || a.Session || a.By != "" {
		t.Fatalf("approve once: %+v, %v", a, err)
	}
	f.answers <- approval.Answer{Note: "not there"}
	a, err = askVia(t, s, request("touch b", testKey))
	if err != nil || a.Approve || a.Note != "not there" {
		t.Fatalf("deny with note: %+v, %v", a, err)
	}
}

func TestSessionGrant(t *testing.T) {
	f := newFake()
	s := startServer(t, f)
	other := strings.Repeat("b", 64)
	f.answers <- approval.Answer{Approve: true, Session: true}
	if a, err := askVia(t, s, request("touch a", testKey)); err != nil || !a.Approve {
		t.Fatalf("first: %+v, %v", a, err)
	}
	a, err := askVia(t, s, request("touch a", testKey))
	if err != nil || !a.Approve || a.By != "session" {
		t.Fatalf("second, same key: %+v, %v", a, err)
	}
	if n := f.count(); n != 1 {
		t.Errorf("asked %d times, want 1", n)
	}
	// A different key asks; an unkeyed request is never remembered.
	f.answers <- approval.Answer{Approve: true, Session: true}
	askVia(t, s, request("touch c", other))
	f.answers <- approval.Answer{Approve: true, Session: true}
	askVia(t, s, request("touch $x", ""))
	f.answers <- approval.Answer{}
	if a, _ := askVia(t, s, request("touch $x", "")); a.Approve {
		t.Error("an unkeyed request was remembered")
	}
	if n := f.count(); n != 4 {
		t.Errorf("asked %d times, want 4", n)
	}
}

// Concurrent requests are shown one at a time, in order, and a grant
// given to the first covers an identical one waiting behind it.
func TestQueueOneAtATime(t *testing.T) {
	f := newFake()
	s := startServer(t, f)
	var wg sync.WaitGroup
	results := make([]approval.Answer, 3)
	reqs := []*approval.Request{request("one", testKey), request("two", strings.Repeat("c", 64)), request("one again", testKey)}
	for i := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _ = askVia(t, s, reqs[i])
		}()
		if i == 0 {
			waitShown(t, f) // the first is on screen before the others arrive
		}
	}
	waitQueue(t, s, "two requests waiting", queued(2))
	if f.count() != 1 {
		t.Fatalf("%d prompts shown at once", f.count())
	}
	f.answers <- approval.Answer{Approve: true, Session: true}
	waitShown(t, f)
	f.answers <- approval.Answer{Approve: true}
	wg.Wait()
	if f.overlap.Load() {
		t.Error("prompts overlapped")
	}
	for i, a := range results {
		if !a.Approve {
			t.Errorf("request %d not approved: %+v", i, a)
		}
	}
	if results[2].By != "session" {
		t.Errorf("the identical waiting request was asked again: %+v", results[2])
	}
	if f.count() != 2 {
		t.Errorf("asked %d times, want 2", f.count())
	}
}

// rawConn talks to the server message by message, without the
// client's manners.
type rawConn struct{ c *net.UnixConn }

func dialRaw(t *testing.T, s *Server) *rawConn {
	t.Helper()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: s.Path(), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{c}
}

// rawClient is a raw connection that has said hello.
func rawClient(t *testing.T, s *Server) *rawConn {
	t.Helper()
	r := dialRaw(t, s)
	r.send(t, helloMsg)
	return r
}

var helloMsg = fmt.Sprintf(`{"type":"hello","body":{"protocol":"guardrun-supervisor","version":%d}}`, Protocol.Version)

func (r *rawConn) send(t *testing.T, msg string) {
	t.Helper()
	r.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	ipc.WriteFrame(r.c, ipc.AppendFrame(nil, ipc.MessageMagic, []byte(msg)), nil)
}

func (r *rawConn) ask(t *testing.T, id int, req *approval.Request) {
	t.Helper()
	b, err := json.Marshal(encodeAsk(req))
	if err != nil {
		t.Fatal(err)
	}
	r.send(t, fmt.Sprintf(`{"type":"ask","id":%d,"body":%s}`, id, b))
}

// next is the server's next message but its hello.
func (r *rawConn) next(t *testing.T) (*ipc.Message, error) {
	t.Helper()
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		p, err := ipc.ReadFrameFrom(r.c, ipc.MessageMagic, 1<<20)
		if err != nil {
			return nil, err
		}
		m, err := ipc.DecodeMessage(p)
		if err != nil || m.Type != "hello" || m.Error != "" {
			return m, err
		}
	}
}

// refused reports whether m refuses (an error notice, a refused hello,
// an error reply) and approves nothing.
func refused(m *ipc.Message) bool {
	return m != nil && m.Error != "" && len(m.Body) == 0 || m != nil && m.Type == "hello" && m.Error != ""
}

func approved(t *testing.T, m *ipc.Message) bool {
	t.Helper()
	if m == nil || m.Reply == 0 || m.Error != "" {
		return false
	}
	var r reply
	if err := m.Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r.Approve
}

// Misbehaving clients get an error or a closed connection, quickly, and
// the server goes on answering others.
func TestServerSurvivesBadClients(t *testing.T) {
	f := newFake()
	s := startServer(t, f)
	good := func() {
		t.Helper()
		f.answers <- approval.Answer{Approve: true}
		if a, err := askVia(t, s, request("ls", "")); err != nil || !a.Approve {
			t.Fatalf("a good client after a bad one: %+v, %v", a, err)
		}
		if d := waitShown(t, f); d != "ls" {
			t.Fatalf("shown %q, want ls", d)
		}
	}

	t.Run("silent", func(t *testing.T) {
		for _, c := range []*rawConn{dialRaw(t, s), rawClient(t, s)} {
			start := time.Now()
			m, err := c.next(t)
			if err == nil && !refused(m) {
				t.Errorf("a silent client got %+v", m)
			}
			if time.Since(start) > 3*time.Second {
				t.Errorf("silent client held for %v", time.Since(start))
			}
		}
		good()
	})
	t.Run("garbage", func(t *testing.T) {
		for _, junk := range []struct{ hello, msg string }{
			{"", "hello\n"},
			{"", "{\n"},
			{"", "\x00\xff\n"},
			{"", `{"v":1,"type":"ask","request":{}}` + "\n"},
			{helloMsg, `{"type":"ask","id":1,"body":{}}{}`},
			{helloMsg, `{"type":"ask","id":1,"body":{"display":7}}`},
			{helloMsg, `{"type":"ask","id":1,"body":{"display":"ls","approve":true}}`},
			{helloMsg, `{"type":"grant","id":1,"body":{"display":"ls"}}`},
			{helloMsg, `{"type":"ask","id":1}`},
			{strings.Replace(helloMsg, fmt.Sprintf(`"version":%d`, Protocol.Version), `"version":9`, 1), `{"type":"ask","id":1,"body":{"display":"ls"}}`},
		} {
			c := dialRaw(t, s)
			if junk.hello == "" {
				c.c.Write([]byte(junk.msg))
			} else {
				c.send(t, junk.hello)
				c.send(t, junk.msg)
			}
			m, err := c.next(t)
			if err != nil || !refused(m) {
				t.Errorf("%q: reply %+v, %v", junk.msg, m, err)
			}
		}
		good()
	})
	t.Run("truncated", func(t *testing.T) {
		c := rawClient(t, s)
		frame := ipc.AppendFrame(nil, ipc.MessageMagic, []byte(`{"type":"ask","id":1,"body":{"display":"ls"}}`))
		c.c.Write(frame[:len(frame)-5])
		c.c.CloseWrite()
		if m, err := c.next(t); err == nil && approved(t, m) {
			t.Errorf("truncated request approved: %+v", m)
		}
		good()
	})
	t.Run("10MB", func(t *testing.T) {
		c := rawClient(t, s)
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			big := ipc.AppendFrame(nil, ipc.MessageMagic, []byte(`{"type":"ask","id":1,"body":{"display":"`+strings.Repeat("x", 10<<20)+`"}}`))
			c.c.Write(big) // fails once the server gives up reading
		}()
		m, err := c.next(t)
		if err == nil && (approved(t, m) || !refused(m)) {
			t.Errorf("10 MB request: %+v", m)
		}
		<-done
		good()
	})
	t.Run("two requests on one connection", func(t *testing.T) {
		// Each is queued and answered as if it came alone.
		c := rawClient(t, s)
		c.ask(t, 1, request("first of two", ""))
		c.ask(t, 2, request("second of two", ""))
		for i := 0; i < 2; i++ {
			d := waitShown(t, f)
			f.answers <- approval.Answer{Approve: d == "second of two"}
		}
		for i := 0; i < 2; i++ {
			m, err := c.next(t)
			if err != nil || m.Reply == 0 || approved(t, m) != (m.Reply == 2) {
				t.Errorf("reply %+v, %v", m, err)
			}
		}
		good()
	})
	t.Run("disconnect mid-prompt", func(t *testing.T) {
		c := rawClient(t, s)
		c.ask(t, 1, request("touch gone", testKey))
		if d := waitShown(t, f); d != "touch gone" {
			t.Fatalf("shown %q", d)
		}
		c.c.Close()
		// The prompt is withdrawn: the fake returns on ctx, and the next
		// request is shown without anyone answering the first.
		f.waitIdle(t)
		good()
	})
	t.Run("cancel mid-prompt", func(t *testing.T) {
		c := rawClient(t, s)
		c.ask(t, 1, request("touch cancelled", testKey))
		if d := waitShown(t, f); d != "touch cancelled" {
			t.Fatalf("shown %q", d)
		}
		c.send(t, `{"cancel":1}`)
		f.waitIdle(t)
		if m, err := c.next(t); err != nil || !refused(m) || !strings.Contains(m.Error, "withdrawn") {
			t.Errorf("the cancelled request's reply: %+v, %v", m, err)
		}
		good()
	})
	t.Run("disconnect while queued", func(t *testing.T) {
		c1 := rawClient(t, s)
		c1.ask(t, 1, request("first", ""))
		waitShown(t, f)
		c2 := rawClient(t, s)
		c2.ask(t, 1, request("queued then gone", ""))
		waitQueue(t, s, "the second request waiting", queued(1))
		c2.c.Close()
		waitQueue(t, s, "the second request withdrawn", func(q []*pending) bool {
			return len(q) == 1 && q[0].ctx.Err() != nil
		})
		f.answers <- approval.Answer{Approve: true}
		if m, err := c1.next(t); err != nil || !approved(t, m) {
			t.Fatalf("first: %+v %v", m, err)
		}
		good()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, d := range f.asked {
			if d == "queued then gone" {
				t.Error("a request whose client left was shown")
			}
		}
	})
}

func TestTooManyConnections(t *testing.T) {
	f := newFake()
	s, err := Listen(t.TempDir(), f)
	if err != nil {
		t.Fatal(err)
	}
	s.MaxConns = 2
	s.ReadTimeout = 2 * time.Second
	go s.Serve()
	defer s.Close()
	// Two connections hold the two slots: one request on screen, one
	// waiting behind it.
	for i, c := range []*rawConn{rawClient(t, s), rawClient(t, s)} {
		c.ask(t, 1, request(fmt.Sprint("holds a slot ", i), ""))
		if i == 0 {
			waitShown(t, f)
		}
	}
	waitQueue(t, s, "a request waiting", queued(1))
	_, err = askVia(t, s, request("a third", ""))
	if err == nil || !strings.Contains(err.Error(), "busy") {
		t.Errorf("third connection: %v", err)
	}
}

// Close withdraws what waits and the clients refuse to run.
func TestCloseWithdraws(t *testing.T) {
	f := newFake()
	s := startServer(t, f)
	errc := make(chan error, 1)
	go func() {
		_, err := askVia(t, s, request("pending", ""))
		errc <- err
	}()
	waitShown(t, f)
	s.Close()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("a withdrawn request returned no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("client still waiting after Close")
	}
}

// A stale GUARDRUN_SOCKET (the supervisor has gone) fails to dial.
func TestDialStale(t *testing.T) {
	s := startServer(t, newFake())
	path := s.Path()
	s.Close()
	if _, err := Dial(path); err == nil {
		t.Error("dialled a closed supervisor")
	}
	if _, err := Dial(filepath.Join(t.TempDir(), "nothing")); err == nil {
		t.Error("dialled nothing")
	}
}

// A cancelled context withdraws the client's request.
func TestClientCancel(t *testing.T) {
	f := newFake()
	s := startServer(t, f)
	c, err := Dial(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Prompt(ctx, request("cancel me", ""))
		errc <- err
	}()
	waitShown(t, f)
	cancel()
	if err := <-errc; err == nil {
		t.Error("no error after cancel")
	}
	f.waitIdle(t)
	f.answers <- approval.Answer{Approve: true}
	if a, err := askVia(t, s, request("next", "")); err != nil || !a.Approve {
		t.Fatalf("after cancel: %+v %v", a, err)
	}
}

type panicky struct{ n atomic.Int32 }

func (p *panicky) Prompt(ctx context.Context, r *approval.Request) (approval.Answer, error) {
	if p.n.Add(1) == 1 {
		panic("a request nobody foresaw")
	}
	return approval.Answer{Approve: true}, nil
}

// A panic while asking refuses that request; the supervisor goes on.
func TestPrompterPanic(t *testing.T) {
	s := startServer(t, &panicky{})
	if a, err := askVia(t, s, request("first", "")); err == nil || a.Approve {
		t.Fatalf("first: %+v, %v", a, err)
	}
	if a, err := askVia(t, s, request("second", "")); err != nil || !a.Approve {
		t.Fatalf("second: %+v, %v", a, err)
	}
}
