package netproxy

import (
	"io"
	"net"
	"testing"
)

// serveLocal accepts connections on a fresh port of 127.0.0.1 until the
// test ends and handles each on a goroutine of its own, closing it when
// handle returns. It returns the listener's address.
func serveLocal(tb testing.TB, handle func(net.Conn)) *net.TCPAddr {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr)
}

// recordRelay is a relay in front of the host at 127.0.0.1:port: the
// client's bytes go on as they come; each of the host's TLS records
// (header h, fragment frag) goes to pass, made afresh for each
// connection, which writes it to the client as it likes. It returns the
// relay's port.
func recordRelay(tb testing.TB, port string, newPass func() func(client net.Conn, h, frag []byte) error) string {
	tb.Helper()
	a := serveLocal(tb, func(c net.Conn) {
		up, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			return
		}
		defer up.Close()
		go func() {
			io.Copy(up, c)
			up.(*net.TCPConn).CloseWrite()
		}()
		pass := newPass()
		for {
			h := make([]byte, 5)
			if _, err := io.ReadFull(up, h); err != nil {
				return
			}
			frag := make([]byte, int(h[3])<<8|int(h[4]))
			if _, err := io.ReadFull(up, frag); err != nil {
				return
			}
			if err := pass(c, h, frag); err != nil {
				return
			}
		}
	})
	_, p, _ := net.SplitHostPort(a.String())
	return p
}
