package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/sandbox"
)

// ProxyRoute is how a sandbox reaches guardrun's network proxy: the
// guardrun binary (which runs the bridge inside) and the proxy's unix
// socket.
type ProxyRoute = bwrap.ProxyRoute

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

// waitRelaying waits for cmd, passing each signal from sigs to relay
// meanwhile, and returns the exit status as sh reports it (128+N for
// signal N). prefix names the mechanism in errors.
func waitRelaying(cmd *exec.Cmd, sigs <-chan os.Signal, relay func(os.Signal), prefix string) (int, error) {
	// The relay's stop condition: done closes after Wait, when the pid
	// may be reused.
	done := make(chan struct{})
	relayDone := make(chan struct{})
	go func() {
		defer close(relayDone)
		for {
			select {
			case s := <-sigs:
				relay(s)
			case <-done:
				return
			}
		}
	}()
	werr := cmd.Wait()
	close(done)
	<-relayDone
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Exited():
				return ws.ExitStatus(), nil
			case ws.Signaled():
				return 128 + int(ws.Signal()), nil
			}
		}
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return 0, fmt.Errorf("%s: %w", prefix, werr)
	}
	return 0, fmt.Errorf("%s: the command ended without an exit status", prefix)
}

// moveAsideCreated moves aside what the command created at the
// profile's MoveAfter paths (names no mount can keep missing), saying so
// on stderr. The landlock backend does it with its other protected names.
func moveAsideCreated(p *sandbox.Profile, stdio Stdio) {
	if p == nil {
		return
	}
	for _, m := range p.MoveAsideCreated(time.Now()) {
		if stdio.Stderr != nil {
			fmt.Fprintf(stdio.Stderr, "guardrun: %s\n", m)
		}
	}
}
