package approval

import (
	"fmt"
	"os"
)

// A prompt on the controlling terminal is a person's answer only if a
// person reads and types on that terminal. A pseudo-terminal belongs to
// whoever holds its other side, the master: a terminal emulator, sshd,
// or a tmux or screen server, which run on no terminal of their own, are
// a person's; a program that itself runs on a terminal and made a new
// one for what it starts (Codex for a command the model runs with tty,
// an agent's node-pty, script, expect) reads everything drawn there and
// types what it likes, so a model behind it could answer. guardrun asks
// on its terminal only when it is a person's (TerminalOwnerOf).

// TerminalOwner is who holds the other side of a terminal.
type TerminalOwner struct {
	// Person is set for a person's terminal.
	Person bool
	// PID and Name are the process that holds the master, when found.
	PID  int
	Name string
	// Why says, for a terminal that is not a person's, why not.
	Why string
}

// superviseHint is how a person gets the prompts a program's terminal
// cannot show.
const superviseHint = "run the agent under `guardrun supervise` to be asked"

// TerminalOwnerOf says whose terminal tty (the controlling terminal,
// /dev/tty opened) is. See terminalOwner for each system.
func TerminalOwnerOf(tty *os.File) TerminalOwner { return terminalOwner(tty) }

func ownedBy(pid int, name, tty string) TerminalOwner {
	return TerminalOwner{PID: pid, Name: name, Why: fmt.Sprintf(
		"the terminal %s is a program's, not a person's: %s (pid %d), which holds its other side, runs on a terminal of its own", tty, name, pid)}
}

func unknownOwner(why string) TerminalOwner {
	return TerminalOwner{Why: "whose terminal this is cannot be told: " + why}
}
