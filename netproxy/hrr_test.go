package netproxy

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// tlsHost is a TLS server on loopback behind the proxy: it completes a
// handshake with cfg, writes "served NAME" (the server name it got) and
// closes. got holds every byte it read from its clients.
type tlsHost struct {
	port string
	mu   sync.Mutex
	got  []byte
}

func (h *tlsHost) received() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]byte(nil), h.got...)
}

// tapConn records what a host reads.
type tapConn struct {
	net.Conn
	h *tlsHost
}

func (c tapConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.h.mu.Lock()
	c.h.got = append(c.h.got, b[:n]...)
	c.h.mu.Unlock()
	return n, err
}

func newTLSHost(t *testing.T, f *fixture, edit func(*tls.Config)) *tlsHost {
	t.Helper()
	cfg := f.ca.ServerConfig()
	edit(cfg)
	h := &tlsHost{}
	a := serveLocal(t, func(c net.Conn) {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		tc := tls.Server(tapConn{c, h}, cfg)
		if tc.Handshake() != nil {
			return
		}
		fmt.Fprintf(tc, "served %s", tc.ConnectionState().ServerName)
	})
	_, h.port, _ = net.SplitHostPort(a.String())
	return h
}

// forceRetry makes a host that takes only P-256, a group for which Go's
// client sends no key share at first: it answers with a
// HelloRetryRequest.
func forceRetry(c *tls.Config) {
	c.MinVersion = tls.VersionTLS13
	c.CurvePreferences = []tls.CurveID{tls.CurveP256}
}

// readTap records what a client reads.
type readTap struct {
	net.Conn
	got *bytes.Buffer
}

func (c readTap) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.got.Write(b[:n])
	return n, err
}

var hrrRandom = func() []byte { s := sha256.Sum256([]byte("HelloRetryRequest")); return s[:] }()

// TestHandshakes: real clients through the proxy to real hosts, TLS 1.2,
// TLS 1.3, and TLS 1.3 with a HelloRetryRequest (which the client is
// seen to get), with the host's ServerHello cut into 7-byte records
// trickled a byte at a time too: each handshake completes, the client
// reads the page and the audit says connected.
func TestHandshakes(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	for _, tc := range []struct {
		name       string
		edit       func(*tls.Config)
		retry, cut bool
	}{
		{"TLS 1.2", func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 }, false, false},
		{"TLS 1.3", func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 }, false, false},
		{"TLS 1.3 HelloRetryRequest", forceRetry, true, false},
		{"TLS 1.2 cut ServerHello", func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 }, false, true},
		{"TLS 1.3 cut ServerHello", func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 }, false, true},
		{"TLS 1.3 HelloRetryRequest cut", forceRetry, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.forget()
			port := newTLSHost(t, f, tc.edit).port
			if tc.cut {
				port = cutter(t, port)
			}
			c, status := connect(t, f, "allowed.test:"+port)
			if !strings.Contains(status, " 200 ") {
				t.Fatalf("CONNECT: %s", status)
			}
			c.SetDeadline(time.Now().Add(10 * time.Second))
			var seen bytes.Buffer
			tc2 := tls.Client(readTap{c, &seen}, &tls.Config{ServerName: "allowed.test", RootCAs: f.ca.Pool})
			body, err := io.ReadAll(tc2)
			if err != nil || string(body) != "served allowed.test" {
				t.Fatalf("read %q, %v", body, err)
			}
			c.Close()
			if got := bytes.Contains(plaintext(seen.Bytes()), hrrRandom); got != tc.retry {
				t.Errorf("HelloRetryRequest seen: %v, want %v", got, tc.retry)
			}
			r := f.record(t, "allowed.test", "connected")
			if r.BytesIn < int64(seen.Len()) || r.BytesOut == 0 {
				t.Errorf("record %+v: the client read %d bytes", r, seen.Len())
			}
		})
	}
}

// plaintext is the handshake messages of b, the records a host sent,
// up to its first encrypted record.
func plaintext(b []byte) []byte {
	var m []byte
	for len(b) >= 5 && b[0] != recordApplicationData {
		n := int(b[3])<<8 | int(b[4])
		if len(b) < 5+n {
			break
		}
		if b[0] == recordHandshake {
			m = append(m, b[5:5+n]...)
		}
		b = b[5+n:]
	}
	return m
}

// cutter is a relay in front of a TLS 1.x host that cuts each of the
// host's plaintext handshake records (before its first change_cipher_spec
// or application_data record) into records of 7 bytes, written a byte at
// a time. It returns its port.
func cutter(t *testing.T, port string) string {
	t.Helper()
	return recordRelay(t, port, func() func(net.Conn, []byte, []byte) error {
		plain, afterRetry := true, false
		return func(c net.Conn, h, frag []byte) error {
			// Plaintext ends at the first encrypted record, or at a
			// change_cipher_spec, but for TLS 1.3's compatibility one
			// after a HelloRetryRequest.
			if h[0] == recordApplicationData || h[0] == recordChangeCipherSpec && !afterRetry {
				plain = false
			}
			afterRetry = h[0] == recordHandshake && len(frag) >= 38 && bytes.Equal(frag[6:38], hrrRandom)
			if h[0] != recordHandshake || !plain {
				_, err := c.Write(append(h, frag...))
				return err
			}
			for len(frag) > 0 {
				n := min(7, len(frag))
				rec := append([]byte{h[0], h[1], h[2], 0, byte(n)}, frag[:n]...)
				if _, err := (trickle{c}).Write(rec); err != nil {
					return err
				}
				frag = frag[n:]
			}
			return nil
		}
	})
}

// captureHello returns the records of the ClientHello a Go client with
// cfg writes first.
func captureHello(t *testing.T, cfg *tls.Config) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer b.Close()
	go func() {
		tls.Client(a, cfg).Handshake()
		a.Close()
	}()
	b.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64<<10)
	n, err := b.Read(buf)
	if err != nil || n < 5 || buf[0] != recordHandshake {
		t.Fatalf("no ClientHello: %d bytes, %v", n, err)
	}
	return buf[:n]
}

// changeCipherSpec is TLS 1.3's compatibility record a client sends
// before its second ClientHello.
var changeCipherSpec = []byte{0x14, 0x03, 0x03, 0x00, 0x01, 0x01}

// readUntil reads from c until what it read holds want, or fails.
func readUntil(t *testing.T, c net.Conn, want []byte) []byte {
	t.Helper()
	got, err := scan(c, want)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// scan reads from c until what it read holds want.
func scan(c net.Conn, want []byte) ([]byte, error) {
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(got, want) {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			return got, fmt.Errorf("%q not read, after %d bytes: %v", want, len(got), err)
		}
	}
	return got, nil
}

// firstHello is a Go client's ClientHello for allowed.test with a key
// share for X25519 only (P-256 offered), which forceRetry's host
// answers with a HelloRetryRequest.
func firstHello(t *testing.T) []byte {
	return captureHello(t, &tls.Config{ServerName: "allowed.test", MinVersion: tls.VersionTLS13,
		CurvePreferences: []tls.CurveID{tls.X25519, tls.CurveP256}})
}

// TestSecondHello: a client sends a first ClientHello for the
// allowed host, the host (a real TLS 1.3 server) asks it to retry, and
// its second ClientHello names another site, or hides it in an
// Encrypted Client Hello, also when sent before the retry was asked
// for: the tunnel is refused with a TLS alert, audited, and the host
// gets nothing past the first hello. A second hello for the allowed
// host is passed on.
func TestSecondHello(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	p256 := []tls.CurveID{tls.CurveP256}
	other := captureHello(t, &tls.Config{ServerName: "other.test", MinVersion: tls.VersionTLS13, CurvePreferences: p256})
	hidden := captureHello(t, &tls.Config{ServerName: "other.test", MinVersion: tls.VersionTLS13, CurvePreferences: p256,
		EncryptedClientHelloConfigList: echConfigList("allowed.test")})
	same := captureHello(t, &tls.Config{ServerName: "allowed.test", MinVersion: tls.VersionTLS13, CurvePreferences: p256})
	if !bytes.Contains(hidden, []byte("allowed.test")) || bytes.Contains(hidden, []byte("other.test")) {
		t.Fatal("the ECH hello does not name allowed.test outside only")
	}
	for _, tc := range []struct {
		name   string
		second []byte
		early  bool   // sent with the first, before the retry is asked for
		reason string // "" when passed on
	}{
		{"another name", other, false, "does not match the CONNECT host"},
		{"another name, sent early", other, true, "does not match the CONNECT host"},
		{"Encrypted Client Hello", hidden, false, "Encrypted Client Hello"},
		{"Encrypted Client Hello, sent early", hidden, true, "Encrypted Client Hello"},
		{"the allowed name", same, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.forget()
			h := newTLSHost(t, f, forceRetry)
			first := firstHello(t)
			c, status := connect(t, f, "allowed.test:"+h.port)
			if !strings.Contains(status, " 200 ") {
				t.Fatalf("CONNECT: %s", status)
			}
			c.SetDeadline(time.Now().Add(10 * time.Second))
			second := append(append([]byte(nil), changeCipherSpec...), tc.second...)
			if tc.early {
				c.Write(append(append([]byte(nil), first...), second...))
			} else {
				c.Write(first)
			}
			got := readUntil(t, c, hrrRandom)
			if !tc.early {
				c.Write(second)
			}
			rest, err := io.ReadAll(c)
			got = append(got, rest...)
			if err != nil {
				t.Fatalf("the tunnel was not closed: %v", err)
			}
			if tc.reason == "" {
				want := append(append([]byte(nil), first...), second...)
				deadline := time.Now().Add(5 * time.Second)
				for !bytes.Equal(h.received(), want) && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if !bytes.Equal(h.received(), want) {
					t.Errorf("the host got %d bytes, want both hellos (%d)", len(h.received()), len(want))
				}
				f.mu.Lock()
				for _, r := range f.records {
					if r.Outcome == "refused" {
						t.Errorf("refused: %+v", r)
					}
				}
				f.mu.Unlock()
				return
			}
			if !bytes.HasSuffix(got, tlsAlertUnrecognizedName) {
				t.Errorf("the client's last bytes are % x, not the alert", got[max(0, len(got)-7):])
			}
			r := f.record(t, "allowed.test", "refused")
			if !strings.Contains(r.Reason, tc.reason) || !strings.Contains(r.Reason, "HelloRetryRequest") || r.Verdict != "block" {
				t.Errorf("record %+v", r)
			}
			if got := h.received(); !bytes.Equal(got, first) {
				t.Errorf("the host got %d bytes (other.test in them: %v), want the first hello's %d",
					len(got), bytes.Contains(got, []byte("other.test")), len(first))
			}
		})
	}
}

// fakeHost takes one connection, reads the ClientHello's first record,
// then runs answer on the connection. got receives every byte it read.
// fakeTunnel forgets f's records and opens a CONNECT tunnel through f to
// a fakeHost answering as answer (allowed.test): the client's end, with
// a 5 s deadline, and what the host got.
func fakeTunnel(t *testing.T, f *fixture, answer func(c net.Conn)) (net.Conn, <-chan []byte) {
	t.Helper()
	f.forget()
	port, got := fakeHost(t, answer)
	c, status := connect(t, f, "allowed.test:"+port)
	if !strings.Contains(status, " 200 ") {
		t.Fatalf("CONNECT: %s", status)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	return c, got
}

func fakeHost(t *testing.T, answer func(c net.Conn)) (string, <-chan []byte) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	got := make(chan []byte, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		var all bytes.Buffer
		defer func() { got <- all.Bytes() }()
		tap := readTap{c, &all}
		h := make([]byte, 5)
		if _, err := io.ReadFull(tap, h); err == nil {
			io.ReadFull(tap, make([]byte, int(h[3])<<8|int(h[4])))
			answer(tap)
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port, got
}

// retryRequest is a bare HelloRetryRequest record: TLS 1.2's version,
// the retry random, no session id, TLS_AES_128_GCM_SHA256, no
// extensions (the proxy reads no more).
func retryRequest() []byte { return serverHelloRecord(hrrRandom) }

// serverHelloRecord is a bare ServerHello record with random.
func serverHelloRecord(random []byte) []byte {
	body := append([]byte{0x03, 0x03}, random...)
	body = append(body, 0, 0x13, 0x01, 0, 0, 0)
	msg := append([]byte{typeServerHello, 0, 0, byte(len(body))}, body...)
	return append([]byte{recordHandshake, 3, 3, 0, byte(len(msg))}, msg...)
}

// TestServerAnswer: while the proxy waits for a host's ServerHello
// it ends the tunnel (fail closed) when the host answers with something
// else, garbage, a fatal alert, a second HelloRetryRequest, or nothing
// within the bound; the client then gets no more bytes through it, and
// the audit says failed and why.
func TestServerAnswer(t *testing.T) {
	old := peekTimeout
	peekTimeout = 500 * time.Millisecond
	defer func() { peekTimeout = old }()
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	alert := []byte{recordAlert, 3, 3, 0, 2, 2, 40}
	for _, tc := range []struct {
		name   string
		answer func(c net.Conn)
		// what the client gets, and the audit's reason
		back, reason string
	}{
		{"garbage", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 400 Bad Request\r\n\r\n")
			io.Copy(c, c)
		}, "", "not a TLS ServerHello"},
		{"a record too long", func(c net.Conn) {
			c.Write([]byte{recordHandshake, 3, 3, 0xff, 0xff})
			c.Write(make([]byte, 0xffff))
			io.Copy(c, c)
		}, "", "a TLS record of 65535 bytes"},
		{"a handshake message past the bound", func(c net.Conn) {
			c.Write([]byte{recordHandshake, 3, 3, 0, 4, typeServerHello, 2, 0, 0})
			io.Copy(c, c)
		}, "", "over 64 KiB"},
		{"a fatal alert", func(c net.Conn) {
			c.Write(alert)
			io.Copy(c, c)
		}, string(alert), "alert 40"},
		{"silence", func(c net.Conn) {
			io.Copy(io.Discard, c)
		}, "", "timeout"},
		{"a second HelloRetryRequest", func(c net.Conn) {
			c.Write(retryRequest())
			if _, err := scan(c, []byte("allowed.test")); err != nil {
				return
			}
			c.Write(retryRequest())
			io.Copy(io.Discard, c)
		}, string(retryRequest()) + string(retryRequest()), "a second TLS HelloRetryRequest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, got := fakeTunnel(t, f, tc.answer)
			first := firstHello(t)
			c.Write(first)
			var back []byte
			if strings.Contains(tc.name, "HelloRetryRequest") {
				back = readUntil(t, c, hrrRandom)
				c.Write(append(append([]byte(nil), changeCipherSpec...), firstHello(t)...))
			}
			rest, err := io.ReadAll(c)
			back = append(back, rest...)
			if err != nil {
				t.Fatalf("the tunnel was not closed: %v", err)
			}
			if string(back) != tc.back {
				t.Errorf("the client got %q, want %q", back, tc.back)
			}
			r := f.record(t, "allowed.test", "failed")
			if !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("record %+v, want %q", r, tc.reason)
			}
			// The host's connection is closed too, and nothing the
			// client sends now reaches it.
			c.Write([]byte("more"))
			select {
			case b := <-got:
				if bytes.Contains(b, []byte("more")) {
					t.Errorf("the host got %q", b)
				}
			case <-time.After(3 * time.Second):
				t.Errorf("the host's connection was left open")
			}
		})
	}
}

// TestCoalescedHellos: a record that holds a ClientHello and more
// handshake bytes (a second hello a host might read after its retry
// request) is refused before the host gets any of it.
func TestCoalescedHellos(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	port, got := countingUpstream(t, 0)
	first := firstHello(t)
	other := captureHello(t, &tls.Config{ServerName: "other.test"})
	msgs := append(append([]byte(nil), first[5:]...), other[5:]...)
	rec := append([]byte{recordHandshake, 3, 1, byte(len(msgs) >> 8), byte(len(msgs))}, msgs...)
	c, status := connect(t, f, "allowed.test:"+port)
	if !strings.Contains(status, " 200 ") {
		t.Fatalf("CONNECT: %s", status)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write(rec)
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("the tunnel was not closed: %v", err)
	}
	r := f.record(t, "allowed.test", "failed")
	if !strings.Contains(r.Reason, "more handshake bytes") {
		t.Errorf("record %+v", r)
	}
	c.Close()
	if n := <-got; n > 0 {
		t.Errorf("the host got %d bytes", n)
	}
}

// TestHeldUntilServerHello: what a client sends after its ClientHello
// (here in the same write) reaches the host only once the host's
// ServerHello went back, and then in full.
func TestHeldUntilServerHello(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	early := make(chan int, 1)
	port, got := fakeHost(t, func(c net.Conn) {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, _ := c.Read(make([]byte, 100))
		early <- n
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		c.Write(serverHelloRecord(bytes.Repeat([]byte{7}, 32)))
		scan(c, []byte("after the hello"))
	})
	first := firstHello(t)
	c, status := connect(t, f, "allowed.test:"+port)
	if !strings.Contains(status, " 200 ") {
		t.Fatalf("CONNECT: %s", status)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write(append(append([]byte(nil), first...), "after the hello"...))
	if n := <-early; n > 0 {
		t.Errorf("the host got %d bytes before its ServerHello", n)
	}
	select {
	case b := <-got:
		if string(b) != string(first)+"after the hello" {
			t.Errorf("the host got %d bytes, want %d", len(b), len(first)+15)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the host is still reading")
	}
	back, _ := io.ReadAll(c)
	c.Close()
	if !bytes.Equal(back, serverHelloRecord(bytes.Repeat([]byte{7}, 32))) {
		t.Errorf("the client got % x", back)
	}
	r := f.record(t, "allowed.test", "connected")
	if r.BytesOut != int64(len(first)+15) || r.BytesIn != int64(len(back)) {
		t.Errorf("record %+v", r)
	}
}
