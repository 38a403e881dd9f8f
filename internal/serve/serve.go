package serve

import (
	"io"

	"github.com/guardrun/guardrun/internal/request"
)

// Config is what the server needs from the command line's front: the
// same parser and exit-status mapping guardrun's own run forms use, so
// that a served request means and reports what it would unserved.
type Config struct {
	// Parse parses a client's arguments (after argv[0]) into a job and
	// its options; ok false leaves the request to the client (F).
	Parse func(args []string, getenv func(string) string) (opts request.Options, j *request.Job, ok bool)
	// Report maps Run's error to the exit status, printing it on
	// stderr as guardrun does.
	Report func(err error, stderr io.Writer) int
	// Environ is the environment of the command the server serves
	// (GUARDRUN_SERVER aside): a client's HOME, PATH, XDG_* and
	// GUARDRUN_* must be as here. Nil means the server's own.
	Environ []string
}
