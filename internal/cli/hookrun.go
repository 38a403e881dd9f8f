package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/agents"
	"github.com/guardrun/guardrun/internal/request"
)

// hookFlags are the flags of a command `guardrun hook` rewrote, which
// stand before -c: who ran it (--via), the project whose config and
// zones apply (--workspace), the ticket of an approval the agent's own
// dialog gave (--ticket), and where the script's final directory goes
// (--cwd-fd). `guardrun serve` does not parse them, so such a command is
// always run by its own guardrun.
type hookFlags struct {
	agent     *agents.Agent
	workspace string
	ticket    string
	cwdFD     int // 0: none
}

// takeHookFlags takes the hook flags from the front of args; hf is nil
// when args does not start with --via.
func takeHookFlags(args []string) (hf *hookFlags, rest []string, err error) {
	if len(args) == 0 || args[0] != "--via" {
		return nil, args, nil
	}
	hf = &hookFlags{}
	for len(args) > 0 {
		name := args[0]
		switch name {
		case "--via", "--workspace", "--ticket", "--cwd-fd":
		default:
			if hf.agent == nil {
				return nil, nil, usagef("--via needs an agent")
			}
			return hf, args, nil
		}
		if len(args) < 2 {
			return nil, nil, usagef("%s needs a value", name)
		}
		v := args[1]
		args = args[2:]
		switch name {
		case "--via":
			a, err := agents.ByName(v)
			if err != nil {
				return nil, nil, usagef("--via: %v", err)
			}
			hf.agent = a
		case "--workspace":
			if !filepath.IsAbs(v) {
				return nil, nil, usagef("--workspace needs an absolute path")
			}
			hf.workspace = filepath.Clean(v)
		case "--ticket":
			hf.ticket = v
		case "--cwd-fd":
			n, err := strconv.Atoi(v)
			if err != nil || n < 3 || n > 1000 {
				return nil, nil, usagef("--cwd-fd needs a descriptor number of 3 or more")
			}
			hf.cwdFD = n
		}
	}
	return nil, nil, usagef("--via: nothing to run (want -c SCRIPT)")
}

// runHooked runs the -c script of a command `guardrun hook` rewrote: in
// the directory the agent ran it in, under the config and zones of the
// agent's project, asking only the supervisor (the terminal is the
// agent's), approved once by a matching ticket, and with the script's
// final directory written to --cwd-fd.
func runHooked(g *global, hf *hookFlags, args []string, io IO) error {
	var report *os.File
	if hf.cwdFD != 0 {
		// Inherited from the agent's shell: not for the command.
		syscall.CloseOnExec(hf.cwdFD)
		report = os.NewFile(uintptr(hf.cwdFD), "cwd-report")
		if report != nil {
			defer report.Close()
		}
	}
	if len(args) == 0 || !isShFlags(args[0]) {
		return usagef("--via runs a script: guardrun --via AGENT -c 'SCRIPT'")
	}
	j, err := parseShFront(args)
	if err != nil {
		return err
	}
	if j == nil {
		return usagef("--via runs a script: guardrun --via AGENT -c 'SCRIPT'")
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	if hf.workspace != "" {
		if err := os.Chdir(hf.workspace); err != nil {
			return fmt.Errorf("the agent's project %s: %w", hf.workspace, err)
		}
	}
	s, err := request.Open(g.Options, io)
	if err != nil {
		return err
	}
	s.NoTerminal = true
	j.Cwd, j.Via = cwd, hf.agent.Name
	if report != nil {
		j.ReportDir = func(dir string) { fmt.Fprintln(report, dir) }
	}
	if hf.ticket != "" {
		j.Preapproved = ticketCheck(s, hf, j)
	}
	return s.Run(context.Background(), j, io)
}

// ticketCheck consumes the job's ticket when it would prompt: it
// approves only the request the hook minted it for (the same agent and
// session, script, directory and decision), and only once.
func ticketCheck(s *request.Session, hf *hookFlags, j *request.Job) func(*approval.Request) (bool, string) {
	return func(req *approval.Request) (bool, string) {
		store := &agents.TicketStore{Dir: ticketDir(s)}
		err := store.Consume(hf.ticket, time.Now(), func(t *agents.Ticket) error {
			switch {
			case t.Agent != hf.agent.Name:
				return &agents.ErrTicket{Why: "is for another agent"}
			case t.Session == "" || t.Session != agentSession(hf.agent):
				return &agents.ErrTicket{Why: "is for another session of " + hf.agent.Title}
			case t.Script != j.Script:
				return &agents.ErrTicket{Why: "is for another command"}
			case !sameDir(t.Cwd, req.Cwd):
				return &agents.ErrTicket{Why: "is for another directory"}
			case t.Key != approval.RequestKey(req.Decision, t.Cwd):
				return &agents.ErrTicket{Why: "is for another decision (the rules changed)"}
			}
			return nil
		})
		if err != nil {
			return false, fmt.Sprintf("guardrun: %s's approval does not apply: %v", hf.agent.Title, err)
		}
		return true, ""
	}
}

// agentSession is the session id the agent gives its commands, as its
// hook input names it.
func agentSession(a *agents.Agent) string {
	if a == agents.Claude {
		return os.Getenv("CLAUDE_CODE_SESSION_ID")
	}
	return ""
}

func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}
