package netproxy

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"
)

// hello is the start of what a client sent through a tunnel.
type hello struct {
	// raw is the bytes to send on to the host unchanged: the records of
	// the ClientHello (and those before it that were skipped), or, when
	// the client does not speak TLS, whatever arrived first.
	raw []byte
	// rest is what was read past the ClientHello's last record: the
	// client's next bytes, not yet judged.
	rest []byte
	// tls is set when the bytes begin a TLS handshake; sni is then the
	// ClientHello's server name ("" when it has none).
	tls bool
	sni string
	// ech is set when the ClientHello carries an Encrypted Client Hello
	// (or its predecessor, encrypted_server_name).
	ech bool
}

// TLS record types and handshake message types read here (RFC 8446).
const (
	recordChangeCipherSpec = 0x14
	recordAlert            = 0x15
	recordHandshake        = 0x16
	recordApplicationData  = 0x17

	typeClientHello = 1
	typeServerHello = 2
)

// tlsLimit bounds what the proxy buffers to read one handshake message,
// a ClientHello or a host's ServerHello, with the records around it.
// crypto/tls takes no handshake message longer than 64 KiB either.
const tlsLimit = 64 << 10

// maxRecord is the longest TLS record taken (2^14 bytes of plaintext,
// 2048 more for a ciphertext's expansion).
const maxRecord = 1<<14 + 2048

// helloRetryRandom is the random of a ServerHello that is a TLS 1.3
// HelloRetryRequest: SHA-256("HelloRetryRequest") (RFC 8446, 4.1.3).
var helloRetryRandom = []byte{
	0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
	0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
}

// records reads TLS records from r, keeping every byte it read in buf
// (tlsLimit at most): whoever reads the records passes buf on unchanged.
type records struct {
	r   io.Reader
	buf []byte
	// off is where the next record starts in buf.
	off int
}

var errTooLong = fmt.Errorf("over %d KiB before the end of the handshake message", tlsLimit>>10)

// fill reads until buf holds n bytes, taking whatever arrives (so that
// bytes past a message are kept for the next reader).
func (t *records) fill(n int) error {
	if n > tlsLimit {
		return errTooLong
	}
	for len(t.buf) < n {
		if len(t.buf) == cap(t.buf) {
			nb := make([]byte, len(t.buf), min(max(2*cap(t.buf), n, 4<<10), tlsLimit))
			copy(nb, t.buf)
			t.buf = nb
		}
		m, err := t.r.Read(t.buf[len(t.buf):cap(t.buf)])
		t.buf = t.buf[:len(t.buf)+m]
		if err != nil && len(t.buf) < n {
			return err
		}
	}
	return nil
}

// next reads the next record and returns its type and fragment.
func (t *records) next() (byte, []byte, error) {
	if err := t.fill(t.off + 5); err != nil {
		return 0, nil, eof(err)
	}
	h := t.buf[t.off : t.off+5]
	n := int(h[3])<<8 | int(h[4])
	switch {
	case h[1] != 3:
		return 0, nil, fmt.Errorf("not a TLS record (version bytes %#x %#x)", h[1], h[2])
	case n == 0 || n > maxRecord:
		return 0, nil, fmt.Errorf("a TLS record of %d bytes", n)
	}
	if err := t.fill(t.off + 5 + n); err != nil {
		return 0, nil, eof(err)
	}
	typ, frag := h[0], t.buf[t.off+5:t.off+5+n]
	t.off += 5 + n
	return typ, frag, nil
}

func eof(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// handshake reads records until they hold a whole first handshake
// message, which must be of type want, and returns it (with its
// header) and how many handshake bytes its last record holds past it.
// Records of other types before it go to other, which may refuse them;
// one in the middle of the message is refused.
func (t *records) handshake(want byte, other func(typ byte, frag []byte) error) ([]byte, int, error) {
	var m []byte
	for {
		typ, frag, err := t.next()
		if err != nil {
			return nil, 0, err
		}
		if typ != recordHandshake {
			if len(m) > 0 {
				return nil, 0, fmt.Errorf("a record of type %d inside a handshake message", typ)
			}
			if err := other(typ, frag); err != nil {
				return nil, 0, err
			}
			continue
		}
		m = append(m, frag...)
		if len(m) < 4 {
			continue
		}
		if m[0] != want {
			return nil, 0, fmt.Errorf("handshake message of type %d, not %d", m[0], want)
		}
		n := 4 + (int(m[1])<<16 | int(m[2])<<8 | int(m[3]))
		if n > tlsLimit {
			return nil, 0, errTooLong
		}
		if len(m) >= n {
			return m[:n], len(m) - n, nil
		}
	}
}

// helloConn gives crypto/tls a connection that reads a ClientHello and
// writes nowhere: the handshake is parsed, never answered.
type helloConn struct{ r io.Reader }

func (c helloConn) Read(b []byte) (int, error)       { return c.r.Read(b) }
func (c helloConn) Write(b []byte) (int, error)      { return len(b), nil }
func (c helloConn) Close() error                     { return nil }
func (c helloConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c helloConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c helloConn) SetDeadline(time.Time) error      { return nil }
func (c helloConn) SetReadDeadline(time.Time) error  { return nil }
func (c helloConn) SetWriteDeadline(time.Time) error { return nil }

var errHelloSeen = errors.New("hello seen")

// peekHello reads the client's first bytes and, when they start a TLS
// handshake (a handshake record, 0x16, or an alert record, 0x15, which
// TLS servers such as Go's skip before a ClientHello), reads the
// ClientHello to learn the server name; an alert first is refused
// there. TLS is never terminated: the bytes go on to the host as they
// came.
func peekHello(in io.Reader) (*hello, error) {
	// Whatever has arrived, so that the first bytes go on in one piece.
	t := &records{r: in, buf: make([]byte, 0, 16<<10)}
	if err := t.fill(1); err != nil {
		return nil, err
	}
	if t.buf[0] != recordHandshake && t.buf[0] != recordAlert {
		return &hello{raw: t.buf}, nil
	}
	return readHello(t, false)
}

// readHello reads a ClientHello from t and parses it with crypto/tls's
// own parser. After a HelloRetryRequest (retry), change_cipher_spec
// records (TLS 1.3's middlebox compatibility) and application_data
// records (early data the host skips) may come before it; anything
// else is not a ClientHello. The records that hold the hello must hold
// nothing else: a host could take more handshake bytes there as the next
// hello.
func readHello(t *records, retry bool) (*hello, error) {
	msg, extra, err := t.handshake(typeClientHello, func(typ byte, _ []byte) error {
		if retry && (typ == recordChangeCipherSpec || typ == recordApplicationData) {
			return nil
		}
		return fmt.Errorf("a record of type %d", typ)
	})
	if err == nil && extra > 0 {
		err = fmt.Errorf("%d more handshake bytes in the record that ends the ClientHello", extra)
	}
	if err != nil {
		return nil, fmt.Errorf("not a TLS ClientHello: %v", err)
	}
	// The message alone, in records of at most 2^14 bytes, for crypto/tls.
	var recs []byte
	for m := msg; len(m) > 0; {
		n := min(len(m), 1<<14)
		recs = append(recs, recordHandshake, 3, 1, byte(n>>8), byte(n))
		recs = append(recs, m[:n]...)
		m = m[n:]
	}
	var sni string
	seen, ech := false, false
	srv := tls.Server(helloConn{bytes.NewReader(recs)}, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			sni, seen = h.ServerName, true
			for _, e := range h.Extensions {
				if e == extEncryptedClientHello || e == extEncryptedServerName {
					ech = true
				}
			}
			return nil, errHelloSeen
		},
	})
	err = srv.Handshake()
	if !seen {
		return nil, fmt.Errorf("not a TLS ClientHello: %v", err)
	}
	return &hello{raw: t.buf[:t.off], rest: t.buf[t.off:], tls: true, sni: sni, ech: ech}, nil
}

// serverHello is a host's answer to a ClientHello, up to its ServerHello.
type serverHello struct {
	// raw is every byte read, to be sent on to the client unchanged.
	raw []byte
	// retry is set when the ServerHello is a HelloRetryRequest: the
	// client sends a second ClientHello.
	retry bool
	// alert is set when the host sent a fatal alert instead (the
	// handshake is over); desc is its description.
	alert bool
	desc  byte
}

// readServerHello reads a host's answer to a ClientHello up to the end
// of its ServerHello (TLS 1.0 to 1.3), passing warning alerts before
// it, and after a HelloRetryRequest (retried) change_cipher_spec records
// too: TLS 1.3 hosts send one right after the retry request, which may
// arrive only now. Anything else is an error: the tunnel ends.
func readServerHello(r io.Reader, retried bool) (*serverHello, error) {
	t := &records{r: r}
	var a serverHello
	errAlert := errors.New("alert")
	msg, _, err := t.handshake(typeServerHello, func(typ byte, frag []byte) error {
		if retried && typ == recordChangeCipherSpec {
			return nil
		}
		if typ != recordAlert || len(frag)%2 != 0 {
			return fmt.Errorf("a record of type %d (%d bytes)", typ, len(frag))
		}
		for i := 0; i < len(frag); i += 2 {
			if frag[i] != 1 { // not a warning
				a.alert, a.desc = true, frag[i+1]
				return errAlert
			}
		}
		return nil
	})
	a.raw = t.buf
	if a.alert {
		return &a, nil
	}
	if err != nil {
		return nil, fmt.Errorf("not a TLS ServerHello: %v", err)
	}
	// type, length, legacy_version, random
	if len(msg) < 4+2+32 {
		return nil, fmt.Errorf("not a TLS ServerHello: %d bytes", len(msg))
	}
	a.retry = bytes.Equal(msg[6:38], helloRetryRandom)
	return &a, nil
}

// TLS extensions that hide the real server name: encrypted_client_hello
// (ECH, draft-ietf-tls-esni) and the older draft's encrypted_server_name.
const (
	extEncryptedClientHello = 0xfe0d
	extEncryptedServerName  = 0xffce
)

// checkHello says why a tunnel's first bytes are refused, or "". A TLS
// client must name the host it was allowed to reach (SNI), so that a
// tunnel to an allowed host's address cannot ask that server (a CDN, a
// shared front end) for another site; for the same reason it may not
// hide the name it wants (Encrypted Client Hello). An address has no
// name to send: a tunnel to an address must carry no SNI. Port 443 must
// carry TLS.
func checkHello(h *hello, host string, port int) string {
	hp := fmt.Sprintf("%s:%d", host, port)
	if !h.tls {
		if port == 443 {
			return fmt.Sprintf("guardrun: blocked: the tunnel to %s did not start with a TLS ClientHello", hp)
		}
		return ""
	}
	sni := strings.TrimSuffix(strings.ToLower(h.sni), ".")
	_, err := netip.ParseAddr(host)
	isAddr := err == nil
	switch {
	case h.ech:
		// The server name outside is only the front end's: the one that
		// decrypts the hello serves the name inside, any site behind it.
		return fmt.Sprintf("guardrun: blocked: TLS to %s with an Encrypted Client Hello, which hides the server name (SNI) the proxy must check", hp)
	case sni == "" && isAddr:
		return ""
	case sni == "":
		return fmt.Sprintf("guardrun: blocked: TLS to %s without a server name (SNI)", hp)
	case sni != host:
		return fmt.Sprintf("guardrun: blocked: TLS server name %q does not match the CONNECT host %s", sni, hp)
	}
	return ""
}

// tlsAlertUnrecognizedName is a fatal TLS alert (unrecognized_name, 112)
// sent to a client whose server name was refused, so that it reports a
// TLS error instead of a bare end of file.
var tlsAlertUnrecognizedName = []byte{0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x70}
