package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/internal/runner"
	"github.com/guardrun/guardrun/internal/trace"
	"github.com/guardrun/guardrun/landlock"
	"github.com/guardrun/guardrun/rules"
	"github.com/guardrun/guardrun/sandbox"
)

// job is one thing to run: a script for the shell program, or an argv
// executed directly.
type job struct {
	script    string
	shellOpts []string // -e, -u, -x, -o NAME passed to the shell
	posArgs   []string // ARGV0 ARG... after -c SCRIPT
	argv      []string // set for `guardrun -- CMD`
	// cwd and environ default to the process's own; `guardrun shell`
	// sets them to carry cd and export from one input to the next.
	cwd     string
	environ []string
}

func (j *job) display() string {
	if j.argv != nil {
		return quoteArgv(j.argv)
	}
	return j.script
}

func runScript(g *global, script string, shellOpts, posArgs []string, io IO) error {
	return execute(g, &job{script: script, shellOpts: shellOpts, posArgs: posArgs}, io)
}

func runArgv(g *global, argv []string, io IO) error {
	if len(argv) == 0 {
		return usagef("-- needs a command")
	}
	return execute(g, &job{argv: argv}, io)
}

// session picks the session and opens its store; nil when there is no
// session (no terminal, nothing set).
func openSession(g *global, l *loaded, e *env) (string, *approval.Store) {
	id, ok := approval.SessionID(g.session, e.getenv)
	if !ok {
		return "", nil
	}
	st, err := approval.OpenStore(approval.DefaultStoreDir(), id, l.cfg.Session.TTL)
	if err != nil {
		return id, nil
	}
	return id, st
}

// protected are guardrun's own files: config files read-only (and, where
// they do not exist yet, uncreatable), state hidden.
func protected(l *loaded, e *env, cwd string) []sandbox.Protected {
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
	for _, f := range l.files {
		add(f, false)
	}
	if uc := e.userConfig(); uc != "" {
		add(filepath.Dir(uc), false)
	}
	add(filepath.Join(cwd, projectFile), false)
	for _, z := range l.cfg.Sandbox.Zones {
		if z.Mode == rules.ReadWrite {
			add(filepath.Join(z.Root, projectFile), false)
		}
	}
	add(e.stateDir, true)
	add(approval.DefaultStoreDir(), true)
	add(l.cfg.Audit.Path, true)
	if s := e.getenv("GUARDRUN_SOCKET"); s != "" {
		add(filepath.Dir(s), true)
	}
	if s := e.getenv(proxyEnvVar); s != "" {
		add(filepath.Dir(s), true)
	}
	return out
}

// profileFor derives the sandbox profile for a request run in cwd.
func profileFor(l *loaded, e *env, cwd string, network bool) (*sandbox.Profile, error) {
	spec := l.cfg.SandboxSpec(cwd, e.home, network, protected(l, e, cwd))
	p, err := sandbox.Derive(spec)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return p, nil
}

func sandboxSummary(l *loaded, d *rules.Decision) string {
	var zs []string
	for _, z := range l.cfg.Sandbox.Zones {
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
		net = l.cfg.Sandbox.Domains.Summary()
	}
	return strings.Join(zs, ", ") + "; " + net
}

// backendFor is the OS sandbox backend asked for: --backend, else the
// config's sandbox.backend.
func backendFor(g *global, l *loaded) rules.Backend {
	if g.backend != "" {
		return g.backend
	}
	return l.cfg.Sandbox.Backend
}

func execute(g *global, j *job, io IO) error {
	s, err := prepare(g, io)
	if err != nil {
		return err
	}
	return s.run(context.Background(), j, io)
}

// runSession is everything that stays the same across the jobs of one
// guardrun process: the config, the sandbox's availability, the session.
// `guardrun -c` runs one job; `guardrun shell` runs one per input.
type runSession struct {
	g         *global
	e         *env
	l         *loaded
	sandboxed bool
	// backend is the OS sandbox that runs commands (bwrap, landlock,
	// seatbelt) when sandboxed.
	backend string
	// noSandbox is why there is no OS sandbox (nil when there is one).
	noSandbox error
	sessionID string
	store     *approval.Store
	// prompter, when set, replaces the terminal prompter (the
	// supervisor's own shell asks on its terminal this way).
	prompter approval.Prompter
}

// prepare loads the config and finds out whether the OS sandbox works.
// With require_os_sandbox and fail_fast and no sandbox, it fails (125)
// before anything is decided.
func prepare(g *global, io IO) (*runSession, error) {
	return prepareSession(g, io, true)
}

// prepareSession is prepare, with the OS sandbox check only when
// checkSandbox is set: guardrun fs performs its operation itself, after
// policy, so whether a sandbox could start changes nothing for it.
func prepareSession(g *global, io IO, checkSandbox bool) (*runSession, error) {
	end := trace.Phase("config")
	e, err := newEnv()
	if err != nil {
		return nil, err
	}
	l, err := load(g, e)
	end()
	if err != nil {
		return nil, err
	}
	l.warnIgnored(io.Stderr)
	s := &runSession{g: g, e: e, l: l, sandboxed: checkSandbox}
	if !checkSandbox {
		// Fail closed: this session must never run a command.
		s.noSandbox = errors.New("the OS sandbox was not checked for this operation")
		s.sessionID, s.store = openSession(g, l, e)
		return s, nil
	}
	end = trace.Phase("sandbox check")
	backend, err := runner.Choose(string(backendFor(g, l)), filepath.Join(e.stateDir, "sandbox-ok"))
	s.backend = backend
	end()
	if err != nil {
		cfg := l.cfg
		switch {
		case !cfg.Sandbox.RequireOSSandbox:
			fmt.Fprintf(io.Stderr, "guardrun: warning: running without an OS sandbox (require_os_sandbox: false): %v\n", err)
			s.sandboxed = false
		case cfg.Sandbox.Fallback == rules.RefuseTools:
			s.sandboxed, s.noSandbox = false, err
		default:
			return nil, fmt.Errorf("no OS sandbox can be applied: %v\n(require_os_sandbox is on with os_sandbox_fallback: fail_fast; fix the above, or set require_os_sandbox: false to run unsandboxed)", err)
		}
	}
	// Compiled seccomp programs are kept in the state directory, which
	// the sandbox hides.
	bwrap.SetFilterCache(filepath.Join(e.stateDir, "cache"))
	end = trace.Phase("session")
	s.sessionID, s.store = openSession(g, l, e)
	end()
	return s, nil
}

// run decides, asks about, runs and audits one job. The error is a
// *refusal, an *exitStatus, or guardrun's own failure.
func (s *runSession) run(ctx context.Context, j *job, io IO) error {
	start := time.Now()
	l, e, cfg := s.l, s.e, s.l.cfg
	cwd := j.cwd
	if cwd == "" {
		cwd = e.cwd
	}
	if s.noSandbox != nil {
		rec := approval.Record{Verdict: "block", Outcome: "refused", DecidedBy: "sandbox", Reason: s.noSandbox.Error()}
		s.audit(j, cwd, rec, start, io)
		return &refusal{fmt.Sprintf("guardrun: refused: no OS sandbox is available (os_sandbox_fallback: refuse_tools): %v", s.noSandbox)}
	}
	if err := landlockProxyError(s); err != nil {
		// Refused before anything is decided or asked: every command of
		// this config would reach the network through the proxy, which
		// this kernel's landlock cannot route (neither more nor less
		// network than configured).
		rec := approval.Record{Session: s.sessionID, Verdict: "block", Outcome: "failed", DecidedBy: "sandbox", Sandbox: s.backend, Reason: err.Error()}
		s.audit(j, cwd, rec, start, io)
		return err
	}

	end := trace.Phase("decide")
	var d *rules.Decision
	if j.argv != nil {
		d = l.engine.Argv(j.argv, cwd)
	} else {
		d = l.engine.Script(j.script, cwd)
	}
	end()
	req := &approval.Request{
		Display:  j.display(),
		Decision: d,
		Cwd:      cwd,
		Sandbox:  sandboxSummary(l, d),
		Summary:  oneLineDisplay(j.display()),
	}
	if s.store != nil {
		req.Key = approval.RequestKey(d, j.script, cwd)
	}
	end = trace.Phase("approve")
	out, err := s.ask(ctx, req, io, nil)
	end()
	if err != nil {
		return err
	}
	rec := approval.Record{
		Session: s.sessionID, Verdict: d.Decision.String(), DecidedBy: out.By,
		Rule: firstRule(d), Reason: d.Reason, Note: out.Note,
	}
	if !out.Run {
		rec.Outcome = "refused"
		s.audit(j, cwd, rec, start, io)
		return &refusal{out.Refusal}
	}

	argv := j.argv
	if argv == nil {
		argv = append([]string{cfg.Shell.Program}, j.shellOpts...)
		argv = append(argv, "-c", j.script)
		argv = append(argv, j.posArgs...)
	}
	environ := j.environ
	if environ == nil {
		environ = os.Environ()
	}
	childEnv := commandEnv(environ, cfg.Shell.Program)
	stdio := runner.Stdio{Stdin: io.Stdin, Stdout: io.Stdout, Stderr: io.Stderr}
	var status int
	if s.sandboxed {
		end = trace.Phase("profile")
		p, err := profileFor(l, e, cwd, d.Network)
		end()
		if err != nil {
			return err
		}
		rec.Sandbox = s.backend
		opts := runner.Options{Backend: s.backend, LandlockAccept: cfg.Sandbox.LandlockAccept}
		if p.Proxy && runtime.GOOS == "linux" {
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
		} else if p.Proxy && runtime.GOOS != "linux" {
			fmt.Fprintln(io.Stderr, "guardrun: warning: network: proxy is not available with this sandbox yet; the command runs without network")
		}
		s.auditStart(j, cwd, rec, start, d, io)
		status, err = runner.RunWith(ctx, opts, p, argv, childEnv, stdio)
		if err == nil && status != 0 && s.backend == runner.BackendLandlock {
			noteFixed(io, p, cfg.Sandbox.LandlockAccept)
		}
		if err != nil {
			rec.Outcome = "failed"
			s.audit(j, cwd, rec, start, io)
			return fmt.Errorf("sandbox: %w", err)
		}
		warnCreatedProtected(p, io)
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
	if status != 0 {
		return &exitStatus{status}
	}
	return nil
}

// ask resolves req through the gate: the mode, session memory, and a
// person on the supervisor's socket or the terminal. prepare, when set,
// runs only when a person will be asked (to draw expensive detail such as
// a diff into req).
func (s *runSession) ask(ctx context.Context, req *approval.Request, io IO, prepare func(approval.Style)) (approval.Outcome, error) {
	cfg := s.l.cfg
	gate := &approval.Gate{Mode: cfg.Mode, Store: s.store, ConfigFile: configHint(s.l), Prompter: s.prompter}
	asks := req.Decision.Decision == rules.Ask && cfg.Mode == rules.ModeInteractive
	if asks && gate.Prompter == nil {
		p, closeP := prompterFor(s.e)
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
		prepare(approval.Style{Color: approval.ColorWanted(s.e.getenv)})
	}
	out, err := gate.Decide(ctx, req)
	if out.Warning != "" {
		fmt.Fprintln(io.Stderr, out.Warning)
	}
	return out, err
}

// sessionKeeper is a Prompter that keeps session grants itself (the
// supervisor).
type sessionKeeper interface{ KeepsSessions() bool }

// commandEnv is the environment a sandboxed command starts with: the
// caller's, with SHELL pointing at the real shell so that programs inside
// (make, git) do not try to start guardrun within its own sandbox.
func commandEnv(environ []string, program string) []string {
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if strings.HasPrefix(kv, "SHELL=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "SHELL="+program)
}

func configHint(l *loaded) string {
	// The last trusted file: a rule added to an untrusted one would be
	// ignored.
	for i := len(l.chain) - 1; i >= 0; i-- {
		if f := l.chain[i]; f.Trusted && f.File != rules.DefaultName {
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

func (s *runSession) audit(j *job, cwd string, rec approval.Record, start time.Time, io IO) {
	rec.Time = start.UTC()
	rec.Cwd = cwd
	if j.argv != nil {
		rec.Argv = j.argv
	} else {
		rec.Script = j.script
	}
	rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	rec.PID = os.Getpid()
	rec.Run = runID(start)
	if rec.Session == "" {
		rec.Session = s.sessionID
	}
	defer trace.Phase("audit")()
	if err := approval.OpenAudit(s.l.cfg.Audit.Path).Append(rec); err != nil {
		fmt.Fprintf(io.Stderr, "guardrun: warning: audit log: %v\n", err)
	}
}

func oneLineDisplay(s string) string {
	s = approval.Sanitize(s)
	s = strings.ReplaceAll(s, "\n", " ⏎ ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// noteFixed tells, after a command failed under landlock, that its
// working directory could not get new entries (it holds a denied or
// protected name; see docs/backends.md), which is the likely reason for
// an EACCES there that bwrap would not give.
func noteFixed(io IO, p *sandbox.Profile, accept []string) {
	abi, err := landlock.ABI()
	if err != nil {
		return
	}
	rs, err := landlock.Build(p, landlock.Options{ABI: abi, Accept: accept})
	if err != nil || !slices.Contains(rs.Fixed, p.Cwd) {
		return
	}
	var names []string
	for _, d := range append(slices.Clone(p.Deny), p.ReadOnlyOver...) {
		if sandbox.Within(d, p.Cwd) && d != p.Cwd {
			if _, err := os.Lstat(d); err == nil && len(names) < 3 {
				names = append(names, d)
			}
		}
	}
	fmt.Fprintf(io.Stderr, "guardrun: note: under the landlock backend nothing can be created, removed or renamed directly in %s: it holds denied or protected names (%s); see guardrun profile\n",
		p.Cwd, strings.Join(names, ", "))
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
