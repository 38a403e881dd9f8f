//go:build !linux

package bashoracle

import (
	"errors"
	"time"
)

// StandIns: see the Linux implementation.
var StandIns []string

// Oracle needs Linux (bubblewrap and strace).
type Oracle struct{ Timeout time.Duration }

// Result is one traced run.
type Result struct {
	Trace     *Trace
	Status    int
	Output    string
	Workspace string
}

// New fails: the oracle runs only on Linux.
func New(dir string) (*Oracle, error) {
	return nil, errors.New("the bash oracle needs Linux (bubblewrap and strace)")
}

// Run is never reached.
func (o *Oracle) Run(shell, script string) (*Result, error) {
	return nil, errors.New("the bash oracle needs Linux")
}

func (o *Oracle) decideDir() string { return "" }
func (o *Oracle) homeDir() string   { return "" }
