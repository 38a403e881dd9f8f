package cli

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/agents"
	"github.com/guardrun/guardrun/internal/files"
	"github.com/guardrun/guardrun/internal/fsop"
	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/rules"
	"github.com/guardrun/guardrun/shellparse"
)

const hookUsage = `Usage: guardrun hook AGENT

The pre-tool hook an agent CLI runs before each tool call, with the call
as JSON on stdin; AGENT is claude-code, codex or gemini. guardrun
integrate and guardrun supervise wire it in; a person does not run it.

A shell command is answered "allow" with the command rewritten to run
under guardrun (guardrun --via AGENT -c 'COMMAND'), so that its decision,
approval, sandbox and audit happen there; one the rules block is denied
at once with guardrun's one-line reason. A file tool (Write, Edit, Read,
apply_patch, write_file, replace, read_file, ...) is judged by the file
zones as guardrun fs would judge it; the agent then does what was
allowed itself, and guardrun's audit log records it.

Where a command needs approval and Claude Code can ask in its own
permission dialog (no supervisor, permission mode "default"), the hook
answers "ask" with a one-time ticket that lets exactly that command run
once the person approves there.

Input guardrun does not know (another tool, an unknown field, malformed
or oversized JSON) is denied: the agents run a call whose hook fails.
`

// hookMaxStack bounds the stack of `guardrun hook`.
const hookMaxStack = 32 << 20

// hookAnswer writes one answer to the agent, once: the main path and the
// deadline race for it.
type hookAnswer struct {
	once sync.Once
	out  io.Writer
}

func (h *hookAnswer) write(b []byte) {
	h.once.Do(func() { h.out.Write(b) })
}

func cmdHook(g *global, args []string, io IO) (err error) {
	vf, help, err := verbStart(g, args, hookUsage, nil, nil, io)
	if err != nil || help {
		return err
	}
	words := append(append([]string{}, vf.args...), vf.rest...)
	if len(words) != 1 {
		return usagef("hook needs one agent: claude-code, codex or gemini")
	}
	a, err := agents.ByName(words[0])
	if err != nil {
		return usagef("%v", err)
	}
	// A script nested deep enough (a megabyte of "if ") takes the shell
	// parser's recursion to a gigabyte of stack before it is refused;
	// killed for that memory, the hook would fail open. Past this bound
	// the runtime stops with exit status 2 instead, which every agent
	// takes as a refusal; no script guardrun accepts (at most 100 levels
	// deep) comes near it.
	debug.SetMaxStack(hookMaxStack)
	ans := &hookAnswer{out: io.Stdout}
	deny := func(reason string) { ans.write(agents.DenyUnknown(a, reason)) }
	defer func() {
		// Every agent runs the call when its hook crashes: a panic is a
		// denial.
		if r := recover(); r != nil {
			deny(fmt.Sprintf("guardrun: internal error in the hook (%v); the call is refused", r))
			fmt.Fprintf(io.Stderr, "guardrun: hook: panic: %v\n%s", r, debug.Stack())
			err = nil
		}
	}()
	// Every agent also runs the call when its hook overstays its
	// timeout: deny before it.
	deadline := time.AfterFunc(agents.HookDeadline*time.Second, func() {
		deny(fmt.Sprintf("guardrun: no answer within %d seconds; the call is refused", agents.HookDeadline))
		os.Exit(exitOK)
	})
	defer deadline.Stop()

	data, err := readBounded(io.Stdin, agents.MaxHookInput)
	if err != nil {
		deny(approval.OneLine("guardrun: " + err.Error()))
		return nil
	}
	call, err := agents.ParseHook(a, data)
	if err != nil {
		deny(approval.OneLine(err.Error()))
		return nil
	}
	h := &hookRun{g: g, io: io, call: call}
	out, err := h.run()
	if err != nil {
		deny(approval.OneLine("guardrun: " + strings.TrimPrefix(err.Error(), "guardrun: ")))
		return nil
	}
	ans.write(agents.Render(call, out))
	return nil
}

// readBounded reads r to its end, refusing more than limit bytes.
func readBounded(r io.Reader, limit int64) ([]byte, error) {
	if r == nil {
		return nil, errors.New("the hook got no input")
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading the hook input: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("the hook input is larger than %d MiB", limit>>20)
	}
	return b, nil
}

// hookRun is one hook call being judged.
type hookRun struct {
	g    *global
	io   IO
	call *agents.Call
	s    *request.Session
	// workspace is the agent's project: the session is opened there, so
	// the config and the zones are those of the project whichever
	// directory the call runs in.
	workspace string
	// resolved is what each path of the call (made absolute) resolved
	// to when it was judged; "" where two judgments of it disagreed.
	resolved map[string]string
	// shown is the content each change of a file was shown against in
	// the prompt, by the path of the file changed (made absolute).
	shown map[string]shownContent
}

// shownContent is a file's content as a prompt showed a change of it;
// not ok when the prompt showed no content of it, or more than one
// change of the file.
type shownContent struct {
	data []byte
	ok   bool
}

func (h *hookRun) run() (agents.Answer, error) {
	ws, err := agentWorkspace(h.call)
	if err != nil {
		return agents.Answer{}, err
	}
	h.workspace = ws
	if err := os.Chdir(ws); err != nil {
		return agents.Answer{}, fmt.Errorf("the agent's project %s: %w", ws, err)
	}
	quiet := IO{Stdin: nil, Stdout: io.Discard, Stderr: h.io.Stderr}
	if h.call.Shell() {
		h.s, err = request.Open(h.g.Options, quiet)
	} else {
		h.s, err = request.OpenForFiles(h.g.Options, quiet)
	}
	if err != nil {
		return agents.Answer{}, err
	}
	if h.call.Shell() {
		return h.shell()
	}
	return h.files()
}

// agentWorkspace is the agent's project directory: Claude Code's
// CLAUDE_PROJECT_DIR (its hook's cwd follows the shell's cd), Gemini
// CLI's GEMINI_PROJECT_DIR, else the directory the agent started the
// hook in (Codex's session directory; a command's workdir is the call's
// cwd, which the model chooses).
func agentWorkspace(c *agents.Call) (string, error) {
	var dir string
	switch c.Agent {
	case agents.Claude:
		dir = os.Getenv("CLAUDE_PROJECT_DIR")
	case agents.Gemini:
		dir = os.Getenv("GEMINI_PROJECT_DIR")
	}
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("the hook's working directory: %w", err)
		}
		dir = wd
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("the agent's project %q is not an absolute path", dir)
	}
	return filepath.Clean(dir), nil
}

// shell answers a shell command: denied when the rules block it, else
// rewritten to run under guardrun, which decides, asks, sandboxes and
// audits it there.
func (h *hookRun) shell() (agents.Answer, error) {
	c, s := h.call, h.s
	dir := c.Cwd
	if c.Dir != "" {
		dir = c.Dir
	}
	j := &request.Job{Script: c.Command, Cwd: dir, Via: c.Agent.Name}
	if s.NoSandbox != nil {
		line := fmt.Sprintf("guardrun: refused: no OS sandbox is available (os_sandbox_fallback: refuse_tools): %v", s.NoSandbox)
		h.auditShell(j, &rules.Decision{Decision: rules.Block, Reason: s.NoSandbox.Error()}, "refused", "sandbox")
		return agents.Answer{Verdict: agents.Deny, Reason: approval.OneLine(line)}, nil
	}
	d := s.Decide(j)
	if d.Decision == rules.Block {
		h.auditShell(j, d, "refused", "policy")
		return agents.Answer{Verdict: agents.Deny, Reason: "guardrun: blocked: " + approval.OneLine(d.Reason)}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return agents.Answer{}, fmt.Errorf("guardrun's own path: %w", err)
	}
	if d.Decision == rules.Ask && h.dialogAsks() {
		key := approval.RequestKey(d, dir)
		store := &agents.TicketStore{Dir: ticketDir(s)}
		id, err := store.Mint(agents.Ticket{
			Agent: c.Agent.Name, Session: c.Session, ToolUseID: c.ToolUseID,
			Script: c.Command, Cwd: dir, Key: key, Expires: time.Now().Add(agents.TicketTTL),
		})
		if err != nil {
			return agents.Answer{}, err
		}
		h.auditShell(j, d, "asked", "")
		reason := fmt.Sprintf("guardrun: %s needs approval: %s. Approving runs it once in guardrun's sandbox.",
			request.OneLineDisplay(c.Command), approval.OneLine(d.Reason))
		return agents.Answer{Verdict: agents.Ask, Reason: reason, Command: rewriteCommand(c.Agent, exe, h.workspace, id, c.Command)}, nil
	}
	return agents.Answer{Verdict: agents.Allow, Command: rewriteCommand(c.Agent, exe, h.workspace, "", c.Command)}, nil
}

// dialogAsks reports whether a request that needs approval goes to the
// agent's own permission dialog: Claude Code in its default permission
// mode (any other mode may answer by itself) when no supervisor is
// there to ask.
func (h *hookRun) dialogAsks() bool {
	return h.call.Agent == agents.Claude && h.call.PermissionMode == "default" &&
		h.s.Loaded.Cfg.Mode == rules.ModeInteractive && os.Getenv("GUARDRUN_SOCKET") == ""
}

func ticketDir(s *request.Session) string {
	if s.Env.StateDir == "" {
		return ""
	}
	return filepath.Join(s.Env.StateDir, "tickets")
}

// rewriteCommand is the command the agent runs instead of command: the
// same script under guardrun, by its absolute path, with the agent for
// the audit and the project the config and zones come from. Claude Code
// keeps the directory a command cd'd to for the next one: there the
// script's final directory comes back on descriptor 3 and the agent's
// shell goes there, keeping guardrun's exit status. It goes there with
// the builtin cd, quietly in zsh (-q): the person's startup files, which
// Claude Code's shell snapshot keeps, may define a cd function or a zsh
// chpwd hook (autoenv, rvm) that sources a file of the directory entered,
// which the model chose and can fill, outside the sandbox. "--" ends guardrun's
// options as it ends bash's: a command that starts with "-" is the
// script, not more options.
func rewriteCommand(a *agents.Agent, exe, workspace, ticket, command string) string {
	base := agents.ShellQuote(exe) + " --via " + a.Name + " --workspace " + agents.ShellQuote(workspace)
	if ticket != "" {
		base += " --ticket " + ticket
	}
	q := agents.ShellQuote(command)
	if a != agents.Claude {
		return base + " -c -- " + q
	}
	return "{ __guardrun_dir=$(" + base + " --cwd-fd 3 -c -- " + q + " 3>&1 1>&4 4>&-); __guardrun_status=$?; } 4>&1; " +
		`[ -z "$__guardrun_dir" ] || \builtin cd ${ZSH_VERSION+-q} -- "$__guardrun_dir"; (exit $__guardrun_status)`
}

func (h *hookRun) auditShell(j *request.Job, d *rules.Decision, outcome, by string) {
	rec := approval.Record{
		Time: time.Now().UTC(), Session: h.s.ID, Cwd: j.Cwd, Script: j.Script,
		Verdict: d.Decision.String(), Outcome: outcome, DecidedBy: by,
		Rule: firstRuleOf(d), Reason: d.Reason, Via: j.Via,
	}
	h.s.Audit(rec, h.io.Stderr)
}

func firstRuleOf(d *rules.Decision) string {
	for _, v := range []rules.Verdict{rules.Block, rules.Ask, rules.Allow} {
		for _, p := range d.Parts {
			if p.Decision == v && p.Rule != "" {
				return p.Rule
			}
		}
	}
	return ""
}

// files answers a file tool: each operation judged by the zones as
// guardrun fs judges it; a block denies, an ask goes to the supervisor
// (or Claude Code's own dialog, or is refused as strict mode would),
// and what is allowed the agent does itself.
func (h *hookRun) files() (agents.Answer, error) {
	c, s := h.call, h.s
	if err := s.ToolsRefused(); err != nil {
		line := "guardrun: refused: no OS sandbox is available (os_sandbox_fallback: refuse_tools): " + err.Error()
		for _, op := range c.Files {
			h.auditFile(op, h.abs(op.Path), &rules.Decision{Decision: rules.Block, Reason: err.Error()}, "refused", "sandbox", "")
		}
		return agents.Answer{Verdict: agents.Deny, Reason: approval.OneLine(line)}, nil
	}
	type judged struct {
		op   agents.FileOp
		path string
		d    *rules.Decision
	}
	var all []judged
	worst := rules.Allow
	for _, op := range c.Files {
		d, path := h.judge(op)
		all = append(all, judged{op, path, d})
		worst = max(worst, d.Decision)
	}
	if worst == rules.Block {
		var reason string
		for _, j := range all {
			by := "policy"
			if j.d.Decision != rules.Block {
				by = ""
			}
			h.auditFile(j.op, j.path, j.d, "refused", by, "")
			if j.d.Decision == rules.Block && reason == "" {
				reason = "guardrun: blocked: " + approval.OneLine(j.d.Reason)
			}
		}
		return agents.Answer{Verdict: agents.Deny, Reason: reason}, nil
	}
	applies := c.Patch != nil && c.Agent == agents.Codex
	if worst == rules.Allow {
		if applies {
			// Nobody was asked: an operation that asks when it is done
			// (which the paths judged here never do) asks then.
			s.NoTerminal = true
			return h.applyPatch(nil), nil
		}
		for _, j := range all {
			h.auditFile(j.op, j.path, j.d, "allowed", "rule", "")
		}
		return agents.Answer{Verdict: agents.Pass}, nil
	}
	// Something asks: one answer covers the tool call.
	mode := s.Loaded.Cfg.Mode
	ask := make([]rules.Part, 0, len(all))
	for _, j := range all {
		ask = append(ask, j.d.Parts...)
	}
	d := request.Combine(ask...)
	if mode == rules.ModeInteractive && os.Getenv("GUARDRUN_SOCKET") == "" && c.Agent == agents.Claude && c.PermissionMode == "default" {
		// Claude Code asks in its own dialog and writes the file itself
		// once the person approves there.
		for _, j := range all {
			h.auditFile(j.op, j.path, j.d, "asked", "", "")
		}
		return agents.Answer{Verdict: agents.Ask, Reason: fmt.Sprintf("guardrun: %s needs approval: %s", c.Tool, approval.OneLine(d.Reason))}, nil
	}
	s.NoTerminal = true
	req := &approval.Request{
		Display:  h.display(),
		Decision: d,
		Cwd:      c.Cwd,
		Summary:  request.OneLineDisplay(h.display()),
	}
	if s.Store != nil {
		req.Key = request.FileGrantKey(d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), (agents.HookDeadline-10)*time.Second)
	defer cancel()
	out, err := s.Ask(ctx, req, h.io, func(st approval.Style) {
		var b strings.Builder
		for _, j := range all {
			b.WriteString(h.detail(j.op, j.path, st))
		}
		req.Detail = b.String()
	})
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %d seconds; %s is refused", agents.HookDeadline-10, c.Tool)
		}
		for _, j := range all {
			h.auditFile(j.op, j.path, j.d, "refused", "", "")
		}
		return agents.Answer{}, err
	}
	if out.Run && out.Warning != "" {
		fmt.Fprintln(h.io.Stderr, out.Warning)
	}
	if out.Run && applies {
		return h.applyPatch(&out), nil
	}
	outcome := "allowed"
	if !out.Run {
		outcome = "refused"
	}
	for _, j := range all {
		h.auditFile(j.op, j.path, j.d, outcome, out.By, out.Note)
	}
	if !out.Run {
		return agents.Answer{Verdict: agents.Deny, Reason: out.Refusal}, nil
	}
	return agents.Answer{Verdict: agents.Allow}, nil
}

// applyPatch applies Codex's apply_patch itself, decided as out, and
// answers Codex not to. Codex would open each path after the hook, in its
// own process, following whatever links are on it by then: a command
// left running in the sandbox that swaps a link on the path between a
// directory of the project and one outside every zone landed about a
// third of the patches the hook allowed outside (measured). guardrun
// writes on the paths it judged instead, following no link (package
// files, as guardrun fs and guardrun mcp do), each operation audited. The
// model reads what was done, as Codex would have told it, in the denial.
func (h *hookRun) applyPatch(out *approval.Outcome) agents.Answer {
	c := h.call
	f := &files.Files{S: h.s, Stderr: h.io.Stderr, Via: c.Agent.Name, Decided: out, Check: h.recheck}
	ctx := context.Background()
	var done []string
	var err error
	for _, pf := range c.Patch.Files {
		path := h.abs(pf.Path)
		apply := pf.Apply
		if out != nil && out.By == "person" {
			apply = h.asShown(path, pf.Apply)
		}
		switch pf.Kind {
		case "add":
			_, err = f.Write(ctx, path, pf.Content())
			done = append(done, "A "+pf.Path)
		case "delete":
			_, err = f.Remove(ctx, path)
			done = append(done, "D "+pf.Path)
		case "update":
			if pf.MoveTo == "" || h.abs(pf.MoveTo) == path {
				// A move to its own path is an update: writing the new
				// path and removing the old would remove the file.
				_, err = f.Change(ctx, path, "", apply)
				done = append(done, "M "+pf.Path)
				break
			}
			if _, err = f.Change(ctx, h.abs(pf.MoveTo), path, apply); err == nil {
				_, err = f.Remove(ctx, path)
			}
			done = append(done, "M "+pf.MoveTo)
		}
		if err != nil {
			done = done[:len(done)-1]
			break
		}
	}
	const applied = "guardrun applied this patch itself, on the paths it checked (Codex did not apply it again)"
	if err != nil {
		msg := applied + " up to an error: " + approval.OneLine(err.Error())
		if len(done) > 0 {
			msg += "\nChanged before the error:\n" + strings.Join(done, "\n")
		} else {
			msg += "\nNothing was changed."
		}
		return agents.Answer{Verdict: agents.Deny, Reason: msg}
	}
	return agents.Answer{Verdict: agents.Deny, Reason: applied + ". Success. Updated the following files:\n" + strings.Join(done, "\n")}
}

// recheck is the hook's own judgment added to policy's on a path that
// guardrun is about to touch for the agent (files.Files.Check): what
// judge refuses is refused, and so is a path that resolves elsewhere
// than when the call was judged (a link on it made or swapped since, by
// a command still running in the sandbox), whose verdict, and whose
// approval, were for another file.
func (h *hookRun) recheck(op rules.Op, arg string, p rules.Part) rules.Part {
	if p.Decision == rules.Block {
		return p
	}
	aop := map[rules.Op]agents.Op{rules.OpRead: agents.OpRead, rules.OpWrite: agents.OpWrite, rules.OpDelete: agents.OpDelete}[op]
	p = h.tighten(aop, arg, p)
	if was, ok := h.resolved[arg]; p.Decision != rules.Block && (!ok || was != p.Path) {
		p.Decision = rules.Block
		p.Reason = fmt.Sprintf("%s %s: the path resolves to %s now, not to %s as it did when it was checked: a link on it changed since", op, arg, p.Path, was)
		if !ok || was == "" {
			p.Reason = fmt.Sprintf("%s %s: the path was not checked as it resolves now (%s)", op, arg, p.Path)
		}
	}
	return p
}

// asShown is change, for a file whose change a person approved seeing
// it: the content it is applied to must be the content shown, else a
// command that rewrote the file (or the file a move takes) while the
// prompt waited would have guardrun write what nobody saw.
func (h *hookRun) asShown(path string, change func([]byte) ([]byte, error)) func([]byte) ([]byte, error) {
	return func(old []byte) ([]byte, error) {
		sc := h.shown[path]
		if !sc.ok || !bytes.Equal(old, sc.data) {
			return nil, errors.New("the file is not what the approval showed (it changed since, or the prompt showed no content of it); nothing of it was written")
		}
		return change(old)
	}
}

// abs is a tool's path made absolute from the call's directory.
func (h *hookRun) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(h.call.Cwd, p)
}

// judge decides one file operation as guardrun fs does (an edit is a
// read and a write, a listing a read), refusing besides any change to
// the agents' own settings, where their hooks (guardrun's among them)
// are configured.
func (h *hookRun) judge(op agents.FileOp) (*rules.Decision, string) {
	path := h.abs(op.Path)
	var parts []rules.Part
	switch op.Op {
	case agents.OpRead, agents.OpList:
		parts = append(parts, h.s.DecideFile(rules.OpRead, path))
	case agents.OpWrite:
		parts = append(parts, h.s.DecideFile(rules.OpWrite, path))
	case agents.OpEdit:
		parts = append(parts, h.s.DecideFile(rules.OpRead, path), h.s.DecideFile(rules.OpWrite, path))
	case agents.OpDelete:
		parts = append(parts, h.s.DecideFile(rules.OpDelete, path))
	}
	if h.resolved == nil {
		h.resolved = map[string]string{}
	}
	for i := range parts {
		parts[i] = h.tighten(op.Op, path, parts[i])
		if was, ok := h.resolved[path]; ok && was != parts[i].Path {
			h.resolved[path] = ""
		} else {
			h.resolved[path] = parts[i].Path
		}
	}
	d := request.Combine(parts...)
	if len(parts) > 0 && parts[0].Path != "" {
		path = parts[len(parts)-1].Path
	}
	return d, path
}

// tighten is the hook's own verdict on part, policy's on one path of
// operation op on path: blocked where the agent's own process would be
// what the path names, or where the operation changes an agent's
// settings.
func (h *hookRun) tighten(op agents.Op, path string, p rules.Part) rules.Part {
	if p.Decision == rules.Block {
		return p
	}
	// The agent opens the path itself, in its own process, which the
	// path then names (its cwd, its root, its descriptors): not a file
	// guardrun can judge here, nor one a person shown the path could
	// tell (a denied file of the project, through /proc/self/cwd).
	if rules.ProcessPath(p.Path) {
		p.Decision = rules.Block
		p.Reason = fmt.Sprintf("%s %s: the path leads through %s, to what the agent's own process has there, which guardrun cannot judge", op, path, p.Path)
		return p
	}
	if op != agents.OpRead && op != agents.OpList {
		if why := agentSettings(p.Path); why != "" {
			p.Decision = rules.Block
			p.Reason = fmt.Sprintf("%s %s: %s", op, path, why)
		}
	}
	return p
}

// agentSettings says why path, resolved, is an agent's own settings that
// no agent's file tool may change ("" when it is not): the hooks that
// guard the agent and the MCP servers it starts are configured there,
// and all of them run outside every sandbox.
//
// Names are compared without case: on a case-insensitive file system
// (macOS's default) .Claude is .claude.
func agentSettings(path string) string {
	for _, name := range strings.Split(filepath.ToSlash(path), "/") {
		switch strings.ToLower(name) {
		case ".claude", ".claude.json":
			return name + " holds Claude Code's settings and hooks, which an agent may not change"
		case ".codex":
			return ".codex holds Codex's config and hooks, which an agent may not change"
		case ".gemini":
			return ".gemini holds Gemini CLI's settings and hooks, which an agent may not change"
		}
	}
	return ""
}

// display is the tool call as the person is shown it: the tool and its
// files.
func (h *hookRun) display() string {
	words := []string{h.call.Agent.Name, h.call.Tool}
	for _, op := range h.call.Files {
		words = append(words, h.abs(op.Path))
	}
	return shellparse.QuoteArgv(words, h.s.Loaded.Engine.Dialect())
}

// detail is what the prompt shows of one operation: the diff of a change,
// a new file's content, what is read or deleted.
func (h *hookRun) detail(op agents.FileOp, path string, st approval.Style) string {
	switch op.Op {
	case agents.OpRead, agents.OpList, agents.OpDelete:
		what := map[agents.Op]string{agents.OpRead: "read", agents.OpList: "list", agents.OpDelete: "delete"}[op.Op]
		info, err := fsop.Lstat(path)
		if err != nil {
			return fmt.Sprintf("%s %s (%v)\n", what, approval.Sanitize(path), err)
		}
		return approval.InfoDetail(what, path, info.Kind.Describe(), info.Size, st)
	}
	from := path
	if op.From != "" {
		from = h.abs(op.From)
	}
	snap, err := fsop.Load(from, files.MaxSnapshotBytes)
	if err != nil {
		return fmt.Sprintf("change %s (%v)\n", approval.Sanitize(path), err)
	}
	if op.Apply == nil {
		return approval.InfoDetail("change", path, "file changed by "+h.call.Tool, snap.Info.Size, st)
	}
	var old []byte
	if snap.Exists && !snap.TooLarge {
		old = snap.Data
	}
	if op.Op == agents.OpEdit || op.From != "" {
		h.noteShown(h.abs(cmp.Or(op.From, op.Path)), snap)
	}
	data, err := op.Apply(old)
	switch {
	case err != nil:
		return fmt.Sprintf("change %s: %s cannot be shown (%v)\n", approval.Sanitize(path), h.call.Tool, err)
	case snap.TooLarge:
		return approval.InfoDetail("replace", path, fmt.Sprintf("regular file of %d bytes with %d bytes", snap.Info.Size, len(data)), int64(len(data)), st)
	case !snap.Exists || op.From != "":
		return approval.NewFileDetail(path, data, st)
	}
	return approval.DiffDetail(path, old, data, st)
}

// noteShown records snap as the content a change of the file at path
// (the path given, made absolute) was shown against.
func (h *hookRun) noteShown(path string, snap *fsop.Snapshot) {
	if h.shown == nil {
		h.shown = map[string]shownContent{}
	}
	_, twice := h.shown[path]
	h.shown[path] = shownContent{data: snap.Data, ok: !twice && snap.Exists && !snap.TooLarge}
}

func (h *hookRun) auditFile(op agents.FileOp, path string, d *rules.Decision, outcome, by, note string) {
	rec := approval.Record{
		Time: time.Now().UTC(), Session: h.s.ID, Cwd: h.call.Cwd,
		Op: string(op.Op), Path: path,
		Verdict: d.Decision.String(), Outcome: outcome, DecidedBy: by,
		Reason: d.Reason, Note: note, Via: h.call.Agent.Name,
	}
	h.s.Audit(rec, h.io.Stderr)
}
