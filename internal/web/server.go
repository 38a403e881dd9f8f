package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/broker"
)

// Config is what the page shows and changes.
type Config struct {
	// Broker holds the pending requests; the page is one of its fronts.
	Broker *broker.Broker
	// Listen is the address to listen on; "" is 127.0.0.1 on a random
	// port. It must be a loopback address: the page is for this
	// machine's person only.
	Listen string
	// Token opens the page (the URL carries it); "" makes a random one.
	Token string
	// AuditPath is the audit log the history is read from.
	AuditPath string
	// StoreDir and SessionTTL are where session grants are kept.
	StoreDir   string
	SessionTTL time.Duration
	// Rules are the person's project rules.
	Rules *approval.RuleStore
	// Checkpoints lists and undoes checkpoints; nil shows the section
	// as not available yet.
	Checkpoints Checkpoints
}

// Server is the web page of the person's broker.
type Server struct {
	cfg  Config
	ln   net.Listener
	host string // host:port, as the Host header must name it
	srv  *http.Server

	mu       sync.Mutex
	sessions map[string]*session // by cookie value
}

// session is one browser tab's login: its cookie and the key (CSRF
// token) only that tab holds.
type session struct {
	key     string
	created time.Time
}

// maxSessions bounds the logins kept; the oldest goes first.
const maxSessions = 64

// New listens for the page (nothing is served until Serve).
func New(cfg Config) (*Server, error) {
	if cfg.Broker == nil {
		return nil, errors.New("web: no broker")
	}
	addr := cfg.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("web: --listen %s: %v", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("web: --listen %s: the page listens on a loopback address only (127.0.0.1 or ::1)", addr)
	}
	if cfg.Token == "" {
		if cfg.Token, err = randomHex(32); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	s := &Server{cfg: cfg, ln: ln, host: ln.Addr().String(), sessions: map[string]*session{}}
	s.srv = &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	return s, nil
}

// Addr is the address the page listens on (host:port).
func (s *Server) Addr() string { return s.host }

// URL opens the page: it carries the token, which the page exchanges
// for a cookie.
func (s *Server) URL() string { return "http://" + s.host + "/?token=" + s.cfg.Token }

// Token is the page's secret, which also lets a front attach to the
// broker's socket.
func (s *Server) Token() string { return s.cfg.Token }

// Serve serves the page until Close.
func (s *Server) Serve() error {
	err := s.srv.Serve(s.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops the page; its event streams end.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("web: random token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func (s *Server) cookieName() string {
	_, port, _ := net.SplitHostPort(s.host)
	return "guardrun_web_" + port
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /events", s.authed(s.events))
	mux.HandleFunc("GET /panels", s.authed(s.panels))
	mux.HandleFunc("POST /answer", s.changes(s.answer))
	mux.HandleFunc("POST /grants/revoke", s.changes(s.revokeGrant))
	mux.HandleFunc("POST /rules/revoke", s.changes(s.revokeRule))
	mux.HandleFunc("POST /checkpoints/undo", s.changes(s.undo))
	return s.guard(mux)
}

// guard is what every request passes first: the Host header must name
// the address listened on (a page of another site that a name resolves
// to 127.0.0.1 for, DNS rebinding, is refused), and every answer says
// it is not to be cached, framed or sniffed.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
		if r.Host != s.host {
			forbid(w, "this page answers only at http://"+s.host)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func forbid(w http.ResponseWriter, why string) {
	http.Error(w, "guardrun web: forbidden: "+why, http.StatusForbidden)
}

// login is the session of r's cookie, or nil.
func (s *Server) login(r *http.Request) *session {
	c, err := r.Cookie(s.cookieName())
	if err != nil || c.Value == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for v, ss := range s.sessions {
		if subtle.ConstantTimeCompare([]byte(v), []byte(c.Value)) == 1 {
			return ss
		}
	}
	return nil
}

// keyOK checks the tab's key (the CSRF token) r carries: the header
// X-Guardrun-Key, or the form value key.
func keyOK(ss *session, r *http.Request) bool {
	k := r.Header.Get("X-Guardrun-Key")
	if k == "" {
		k = r.URL.Query().Get("key")
	}
	return k != "" && subtle.ConstantTimeCompare([]byte(k), []byte(ss.key)) == 1
}

// authed serves only a logged-in tab that also shows its key: the
// cookie alone (which a browser also sends to every other server on
// this host, whatever its port) reads nothing.
func (s *Server) authed(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ss := s.login(r)
		if ss == nil {
			forbid(w, "not logged in: open the URL guardrun web printed")
			return
		}
		if !keyOK(ss, r) {
			forbid(w, "missing or wrong key")
			return
		}
		h(w, r, ss)
	}
}

// changes serves a state change: a POST (the mux admits no other
// method) from this page's own origin, with the session's cookie and
// its key.
func (s *Server) changes(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "http://"+s.host {
			forbid(w, "a change must come from this page (Origin "+strconv.Quote(o)+")")
			return
		}
		if sf := r.Header.Get("Sec-Fetch-Site"); sf != "" && sf != "same-origin" {
			forbid(w, "a change must come from this page (Sec-Fetch-Site "+strconv.Quote(sf)+")")
			return
		}
		ss := s.login(r)
		if ss == nil {
			forbid(w, "not logged in: open the URL guardrun web printed")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "guardrun web: "+err.Error(), http.StatusBadRequest)
			return
		}
		k := r.Header.Get("X-Guardrun-Key")
		if k == "" {
			k = r.PostForm.Get("key")
		}
		if k == "" || subtle.ConstantTimeCompare([]byte(k), []byte(ss.key)) != 1 {
			forbid(w, "missing or wrong key (CSRF token)")
			return
		}
		h(w, r, ss)
	}
}

// page is the page. Opened with ?token=, it logs the tab in: a cookie
// (HttpOnly, SameSite=Strict) and a redirect to the page without the
// token, whose fragment hands the tab its key (never sent to a server;
// the page moves it to this tab's sessionStorage, which no other origin
// and no other port can read).
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	if tok := r.URL.Query().Get("token"); tok != "" {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) != 1 {
			time.Sleep(100 * time.Millisecond)
			forbid(w, "wrong token: open the URL guardrun web printed")
			return
		}
		cookie, err := randomHex(32)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		key, err := randomHex(32)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		s.mu.Lock()
		if len(s.sessions) >= maxSessions {
			var oldest string
			for v, ss := range s.sessions {
				if oldest == "" || ss.created.Before(s.sessions[oldest].created) {
					oldest = v
				}
			}
			delete(s.sessions, oldest)
		}
		s.sessions[cookie] = &session{key: key, created: time.Now()}
		s.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: cookie, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/#key="+key, http.StatusSeeOther)
		return
	}
	if s.login(r) == nil {
		forbid(w, "not logged in: open the URL guardrun web printed (it carries a token)")
		return
	}
	// The page itself holds nothing: what it shows comes with the key.
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := templates.ExecuteTemplate(w, "page.html", pageData{Checkpoints: s.cfg.Checkpoints != nil}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

type pageData struct {
	Checkpoints bool
}

// events streams the pending requests: every card waiting now, then
// each new one and each one resolved, as server-sent events.
func (s *Server) events(w http.ResponseWriter, r *http.Request, _ *session) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	snap, sub := s.cfg.Broker.Subscribe("web")
	defer sub.Cancel()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	cards := make([]cardEvent, 0, len(snap))
	for i := range snap {
		cards = append(cards, renderCard(&snap[i]))
	}
	if !send("snapshot", cards) {
		return
	}
	tick := time.NewTicker(15 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": still here\n\n"); err != nil {
				return
			}
			fl.Flush()
		case ev, ok := <-sub.C:
			if !ok {
				// Fell behind, or the broker closes: the page
				// reconnects and gets a fresh snapshot.
				return
			}
			switch {
			case ev.Pending != nil:
				if !send("pending", renderCard(ev.Pending)) {
					return
				}
			case ev.Resolved != nil:
				if !send("resolved", ev.Resolved) {
					return
				}
			}
		}
	}
}

// answer takes the person's answer to one request: choice once,
// session, always or deny (with a note).
func (s *Server) answer(w http.ResponseWriter, r *http.Request, _ *session) {
	id := r.PostForm.Get("id")
	var a broker.Answer
	switch r.PostForm.Get("choice") {
	case "once":
		a.Approve = true
	case "session":
		a.Approve, a.Session = true, true
	case "always":
		a.Approve, a.Always = true, true
	case "deny":
		a.Note = strings.TrimSpace(r.PostForm.Get("note"))
	default:
		http.Error(w, "guardrun web: choice must be once, session, always or deny", http.StatusBadRequest)
		return
	}
	if len(a.Note) > 2000 {
		http.Error(w, "guardrun web: a note of at most 2000 bytes", http.StatusBadRequest)
		return
	}
	if err := s.cfg.Broker.Answer(id, a, "web"); err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, broker.ErrAnswered) || errors.Is(err, broker.ErrWithdrawn) || errors.Is(err, broker.ErrUnknown) {
			status = http.StatusConflict
		}
		http.Error(w, "guardrun web: "+err.Error(), status)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
