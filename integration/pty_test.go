package integration

import (
	"bytes"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/guardrun/guardrun/approval"
)

// ptyRun is guardrun running with a pty as its controlling terminal, so
// it prompts on /dev/tty, which the test reads (screen) and types on
// (send); stdout and stderr are captured apart from it.
type ptyRun struct {
	*term
	stdout bytes.Buffer
	stderr bytes.Buffer
}

// startOnPTY starts guardrun with args in dir. stdin is its standard
// input; nil makes the pty its standard input too.
func startOnPTY(t testing.TB, dir string, env []string, stdin io.Reader, args ...string) *ptyRun {
	t.Helper()
	r := &ptyRun{}
	cmd := exec.Command(guardrunBin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = &r.stdout, &r.stderr
	cmd.Stdin = stdin
	r.term = startTerm(t, cmd, termOpts{})
	return r
}

// waitFor waits until the terminal shows s for the n-th time.
func (r *ptyRun) waitFor(s string, n int) {
	r.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for strings.Count(r.screen(), s) < n {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %q (%d) on the terminal; it shows:\n%s\nstderr: %s", s, n, r.screen(), r.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// send types s. An answer key (y, s, a, n, v) is typed as a person
// would: after the prompt's quiet time, and y, s and a followed by the
// approval code the prompt shows where programs can type into the
// terminal.
func (r *ptyRun) send(s string) {
	r.t.Helper()
	answer := s == "y" || s == "s" || s == "a" || s == "n" || s == "v"
	if answer {
		time.Sleep(450 * time.Millisecond) // the prompt discards keys until the keyboard was quiet 300 ms
	}
	confirms := strings.Count(r.screen(), "to confirm, type")
	if _, err := r.pm.Write([]byte(s)); err != nil {
		r.t.Fatal(err)
	}
	if (s == "y" || s == "s" || s == "a") && approval.InjectionPossible() {
		r.waitFor("to confirm, type", confirms+1)
		m := regexp.MustCompile(`to confirm, type (?:\x1b\[1m)?([a-z]+)`).FindAllStringSubmatch(r.screen(), -1)
		if len(m) <= confirms {
			r.t.Fatalf("no approval code on the terminal:\n%s", r.screen())
		}
		if _, err := r.pm.Write([]byte(m[confirms][1])); err != nil {
			r.t.Fatal(err)
		}
	}
}

// drained waits until everything the child wrote on the terminal has been
// read.
func (r *ptyRun) drained() {
	r.t.Helper()
	select {
	case <-r.shown:
	case <-time.After(15 * time.Second):
		r.t.Fatalf("the terminal was not closed; it shows:\n%s", r.screen())
	}
}
