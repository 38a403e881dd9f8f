package request

import (
	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/supervisor"
)

// prompterFor picks who is asked: the supervisor named by
// $GUARDRUN_SOCKET when one answers there, else the person's approval
// broker when one runs, else the person's terminal (/dev/tty), else
// nobody. The second value closes what was opened.
//
// A socket that does not answer (the supervisor has exited, leaving a
// stale variable behind) falls back to the terminal rather than failing:
// it is the same person either way, and with no terminal nobody is asked
// and interactive mode acts as strict. So it does with a terminal that
// is a program's (a pty an agent made for a command): nobody is asked,
// and the refusal says why (approval.OpenTTY). noTerminal leaves the
// terminal out.
func prompterFor(e *config.Env, noTerminal bool) (approval.Prompter, func()) {
	if sock := e.Getenv("GUARDRUN_SOCKET"); sock != "" {
		if c, err := supervisor.Dial(sock); err == nil {
			return c, func() { c.Close() }
		}
	}
	if p, closeP := brokerPrompter(e); p != nil {
		return p, closeP
	}
	if noTerminal {
		return nil, nil
	}
	tty, err := approval.OpenTTY()
	if err != nil {
		return approval.Nobody(err), nil
	}
	p := &approval.TTYPrompter{
		TTY:   tty,
		Style: approval.Style{Color: approval.ColorWanted(e.Getenv)},
	}
	if approval.InjectionPossible() {
		p.Confirm = 3
	}
	return p, func() { tty.Close() }
}
