package netproxy

import (
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
	// raw is every byte read, to be sent on to the host unchanged.
	raw []byte
	// tls is set when the bytes begin a TLS handshake; sni is then the
	// ClientHello's server name ("" when it has none).
	tls bool
	sni string
	// ech is set when the ClientHello carries an Encrypted Client Hello
	// (or its predecessor, encrypted_server_name).
	ech bool
}

// recorder reads from in and keeps what it read; a rewind replays it.
type recorder struct {
	in  io.Reader
	buf []byte
	pos int
}

func (r *recorder) Read(b []byte) (int, error) {
	if r.pos < len(r.buf) {
		n := copy(b, r.buf[r.pos:])
		r.pos += n
		return n, nil
	}
	n, err := r.in.Read(b)
	r.buf = append(r.buf, b[:n]...)
	r.pos += n
	return n, err
}

// helloConn gives crypto/tls a connection that reads the client's bytes
// and writes nowhere: the handshake is parsed, never answered.
type helloConn struct{ r *recorder }

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
// handshake (a handshake record, 0x16), parses the ClientHello with
// crypto/tls's own parser to learn the server name. TLS is never
// terminated: the bytes go on to the host as they came.
func peekHello(in io.Reader) (*hello, error) {
	r := &recorder{in: in}
	// Whatever has arrived, so that the first bytes go on in one piece.
	first := make([]byte, 16<<10)
	n, err := r.Read(first)
	for n == 0 && err == nil {
		n, err = r.Read(first)
	}
	if n == 0 {
		return nil, err
	}
	if first[0] != 0x16 {
		return &hello{raw: r.buf}, nil
	}
	r.pos = 0
	var sni string
	seen, ech := false, false
	srv := tls.Server(helloConn{r}, &tls.Config{
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
	return &hello{raw: r.buf, tls: true, sni: sni, ech: ech}, nil
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
