package netproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSilentTunnel: a CONNECT that never sends a ClientHello is
// ended after the bound, with an audit line.
func TestSilentTunnel(t *testing.T) {
	old := peekTimeout
	peekTimeout = 300 * time.Millisecond
	defer func() { peekTimeout = old }()
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	c, status := connect(t, f, "allowed.test:"+f.tlsPort)
	if !strings.Contains(status, " 200 ") {
		t.Fatalf("CONNECT: %s", status)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	t0 := time.Now()
	_, err := c.Read(make([]byte, 1))
	if err == nil || time.Since(t0) > 4*time.Second {
		t.Errorf("the silent tunnel was not ended: %v after %v", err, time.Since(t0))
	}
	f.record(t, "allowed.test", "failed")
}

// TestIdleConnection: a client connection left idle after a
// request is closed by the proxy after a while, so that idle connections
// cannot pile up in the proxy.
func TestIdleConnection(t *testing.T) {
	old := idleTimeout
	idleTimeout = 300 * time.Millisecond
	defer func() { idleTimeout = old }()
	f := newFixture(t, domains(t, loopback, nil), false)
	c, err := net.Dial("tcp", f.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.Close {
		t.Fatalf("the proxy closed the connection itself; the test needs one kept alive")
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("idle connection: %v, want the proxy to close it", err)
	}
}

// TestHeaderFlood: a header block that never ends is cut off.
func TestHeaderFlood(t *testing.T) {
	f := newFixture(t, domains(t, loopback, nil), false)
	c, err := net.Dial("tcp", f.proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		fmt.Fprintf(c, "CONNECT allowed.test:443 HTTP/1.1\r\n")
		line := "X-A: " + strings.Repeat("a", 1000) + "\r\n"
		for range 4000 {
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err == nil && resp.StatusCode < 400 {
		t.Errorf("status %d", resp.StatusCode)
	}
}

// TestRefusalsDoNotPileUp: every refused CONNECT, and every tunnel
// once closed, is forgotten by the proxy, so that a loop of refused
// requests does not grow the proxy's memory for the rest of a session.
func TestRefusalsDoNotPileUp(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), []string{"denied.test"}), false)
	cl := &Client{}
	own := serveClient(t, f, cl)
	for _, addr := range []string{f.proxyURL.Host, own} {
		for i := range 60 {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			target := "denied.test:443"
			if i%10 == 0 {
				target = "allowed.test:" + f.httpPort // a tunnel, closed at once
			}
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
			c.SetDeadline(time.Now().Add(5 * time.Second))
			bufio.NewReader(c).ReadString('\n')
			c.Close()
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.proxy.mu.Lock()
		n := len(f.proxy.conns)
		f.proxy.mu.Unlock()
		cl.mu.Lock()
		m := len(cl.conns)
		cl.mu.Unlock()
		if n == 0 && m == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 120 closed connections the proxy still holds %d (client %d)", n, m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serveClient registers cl with the fixture's proxy and serves it on a
// listener of its own, as a command's proxy address; it returns that
// address.
func serveClient(t *testing.T, f *fixture, cl *Client) string {
	t.Helper()
	if _, err := f.proxy.Register(cl); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go f.proxy.ServeClient(l, cl)
	return l.Addr().String()
}

// TestConnectionFlood: connections opened and left silent are
// bounded: past the bound new ones are closed at once, and once they end
// the proxy serves again.
func TestConnectionFlood(t *testing.T) {
	old := maxConns
	maxConns = 10
	defer func() { maxConns = old }()
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	var conns []net.Conn
	for range 30 {
		c, err := net.Dial("tcp", f.proxyURL.Host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	closed := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err == io.EOF {
			closed++
		}
	}
	if closed < 15 {
		t.Errorf("%d of 30 silent connections were closed, want at least 15", closed)
	}
	for _, c := range conns {
		c.Close()
	}
	time.Sleep(100 * time.Millisecond)
	if body, err := f.get(t, "http://allowed.test:"+f.httpPort+"/after"); err != nil || !strings.Contains(body, "/after") {
		t.Errorf("after the flood: %q %v", body, err)
	}
}
