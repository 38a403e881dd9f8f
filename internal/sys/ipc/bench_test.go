package ipc

import (
	"context"
	"testing"
)

// BenchmarkCall is one request and its reply on an open connection
// (the shared proxy's questions); BenchmarkDialCall a connection, its
// hellos and one request (a supervisor prompt, a bridge's handover).
func BenchmarkCall(b *testing.B) {
	path := benchServer(b)
	c, err := Dial(context.Background(), path, testProto, Handler{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.Call(context.Background(), "echo", echoReq{Text: "x"}, &echoReply{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDialCall(b *testing.B) {
	path := benchServer(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := Dial(context.Background(), path, testProto, Handler{})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Call(context.Background(), "echo", echoReq{Text: "x"}, &echoReply{}); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

func benchServer(b *testing.B) string {
	b.Helper()
	l, err := ListenPrivate(b.TempDir(), "ipc-bench-", "s")
	if err != nil {
		b.Fatal(err)
	}
	s := &Server{Protocol: testProto, Handle: func(ctx context.Context, c *Conn) {
		c.Serve(ctx, Handler{Request: func(ctx context.Context, m *Message) (any, error) {
			var r echoReq
			if err := m.Decode(&r); err != nil {
				return nil, err
			}
			return echoReply{Text: r.Text}, nil
		}})
	}}
	go s.Serve(l)
	b.Cleanup(func() { s.Close() })
	return l.Path()
}
