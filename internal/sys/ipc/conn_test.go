package ipc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var testProto = Protocol{Name: "guardrun-test", Version: 3, MaxMessage: 4096}

type echoReq struct {
	Text  string `json:"text"`
	Sleep int    `json:"sleep,omitempty"` // milliseconds
}

type echoReply struct {
	Text string `json:"text"`
	PID  int    `json:"pid"`
}

// echoServer answers "echo" with its text and the asker's pid, and
// panics on "panic"; it reports each request's end on ended.
func echoServer(t *testing.T, s *Server) (path string, ended chan string) {
	t.Helper()
	ended = make(chan string, 100)
	if s.Handle == nil {
		s.Handle = func(ctx context.Context, c *Conn) {
			c.Serve(ctx, Handler{Request: func(ctx context.Context, m *Message) (any, error) {
				var r echoReq
				if err := m.Decode(&r); err != nil {
					return nil, err
				}
				defer func() {
					select {
					case ended <- r.Text:
					default:
					}
				}()
				switch m.Type {
				case "echo":
				case "panic":
					panic("a request nobody foresaw")
				default:
					return nil, fmt.Errorf("unknown request %q", m.Type)
				}
				select {
				case <-time.After(time.Duration(r.Sleep) * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return echoReply{Text: r.Text, PID: c.Peer().PID}, nil
			}})
		}
	}
	if s.Protocol.Name == "" {
		s.Protocol = testProto
	}
	l, err := ListenPrivate(t.TempDir(), "ipc-test-", "s")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(l)
	t.Cleanup(func() { s.Close() })
	return l.Path(), ended
}

func dial(t *testing.T, path string, p Protocol) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), path, p, Handler{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func call(c *Conn, typ string, r echoReq) (echoReply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out echoReply
	err := c.Call(ctx, typ, r, &out)
	return out, err
}

// TestConcurrentClients: many clients, each with several requests
// under way at once, get their own answers, and the server knows each
// by the kernel's pid.
func TestConcurrentClients(t *testing.T) {
	path, _ := echoServer(t, &Server{})
	const clients, each = 16, 8
	var wg sync.WaitGroup
	errs := make(chan error, clients*each)
	for i := 0; i < clients; i++ {
		c := dial(t, path, testProto)
		for j := 0; j < each; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				want := echoReply{Text: fmt.Sprintf("client %d request %d", i, j), PID: os.Getpid()}
				got, err := call(c, "echo", echoReq{Text: want.Text, Sleep: (i + j) % 5})
				if err != nil {
					errs <- err
				} else if d := cmp.Diff(got, want); d != "" {
					errs <- fmt.Errorf("(-got +want):\n%s", d)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestVersionMismatch: a client of another version, or another
// protocol, gets a *VersionError naming both versions from its first
// call, and the server's handler never sees the connection.
func TestVersionMismatch(t *testing.T) {
	handled := make(chan struct{}, 4)
	path, _ := echoServer(t, &Server{Handle: func(ctx context.Context, c *Conn) { handled <- struct{}{} }})
	for _, r := range []struct {
		name  string
		proto Protocol
		want  string
	}{
		{"newer client", Protocol{Name: testProto.Name, Version: 4}, "the other end speaks guardrun-test version 3, this guardrun version 4"},
		{"older client", Protocol{Name: testProto.Name, Version: 2}, "the other end speaks guardrun-test version 3, this guardrun version 2"},
		{"another protocol", Protocol{Name: "guardrun-other", Version: 3}, `the other end speaks "guardrun-test", not "guardrun-other"`},
	} {
		t.Run(r.name, func(t *testing.T) {
			c := dial(t, path, r.proto)
			_, err := call(c, "echo", echoReq{Text: "x"})
			var ve *VersionError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), r.want) {
				t.Fatalf("call: %v, want a *VersionError saying %q", err, r.want)
			}
			<-c.Done()
			if !errors.As(c.Err(), &ve) {
				t.Errorf("Err() = %v, want the *VersionError", c.Err())
			}
		})
	}
	select {
	case <-handled:
		t.Error("a connection of another version reached the handler")
	default:
	}
}

// TestServerTellsVersion: the server's side of a mismatch, seen on the
// wire: its hello names its own version, with the error.
func TestServerTellsVersion(t *testing.T) {
	path, _ := echoServer(t, &Server{})
	raw := rawDial(t, path)
	raw.write(t, `{"type":"hello","body":{"protocol":"guardrun-test","version":9}}`)
	got := raw.read(t)
	want := `{"type":"hello","error":"guardrun-test version 9 is not spoken here: this end speaks version 3","body":{"protocol":"guardrun-test","version":3}}`
	if got != want {
		t.Errorf("server's hello:\n got %s\nwant %s", got, want)
	}
	raw.wantEnd(t)
}

// TestStrictMessages: what the server cannot take is refused with an
// error saying what, and the connection ends: frames longer than the
// protocol's bound (unread), unknown fields, other forms, bytes that are
// no frame. A body the handler's Decode refuses is that request's
// error, and the connection goes on.
func TestStrictMessages(t *testing.T) {
	path, _ := echoServer(t, &Server{})
	hello := `{"type":"hello","body":{"protocol":"guardrun-test","version":3}}`
	for _, r := range []struct {
		name string
		send func(t *testing.T, c *rawConn)
		want string
	}{
		{"oversized frame", func(t *testing.T, c *rawConn) {
			c.frame(t, strings.Repeat("x", testProto.MaxMessage+1))
		}, `{"type":"error","error":"message too large: 4097 bytes, more than the 4096 taken here"}`},
		{"unknown field in the message", func(t *testing.T, c *rawConn) {
			c.write(t, `{"type":"echo","id":1,"body":{"text":"x"},"approve":true}`)
		}, `{"type":"error","error":"malformed message: json: unknown field \"approve\""}`},
		{"a reply with a type", func(t *testing.T, c *rawConn) {
			c.write(t, `{"type":"echo","reply":1}`)
		}, `{"type":"error","error":"malformed message: a reply with other fields"}`},
		{"trailing data", func(t *testing.T, c *rawConn) {
			c.write(t, `{"type":"echo","id":1,"body":{"text":"x"}}{}`)
		}, `{"type":"error","error":"malformed message: data after the message"}`},
		{"a second hello", func(t *testing.T, c *rawConn) {
			c.write(t, hello)
		}, `{"type":"error","error":"a second hello"}`},
		{"an unexpected notice", func(t *testing.T, c *rawConn) {
			c.write(t, `{"type":"echo","body":{"text":"x"}}`)
		}, `{"type":"error","error":"unexpected echo"}`},
		{"no frame", func(t *testing.T, c *rawConn) {
			c.c.Write([]byte(`{"v":1,"type":"ask"}` + "\n"))
		}, `{"type":"error","error":"not a guardrun message of this version"}`},
	} {
		t.Run(r.name, func(t *testing.T) {
			c := rawDial(t, path)
			c.write(t, hello)
			c.read(t) // the server's hello
			r.send(t, c)
			if got := c.read(t); got != r.want {
				t.Errorf("got  %s\nwant %s", got, r.want)
			}
			c.wantEnd(t)
		})
	}
	t.Run("unknown field in the body", func(t *testing.T) {
		c := rawDial(t, path)
		c.write(t, hello)
		c.read(t)
		c.write(t, `{"type":"echo","id":7,"body":{"text":"x","approve":true}}`)
		want := `{"reply":7,"error":"echo: malformed message: json: unknown field \"approve\""}`
		if got := c.read(t); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		c.write(t, `{"type":"echo","id":8,"body":{"text":"still here"}}`)
		want = fmt.Sprintf(`{"reply":8,"body":{"text":"still here","pid":%d}}`, os.Getpid())
		if got := c.read(t); got != want {
			t.Errorf("after the refusal: got %s, want %s", got, want)
		}
	})
}

// TestCallRefusesOversized: a request over the bound is not sent, and
// the connection goes on.
func TestCallRefusesOversized(t *testing.T) {
	path, _ := echoServer(t, &Server{})
	c := dial(t, path, testProto)
	if _, err := call(c, "echo", echoReq{Text: strings.Repeat("x", testProto.MaxMessage)}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized call: %v, want ErrTooLarge", err)
	}
	if got, err := call(c, "echo", echoReq{Text: "small"}); err != nil || got.Text != "small" {
		t.Fatalf("after it: %+v, %v", got, err)
	}
}

// TestCancel: a Call whose context ends withdraws its request: the
// handler's context ends.
func TestCancel(t *testing.T) {
	path, ended := echoServer(t, &Server{})
	c := dial(t, path, testProto)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := c.Call(ctx, "echo", echoReq{Text: "slow", Sleep: 60_000}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call: %v", err)
	}
	select {
	case got := <-ended:
		if got != "slow" {
			t.Fatalf("ended %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler of a withdrawn request is still running")
	}
}

// TestPanicIsRefusal: a handler's panic refuses that request; the
// server and the connection go on.
func TestPanicIsRefusal(t *testing.T) {
	path, _ := echoServer(t, &Server{})
	c := dial(t, path, testProto)
	_, err := call(c, "panic", echoReq{Text: "x"})
	var re *RequestError
	if !errors.As(err, &re) || !strings.Contains(re.Msg, "internal error: a request nobody foresaw") {
		t.Fatalf("panicking request: %v", err)
	}
	if got, err := call(c, "echo", echoReq{Text: "next"}); err != nil || got.Text != "next" {
		t.Fatalf("after the panic: %+v, %v", got, err)
	}
}

// TestBusy: past MaxConns a client is told the server is busy.
func TestBusy(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	path, _ := echoServer(t, &Server{MaxConns: 2, Handle: func(ctx context.Context, c *Conn) {
		select {
		case <-hold:
		case <-ctx.Done():
		}
	}})
	for i := 0; i < 2; i++ {
		c := rawDial(t, path)
		c.write(t, `{"type":"hello","body":{"protocol":"guardrun-test","version":3}}`)
		c.read(t)
	}
	c := dial(t, path, testProto)
	_, err := call(c, "echo", echoReq{Text: "x"})
	var pe *PeerError
	if !errors.As(err, &pe) || pe.Msg != "busy: too many connections (2)" {
		t.Fatalf("third client: %v", err)
	}
}

// TestHelloTimeout: a client that says nothing is told so and closed.
func TestHelloTimeout(t *testing.T) {
	path, _ := echoServer(t, &Server{HelloTimeout: 100 * time.Millisecond})
	c := rawDial(t, path)
	start := time.Now()
	if got, want := c.read(t), `{"type":"error","error":"no hello within 100ms"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	c.wantEnd(t)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("a silent client was held %v", d)
	}
}

// TestServerCloseEndsCalls: closing the server ends its connections'
// handlers and the clients' calls.
func TestServerCloseEndsCalls(t *testing.T) {
	s := &Server{}
	path, _ := echoServer(t, s)
	c := dial(t, path, testProto)
	errc := make(chan error, 1)
	go func() {
		_, err := call(c, "echo", echoReq{Text: "pending", Sleep: 60_000})
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	select {
	case err := <-errc:
		var re *RequestError
		if !errors.Is(err, ErrClosed) && !(errors.As(err, &re) && re.Msg == "context canceled") {
			t.Errorf("pending call: %v, want ErrClosed or its handler's context's end", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a call is still waiting after Close")
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("the socket's directory is left: %v", err)
	}
}

// TestServerAsks: the server may call the client, which answers with
// its handler (the shared proxy asks its commands about hosts so).
func TestServerAsks(t *testing.T) {
	got := make(chan string, 1)
	path, _ := echoServer(t, &Server{Handle: func(ctx context.Context, c *Conn) {
		go func() {
			var r echoReply
			if err := c.Call(ctx, "echo", echoReq{Text: "from the server"}, &r); err != nil {
				got <- err.Error()
				return
			}
			got <- r.Text
		}()
		c.Serve(ctx, Handler{})
	}})
	c, err := Dial(context.Background(), path, testProto, Handler{Request: func(ctx context.Context, m *Message) (any, error) {
		var r echoReq
		if err := m.Decode(&r); err != nil {
			return nil, err
		}
		return echoReply{Text: "client saw: " + r.Text}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case s := <-got:
		if s != "client saw: from the server" {
			t.Errorf("the server's call: %s", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no answer")
	}
}

// TestFiles: a protocol that takes descriptors passes them with a
// message; one that does not refuses to send them.
func TestFiles(t *testing.T) {
	proto := testProto
	proto.Files = 1
	got := make(chan string, 1)
	path, _ := echoServer(t, &Server{Protocol: proto, Handle: func(ctx context.Context, c *Conn) {
		c.Serve(ctx, Handler{Notice: func(m *Message) error {
			if len(m.Files) != 1 {
				return fmt.Errorf("%d files", len(m.Files))
			}
			b := make([]byte, 64)
			n, _ := m.Files[0].Read(b)
			m.Files[0].Close()
			got <- string(b[:n])
			return nil
		}})
	}})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.WriteString("through the descriptor")
	w.Close()
	c := dial(t, path, proto)
	if err := c.Send("pipe", nil, r, r); err == nil {
		t.Error("two descriptors where the protocol takes one: sent")
	}
	if err := c.Send("pipe", nil, r); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "through the descriptor" {
			t.Errorf("read %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing came")
	}
	plain := dial(t, path, testProto)
	if err := plain.Send("pipe", nil, r); err == nil {
		t.Error("a descriptor on a protocol that takes none: sent")
	}
}

// TestDialStale: a socket nobody listens on any more, or no socket,
// fails to dial.
func TestDialStale(t *testing.T) {
	s := &Server{}
	path, _ := echoServer(t, s)
	if _, err := call(dial(t, path, testProto), "echo", echoReq{Text: "x"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Dial(context.Background(), path, testProto, Handler{}); err == nil {
		t.Error("dialled a closed server")
	}
	if _, err := Dial(context.Background(), filepath.Join(t.TempDir(), "nothing"), testProto, Handler{}); err == nil {
		t.Error("dialled nothing")
	}
}

// rawConn talks to a server frame by frame, without a Conn's manners.
type rawConn struct{ c *net.UnixConn }

func rawDial(t *testing.T, path string) *rawConn {
	t.Helper()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{c}
}

func (r *rawConn) write(t *testing.T, msg string) { t.Helper(); r.frame(t, msg) }

func (r *rawConn) frame(t *testing.T, payload string) {
	t.Helper()
	if err := WriteFrame(r.c, AppendFrame(nil, MessageMagic, []byte(payload)), nil); err != nil {
		t.Fatal(err)
	}
}

func (r *rawConn) read(t *testing.T) string {
	t.Helper()
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	p, err := ReadFrameFrom(r.c, MessageMagic, 1<<20)
	if err != nil {
		t.Fatalf("reading the server's message: %v", err)
	}
	return string(p)
}

func (r *rawConn) wantEnd(t *testing.T) {
	t.Helper()
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if p, err := ReadFrameFrom(r.c, MessageMagic, 1<<20); err == nil {
		t.Errorf("the connection goes on: %s", p)
	} else if !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, net.ErrClosed) {
		return
	} else {
		t.Errorf("the connection did not end: %v", err)
	}
}
