package mcpserver

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the HTTP server answers MCP.
const Path = "/mcp"

// sessionIdle is how long an HTTP session with no request in flight may
// stay idle before it is closed (and its grants are no longer used).
const sessionIdle = 30 * time.Minute

// NewToken is a secret for the HTTP server: 256 random bits, as text.
func NewToken() string { return rand.Text() + rand.Text() }

// CheckListen checks the address the HTTP server is to listen on: a
// loopback address (or localhost) and a port; the port may be 0.
func CheckListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %s: want HOST:PORT (127.0.0.1:0 picks a free port)", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("--listen %s: %q is not a port", addr, port)
	}
	if host == "localhost" {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return fmt.Errorf("--listen %s: guardrun mcp listens on a loopback address only (127.0.0.1, ::1 or localhost)", addr)
	}
	return nil
}

// Handler is the streamable HTTP server (stateful: a tool call can ask
// the client) behind guardrun's own checks, in this order: the path, the
// Host header (the listening address, or localhost with its port: a
// name another site makes resolve to 127.0.0.1 is refused, DNS
// rebinding), the Origin header when a browser sends one (the same
// hosts, over http), then the token, as "Authorization: Bearer TOKEN" or
// token=TOKEN in the URL. Host and Origin go first, so that a page that
// cannot pass them learns nothing from the answer. A session deleted by
// its client (DELETE) has its calls cancelled first: the SDK waits for
// them to return, and does not cancel them itself.
//
// addr is the address listened on, as net.Listener.Addr gives it.
func (s *Server) Handler(addr, token string) http.Handler {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		SessionTimeout:      sessionIdle,
		MaxRequestBodyBytes: maxMessageBytes,
	})
	_, port, _ := net.SplitHostPort(addr)
	hosts := map[string]bool{addr: true, "localhost:" + port: true}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		switch {
		case r.URL.Path != Path:
			http.Error(w, "guardrun: not found (MCP is served at "+Path+")", http.StatusNotFound)
			return
		case !hosts[r.Host]:
			http.Error(w, "guardrun: forbidden: the Host header must name the address guardrun mcp listens on", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !(strings.HasPrefix(o, "http://") && hosts[strings.TrimPrefix(o, "http://")]) {
			http.Error(w, "guardrun: forbidden: a request from another origin", http.StatusForbidden)
			return
		}
		if !tokenOK(r, token) {
			h.Set("WWW-Authenticate", `Bearer realm="guardrun mcp"`)
			http.Error(w, "guardrun: missing or wrong token: use the one guardrun mcp --listen printed, as Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodDelete {
			if id := r.Header.Get("Mcp-Session-Id"); id != "" {
				s.runs.cancelSession(id)
			}
		}
		sdk.ServeHTTP(w, r)
	})
}

// tokenOK reports whether r carries the token: in the Authorization
// header as a bearer token, else as the URL's token parameter (for
// clients that can be given only a URL).
func tokenOK(r *http.Request, want string) bool {
	got := r.URL.Query().Get("token")
	if v := r.Header.Get("Authorization"); v != "" {
		scheme, t, _ := strings.Cut(v, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return false
		}
		got = strings.TrimSpace(t)
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
