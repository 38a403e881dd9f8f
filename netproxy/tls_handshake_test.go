package netproxy

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// namedHost is a tlsHost (see newTLSHost) that also keeps the server
// name of every ClientHello its TLS stack parsed.
func namedHost(t *testing.T, f *fixture, edit func(*tls.Config)) (*tlsHost, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var names []string
	h := newTLSHost(t, f, func(c *tls.Config) {
		edit(c)
		c.GetConfigForClient = func(chi *tls.ClientHelloInfo) (*tls.Config, error) {
			mu.Lock()
			names = append(names, chi.ServerName)
			mu.Unlock()
			return nil, nil
		}
	})
	return h, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(names)
	}
}

// shaper is a client's connection that rewrites its first write, the
// ClientHello's records: prefix goes first, then the hello's handshake
// bytes in records of cut bytes (all when 0) with record version vers
// (unchanged when nil), written a byte at a time when slow.
type shaper struct {
	net.Conn
	prefix []byte
	cut    int
	vers   []byte
	slow   bool
	done   bool
}

func (s *shaper) Write(b []byte) (int, error) {
	if s.done || len(b) < 5 || b[0] != recordHandshake {
		return s.Conn.Write(b)
	}
	s.done = true
	v := b[1:3]
	if s.vers != nil {
		v = s.vers
	}
	msg := plaintext(b)
	out := append([]byte(nil), s.prefix...)
	for m := msg; len(m) > 0; {
		n := len(m)
		if s.cut > 0 {
			n = min(n, s.cut)
		}
		out = append(out, recordHandshake, v[0], v[1], byte(n>>8), byte(n))
		out = append(out, m[:n]...)
		m = m[n:]
	}
	var w io.Writer = s.Conn
	if s.slow {
		w = trickle{s.Conn}
	}
	if _, err := w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// pacer is a relay in front of a host that passes each of the host's
// TLS records on in a write of its own, 30 ms after the one before, as
// a host far away whose records arrive in separate segments. It returns
// its port.
func pacer(t *testing.T, port string) string {
	t.Helper()
	return recordRelay(t, port, func() func(net.Conn, []byte, []byte) error {
		return func(c net.Conn, h, frag []byte) error {
			if _, err := c.Write(append(h, frag...)); err != nil {
				return err
			}
			time.Sleep(30 * time.Millisecond)
			return nil
		}
	})
}

// warningAlert is a TLS warning alert record (user_canceled), which
// Go's TLS server skips when it comes before a ClientHello.
var warningAlert = []byte{recordAlert, 3, 1, 0, 2, 1, 90}

// TestTLSClientShapes: a real Go client and a real Go host (on a
// port other than 443, where a tunnel may carry something other than
// TLS), the client's ClientHello reshaped on its way: cut into one-byte
// records written a byte at a time, under other record versions, or
// after records a TLS server skips. A hello naming another site never
// reaches the host's TLS stack, whatever comes before it; a legitimate
// hello in any shape the proxy can read still gets its page, and the
// audit agrees.
func TestTLSClientShapes(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	for _, tc := range []struct {
		name string
		sni  string
		s    shaper
		ok   bool // the client gets the page
	}{
		{"plain", "allowed.test", shaper{}, true},
		{"upper-case name", "ALLOWED.test", shaper{}, true},
		{"another name that ends like it", "xallowed.test", shaper{}, false},
		{"another name that starts like it", "allowed.test.other.test", shaper{}, false},
		{"one-byte records a byte at a time", "allowed.test", shaper{cut: 1, slow: true}, true},
		{"one-byte records, another name", "other.test", shaper{cut: 1, slow: true}, false},
		{"record version 0x0300", "allowed.test", shaper{vers: []byte{3, 0}}, true},
		{"record version 0x0303", "allowed.test", shaper{vers: []byte{3, 3}}, true},
		{"record version 0x0304", "allowed.test", shaper{vers: []byte{3, 4}}, true},
		// Go's server takes any first record version below 0x1000; the
		// proxy reads only 3.x and refuses the rest.
		{"record version 0x0200, another name", "other.test", shaper{vers: []byte{2, 0}}, false},
		{"record version 0x0000, another name", "other.test", shaper{vers: []byte{0, 0}}, false},
		// Go's server skips warning alerts before the ClientHello.
		{"warning alert first, another name", "other.test", shaper{prefix: warningAlert}, false},
		{"warning alert with version 0x0003 first, another name", "other.test",
			shaper{prefix: []byte{recordAlert, 0, 3, 0, 2, 1, 90}}, false},
		{"warning alert a byte at a time, another name", "other.test", shaper{prefix: warningAlert, slow: true}, false},
		// Not TLS to the proxy, passed on a port other than 443 (and
		// audited connected): a TLS server refuses these before a
		// ClientHello.
		{"change_cipher_spec first, another name", "other.test", shaper{prefix: changeCipherSpec}, false},
		{"application data first, another name", "other.test", shaper{prefix: []byte{recordApplicationData, 3, 3, 0, 1, 0}}, false},
		{"empty handshake record first, another name", "other.test", shaper{prefix: []byte{recordHandshake, 3, 1, 0, 0}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.forget()
			h, names := namedHost(t, f, func(*tls.Config) {})
			c, status := connect(t, f, "allowed.test:"+h.port)
			if !strings.Contains(status, " 200 ") {
				t.Fatalf("CONNECT: %s", status)
			}
			c.SetDeadline(time.Now().Add(10 * time.Second))
			s := tc.s
			s.Conn = c
			tc2 := tls.Client(&s, &tls.Config{ServerName: tc.sni, RootCAs: f.ca.Pool, InsecureSkipVerify: true})
			body, err := io.ReadAll(tc2)
			c.Close()
			if got := err == nil && string(body) == "served "+tc.sni; got != tc.ok {
				t.Errorf("read %q, %v; want the page: %v", body, err, tc.ok)
			}
			time.Sleep(50 * time.Millisecond)
			for _, n := range names() {
				if !strings.EqualFold(n, "allowed.test") {
					t.Errorf("the host's TLS stack got a ClientHello for %q", n)
				}
			}
			if tc.ok || tc.s.prefix != nil && tc.s.prefix[0] != recordHandshake && tc.s.prefix[0] != recordAlert {
				f.record(t, "allowed.test", "connected")
				return
			}
			f.mu.Lock()
			for _, r := range f.records {
				if r.Outcome == "connected" {
					t.Errorf("audited as connected: %+v", r)
				}
			}
			f.mu.Unlock()
		})
	}
}

// TestTLSLegitimate: handshakes real clients make, through hosts
// that answer in ways the proxy must follow: a HelloRetryRequest whose
// records (and the change_cipher_spec after it) arrive each in a
// segment of its own, the client's whole handshake trickled a byte at a
// time, session resumption in TLS 1.2 and 1.3. Each gets its page; the
// audit's byte counts are what the host read and what the client read.
func TestTLSLegitimate(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	tls12 := func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 }
	tls13 := func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 }
	for _, tc := range []struct {
		name   string
		edit   func(*tls.Config)
		paced  bool // the host's records in separate segments
		slow   bool // the client writes a byte at a time
		resume bool // a second connection resumes the first's session
	}{
		{"HelloRetryRequest, paced records", forceRetry, true, false, false},
		{"HelloRetryRequest, client trickled", forceRetry, false, true, false},
		{"HelloRetryRequest, both", forceRetry, true, true, false},
		{"TLS 1.2 paced records", tls12, true, false, false},
		{"TLS 1.3 paced records", tls13, true, false, false},
		{"TLS 1.2 resumption", tls12, false, false, true},
		{"TLS 1.3 resumption", tls13, false, false, true},
		{"TLS 1.3 resumption after HelloRetryRequest", forceRetry, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTLSHost(t, f, tc.edit)
			port := h.port
			if tc.paced {
				port = pacer(t, port)
			}
			cache := tls.NewLRUClientSessionCache(4)
			runs := 1
			if tc.resume {
				runs = 2
			}
			sent := 0
			for i := range runs {
				f.forget()
				c, status := connect(t, f, "allowed.test:"+port)
				if !strings.Contains(status, " 200 ") {
					t.Fatalf("CONNECT: %s", status)
				}
				c.SetDeadline(time.Now().Add(10 * time.Second))
				var seen bytes.Buffer
				var conn net.Conn = readTap{c, &seen}
				if tc.slow {
					conn = trickle{conn}
				}
				tc2 := tls.Client(conn, &tls.Config{ServerName: "allowed.test", RootCAs: f.ca.Pool, ClientSessionCache: cache})
				body, err := io.ReadAll(tc2)
				if err != nil || string(body) != "served allowed.test" {
					t.Fatalf("connection %d: read %q, %v", i, body, err)
				}
				if tc.resume && i == 1 && !tc2.ConnectionState().DidResume {
					t.Errorf("the session was not resumed")
				}
				c.Close()
				r := f.record(t, "allowed.test", "connected")
				if r.BytesIn != int64(seen.Len()) {
					t.Errorf("connection %d: audited %d bytes in, the client read %d", i, r.BytesIn, seen.Len())
				}
				deadline := time.Now().Add(3 * time.Second)
				for len(h.received())-sent != int(r.BytesOut) && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if got := len(h.received()) - sent; got != int(r.BytesOut) {
					t.Errorf("connection %d: audited %d bytes out, the host read %d", i, r.BytesOut, got)
				}
				sent = len(h.received())
			}
		})
	}
}

// handshakeRecord puts msg, handshake messages, in one handshake record.
func handshakeRecord(msg []byte) []byte {
	return append([]byte{recordHandshake, 3, 3, byte(len(msg) >> 8), byte(len(msg))}, msg...)
}

// TestTLSStreams: hand-built client byte streams to a real TLS
// 1.3 host that asks for a retry (forceRetry), around the first and
// the second ClientHello: early data, alerts, coalesced messages, hellos
// too long or too slow. A hello naming another site never reaches the
// host's TLS stack; the audit says why the tunnel ended, and counts as
// sent exactly what the host read.
func TestTLSStreams(t *testing.T) {
	old := peekTimeout
	peekTimeout = time.Second
	defer func() { peekTimeout = old }()
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	p256 := []tls.CurveID{tls.CurveP256}
	other := captureHello(t, &tls.Config{ServerName: "other.test", MinVersion: tls.VersionTLS13, CurvePreferences: p256})
	same := captureHello(t, &tls.Config{ServerName: "allowed.test", MinVersion: tls.VersionTLS13, CurvePreferences: p256})
	early := []byte{recordApplicationData, 3, 3, 0, 4, 1, 2, 3, 4}
	retried := func(t *testing.T, c net.Conn, first []byte) {
		c.Write(first)
		readUntil(t, c, hrrRandom)
	}
	for _, tc := range []struct {
		name    string
		script  func(t *testing.T, c net.Conn, first []byte)
		outcome string
		reason  string
	}{
		{"early data before the retry, then another name", func(t *testing.T, c net.Conn, first []byte) {
			c.Write(append(append(append([]byte(nil), first...), changeCipherSpec...), early...))
			readUntil(t, c, hrrRandom)
			c.Write(other)
		}, "refused", "does not match the CONNECT host"},
		{"change_cipher_spec, then another name a byte at a time", func(t *testing.T, c net.Conn, first []byte) {
			retried(t, c, first)
			c.Write(changeCipherSpec)
			time.Sleep(50 * time.Millisecond)
			trickle{c}.Write(other)
		}, "refused", "does not match the CONNECT host"},
		{"another name in one-byte records", func(t *testing.T, c net.Conn, first []byte) {
			retried(t, c, first)
			var b []byte
			for _, x := range plaintext(other) {
				b = append(b, recordHandshake, 3, 3, 0, 1, x)
			}
			c.Write(b)
		}, "refused", "does not match the CONNECT host"},
		{"a warning alert, then another name", func(t *testing.T, c net.Conn, first []byte) {
			retried(t, c, first)
			c.Write(append(append([]byte(nil), warningAlert...), other...))
		}, "failed", "a record of type 21"},
		{"the allowed name with another hello in its record", func(t *testing.T, c net.Conn, first []byte) {
			retried(t, c, first)
			c.Write(handshakeRecord(append(plaintext(same), plaintext(other)...)))
		}, "failed", "more handshake bytes"},
		{"a second hello of over 64 KiB", func(t *testing.T, c net.Conn, first []byte) {
			retried(t, c, first)
			c.Write(handshakeRecord([]byte{typeClientHello, 1, 0, 0}))
			c.Write(make([]byte, 1000))
		}, "failed", "over 64 KiB"},
		{"a second hello record too long", func(t *testing.T, c net.Conn, first []byte) {
			retried(t, c, first)
			c.Write([]byte{recordHandshake, 3, 3, 0x48, 0x01})
		}, "failed", "a TLS record of 18433 bytes"},
		{"a second hello too slow", func(t *testing.T, c net.Conn, first []byte) {
			retried(t, c, first)
			for _, b := range same {
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}, "failed", "timeout"},
		{"a first hello too slow", func(t *testing.T, c net.Conn, first []byte) {
			for _, b := range first {
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}, "failed", "timeout"},
		{"a first hello of over 64 KiB", func(t *testing.T, c net.Conn, first []byte) {
			c.Write(handshakeRecord([]byte{typeClientHello, 1, 0, 0}))
		}, "failed", "over 64 KiB"},
		// Passed on: the host reads it and refuses a second hello that is
		// not the first one retried (another random).
		{"the allowed name after the retry", func(t *testing.T, c net.Conn, first []byte) {
			retried(t, c, first)
			c.Write(append(append([]byte(nil), changeCipherSpec...), same...))
		}, "failed", "the host ended the TLS handshake with alert"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.forget()
			h, names := namedHost(t, f, forceRetry)
			first := firstHello(t)
			c, status := connect(t, f, "allowed.test:"+h.port)
			if !strings.Contains(status, " 200 ") {
				t.Fatalf("CONNECT: %s", status)
			}
			c.SetDeadline(time.Now().Add(10 * time.Second))
			tc.script(t, c, first)
			io.ReadAll(c)
			r := f.record(t, "allowed.test", tc.outcome)
			if !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("record %+v, want %q", r, tc.reason)
			}
			deadline := time.Now().Add(3 * time.Second)
			for len(h.received()) != int(r.BytesOut) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got := len(h.received()); got != int(r.BytesOut) {
				t.Errorf("audited %d bytes out, the host read %d", r.BytesOut, got)
			}
			for _, n := range names() {
				if n != "allowed.test" {
					t.Errorf("the host's TLS stack got a ClientHello for %q", n)
				}
			}
		})
	}
}

// TestTLSHostAnswers: hosts that answer the first ClientHello in
// ways the proxy must follow or refuse: warning alerts and a ServerHello
// cut over records, a retry request that is not real (the host is the
// allowed one, so it may ask; the second hello is still judged), its
// change_cipher_spec late, a change_cipher_spec before any retry, a
// fatal alert. The client gets exactly the host's bytes the proxy let
// through; what it sent after its hello reaches the host only when the
// tunnel goes on; the audit counts both ways exactly.
func TestTLSHostAnswers(t *testing.T) {
	old := peekTimeout
	peekTimeout = time.Second
	defer func() { peekTimeout = old }()
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	hello := serverHelloRecord(bytes.Repeat([]byte{7}, 32))
	other := captureHello(t, &tls.Config{ServerName: "other.test"})
	same := captureHello(t, &tls.Config{ServerName: "allowed.test"})
	held := []byte("held bytes")
	fatal := []byte{recordAlert, 3, 3, 0, 2, 2, 40}
	for _, tc := range []struct {
		name   string
		answer func(c net.Conn)
		// the client's second write, after it read the host's first
		// bytes (nil: none)
		second  []byte
		back    []byte // all the client gets
		outcome string
		reason  string
		hostGot []byte // past the first hello
	}{
		{"warning alerts, a ServerHello in two records", func(c net.Conn) {
			c.Write(append([]byte(nil), warningAlert...))
			time.Sleep(30 * time.Millisecond)
			c.Write(append(append([]byte(nil), warningAlert...), hello[:5+10]...))
			time.Sleep(30 * time.Millisecond)
			c.Write(hello[5+10:])
			scan(c, held)
		}, nil, nil, "connected", "", held},
		{"a fake retry request, then another name", func(c net.Conn) {
			c.Write(retryRequest())
			io.Copy(io.Discard, c)
		}, append(append([]byte(nil), changeCipherSpec...), other...), retryRequest(), "refused",
			"does not match the CONNECT host", nil},
		{"a fake retry request, its change_cipher_spec late", func(c net.Conn) {
			c.Write(retryRequest())
			time.Sleep(100 * time.Millisecond)
			c.Write(changeCipherSpec)
			if _, err := scan(c, []byte("allowed.test")); err != nil {
				return
			}
			c.Write(hello)
			scan(c, held)
		}, append(append([]byte(nil), changeCipherSpec...), same...), nil, "connected", "", held},
		{"a change_cipher_spec before any retry request", func(c net.Conn) {
			c.Write(changeCipherSpec)
			c.Write(hello)
			io.Copy(io.Discard, c)
		}, nil, nil, "failed", "a record of type 20", nil},
		{"a fatal alert", func(c net.Conn) {
			c.Write(fatal)
			io.Copy(io.Discard, c)
		}, nil, fatal, "failed", "alert 40", nil},
		{"a ServerHello coalesced with more records", func(c net.Conn) {
			c.Write(append(append(append([]byte(nil), hello...), changeCipherSpec...), recordApplicationData, 3, 3, 0, 1, 9))
			scan(c, held)
		}, nil, nil, "connected", "", held},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, got := fakeTunnel(t, f, tc.answer)
			first := firstHello(t)
			// The held bytes go after the client's last hello.
			var back []byte
			if tc.second == nil {
				c.Write(append(append([]byte(nil), first...), held...))
			} else {
				c.Write(first)
				back = append(back, readUntil(t, c, hrrRandom)...)
				c.Write(append(append([]byte(nil), tc.second...), held...))
			}
			rest, _ := io.ReadAll(c)
			back = append(back, rest...)
			c.Close()
			var b []byte
			select {
			case b = <-got:
			case <-time.After(5 * time.Second):
				t.Fatal("the host's connection was left open")
			}
			r := f.record(t, "allowed.test", tc.outcome)
			if !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("record %+v, want %q", r, tc.reason)
			}
			// The proxy's own alert to a refused client is not the host's.
			fromHost := back
			if tc.outcome == "refused" {
				fromHost = bytes.TrimSuffix(back, tlsAlertUnrecognizedName)
			}
			if r.BytesOut != int64(len(b)) || r.BytesIn != int64(len(fromHost)) {
				t.Errorf("record %+v: the host read %d bytes, the client %d", r, len(b), len(back))
			}
			if tc.back != nil && !bytes.Equal(fromHost, tc.back) {
				t.Errorf("the client got % x, want % x", back, tc.back)
			}
			if bytes.Contains(b, []byte("other.test")) {
				t.Errorf("the host got the hello for other.test")
			}
			if want := string(first) + string(tc.second) + string(tc.hostGot); tc.outcome != "connected" && string(b) != string(first) ||
				tc.outcome == "connected" && string(b) != want {
				t.Errorf("the host got %q", b)
			}
		})
	}
}

// TestTLSSecondHelloUnasked: a client sends a ClientHello for
// another site right after the allowed one, without a retry request,
// to real TLS 1.2 and TLS 1.3 hosts that answer with a ServerHello: the
// proxy holds it until then, and the host's TLS stack, past its
// ServerHello, refuses it as a hello: it never serves that name.
func TestTLSSecondHelloUnasked(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	for _, tc := range []struct {
		name string
		edit func(*tls.Config)
	}{
		{"TLS 1.2", func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 }},
		{"TLS 1.3", func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, names := namedHost(t, f, tc.edit)
			first := captureHello(t, &tls.Config{ServerName: "allowed.test"})
			other := captureHello(t, &tls.Config{ServerName: "other.test"})
			c, status := connect(t, f, "allowed.test:"+h.port)
			if !strings.Contains(status, " 200 ") {
				t.Fatalf("CONNECT: %s", status)
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Write(append(append([]byte(nil), first...), other...))
			back, _ := io.ReadAll(c)
			if bytes.Contains(back, []byte("served")) {
				t.Errorf("the client got %q", back)
			}
			deadline := time.Now().Add(3 * time.Second)
			for !bytes.Contains(h.received(), []byte("other.test")) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if !bytes.Contains(h.received(), []byte("other.test")) {
				t.Errorf("the host never read the second hello (%d bytes)", len(h.received()))
			}
			if n := names(); len(n) != 1 || n[0] != "allowed.test" {
				t.Errorf("the host's TLS stack parsed hellos for %q", n)
			}
		})
	}
}

// TestTLSNoCrossTalk: tunnels whose client bytes are held at the
// same time, each to its own host: each host gets its own client's
// bytes, in order, and nothing of the other's.
func TestTLSNoCrossTalk(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		secret := []byte(strings.Repeat(string(rune('a'+i)), 3000) + "|end")
		port, got := fakeHost(t, func(c net.Conn) {
			time.Sleep(100 * time.Millisecond)
			c.Write(serverHelloRecord(bytes.Repeat([]byte{byte(i)}, 32)))
			scan(c, []byte("|end"))
		})
		first := firstHello(t)
		c, status := connect(t, f, "allowed.test:"+port)
		if !strings.Contains(status, " 200 ") {
			t.Fatalf("CONNECT: %s", status)
		}
		go func() {
			defer wg.Done()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Write(append(append([]byte(nil), first...), secret[:1000]...))
			time.Sleep(20 * time.Millisecond)
			c.Write(secret[1000:])
			io.ReadAll(c)
			if b := <-got; string(b) != string(first)+string(secret) {
				t.Errorf("tunnel %d: the host got %d bytes, want %d of its own", i, len(b), len(first)+len(secret))
			}
		}()
	}
	wg.Wait()
}

// opensslHost is `openssl s_server -www` on loopback with the fixture's
// certificate, taking only the groups given (P-256: a client that sends
// an X25519 key share first is asked to retry). It returns its port, or
// "" when openssl is missing.
func opensslHost(t *testing.T, f *fixture, groups string) string {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		return ""
	}
	dir := t.TempDir()
	key, err := x509.MarshalPKCS8PrivateKey(f.ca.Server.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	var chain []byte
	for _, c := range f.ca.Server.Certificate {
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c})...)
	}
	os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600)
	os.WriteFile(filepath.Join(dir, "cert.pem"), chain, 0o600)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	cmd := exec.Command("openssl", "s_server", "-quiet", "-www", "-accept", "127.0.0.1:"+port,
		"-cert", filepath.Join(dir, "cert.pem"), "-key", filepath.Join(dir, "key.pem"), "-groups", groups)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			return port
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("openssl s_server did not listen")
	return ""
}

// nodeGet fetches a URL through an HTTP proxy with Node's own CONNECT
// and tls.connect, printing the body.
const nodeGet = `
const http = require('http'), tls = require('tls'), fs = require('fs');
const [proxy, host, port] = [new URL(process.env.P), process.env.H, process.env.PORT];
http.request({host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: host + ':' + port})
  .on('connect', (res, sock) => {
    if (res.statusCode !== 200) { console.error(res.statusCode); process.exit(1); }
    const s = tls.connect({socket: sock, servername: host, ca: fs.readFileSync(process.env.CA)}, () => {
      s.write('GET / HTTP/1.1\r\nHost: ' + host + '\r\nConnection: close\r\n\r\n');
    });
    let out = ''; s.on('data', d => out += d); s.on('end', () => { process.stdout.write(out); });
    s.on('error', e => { console.error(String(e)); process.exit(1); });
  }).end();
`

// TestTLSRealClients: curl, Python and Node (OpenSSL clients, each
// with its own hello) through the proxy to Go hosts (TLS 1.2, 1.3, 1.3
// asking for a retry, records paced) and to an OpenSSL host asking for a
// retry: each gets its page, and the audit says connected.
func TestTLSRealClients(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	goHost := func(edit func(*tls.Config)) string {
		ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "page for "+r.TLS.ServerName)
		}))
		ts.TLS = f.ca.ServerConfig()
		edit(ts.TLS)
		ts.StartTLS()
		t.Cleanup(ts.Close)
		_, p, _ := net.SplitHostPort(ts.Listener.Addr().String())
		return p
	}
	type host struct {
		name string
		port func(t *testing.T) string // "" to skip
		want string
	}
	hosts := []host{
		{"Go TLS 1.2", func(*testing.T) string { return goHost(func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 }) }, "page for allowed.test"},
		{"Go TLS 1.3", func(*testing.T) string { return goHost(func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 }) }, "page for allowed.test"},
		{"Go retry", func(*testing.T) string { return goHost(forceRetry) }, "page for allowed.test"},
		{"Go retry paced", func(t *testing.T) string { return pacer(t, goHost(forceRetry)) }, "page for allowed.test"},
		// s_server serves one connection at a time: one per row.
		{"OpenSSL retry", func(t *testing.T) string { return opensslHost(t, f, "P-256") }, "s_server"},
		{"OpenSSL retry paced", func(t *testing.T) string {
			if p := opensslHost(t, f, "P-256"); p != "" {
				return pacer(t, p)
			}
			return ""
		}, "s_server"},
	}
	proxy := f.proxyURL.String()
	clients := map[string]func(port string) *exec.Cmd{
		"curl": func(port string) *exec.Cmd {
			return exec.Command("curl", "-sS", "--max-time", "10", "--cacert", f.ca.CAFile, "-x", proxy,
				"https://allowed.test:"+port+"/")
		},
		"python3": func(port string) *exec.Cmd {
			c := exec.Command("python3", "-c", "import urllib.request,sys;sys.stdout.write(urllib.request.urlopen(sys.argv[1],timeout=10).read().decode())",
				"https://allowed.test:"+port+"/")
			c.Env = append(os.Environ(), "HTTPS_PROXY="+proxy, "https_proxy="+proxy, "SSL_CERT_FILE="+f.ca.CAFile, "NO_PROXY=", "no_proxy=")
			return c
		},
		"node": func(port string) *exec.Cmd {
			c := exec.Command("node", "-e", nodeGet)
			c.Env = append(os.Environ(), "P="+proxy, "H=allowed.test", "PORT="+port, "CA="+f.ca.CAFile)
			return c
		},
	}
	for cname, mk := range clients {
		if _, err := exec.LookPath(cname); err != nil {
			t.Logf("%s: not installed", cname)
			continue
		}
		for _, h := range hosts {
			t.Run(cname+" to "+h.name, func(t *testing.T) {
				port := h.port(t)
				if port == "" {
					t.Skip("openssl is not installed")
				}
				f.forget()
				out, err := mk(port).CombinedOutput()
				if err != nil || !strings.Contains(string(out), h.want) {
					f.mu.Lock()
					t.Fatalf("%v: %s\naudit: %+v", err, out, f.records)
				}
				f.record(t, "allowed.test", "connected")
			})
		}
	}
}

// TestTLSServerSpeaksFirst: a protocol whose server speaks first
// (SMTP, IMAP, MySQL) on a port other than 443, its client waiting for
// the greeting: the proxy waits for the client's first bytes to learn
// whether they are TLS, so the greeting does not come through; the
// tunnel ends after the wait (peekTimeout, 30 s) and the audit says
// why. A known limitation (docs/limitations.md); nothing leaks either
// way.
func TestTLSServerSpeaksFirst(t *testing.T) {
	old := peekTimeout
	peekTimeout = 300 * time.Millisecond
	defer func() { peekTimeout = old }()
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "220 mail.allowed.test ESMTP\r\n")
		io.Copy(io.Discard, c)
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	// The proxy's wait starts after it has read the CONNECT, so the
	// time since before the CONNECT is never shorter than the wait.
	start := time.Now()
	c, status := connect(t, f, "allowed.test:"+port)
	if !strings.Contains(status, " 200 ") {
		t.Fatalf("CONNECT: %s", status)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	back, err := io.ReadAll(c)
	if err != nil || len(back) != 0 || time.Since(start) < peekTimeout {
		t.Errorf("the client read %q, %v after %v", back, err, time.Since(start))
	}
	r := f.record(t, "allowed.test", "failed")
	if !strings.Contains(r.Reason, "reading the client's first bytes") {
		t.Errorf("record %+v", r)
	}
}

// TestTLSSSLv2Hello: an SSLv2-compatible ClientHello (no
// extensions, so no server name) on a port other than 443 is not TLS to
// the proxy and passes; Go's TLS host refuses it: no page, no hello
// parsed.
func TestTLSSSLv2Hello(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	h, names := namedHost(t, f, func(*tls.Config) {})
	body := []byte{1, 3, 3, 0, 3, 0, 0, 0, 16, 0x00, 0x00, 0x2f}
	body = append(body, bytes.Repeat([]byte{5}, 16)...)
	v2 := append([]byte{0x80 | byte(len(body)>>8), byte(len(body))}, body...)
	c, status := connect(t, f, "allowed.test:"+h.port)
	if !strings.Contains(status, " 200 ") {
		t.Fatalf("CONNECT: %s", status)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write(v2)
	back, _ := io.ReadAll(c)
	c.Close()
	if bytes.Contains(back, []byte("served")) || bytes.Contains(back, []byte{recordHandshake, 3}) {
		t.Errorf("the client got % x", back)
	}
	time.Sleep(50 * time.Millisecond)
	if n := names(); len(n) > 0 {
		t.Errorf("the host parsed hellos for %q", n)
	}
	f.record(t, "allowed.test", "connected")
}

// TestTLSOpenSSLShapes: records before the ClientHello sent to an
// OpenSSL host: ones the proxy reads as TLS are refused there, the
// others pass as not TLS (a port other than 443) and OpenSSL refuses
// them: no handshake for another name completes.
func TestTLSOpenSSLShapes(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	for _, tc := range []struct {
		name   string
		prefix []byte
		sni    string
	}{
		{"nothing, the allowed name", nil, "allowed.test"},
		{"a warning alert", warningAlert, "other.test"},
		{"a change_cipher_spec", changeCipherSpec, "other.test"},
		{"application data", []byte{recordApplicationData, 3, 3, 0, 1, 0}, "other.test"},
		{"a heartbeat", []byte{0x18, 3, 3, 0, 1, 0}, "other.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := opensslHost(t, f, "X25519:P-256")
			if port == "" {
				t.Skip("openssl is not installed")
			}
			c, status := connect(t, f, "allowed.test:"+port)
			if !strings.Contains(status, " 200 ") {
				t.Fatalf("CONNECT: %s", status)
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			tc2 := tls.Client(&shaper{Conn: c, prefix: tc.prefix}, &tls.Config{ServerName: tc.sni, RootCAs: f.ca.Pool})
			if err := tc2.Handshake(); (err == nil) != (tc.sni == "allowed.test") {
				t.Errorf("handshake for %s: %v", tc.sni, err)
			}
			c.Close()
		})
	}
}

// TestSNILiveServer: against a live TLS server, a ClientHello whose server
// name is not the CONNECT host is refused, whatever its spelling; the
// same name in another case or with a trailing dot is the same host.
func TestSNILiveServer(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test", "other.test"}, loopback...), nil), false)
	for _, tc := range []struct {
		name, connect, sni string
		ok                 bool
	}{
		{"SNI of another allowed host", "allowed.test", "other.test", false},
		{"no SNI", "allowed.test", "", false},
		{"SNI uppercase", "allowed.test", "ALLOWED.TEST", true},
		{"SNI with a trailing dot", "allowed.test", "allowed.test.", true},
		{"SNI an IP literal", "allowed.test", "127.0.0.1", false},
		{"SNI a suffix of the host", "allowed.test", "test", false},
		{"SNI the host as a prefix", "allowed.test", "allowed.test.evil", false},
		{"CONNECT to an address with a name in SNI", "127.0.0.1", "allowed.test", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, status := connect(t, f, tc.connect+":"+f.tlsPort)
			if !strings.Contains(status, " 200 ") {
				t.Fatalf("CONNECT: %s", status)
			}
			defer c.Close()
			cfg := &tls.Config{ServerName: tc.sni, RootCAs: f.ca.Pool, InsecureSkipVerify: true}
			tc2 := tls.Client(c, cfg)
			c.SetDeadline(time.Now().Add(5 * time.Second))
			err := tc2.Handshake()
			if tc.ok != (err == nil) {
				t.Fatalf("handshake: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestECH: a ClientHello that carries an Encrypted Client Hello
// names the CONNECT host only on the outside; the front end that
// decrypts it serves the inner name, any site behind it. It is refused
// and the host gets none of its bytes.
func TestECH(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	port, got := countingUpstream(t, 0)
	c, status := connect(t, f, "allowed.test:"+port)
	if !strings.Contains(status, " 200 ") {
		t.Fatalf("CONNECT: %s", status)
	}
	cfg := &tls.Config{
		ServerName:                     "other.test", // the inner, hidden name
		EncryptedClientHelloConfigList: echConfigList("allowed.test"),
		MinVersion:                     tls.VersionTLS13,
		RootCAs:                        f.ca.Pool,
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	tls.Client(c, cfg).Handshake()
	c.Close()
	r := f.record(t, "allowed.test", "refused")
	if !strings.Contains(r.Reason, "Encrypted Client Hello") {
		t.Errorf("record %+v", r)
	}
	if n := <-got; n > 0 {
		t.Errorf("the host got %d bytes of the hello", n)
	}
}

// countingUpstream is a host on loopback that takes one connection,
// reads it to its end (for 5 seconds at most), sends on the channel the
// bytes it got (-1 if nobody connected), then writes reply bytes back.
// It returns its port.
func countingUpstream(t *testing.T, reply int) (string, <-chan int64) {
	t.Helper()
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	got := make(chan int64, 1)
	go func() {
		c, err := up.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _ := io.Copy(io.Discard, c)
		got <- n
		if reply > 0 {
			c.Write(make([]byte, reply))
		}
	}()
	_, port, _ := net.SplitHostPort(up.Addr().String())
	return port, got
}

// echConfigList is an ECHConfigList (draft-ietf-tls-esni) with one
// X25519/HKDF-SHA256/AES-128-GCM config whose public (outer) name is
// publicName; the key is made up, which the client cannot tell.
func echConfigList(publicName string) []byte {
	var c []byte
	c = append(c, 7)          // config_id
	c = append(c, 0x00, 0x20) // DHKEM(X25519, HKDF-SHA256)
	c = append(c, 0, 32)
	for i := range 32 {
		c = append(c, byte(9+i))
	}
	c = append(c, 0, 4, 0x00, 0x01, 0x00, 0x01) // HKDF-SHA256, AES-128-GCM
	c = append(c, 0)                            // maximum_name_length
	c = append(c, byte(len(publicName)))
	c = append(c, publicName...)
	c = append(c, 0, 0) // no extensions
	cfg := append([]byte{0xfe, 0x0d, byte(len(c) >> 8), byte(len(c))}, c...)
	return append([]byte{byte(len(cfg) >> 8), byte(len(cfg))}, cfg...)
}

// TestSplitHello: a ClientHello trickled one byte per write, or
// so large (50 kB of ALPN names) that it spans several TLS records, is
// still read whole and judged; a mismatched name is refused, the right
// one passes.
func TestSplitHello(t *testing.T) {
	f := newFixture(t, domains(t, append([]string{"allowed.test"}, loopback...), nil), false)
	var alpn []string
	for i := range 200 {
		alpn = append(alpn, fmt.Sprintf("%03d%s", i, strings.Repeat("p", 240)))
	}
	alpn = append(alpn, "http/1.1")
	for _, tc := range []struct {
		sni   string
		large bool
		ok    bool
	}{{"other.test", false, false}, {"allowed.test", false, true}, {"other.test", true, false}, {"allowed.test", true, true}} {
		c, status := connect(t, f, "allowed.test:"+f.tlsPort)
		if !strings.Contains(status, " 200 ") {
			t.Fatalf("CONNECT: %s", status)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		cfg := &tls.Config{ServerName: tc.sni, RootCAs: f.ca.Pool, InsecureSkipVerify: true}
		var conn net.Conn = trickle{c}
		if tc.large {
			cfg.NextProtos, conn = alpn, c
		}
		if err := tls.Client(conn, cfg).Handshake(); (err == nil) != tc.ok {
			t.Errorf("SNI %s, large %v: handshake %v, want ok=%v", tc.sni, tc.large, err, tc.ok)
		}
		c.Close()
	}
}

// trickle writes one byte at a time.
type trickle struct{ net.Conn }

func (t trickle) Write(b []byte) (int, error) {
	for i := range b {
		if _, err := t.Conn.Write(b[i : i+1]); err != nil {
			return i, err
		}
	}
	return len(b), nil
}
