package request

import (
	"fmt"
	"io"

	"github.com/guardrun/guardrun/rules"
)

// Options are what the caller chose for this process, over the config:
// guardrun's common flags.
type Options struct {
	// Config is --config: the config file, always trusted
	// (config.Flags).
	Config string
	// Mode is --mode (interactive, approve-all, strict); "" keeps the
	// config's.
	Mode rules.Mode
	// Session is --session: the session for "approve for session"
	// grants.
	Session string
	// Backend is --backend (or $GUARDRUN_BACKEND, which the CLI reads):
	// the Linux OS sandbox, overriding the config's sandbox.backend.
	Backend rules.Backend
}

// ServerEnvVar names the socket of `guardrun serve`, which a guardrun
// started with it set asks to run its command (see internal/serve).
// Commands never get it; sandboxes hide its directory.
const ServerEnvVar = "GUARDRUN_SERVER"

// IO is where a request reads and writes.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Refusal is a request guardrun refused to carry out (exit 77). Line is
// the message, printed as is.
type Refusal struct{ Line string }

func (e *Refusal) Error() string { return e.Line }

// ExitStatus carries a command's own non-zero exit status.
type ExitStatus struct{ Code int }

func (e *ExitStatus) Error() string { return fmt.Sprintf("exit status %d", e.Code) }
