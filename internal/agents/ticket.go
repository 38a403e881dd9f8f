package agents

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Ticket is a one-time approval from an agent's own permission dialog:
// the hook answered "ask" for exactly this request, and the command it
// rewrote carries the ticket's id. Consuming it approves that request
// once. docs/agents.md says why the model can neither forge nor replay
// one.
type Ticket struct {
	// Agent and Session are the agent and its session id the hook was
	// called for; ToolUseID is the agent's id of the tool call.
	Agent     string `json:"agent"`
	Session   string `json:"session"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Script is the command exactly as the model sent it, Cwd where it
	// runs, Key the session key of the decision the hook made (where,
	// every part's argv and rule, the script's feeds): the consumer's
	// own decision must have the same key.
	Script string `json:"script"`
	Cwd    string `json:"cwd"`
	Key    string `json:"key"`
	// Expires ends the ticket: consumed later, it approves nothing.
	Expires time.Time `json:"expires"`
}

// TicketTTL is how long a ticket waits to be consumed: the person may
// take a while in the agent's dialog.
const TicketTTL = 30 * time.Minute

// TicketStore keeps tickets in a directory of guardrun's state, which
// the sandbox hides from every command and guardrun's file checks refuse
// to the agents' file tools.
type TicketStore struct {
	Dir string
}

var ticketID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ErrTicket is a ticket that approves nothing: unknown, used, expired or
// for another request. Its text says which.
type ErrTicket struct{ Why string }

func (e *ErrTicket) Error() string { return "the approval ticket " + e.Why }

// private makes the store's directory (0700) and checks that it is a
// directory of this user that nobody else can write.
func (s *TicketStore) private() error {
	if s.Dir == "" {
		return errors.New("tickets: no state directory")
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("tickets: %w", err)
	}
	fi, err := os.Lstat(s.Dir)
	if err != nil {
		return fmt.Errorf("tickets: %w", err)
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("tickets: %s is not a private directory", s.Dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("tickets: %s belongs to another user", s.Dir)
	}
	return nil
}

// Mint stores t and returns its id: 128 random bits, the file's name.
// Expired tickets are swept first.
func (s *TicketStore) Mint(t Ticket) (string, error) {
	if err := s.private(); err != nil {
		return "", err
	}
	s.sweep(time.Now())
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("tickets: %w", err)
	}
	id := hex.EncodeToString(b[:])
	data, err := json.Marshal(t)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(s.Dir, ".new-*")
	if err != nil {
		return "", fmt.Errorf("tickets: %w", err)
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(s.Dir, id+".json"))
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("tickets: %w", werr)
	}
	return id, nil
}

// Consume takes ticket id once: whoever renames it first has it, and it
// is gone for everyone after, whether it then approves or not. check
// says whether it is the one for the request at hand.
func (s *TicketStore) Consume(id string, now time.Time, check func(*Ticket) error) error {
	if !ticketID.MatchString(id) {
		return &ErrTicket{"is not a ticket id"}
	}
	if err := s.private(); err != nil {
		return err
	}
	path := filepath.Join(s.Dir, id+".json")
	claim := filepath.Join(s.Dir, fmt.Sprintf(".claim-%s-%d", id, os.Getpid()))
	if err := os.Rename(path, claim); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &ErrTicket{"is unknown or was used already"}
		}
		return fmt.Errorf("tickets: %w", err)
	}
	defer os.Remove(claim)
	f, err := os.OpenFile(claim, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("tickets: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxHookInput+4096))
	if err != nil {
		return fmt.Errorf("tickets: %w", err)
	}
	var t Ticket
	if err := json.Unmarshal(data, &t); err != nil {
		return &ErrTicket{"is damaged"}
	}
	if !now.Before(t.Expires) {
		return &ErrTicket{"has expired"}
	}
	return check(&t)
}

// sweep removes tickets that expired and claims left behind by a
// consumer that died.
func (s *TicketStore) sweep(now time.Time) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		old := now.Sub(info.ModTime()) > TicketTTL+time.Hour
		switch {
		case strings.HasPrefix(name, ".") && old:
			os.Remove(filepath.Join(s.Dir, name))
		case strings.HasSuffix(name, ".json") && old:
			os.Remove(filepath.Join(s.Dir, name))
		}
	}
}
