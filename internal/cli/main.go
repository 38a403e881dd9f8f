package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/internal/sys/trace"
	"github.com/guardrun/guardrun/netproxy"
)

// Exit statuses of the contract.
const (
	exitOK       = 0
	exitUsage    = 2
	exitRefused  = 77
	exitInternal = 125
)

// usageError is a mistake on the command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// refusal is a command guardrun refused to run: exit 77. Line is printed
// as is.
type refusal = request.Refusal

// exitStatus carries a command's own exit status.
type exitStatus = request.ExitStatus

// IO is where a run reads and writes.
type IO = request.IO

// Main runs guardrun with the given argv[0] and arguments and returns the
// process exit status.
func Main(argv0 string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == netproxy.BridgeVerb {
		// Inside a sandbox with the proxy, before anything else.
		return netproxy.BridgeMain(args[1:], stderr)
	}
	trace.Begin()
	defer trace.Print(stderr)
	io := IO{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	err := dispatch(argv0, args, io)
	return report(err, stderr)
}

// report maps an error to an exit status; only here are errors printed.
func report(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var st *exitStatus
	if errors.As(err, &st) {
		return st.Code
	}
	var ref *refusal
	if errors.As(err, &ref) {
		fmt.Fprintln(stderr, ref.Line)
		return exitRefused
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "guardrun: %s\nRun 'guardrun --help' for usage.\n", ue.msg)
		return exitUsage
	}
	if errors.Is(err, errHelpShown) {
		return exitOK
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "guardrun: ") {
		msg = "guardrun: " + msg
	}
	fmt.Fprintln(stderr, msg)
	return exitInternal
}

var errHelpShown = errors.New("help shown")

const mainUsage = `guardrun puts a person between an agent and the machine: every command is
checked against rules, risky ones wait for approval, and whatever runs, runs
in an OS sandbox.

Usage:
  guardrun [flags] -- CMD [ARG...]        check, ask, then run one command in the sandbox
  guardrun [flags] -c 'SCRIPT' [ARGV0 [ARG...]]   the same for a shell script
  guardrun shell                          a supervised interactive shell
  guardrun supervise -- AGENT [ARG...]    run an agent in a pty; its commands ask here
  guardrun serve -- CMD [ARG...]          run CMD; the guardrun commands it starts run faster, served from here
  guardrun explain [--json] -c 'SCRIPT' | -- CMD...   the decision, without running
  guardrun check [--json]                 validate the config and run its examples
  guardrun profile [--os linux|darwin] [--json]   the OS sandbox that would be applied
  guardrun fs read|write|edit|ls|rm PATH  file operations through zones and approval
  guardrun log [--json] [-n N] [--session ID]     approval and run history
  guardrun session list|revoke            session grants
  guardrun trust [FILE]                   trust a project's .guardrun.yaml
  guardrun integrate AGENT [--project] [--remove] [--dry-run] | --status
                                          wire guardrun into an agent's own hooks (claude-code, codex, gemini)
  guardrun hook AGENT                     the hook command an agent runs (JSON on stdin)
  guardrun checkpoints [--json] [-n N]    what commands changed in the writable zones
  guardrun undo [N] [--dry-run] [--yes]   put a zone back as it was before request N
  guardrun rules [list|revoke PATTERN|--all]   "always in this project" rules you gave
  guardrun web [--listen ADDR] [--open]   your approval broker, with a web page
  guardrun mcp [--listen ADDR]            an MCP server whose tools go through guardrun
  guardrun connect HOST PORT              (inside a sandbox) a tunnel through the proxy, for ssh's ProxyCommand
  guardrun version

Flags (before or after the verb):
  --config FILE       config file (default: $GUARDRUN_CONFIG, .guardrun.yaml upwards,
                      $XDG_CONFIG_HOME/guardrun/config.yaml, the embedded default)
  --mode MODE         interactive, approve-all or strict
  --approve-all       same as --mode approve-all
  --strict            same as --mode strict
  --session ID        session for "approve for session" grants
  --backend NAME      Linux OS sandbox: auto, bwrap or landlock (default:
                      $GUARDRUN_BACKEND, else sandbox.backend)

As a login shell (SHELL=guardrun) it takes bash's arguments in bash's
order (-c SCRIPT [ARGV0 [ARG...]], -l/--login, -lc, -c -l, -i, -e, -o NAME,
-O NAME, --norc, ...) and an argv[0] starting with '-'; options it cannot
follow are refused. An agent's own wrapper around a command (Claude Code's,
Gemini CLI's, Codex's) is recognised: the command inside is what is
judged. Claude Code, Codex and Gemini CLI need not use $SHELL: see
guardrun integrate --help. The commands guardrun hook rewrites start with
--via AGENT [--workspace DIR] [--ticket ID] [--cwd-fd N] before -c.

Exit status: the command's own (signals as 128+N); 77 refused; 125 guardrun
failed; 2 usage error.
`

func dispatch(argv0 string, args []string, io IO) error {
	g, rest, err := parseGlobal(args)
	if err != nil {
		return err
	}
	if err := g.backendFromEnv(os.Getenv); err != nil {
		return err
	}
	login := strings.HasPrefix(baseName(argv0), "-")
	if len(rest) == 0 {
		if f, ok := io.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			return runShell(g, nil, io)
		}
		if login {
			return usagef("a login shell without a terminal needs -c SCRIPT")
		}
		fmt.Fprint(io.Stderr, mainUsage)
		return usagef("nothing to run")
	}
	if hf, after, err := takeHookFlags(rest); err != nil {
		return err
	} else if hf != nil {
		return runHooked(g, hf, after, io)
	}
	first := rest[0]
	switch {
	case first == "--":
		return runArgv(g, rest[1:], io)
	case first == "-h" || first == "--help" || first == "help":
		fmt.Fprint(io.Stdout, mainUsage)
		return nil
	case isShFlags(first):
		return runShFront(g, rest, io)
	}
	verb, vargs := rest[0], rest[1:]
	switch verb {
	case "explain":
		return cmdExplain(g, vargs, io)
	case "check":
		return cmdCheck(g, vargs, io)
	case "profile":
		return cmdProfile(g, vargs, io)
	case "log":
		return cmdLog(g, vargs, io)
	case "session":
		return cmdSession(g, vargs, io)
	case "version":
		return cmdVersion(g, vargs, io)
	case "shell":
		return runShell(g, vargs, io)
	case "supervise":
		return cmdSupervise(g, vargs, io)
	case "serve":
		return cmdServe(g, vargs, io)
	case "fs":
		return cmdFS(g, vargs, io)
	case "trust":
		return cmdTrust(g, vargs, io)
	case "rules":
		return cmdRules(g, vargs, io)
	case "web":
		return cmdWeb(g, vargs, io)
	case "connect":
		return cmdConnect(g, vargs, io)
	case "hook":
		return cmdHook(g, vargs, io)
	case "integrate":
		return cmdIntegrate(g, vargs, io)
	case "checkpoints":
		return cmdCheckpoints(g, vargs, io)
	case "undo":
		return cmdUndo(g, vargs, io)
	case "mcp":
		return cmdMCP(g, vargs, io)
	}
	if strings.HasPrefix(verb, "-") {
		return usagef("unknown flag %s", verb)
	}
	return usagef("unknown command %q (to run a program, put -- before it: guardrun -- %s)", verb, verb)
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// ParseRun parses a guardrun command line (the arguments after argv[0])
// that runs one command, -c SCRIPT or -- CMD with the common flags and
// sh-style options, as Main would, reading the environment with getenv.
// ok is false for anything else: another verb, a usage error, help, no
// command, or one Main would turn into an interactive shell. `guardrun
// serve` runs what it parses and leaves the rest to its client's own
// guardrun, which reports it as always.
func ParseRun(args []string, getenv func(string) string) (opts request.Options, j *request.Job, ok bool) {
	g, rest, err := parseGlobal(args)
	if err != nil || len(rest) == 0 {
		return opts, nil, false
	}
	if err := g.backendFromEnv(getenv); err != nil {
		return opts, nil, false
	}
	switch {
	case rest[0] == "--":
		if len(rest) < 2 {
			return opts, nil, false
		}
		j = &request.Job{Argv: rest[1:]}
	case isShFlags(rest[0]):
		if j, err = parseShFront(rest, getenv); err != nil || j == nil {
			return opts, nil, false
		}
	default:
		return opts, nil, false
	}
	return g.Options, j, true
}

// Report maps the error of a run to guardrun's exit status and prints it
// on stderr, as Main does.
func Report(err error, stderr io.Writer) int { return report(err, stderr) }
