package runner

import (
	"io"
	"os"
	"syscall"
)

// Stdio is where the sandboxed command reads and writes. Nil means
// /dev/null. *os.File values are handed to the command as they are, so a
// terminal stays a terminal inside; other readers and writers are copied
// through pipes.
type Stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Script returns the argv that runs script with the shell program, as
// `program -c script [argv0 [args...]]`, like sh -c: the one way a script
// reaches Run.
func Script(program, script string, args ...string) []string {
	return append([]string{program, "-c", script}, args...)
}

// relayed are the signals a person or a supervisor sends to guardrun that
// belong to the command: guardrun passes them on and keeps waiting for
// the command's own exit status. Keep in sync with the package doc.
var relayed = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}
