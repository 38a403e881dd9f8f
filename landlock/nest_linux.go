package landlock

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// nestArg is argv[1] of guardrun's own executable started as the
// trampoline that nests the command's Landlock domain
// (nest_cgo_linux.go): "EXE nestArg PATH ARGV..." runs PATH with ARGV in a
// new domain below the one it was started in. It begins with \x01, which
// no ordinary invocation passes; and whoever passes it only restricts
// themselves further.
const nestArg = "\x01guardrun-landlock-nest"

// nestExe is how the child reaches guardrun's own executable: the
// running binary, wherever it has been moved since.
const nestExe = "/proc/self/exe"

// SelfExe is guardrun's own executable as Command grants it (Options.Self):
// the trampoline that nests the command's domain; "" where there is none.
func SelfExe() string { return selfExe() }

// selfExe is the file of guardrun's own executable, which the ruleset
// lets the command execute (and read) so that the trampoline can start;
// "" when it cannot be found (the command is then refused at its start,
// never run without the nested domain).
func selfExe() string {
	if !nestAvailable {
		return ""
	}
	p, err := os.Readlink(nestExe)
	if err != nil {
		return ""
	}
	return p
}

// startDirect starts commands in the restricted thread's own domain, as
// before the nested domain: only BenchmarkStart sets it, to measure what
// the trampoline costs.
var startDirect bool

// nests reports whether the command is started through the trampoline:
// with the signal scope (ABI 6) a domain can signal its own tasks, so
// the command gets a domain nested below the restricted thread's and
// cannot signal the thread (nor any other of guardrun's).
func (c *Cmd) nests() bool {
	return c.Ruleset.Scoped&ScopeSignal != 0 && !startDirect
}

// startCmd starts c.Cmd; with nests, through the trampoline: the child
// of the restricted thread execs guardrun's own executable, which nests
// a domain and execs the command. c.Cmd's Path and Args are given back
// after the start.
func (c *Cmd) startCmd() error {
	if !c.nests() {
		return c.Cmd.Start()
	}
	if !nestAvailable {
		return fmt.Errorf("landlock: this guardrun was built without cgo and cannot nest the command's Landlock domain, which keeps the command from signalling guardrun")
	}
	path, args := c.Cmd.Path, c.Cmd.Args
	c.Cmd.Path = nestExe
	c.Cmd.Args = append([]string{"guardrun", nestArg, path}, args...)
	err := c.Cmd.Start()
	c.Cmd.Path, c.Cmd.Args = path, args
	return err
}

// goOffMain runs f on a new goroutine locked to an OS thread that is not
// guardrun's main thread (the thread-group leader, whose id is the pid
// everyone sees), and never unlocked: the thread ends with f. If the
// goroutine lands on the main thread, it keeps it locked while another
// goroutine takes a thread, which therefore cannot be the main one.
func goOffMain(f func()) {
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			f()
			return
		}
		locked := make(chan struct{})
		goOffMain(func() { close(locked); f() })
		<-locked
		runtime.UnlockOSThread()
	}()
}
