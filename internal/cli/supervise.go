package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/term"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/broker"
	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/internal/serve"
	"github.com/guardrun/guardrun/netproxy"
	"github.com/guardrun/guardrun/rules"
	"github.com/guardrun/guardrun/supervisor"
)

const superviseUsage = `Usage: guardrun supervise [--config FILE] [--backend NAME] [--trust-shell] -- AGENT [ARG...]

Runs AGENT in a pseudo-terminal on this terminal. The commands it runs
through guardrun ask for approval here: the prompt appears over the
agent's output, which is held back until you answer, and every guardrun
the agent starts, however nested, asks in the same place. "Approve for
session" lasts as long as this supervisor.

Claude Code, Codex and Gemini CLI (by the command's name, also behind
npx) choose their own shell, not $SHELL: their shell and file tools reach
guardrun through the agent's pre-tool hook (guardrun hook). For Claude
Code, supervise adds the hook for this run (--settings); Codex and Gemini
CLI read hooks only from their settings files, so supervise needs them
wired once (guardrun integrate codex|gemini) and offers to do it. It says
at start which. For any other agent it warns that only what it runs
through $SHELL is checked; --trust-shell says that is all it runs.

The agent's environment gets SHELL (this guardrun), GUARDRUN_SOCKET (where
its commands ask), GUARDRUN_SESSION (the supervisor's session), with
network: proxy GUARDRUN_PROXY (the session's one proxy, which its commands
share), with --config GUARDRUN_CONFIG, with --backend GUARDRUN_BACKEND,
and on Linux GUARDRUN_SERVER: the agent's guardrun commands that need no
prompt are run from here, as under guardrun serve, without starting
guardrun anew.
The config is checked before the agent starts.

Keys at a prompt: y approve once, s approve for session, a always in this
project (when offered: the rule it keeps is shown), n deny (then an
optional note for the agent), v view in full. Keys typed in the first
moment after a prompt appears still go to the agent. When guardrun web
runs, every prompt is offered on its page too; the first answer counts.

Exit status: the agent's own (signals as 128+N); 125 if guardrun failed;
126 if AGENT cannot be run, 127 if it is not found.
`

func cmdSupervise(g *global, args []string, io IO) error {
	vf, help, err := verbStart(g, args, superviseUsage, nil, []string{"--trust-shell"}, io)
	if err != nil || help {
		return err
	}
	argv, err := vf.command("supervise needs an agent: guardrun supervise -- AGENT [ARG...]")
	if err != nil {
		return err
	}
	// The agent's commands are separate guardrun processes: only the
	// config can reach them (as $GUARDRUN_CONFIG).
	if g.Mode != "" {
		return usagef("--mode does not reach the agent's commands; set mode: in the config")
	}
	if g.Session != "" {
		return usagef("--session does not apply: the supervisor is the session")
	}
	in, okIn := io.Stdin.(*os.File)
	out, okOut := io.Stdout.(*os.File)
	if !okIn || !okOut {
		return errors.New("supervise: stdin and stdout must be files (a terminal)")
	}

	// Fail before the agent starts if its commands would all fail: a bad
	// config, or no sandbox under fail_fast.
	s, err := request.Open(g.Options, io)
	if err != nil {
		return err
	}
	if s.NoSandbox != nil {
		fmt.Fprintf(io.Stderr, "guardrun: warning: no OS sandbox (%v); every command the agent runs will be refused (os_sandbox_fallback: refuse_tools)\n", s.NoSandbox)
	}
	if !term.IsTerminal(int(in.Fd())) && s.Loaded.Cfg.Mode == rules.ModeInteractive {
		fmt.Fprintln(io.Stderr, "guardrun: supervise: standard input is not a terminal, so nobody can answer: interactive mode acts as strict for the agent's commands")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("supervise: find guardrun's own path for SHELL: %w", err)
	}
	ar, err := wireAgent(argv, vf.bools["--trust-shell"], exe, io)
	if err != nil {
		return err
	}
	argv = ar.argv
	if ar.say != "" {
		fmt.Fprintln(io.Stderr, ar.say)
	}
	id, err := newSupervisorSession()
	if err != nil {
		return err
	}
	env := os.Environ()
	env = setenv(env, "SHELL", exe)
	env = setenv(env, "GUARDRUN_SESSION", id)
	env = unsetenv(env, "GUARDRUN_SOCKET") // Run sets the new one
	if g.Backend != "" {
		// The agent's guardrun runs use the backend chosen here.
		env = setenv(env, "GUARDRUN_BACKEND", string(g.Backend))
	}
	if g.Config != "" {
		abs, err := filepath.Abs(g.Config)
		if err != nil {
			return fmt.Errorf("config: %w", err)
		}
		env = setenv(env, "GUARDRUN_CONFIG", abs)
	}
	env = unsetenv(unsetenv(env, netproxy.SharedEnvVar), netproxy.SharedAddrEnvVar)
	if s.Sandboxed && s.Loaded.Cfg.Sandbox.Proxy && runtime.GOOS == "linux" {
		// One proxy for the session: the agent's commands register with
		// it instead of each starting their own.
		sp, err := request.StartSharedProxy(s, id, io)
		if err != nil {
			return err
		}
		defer sp.Close()
		for _, kv := range sp.Env() {
			k, v, _ := strings.Cut(kv, "=")
			env = setenv(env, k, v)
		}
	}
	env = unsetenv(env, request.ServerEnvVar)
	if runtime.GOOS == "linux" {
		// The agent's guardrun commands are served from here when they
		// can be (see guardrun serve); the rest run as they would.
		srv, err := serve.Listen(serve.Config{Parse: ParseRun, Report: report, Environ: env})
		if err != nil {
			fmt.Fprintf(io.Stderr, "guardrun: warning: %v; the agent's commands each start guardrun anew\n", err)
		} else {
			defer srv.Close()
			go srv.Serve()
			env = setenv(env, request.ServerEnvVar, srv.Path())
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env

	sv := &supervisor.Supervisor{
		In: in, Out: out,
		Style: approval.Style{Color: approval.ColorWanted(os.Getenv) && term.IsTerminal(int(out.Fd()))},
	}
	if bc, err := broker.Dial(context.Background(), broker.SocketPath(s.Env)); err == nil {
		// The person's broker runs (guardrun web): its fronts are
		// offered every prompt too.
		defer bc.Close()
		bc.Via = "supervisor"
		sv.Relay = bc
		fmt.Fprintf(io.Stderr, "guardrun: prompts are offered on your approval broker (guardrun web) too\n")
	}
	status, err := sv.Run(context.Background(), cmd)
	switch {
	case err == nil:
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(io.Stderr, "guardrun: supervise: %v\n", err)
		return &exitStatus{Code: 127}
	case errors.Is(err, fs.ErrPermission), errors.Is(err, exec.ErrDot):
		fmt.Fprintf(io.Stderr, "guardrun: supervise: %v\n", err)
		return &exitStatus{Code: 126}
	default:
		return err
	}
	if status != 0 {
		return &exitStatus{Code: status}
	}
	return nil
}

// newSupervisorSession is a fresh session id for one supervisor's
// lifetime: what its children record in the audit log.
func newSupervisorSession() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("supervise: session id: %w", err)
	}
	return "supervise-" + hex.EncodeToString(b[:]), nil
}

func setenv(env []string, key, val string) []string {
	return append(unsetenv(env, key), key+"="+val)
}

func unsetenv(env []string, key string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") && kv != key {
			out = append(out, kv)
		}
	}
	return out
}

func getenvFrom(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}
