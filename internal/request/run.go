package request

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/broker"
	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/sys/trace"
	"github.com/guardrun/guardrun/netproxy"
	"github.com/guardrun/guardrun/rules"
	"github.com/guardrun/guardrun/runner"
	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/shellparse"
)

// Job is one thing to run: a script for the shell program, or an argv
// executed directly.
type Job struct {
	Script    string   // run by the config's shell.program with -c
	ShellOpts []string // -e, -u, -x, -o NAME passed to the shell
	PosArgs   []string // ARGV0 ARG... after -c SCRIPT
	Argv      []string // set for `guardrun -- CMD`: executed directly
	// Cwd and Environ default to the process's own; `guardrun shell`
	// sets them to carry cd and export from one input to the next.
	Cwd     string
	Environ []string
	// PID is the process the job came from when that is not this one
	// (`guardrun serve` runs its clients' jobs): the audit records name
	// it. Via says how the job came ("server"), for the audit records.
	PID int
	Via string
	// Wrapper, when set, is the agent's wrapper the job came in (see
	// RecognizeWrapper): Script is then the agent's command inside it.
	Wrapper *Wrapper
	// Signals, when not nil, are relayed to the command instead of the
	// signals this process receives (runner.Options.Signals).
	Signals <-chan os.Signal
	// Prediction, when set, runs the command verified (SPEC §3,
	// "Run-time verification") against it: what the command may run and
	// change. A call outside it is held and asked about as the request
	// would be; one refused ends the request refused (77) with its line.
	// Nil verifies a request the analysis pre-approved (a rule allowed
	// it and every part is bounded: Decision.Verified) against the
	// decision's own prediction, and runs any other unverified.
	Prediction *sandbox.Prediction
	// Commit, when set, is called once before Run does anything that
	// cannot be taken back (an audit record, a prompt's answer acted
	// on, the command): `guardrun serve` tells its client there that
	// the job is its own now. An error from it ends Run with that
	// error, with nothing done.
	Commit func() error
	// Preapproved, when set, is asked first when the job would prompt in
	// interactive mode: an approval a person gave before this process
	// ran (an agent's own permission dialog, carried by a one-time
	// ticket). ok false asks as usual; warning, when set, says why on
	// stderr.
	Preapproved func(req *approval.Request) (ok bool, warning string)
	// ReportDir, when set, is called after a script ran with the
	// directory its shell was in when it exited (see dirreport.go), so
	// that an agent's shell can follow a cd the script made.
	ReportDir func(dir string)
}

// commit calls j.Commit once.
func (j *Job) commit() error {
	if j.Commit == nil {
		return nil
	}
	c := j.Commit
	j.Commit = nil
	return c()
}

// ErrNeedsPerson is Run's and Ask's error, with Session.NoPerson set,
// when the gate would ask a person: nothing was asked, recorded or run.
var ErrNeedsPerson = errors.New("the request needs a person to approve it")

// Display is the job as the person is shown it: the script, or the
// argv quoted as a shell of shell.program's dialect would read it back.
func (s *Session) Display(j *Job) string {
	if j.Argv != nil {
		return shellparse.QuoteArgv(j.Argv, s.Loaded.Engine.Dialect())
	}
	return j.Script
}

// openSession picks the session and opens its store; nil when there is
// no session (no terminal, nothing set).
func openSession(g Options, l *config.Loaded, e *config.Env) (string, *approval.Store) {
	id, ok := approval.SessionID(g.Session, e.Getenv)
	if !ok {
		return "", nil
	}
	st, err := approval.OpenStore(e.SessionStore(), id, l.Cfg.Session.TTL)
	if err != nil {
		return id, nil
	}
	return id, st
}

// Protected are guardrun's own files for a request run in cwd: config
// files read-only (and, where they do not exist yet, uncreatable), state
// hidden. The sandbox enforces them on commands; guardrun fs, which runs
// outside it, refuses them itself.
func (s *Session) Protected(cwd string) []sandbox.Protected {
	return protected(s.Loaded, s.Env, cwd)
}

func protected(l *config.Loaded, e *config.Env, cwd string) []sandbox.Protected {
	var out []sandbox.Protected
	add := func(p string, hide bool) {
		if p == "" {
			return
		}
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			hide = true // a path that does not exist is masked so it cannot be created
		}
		for _, o := range out {
			if o.Path == p {
				return
			}
		}
		out = append(out, sandbox.Protected{Path: p, Hide: hide})
	}
	for _, f := range l.Files {
		add(f, false)
	}
	if uc := e.UserConfig(); uc != "" {
		add(filepath.Dir(uc), false)
	}
	add(filepath.Join(cwd, config.ProjectFile), false)
	for _, z := range l.Cfg.Sandbox.Zones {
		if z.Mode == rules.ReadWrite {
			add(filepath.Join(z.Root, config.ProjectFile), false)
		}
	}
	add(e.StateDir, true)
	add(e.SessionStore(), true)
	add(l.Cfg.Audit.Path, true)
	if s := e.Getenv("GUARDRUN_SOCKET"); s != "" {
		add(filepath.Dir(s), true)
	}
	if s := e.Getenv(ServerEnvVar); s != "" {
		add(filepath.Dir(s), true)
	}
	if s := e.Getenv(netproxy.SharedEnvVar); s != "" {
		add(filepath.Dir(s), true)
	}
	if d := broker.Dir(e); e.StateDir == "" || !rules.Within(d, e.StateDir) {
		// The approval broker's socket (under the state directory, hidden
		// above, unless $XDG_RUNTIME_DIR holds it).
		add(d, true)
	}
	return out
}

// ProfileFor derives the sandbox profile for a request run in cwd under
// config l (guardrun profile shows it without a session), for a command
// with guardrun's own PATH.
func ProfileFor(l *config.Loaded, e *config.Env, cwd string, network bool) (*sandbox.Profile, error) {
	return profileWithPath(l, e, cwd, network, e.Getenv("PATH"))
}

// profileWithPath is ProfileFor for a command whose PATH is path: it
// chooses which of the person's toolchains under the home directory are
// shown (system_read: default).
func profileWithPath(l *config.Loaded, e *config.Env, cwd string, network bool, path string) (*sandbox.Profile, error) {
	spec := l.Cfg.SandboxSpec(cwd, e.Home, network, protected(l, e, cwd))
	spec.Path = path
	spec.AccountHome = e.AccountHome()
	p, err := sandbox.Derive(spec)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return p, nil
}

func sandboxSummary(l *config.Loaded, d *rules.Decision) string {
	var zs []string
	for _, z := range l.Cfg.Sandbox.Zones {
		zs = append(zs, fmt.Sprintf("%s %s (%s)", z.Name, z.Root, z.Mode))
	}
	if len(zs) == 0 {
		zs = []string{"no zones"}
	}
	net := "network off"
	switch {
	case d.Network:
		net = "network on"
	case d.Proxy:
		net = l.Cfg.Sandbox.Domains.Summary()
	}
	return strings.Join(zs, ", ") + "; " + net
}

// BackendFor is the OS sandbox backend asked for: Options.Backend
// (--backend or $GUARDRUN_BACKEND), else the config's sandbox.backend.
func BackendFor(g Options, l *config.Loaded) rules.Backend {
	if g.Backend != "" {
		return g.Backend
	}
	return l.Cfg.Sandbox.Backend
}

// ChooseBackend is the OS sandbox backend that runs commands here
// (bwrap, landlock, seatbelt), or why none can: the one asked for (see
// BackendFor), with auto resolved to what works. It remembers its checks,
// and keeps compiled seccomp programs and the landlock backend's locks
// and shared snapshots of the protected names, in the state directory,
// which the sandbox hides.
func ChooseBackend(g Options, l *config.Loaded, e *config.Env) (runner.Backend, error) {
	return runner.Choose(string(BackendFor(g, l)), runner.Config{
		CheckCache:  filepath.Join(e.StateDir, "sandbox-ok"),
		FilterCache: filepath.Join(e.StateDir, "cache"),
		StateDir:    e.StateDir,
	})
}

// Session is everything that stays the same across the jobs of one
// guardrun process: the config, the sandbox's availability, the session.
// `guardrun -c` runs one job; `guardrun shell` runs one per input.
type Session struct {
	// Opts are the caller's choices over the config (the common flags).
	Opts Options
	// Env is where config and state are found.
	Env *config.Env
	// Loaded is the config in force and where it came from; `guardrun
	// shell` replaces it after cd (ConfigFor).
	Loaded *config.Loaded
	// Sandboxed is set when commands run under the OS sandbox; unset
	// when there is none and require_os_sandbox is false (they run
	// unsandboxed) or none works (NoSandbox says why).
	Sandboxed bool
	// Backend is the OS sandbox that runs commands (bwrap, landlock,
	// seatbelt) when sandboxed; nil otherwise.
	Backend runner.Backend
	// NoSandbox is why there is no OS sandbox (nil when there is one).
	NoSandbox error
	// ID is the session of "approve for session" grants ("" for none),
	// and Store their store (nil for none).
	ID    string
	Store *approval.Store
	// Prompter, when set, replaces the terminal prompter: guardrun mcp
	// asks through its client's form this way.
	Prompter approval.Prompter
	// NoPerson, when set, makes Ask fail with ErrNeedsPerson instead
	// of asking anyone (`guardrun serve`, which then leaves the request
	// to its client's own guardrun).
	NoPerson bool
	// NoTerminal, when set, never asks on the terminal: only the
	// supervisor (or Prompter) is asked. An agent hook's command runs on
	// the agent's terminal, never the person's.
	NoTerminal bool
	// Rules are the person's "always in this project" rules (nil: none
	// are applied or offered).
	Rules *approval.RuleStore
}

// Open starts a session for commands: it loads and trusts the config
// (warning on io.Stderr about untrusted files), finds out whether the OS
// sandbox works, and opens the session's grant store. With
// require_os_sandbox and fail_fast and no sandbox, it fails (125) before
// anything is decided.
func Open(g Options, io IO) (*Session, error) {
	return open(g, nil, io, true)
}

// OpenEnv is Open in the environment e instead of the process's own
// (`guardrun serve`, for its clients).
func OpenEnv(g Options, e *config.Env, io IO) (*Session, error) {
	return open(g, e, io, true)
}

// OpenForFiles is Open for guardrun fs, without the OS sandbox check:
// fs performs its operation itself, after policy, so whether a sandbox
// could start changes nothing for it. The session can never run a
// command (Run refuses).
func OpenForFiles(g Options, io IO) (*Session, error) {
	return open(g, nil, io, false)
}

func open(g Options, e *config.Env, io IO, checkSandbox bool) (*Session, error) {
	end := trace.Phase("config")
	if e == nil {
		var err error
		if e, err = config.NewEnv(); err != nil {
			return nil, err
		}
	}
	l, err := config.Load(g.ConfigFlags(), e)
	end()
	if err != nil {
		return nil, err
	}
	l.WarnIgnored(io.Stderr)
	s := &Session{Opts: g, Env: e, Loaded: l, Sandboxed: checkSandbox, Rules: openRules(e)}
	if !checkSandbox {
		// Fail closed: this session must never run a command.
		s.NoSandbox = errors.New("the OS sandbox was not checked for this operation")
		s.ID, s.Store = openSession(g, l, e)
		return s, nil
	}
	end = trace.Phase("sandbox check")
	backend, err := ChooseBackend(g, l, e)
	s.Backend = backend
	end()
	if err != nil {
		cfg := l.Cfg
		switch {
		case !cfg.Sandbox.RequireOSSandbox:
			fmt.Fprintf(io.Stderr, "guardrun: warning: running without an OS sandbox (require_os_sandbox: false): %v\n", err)
			s.Sandboxed = false
		case cfg.Sandbox.Fallback == rules.RefuseTools:
			s.Sandboxed, s.NoSandbox = false, err
		default:
			return nil, fmt.Errorf("no OS sandbox can be applied: %v\n(require_os_sandbox is on with os_sandbox_fallback: fail_fast; fix the above, or set require_os_sandbox: false to run unsandboxed)", err)
		}
	}
	end = trace.Phase("session")
	s.ID, s.Store = openSession(g, l, e)
	end()
	return s, nil
}

// Dir is where j runs: its Cwd, else the process's working directory.
func (s *Session) Dir(j *Job) string {
	if j.Cwd != "" {
		return j.Cwd
	}
	return s.Env.Cwd
}

// Decide is the policy's verdict on j (allow, ask or block, part by
// part), in the directory it runs in. Nothing is asked, run or audited.
func (s *Session) Decide(j *Job) *rules.Decision {
	defer trace.Phase("decide")()
	return s.withProjectRules(j, DecideJob(s.Loaded, j, s.Dir(j)))
}

// DecideJob is the verdict of config l on j run in cwd (Decide, and
// guardrun explain without a session): an argv's, a script's, or, for
// a script that makes an agent's shell snapshot, a block.
func DecideJob(l *config.Loaded, j *Job, cwd string) *rules.Decision {
	if j.Wrapper != nil && j.Wrapper.Decline != "" {
		return &rules.Decision{Decision: rules.Block, Reason: j.Wrapper.Decline}
	}
	if j.Argv != nil {
		return l.Engine.Argv(j.Argv, cwd)
	}
	return l.Engine.Script(j.Script, cwd)
}

// Run carries one job through the whole flow: refused at once without
// an OS sandbox under refuse_tools; decided (Decide); put to the gate
// (Ask); its sandbox profile derived and backend used; run; audited, with
// a start record before it runs and an end record after. The error is a
// *Refusal (exit 77), an *ExitStatus (the command's own non-zero status),
// or guardrun's own failure; nil when the command ran and exited 0.
func (s *Session) Run(ctx context.Context, j *Job, io IO) error {
	start := time.Now()
	l, e, cfg := s.Loaded, s.Env, s.Loaded.Cfg
	cwd := s.Dir(j)
	if s.NoSandbox != nil {
		if err := j.commit(); err != nil {
			return err
		}
		rec := approval.Record{Verdict: "block", Outcome: "refused", DecidedBy: "sandbox", Reason: s.NoSandbox.Error()}
		s.audit(j, cwd, rec, start, io)
		return &Refusal{fmt.Sprintf("guardrun: refused: no OS sandbox is available (os_sandbox_fallback: refuse_tools): %v", s.NoSandbox)}
	}
	if err := proxyError(s); err != nil {
		if cerr := j.commit(); cerr != nil {
			return cerr
		}
		// Refused before anything is decided or asked: every command of
		// this config would reach the network through the proxy, which
		// this kernel's landlock cannot route (neither more nor less
		// network than configured).
		rec := approval.Record{Session: s.ID, Verdict: "block", Outcome: "failed", DecidedBy: "sandbox", Sandbox: s.Backend.Name(), Reason: err.Error()}
		s.audit(j, cwd, rec, start, io)
		return err
	}

	// A pre-approval that relies on undo takes its checkpoint first and
	// asks where it cannot (checkpoint.go).
	cp, d := s.checkpointAllowed(ctx, j, s.Decide(j), cwd, start)
	req := &approval.Request{
		Display:  s.Display(j),
		Decision: d,
		Cwd:      cwd,
		Sandbox:  sandboxSummary(l, d),
		Summary:  OneLineDisplay(s.Display(j)),
	}
	if s.Store != nil {
		req.Key = approval.RequestKey(d, cwd)
	}
	s.offerAlways(req, cwd)
	end := trace.Phase("approve")
	out, err := s.askJob(ctx, j, req, io)
	end()
	if err != nil {
		return err
	}
	if err := j.commit(); err != nil {
		return err
	}
	rec := approval.Record{
		Session: s.ID, Verdict: d.Decision.String(), DecidedBy: out.By,
		Rule: firstRule(d), Reason: d.Reason, Note: out.Note,
	}
	recordAlways(&rec, d, req, out)
	if !out.Run {
		rec.Outcome = "refused"
		s.audit(j, cwd, rec, start, io)
		return &Refusal{out.Refusal}
	}
	s.checkpointBefore(ctx, cp, j, cwd, start, &rec, io)

	argv := j.Argv
	if argv == nil {
		argv = append([]string{cfg.Shell.Program}, j.ShellOpts...)
		argv = append(argv, "-c", j.Script)
		argv = append(argv, j.PosArgs...)
	}
	environ := j.Environ
	if environ == nil {
		environ = os.Environ()
	}
	childEnv := commandEnv(environ, cfg.Shell.Program)
	stdio := runner.Stdio{Stdin: io.Stdin, Stdout: io.Stdout, Stderr: io.Stderr}
	if j.Wrapper != nil && j.Wrapper.NullStdin {
		// The wrapper's eval ... < /dev/null.
		if null, err := os.Open(os.DevNull); err == nil {
			defer null.Close()
			stdio.Stdin = null
		} else {
			stdio.Stdin = nil
		}
	}
	var status int
	ran := false // the command ran and exited 0
	agentDir := j.Wrapper != nil && j.Wrapper.CwdFile != ""
	if (j.ReportDir != nil || agentDir) && j.Argv == nil {
		if dr := newDirReport(stdio.Stdin, e.StateDir); dr != nil {
			defer dr.finish(func(dir string) {
				if j.ReportDir != nil {
					j.ReportDir(dir)
				}
				if agentDir && ran {
					s.agentCwd(j, dir, io)
				}
			})
			stdio.Stdin, argv = dr.file, dr.argv(argv, len(j.ShellOpts))
		}
	}
	if s.Sandboxed {
		end = trace.Phase("profile")
		p, err := profileWithPath(l, e, cwd, d.Network, envValue(childEnv, "PATH"))
		end()
		if err != nil {
			return err
		}
		rec.Sandbox = s.Backend.Name()
		opts := runner.Options{Backend: s.Backend, LandlockAccept: cfg.Sandbox.LandlockAccept, Signals: j.Signals}
		pred := j.Prediction
		if pred == nil && d.Verified && out.By == "rule" {
			// Pre-approved because the analysis bounded every part:
			// the kernel checks that prediction while it runs.
			pred = d.Prediction(argv)
		}
		if pred != nil {
			opts.Verify = s.verify(pred, cwd, d, io)
			rec.Verified = true
		}
		if p.Proxy && s.Backend.ProxyMode() != runner.ProxyNone {
			end = trace.Phase("proxy")
			jp, err := s.proxyFor(j, cwd, io)
			end()
			if err != nil {
				rec.Outcome = "failed"
				s.audit(j, cwd, rec, start, io)
				return err
			}
			defer jp.close()
			opts.Proxy, opts.ProxyAddr = jp.route, jp.addr
			childEnv = append(childEnv, jp.env...)
		} else if p.Proxy {
			fmt.Fprintln(io.Stderr, "guardrun: warning: network: proxy is not available with this sandbox yet; the command runs without network")
		}
		s.auditStart(j, cwd, rec, start, d, io)
		status, err = runner.RunWith(ctx, opts, p, argv, childEnv, stdio)
		if err != nil {
			rec.Outcome = "failed"
			s.audit(j, cwd, rec, start, io)
			return fmt.Errorf("sandbox: %w", err)
		}
		warnCreatedProtected(p, io)
		if opts.Verify != nil {
			if h, refused := opts.Verify.Refused(); refused {
				line := h.Line(s.quote)
				rec.Outcome, rec.Exit, rec.Reason = "refused", &status, line
				s.audit(j, cwd, rec, start, io)
				return &Refusal{line}
			}
		}
	} else {
		rec.Sandbox = "none"
		s.auditStart(j, cwd, rec, start, d, io)
		status, err = runner.RunUnsandboxed(ctx, cwd, argv, childEnv, stdio)
		if err != nil {
			rec.Outcome = "failed"
			s.audit(j, cwd, rec, start, io)
			return err
		}
	}
	rec.Outcome = "ran"
	rec.Exit = &status
	s.audit(j, cwd, rec, start, io)
	ran = status == 0
	if status != 0 {
		return &ExitStatus{status}
	}
	return nil
}

// Ask resolves req through the gate: the mode, session memory, and a
// person on the supervisor's socket or the terminal (or s.Prompter).
// prepare, when set, runs only when a person will be asked (to draw
// expensive detail such as a diff into req). A warning from the gate is
// printed on io.Stderr. Run asks this way for commands, guardrun fs for
// file operations, the network proxy for hosts.
func (s *Session) Ask(ctx context.Context, req *approval.Request, io IO, prepare func(approval.Style)) (approval.Outcome, error) {
	return s.ask(ctx, req, io, prepare, s.NoPerson, s.NoTerminal)
}

// ask is Ask with nobody (as Session.NoPerson) and no terminal (as
// Session.NoTerminal) in place of the session's own.
func (s *Session) ask(ctx context.Context, req *approval.Request, io IO, prepare func(approval.Style), nobody, noTerminal bool) (approval.Outcome, error) {
	cfg := s.Loaded.Cfg
	gate := &approval.Gate{Mode: cfg.Mode, Store: s.Store, ConfigFile: configHint(s.Loaded), Prompter: s.Prompter}
	if s.Rules != nil {
		gate.Rules = s.Rules
	}
	asks := req.Decision.Decision == rules.Ask && cfg.Mode == rules.ModeInteractive
	if asks && nobody {
		if !s.granted(req) {
			return approval.Outcome{}, ErrNeedsPerson
		}
		// Should the grant lapse before the gate reads it again, the
		// gate still asks no one.
		gate.Prompter = noPerson{}
	}
	if asks && gate.Prompter == nil {
		p, closeP := prompterFor(s.Env, noTerminal)
		if closeP != nil {
			defer closeP()
		}
		gate.Prompter = p
		if sp, ok := p.(sessionKeeper); ok && sp.KeepsSessions() {
			// The supervisor remembers grants for its lifetime; it gets
			// the key and decides itself.
			gate.Store = nil
		}
	}
	if asks && gate.Prompter != nil && prepare != nil {
		prepare(approval.Style{Color: approval.ColorWanted(s.Env.Getenv)})
	}
	out, err := gate.Decide(ctx, req)
	if out.Warning != "" {
		fmt.Fprintln(io.Stderr, out.Warning)
	}
	return out, err
}

// granted reports whether the session store already grants req, so that
// the gate answers it without a person.
func (s *Session) granted(req *approval.Request) bool {
	if s.Store == nil || req.Key == "" {
		return false
	}
	if s.Env.Getenv("GUARDRUN_SOCKET") != "" {
		// The supervisor keeps its own grants (Ask drops the store).
		return false
	}
	_, ok, err := s.Store.Has(req.Key)
	return err == nil && ok
}

// noPerson is the Prompter of a session with NoPerson: it fails with
// ErrNeedsPerson.
type noPerson struct{}

func (noPerson) Prompt(context.Context, *approval.Request) (approval.Answer, error) {
	return approval.Answer{}, ErrNeedsPerson
}

// sessionKeeper is a Prompter that keeps session grants itself (the
// supervisor).
type sessionKeeper interface{ KeepsSessions() bool }

// commandEnv is the environment a command starts with: the caller's,
// with SHELL pointing at the real shell so that programs inside (make,
// git) do not try to start guardrun within its own sandbox, without
// shellparse.StartupVariables (which make a shell run something other
// than the script guardrun analysed), with a character set in which bash
// reads the script's bytes as guardrun did (a locale variable that does
// not name a shellparse.SafeLocale is dropped, and LC_CTYPE is then set
// to UTF-8), and with a SHLVL of at least 1, so that the shell runs at
// level 2 or more: at level 1 a bash -c whose standard input is a socket
// (as pipes from Node-based agents are) or that sees SSH_CLIENT runs
// /etc/bash.bashrc and ~/.bashrc before the script. bash resets a level
// above 1000 to 1, so a value outside 1..998 becomes 1.
func commandEnv(environ []string, program string) []string {
	out := make([]string, 0, len(environ)+3)
	dropped, ctype, level := false, false, ""
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case name == "SHELL" || name == ServerEnvVar || shellparse.StartupVariable(name):
			continue
		case name == "SHLVL":
			level = value
			continue
		case shellparse.LocaleVariable(name):
			if !shellparse.SafeLocale(value) {
				dropped = true
				continue
			}
			ctype = ctype || name == "LC_CTYPE"
		}
		out = append(out, kv)
	}
	if dropped && !ctype {
		out = append(out, "LC_CTYPE="+utf8Locale())
	}
	if n, err := strconv.Atoi(level); err != nil || n < 1 || n > 998 {
		level = "1"
	}
	out = append(out, "SHLVL="+level, "SHELL="+program)
	if strings.TrimSuffix(filepath.Base(program), ".exe") == "zsh" {
		// zsh runs $NULLCMD (cat) for a redirection without a command
		// and $READNULLCMD (a pager) for one that only reads; the
		// analysis reads `> out` as sh does, a redirection alone, and
		// a verified request would be stopped at that exec. `:` makes
		// zsh do as sh does.
		out = append(out, "NULLCMD=:", "READNULLCMD=:")
	}
	return out
}

// utf8Locale is the name of the system's UTF-8 character set locale.
func utf8Locale() string {
	if runtime.GOOS == "darwin" {
		return "UTF-8"
	}
	return "C.UTF-8"
}

func configHint(l *config.Loaded) string {
	// The last trusted file: a rule added to an untrusted one would be
	// ignored.
	for i := len(l.Chain) - 1; i >= 0; i-- {
		if f := l.Chain[i]; f.Trusted && f.File != rules.DefaultName {
			return f.File
		}
	}
	return "a config file (see guardrun check)"
}

func firstRule(d *rules.Decision) string {
	for _, v := range []rules.Verdict{rules.Block, rules.Ask, rules.Allow} {
		for _, p := range d.Parts {
			if p.Decision == v && p.Rule != "" {
				return p.Rule
			}
		}
	}
	return ""
}

func (s *Session) audit(j *Job, cwd string, rec approval.Record, start time.Time, io IO) {
	rec.Time = start.UTC()
	rec.Cwd = cwd
	if j.Argv != nil {
		rec.Argv = j.Argv
	} else {
		rec.Script = j.Script
	}
	rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	rec.PID = j.PID
	rec.Via = j.Via
	rec.Run = runID(j.PID, start)
	defer trace.Phase("audit")()
	s.Audit(rec, io.Stderr)
}

// Audit appends rec to the config's audit log, with this process's pid
// where rec names no process (a proxied connection names the command's)
// and, where rec names none, the session. A log that cannot be written is
// a warning on w, not a failure: what was decided stands.
func (s *Session) Audit(rec approval.Record, w io.Writer) {
	if rec.PID == 0 {
		rec.PID = os.Getpid()
	}
	if rec.Session == "" {
		rec.Session = s.ID
	}
	if err := approval.OpenAudit(s.Loaded.Cfg.Audit.Path).Append(rec); err != nil {
		fmt.Fprintf(w, "guardrun: warning: audit log: %v\n", err)
	}
}

func OneLineDisplay(s string) string {
	s = approval.Sanitize(s)
	s = strings.ReplaceAll(s, "\n", " ⏎ ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// warnCreatedProtected says which protected names the command created
// where the sandbox could not make them read-only in advance (mounts are
// fixed when it starts): a repository it initialised, an .envrc in a
// directory that was not a repository's root. Something outside guardrun
// would run or obey them next (git hooks and config, direnv, an editor).
func warnCreatedProtected(p *sandbox.Profile, io IO) {
	for _, c := range p.CreatedProtected() {
		fmt.Fprintf(io.Stderr, "guardrun: warning: the command created %s, which guardrun protects (sandbox.protect); it was writable during this command because it did not exist when the sandbox started: review it before git, a shell or an editor outside guardrun uses it\n", c)
	}
}

// envValue is the value of name in env (the last one, as exec uses), or
// "".
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// verify is the verification of a job with a prediction: a call outside
// it is asked about through the gate as a request that asks (a prompt
// in interactive mode, a refusal in strict mode, no one to ask: a
// refusal), never remembered for the session. A served request
// (NoPerson: the server cannot hand a running command back to its
// client) asks the client's supervisor, never a terminal.
func (s *Session) verify(pred *sandbox.Prediction, cwd string, d *rules.Decision, io IO) *runner.Verify {
	return &runner.Verify{
		Prediction: pred,
		Quote:      s.quote,
		Hold: func(ctx context.Context, h sandbox.HeldCall) (bool, error) {
			line := strings.TrimPrefix(h.Line(s.quote), "guardrun: refused at run time: ")
			req := &approval.Request{
				Display:  line,
				Decision: &rules.Decision{Decision: rules.Ask, Reason: "at run time: " + line},
				Cwd:      cwd,
				Sandbox:  sandboxSummary(s.Loaded, d),
				Summary:  OneLineDisplay(line),
			}
			out, err := s.ask(ctx, req, io, nil, false, s.NoTerminal || s.NoPerson)
			if err != nil {
				return false, err
			}
			return out.Run, nil
		},
	}
}

// quote shows an argv as the config's shell would read it back.
func (s *Session) quote(argv []string) string {
	return shellparse.QuoteArgv(argv, s.Loaded.Engine.Dialect())
}
