//go:build linux

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

// These tests drive the real agent CLIs (installed by
// scripts/agents-install.sh; see fakemodel.AgentBinary) against the fake
// model, with guardrun wired in the two ways a person wires it: guardrun
// integrate, and guardrun supervise. They run under make e2e-agents
// (GUARDRUN_E2E_AGENTS=1) and skip otherwise. Every scripted command is
// harmless and runs in a throwaway project.

// agentRules allow echo, cd, pwd, cat and the listing commands, ask for
// touch and everything unknown, block sudo; the project is writable,
// its docs directory only with approval.
const agentRules = `mode: interactive
shell:
  program: /bin/bash
  default: {allowed: true, approval: true}
  rules:
    - {pattern: sudo, allowed: false, description: "privilege escalation is never allowed"}
    - {pattern: echo, approval: false}
    - {pattern: cd, approval: false}
    - {pattern: pwd, approval: false}
    - {pattern: cat, approval: false}
    - {pattern: ls, approval: false}
    - {pattern: PROJECT/bin/guardrun, approval: false}
sandbox:
  paths:
    project: {root: PROJECT, mode: rw}
    docs: {root: PROJECT/docs, mode: rw, write_approval: true}
  system_read: default
  network: false
  require_os_sandbox: true
  os_sandbox_fallback: fail_fast
`

// rig is one agent in a throwaway home and project, with guardrun's
// config outside the project.
type rig struct {
	t     *testing.T
	a     fakemodel.Agent
	w     fakemodel.World
	srv   *fakemodel.Server
	argv  []string
	env   []string
	audit string
}

// newRig makes the rig and starts the fake model on the steps script
// makes for it.
func newRig(t *testing.T, a fakemodel.Agent, script func(r *rig) []fakemodel.Step) *rig {
	t.Helper()
	return newRigWith(t, a, agentRules, script)
}

// newRigWith is newRig with rules (PROJECT standing for the project) in
// place of agentRules.
func newRigWith(t *testing.T, a fakemodel.Agent, rules string, script func(r *rig) []fakemodel.Step) *rig {
	t.Helper()
	bin := fakemodel.AgentBinary(t, a.Name)
	requireSandbox(t)
	w := fakemodel.NewWorld(t)
	for _, d := range []string{"sub", "docs"} {
		if err := os.Mkdir(filepath.Join(w.Project, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A guardrun the model's sandboxed commands can run (the one under
	// test lies in a temporary directory, which the sandbox replaces).
	exe, err := os.ReadFile(guardrunBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(w.Project, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.Project, "bin", "guardrun"), exe, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(filepath.Dir(w.Home), "guardrun.yaml")
	fakemodel.WriteFile(t, cfg, strings.ReplaceAll(rules, "PROJECT", w.Project))
	// The same config where a sandboxed guardrun can read it.
	fakemodel.WriteFile(t, filepath.Join(w.Project, "bin", "guardrun.yaml"), strings.ReplaceAll(rules, "PROJECT", w.Project))
	r := &rig{t: t, a: a, w: w}
	r.srv = fakemodel.Start(t, script(r)...)
	argv, env := a.Command(t, bin, w, r.srv.URL, "")
	r.argv = argv
	base := w.BaseEnv(t)
	path := ""
	for _, kv := range base {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = p
		}
	}
	// guardrun and the agent's own bin directory on PATH: integrate asks
	// codex app-server for its hook's hash.
	r.env = append(unsetEnv(base, "PATH"), env...)
	r.env = append(r.env, "PATH="+filepath.Dir(guardrunBin)+":"+filepath.Dir(bin)+":"+path, "GUARDRUN_CONFIG="+cfg)
	r.audit = filepath.Join(w.Home, ".local", "state", "guardrun", "audit.jsonl")
	return r
}

func unsetEnv(env []string, key string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func (r *rig) agentName() string {
	return map[string]string{"claude": "claude-code", "codex": "codex", "gemini": "gemini"}[r.a.Name]
}

// guardrun runs guardrun with args in the project, with the rig's
// environment, and returns its output and status.
func (r *rig) guardrun(args ...string) (string, int) {
	r.t.Helper()
	cmd := exec.Command(guardrunBin, args...)
	cmd.Dir, cmd.Env = r.w.Project, r.env
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	return string(out), code
}

// run runs the agent to its end, non-interactively, and returns what it
// printed.
func (r *rig) run() string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.argv[0], r.argv[1:]...)
	cmd.Dir, cmd.Env = r.w.Project, r.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil || err != nil {
		r.t.Fatalf("%s: %v\noutput:\n%s\nrequests:\n%s", r.a.Name, err, out.String(), r.srv.Summary())
	}
	return out.String()
}

// result is what the model got back for step n's call.
func (r *rig) result(n int) string {
	res, _ := r.srv.ToolResult(n)
	return res.Output
}

func (r *rig) exists(name string) bool {
	_, err := os.Stat(filepath.Join(r.w.Project, name))
	return err == nil
}

func (r *rig) records() []approval.Record {
	r.t.Helper()
	data, err := os.ReadFile(r.audit)
	if err != nil {
		r.t.Fatalf("audit log: %v", err)
	}
	var out []approval.Record
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var rec approval.Record
		if err := json.Unmarshal(line, &rec); err != nil {
			r.t.Fatalf("audit line %s: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

// audited checks that the audit log holds a record, made through this
// agent, for every command and every file the scripted model named, and
// that everything that ran ran in the OS sandbox.
func (r *rig) audited(commands, files []string) {
	r.t.Helper()
	recs := r.records()
	var missing []string
	for _, c := range commands {
		found := false
		for _, rec := range recs {
			found = found || rec.Script == c && rec.Via == r.agentName()
		}
		if !found {
			missing = append(missing, "command "+c)
		}
	}
	for _, f := range files {
		found := false
		for _, rec := range recs {
			found = found || rec.Path == f && rec.Op != "" && rec.Via == r.agentName()
		}
		if !found {
			missing = append(missing, "file "+f)
		}
	}
	for _, rec := range recs {
		if rec.Outcome == "ran" && rec.Script != "" && (rec.Sandbox == "" || rec.Sandbox == "none") {
			r.t.Errorf("%q ran outside the OS sandbox (sandbox %q)", rec.Script, rec.Sandbox)
		}
	}
	if len(missing) > 0 {
		var b strings.Builder
		for _, rec := range recs {
			fmt.Fprintf(&b, "  %s %s%s via %s: %s %s\n", rec.Outcome, rec.Script, rec.Path, rec.Via, rec.Verdict, rec.DecidedBy)
		}
		r.t.Errorf("the audit log has no record of %s; it holds:\n%s", strings.Join(missing, ", "), b.String())
	}
}

// outsideWrite is a step writing a file the zones refuse, with the
// agent's file tool, and the file (absolute) it would have made.
func outsideWrite(a fakemodel.Agent, w fakemodel.World) (fakemodel.Step, string) {
	switch a.Name {
	case "claude":
		p := filepath.Join(w.Home, "outside.txt")
		return fakemodel.Call("Write", map[string]any{"file_path": p, "content": "x\n"}), p
	case "codex":
		p := filepath.Join(w.Home, "outside.txt")
		return fakemodel.Call("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: " + p + "\n+x\n*** End Patch\n"}), p
	}
	// Gemini CLI refuses a path outside its workspace itself; inside, its
	// own settings are what guardrun keeps from the agent.
	p := filepath.Join(w.Project, ".gemini", "settings.json")
	return fakemodel.Call("write_file", map[string]any{"file_path": ".gemini/settings.json", "content": "{\"hooksConfig\": {\"enabled\": false}}\n"}), p
}

var agentsUnderTest = []fakemodel.Agent{fakemodel.Claude, fakemodel.Codex, fakemodel.Gemini}

// TestAgentsIntegrated wires guardrun into each agent's user settings
// with guardrun integrate (in a throwaway home) and runs it
// non-interactively, with no person to ask.
func TestAgentsIntegrated(t *testing.T) {
	for _, a := range agentsUnderTest {
		t.Run(a.Name, func(t *testing.T) {
			var outside string
			var steps []fakemodel.Step
			r := newRig(t, a, func(r *rig) []fakemodel.Step {
				var out fakemodel.Step
				out, outside = outsideWrite(a, r.w)
				steps = []fakemodel.Step{
					a.Shell("echo made > allowed.txt"),
					a.Shell("sudo true"),
					a.Shell("touch asked.txt"),
					out,
					a.Write(r.w, "written.txt", "by the file tool\n"),
				}
				if a.Name == "claude" {
					steps = append(steps, claudeExtra(r)...)
				}
				return append(steps, fakemodel.Say("done"))
			})

			out, code := r.guardrun("integrate", r.agentName())
			if code != 0 {
				t.Fatalf("guardrun integrate %s: exit %d: %s", r.agentName(), code, out)
			}
			again, _ := r.guardrun("integrate", r.agentName())
			if !strings.Contains(again, "already wired") {
				t.Errorf("integrating twice: %s", again)
			}
			status, _ := r.guardrun("integrate", "--status")
			t.Logf("integrate: %s\nstatus:\n%s", out, status)
			agentOut := r.run()

			type outcome struct {
				Allowed, Asked, Outside, Written bool
				Blocked, Refused, Denied         bool
			}
			got := outcome{
				Allowed: r.exists("allowed.txt"), Asked: r.exists("asked.txt"),
				Outside: fileExists(outside), Written: r.exists("written.txt"),
				Blocked: strings.Contains(r.result(1), `guardrun: blocked: sudo true matches rule "sudo"`),
				Refused: strings.Contains(r.result(2), "guardrun:") && strings.Contains(r.result(2), "touch asked.txt"),
				Denied:  strings.Contains(r.result(3), "guardrun: blocked:"),
			}
			want := outcome{Allowed: true, Written: true, Blocked: true, Refused: true, Denied: true}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("%s with guardrun integrated (-got +want):\n%s\noutput:\n%s\nrequests:\n%s", a.Name, diff, agentOut, r.srv.Summary())
			}
			for i := range steps {
				t.Logf("step %d: %q", i, r.result(i))
			}
			if a.Name == "claude" {
				r.checkClaudeExtra(5)
			}
			r.audited([]string{"echo made > allowed.txt", "sudo true", "touch asked.txt"},
				[]string{outside, filepath.Join(r.w.Project, "written.txt")})
		})
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// claudeExtra are the steps only Claude Code takes: a cd the next command
// keeps, and the model's attempts to approve its own command with a
// ticket it made or read.
func claudeExtra(r *rig) []fakemodel.Step {
	tickets := filepath.Join(r.w.Home, ".local", "state", "guardrun", "tickets")
	forged := `{"agent":"claude-code","session":"x","script":"touch forged.txt","cwd":"` + r.w.Project + `","key":"k","expires":"2999-01-01T00:00:00Z"}`
	return []fakemodel.Step{
		fakemodel.Call("Bash", map[string]any{"command": "cd sub", "description": "cd"}),
		fakemodel.Call("Bash", map[string]any{"command": "pwd", "description": "pwd"}),
		fakemodel.Call("Write", map[string]any{"file_path": filepath.Join(tickets, strings.Repeat("ab", 16)+".json"), "content": forged}),
		fakemodel.Call("Bash", map[string]any{"command": "echo '" + forged + "' > " + filepath.Join(tickets, strings.Repeat("cd", 16)+".json"), "description": "x"}),
		// The ticket the hook minted for `touch asked.txt` (step 2), which
		// Claude Code in -p refused and so never consumed: as the model
		// would find it in its transcript, or, should it not be there,
		// as if it had leaked anyway.
		fakemodel.CallAfter("Bash", func(fakemodel.ToolResult) map[string]any {
			id := leakedTicket(r)
			bin := filepath.Join(r.w.Project, "bin")
			return map[string]any{"command": bin + "/guardrun --config " + bin + "/guardrun.yaml --via claude-code --workspace " + r.w.Project + " --ticket " + id + " -c 'touch asked.txt'", "description": "replay"}
		}),
	}
}

var ticketRE = regexp.MustCompile(`--ticket ([0-9a-f]{32})`)

// leakedTicket is the id of a ticket for the rig's project: from Claude
// Code's transcripts where it is written there, else from guardrun's own
// ticket store.
func leakedTicket(r *rig) string {
	files, _ := filepath.Glob(filepath.Join(r.w.Home, ".claude", "projects", "*", "*.jsonl"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if m := ticketRE.FindSubmatch(b); m != nil {
			r.t.Logf("ticket %s found in the transcript %s", m[1], f)
			return string(m[1])
		}
	}
	entries, _ := os.ReadDir(filepath.Join(r.w.Home, ".local", "state", "guardrun", "tickets"))
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && len(id) == 32 {
			r.t.Logf("ticket %s not in any transcript; taken from guardrun's store as if it had leaked", id)
			return id
		}
	}
	r.t.Fatal("no ticket was minted for the command that needed approval")
	return ""
}

// checkClaudeExtra checks the outcome of claudeExtra's steps, the first
// of which is step n.
func (r *rig) checkClaudeExtra(n int) {
	r.t.Helper()
	tickets := filepath.Join(r.w.Home, ".local", "state", "guardrun", "tickets")
	type outcome struct {
		Cd                         bool
		ForgedByWrite, ForgedByCmd bool
		WriteRefused, CmdRefused   bool
		Replayed, ReplayRefused    bool
	}
	got := outcome{
		Cd:            strings.HasSuffix(strings.TrimSpace(r.result(n+1)), "/sub"),
		ForgedByWrite: fileExists(filepath.Join(tickets, strings.Repeat("ab", 16)+".json")),
		ForgedByCmd:   fileExists(filepath.Join(tickets, strings.Repeat("cd", 16)+".json")),
		WriteRefused:  strings.Contains(r.result(n+2), "guardrun: blocked:"),
		CmdRefused:    strings.HasPrefix(r.result(n+3), "Exit code 1\n") || strings.Contains(r.result(n+3), "guardrun: blocked:"),
		Replayed:      r.exists("asked.txt"),
		ReplayRefused: strings.Contains(r.result(n+4), "guardrun: denied"),
	}
	want := outcome{Cd: true, WriteRefused: true, CmdRefused: true, ReplayRefused: true}
	if diff := cmp.Diff(got, want); diff != "" {
		r.t.Errorf("cd and forged tickets (-got +want):\n%s\nrequests:\n%s", diff, r.srv.Summary())
	}
}

// TestAgentsSupervised runs each agent under guardrun supervise on a
// terminal (tmux), where guardrun's prompts appear for the person.
func TestAgentsSupervised(t *testing.T) {
	for _, a := range agentsUnderTest {
		t.Run(a.Name, func(t *testing.T) {
			const late = 4
			var steps []fakemodel.Step
			r := newRig(t, a, func(r *rig) []fakemodel.Step {
				steps = []fakemodel.Step{
					a.Shell("echo made > allowed.txt"),
					a.Shell("touch approved.txt"),
					a.Shell("touch denied.txt"),
					a.Write(r.w, "docs/approved.md", "# approved\n"),
				}
				if a.Name == "codex" {
					steps = append(steps, codexLateAndPty()...)
				}
				return append(steps, fakemodel.Say("done"))
			})
			if a.Name != "claude" {
				if out, code := r.guardrun("integrate", r.agentName()); code != 0 {
					t.Fatalf("guardrun integrate: exit %d: %s", code, out)
				}
			}
			iw := &world{work: r.w.Project, tmp: r.w.Tmp, env: append(r.env, "TERM=xterm-256color")}
			var cmd strings.Builder
			cmd.WriteString("exec " + shq(guardrunBin) + " supervise --")
			for _, w := range r.argv {
				cmd.WriteString(" " + shq(w))
			}
			m := startTmux(t, iw, nil, cmd.String())
			start := m.waitScreen(`guardrun: (Claude Code|Codex|Gemini CLI): its shell and file tools go through guardrun`)
			t.Logf("start:\n%s", start)

			m.waitPrompt(`touch approved\.txt`)
			settled()
			m.keys("y")
			m.waitPrompt(`touch denied\.txt`)
			settled()
			m.keys("n")
			m.waitScreen(`(?i)note`)
			m.keys("not this one")
			m.enter()
			m.waitPrompt(`docs/approved\.md`)
			settled()
			m.keys("y")
			if a.Name == "codex" {
				m.codexLateAndPty(r, late)
			}
			m.waitScreen(`PANE-END`)

			type outcome struct {
				Allowed, Approved, Denied, Doc bool
				Note                           bool
			}
			got := outcome{
				Allowed: r.exists("allowed.txt"), Approved: r.exists("approved.txt"),
				Denied: r.exists("denied.txt"), Doc: r.exists("docs/approved.md"),
				Note: strings.Contains(r.result(2), "guardrun: denied by user: not this one"),
			}
			want := outcome{Allowed: true, Approved: true, Doc: true, Note: true}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("%s under guardrun supervise (-got +want):\n%s\nscreen:\n%s\nrequests:\n%s", a.Name, diff, m.screen(false), r.srv.Summary())
			}
			for i := range steps {
				t.Logf("step %d: %q", i, r.result(i))
			}
			commands := []string{"echo made > allowed.txt", "touch approved.txt", "touch denied.txt"}
			if a.Name == "codex" {
				commands = append(commands, "touch late.txt", "touch pty.txt")
			}
			r.audited(commands, []string{filepath.Join(r.w.Project, "docs", "approved.md")})
		})
	}
}

var sessionRE = regexp.MustCompile(`session ID (\d+)`)

// codexLateAndPty are Codex's extra steps: a command whose answer comes
// after exec_command returned (yield_time_ms), polled with write_stdin;
// and one on a pty (tty: true), where the model types "y" itself.
func codexLateAndPty() []fakemodel.Step {
	poll := func(chars string, wait int) func(fakemodel.ToolResult) map[string]any {
		return func(prev fakemodel.ToolResult) map[string]any {
			id := 0
			if m := sessionRE.FindStringSubmatch(prev.Output); m != nil {
				fmt.Sscan(m[1], &id)
			}
			return map[string]any{"session_id": id, "chars": chars, "yield_time_ms": wait}
		}
	}
	return []fakemodel.Step{
		fakemodel.Call("exec_command", map[string]any{"cmd": "touch late.txt", "yield_time_ms": 500}),
		fakemodel.CallAfter("write_stdin", poll("", 20000)),
		fakemodel.Call("exec_command", map[string]any{"cmd": "touch pty.txt", "tty": true, "yield_time_ms": 1000}),
		fakemodel.CallAfter("write_stdin", poll("y\n", 1000)),
		// codex exec ends the command when the turn ends: the model
		// waits for it.
		fakemodel.CallAfter("write_stdin", poll("", 20000)),
	}
}

// codexLateAndPty answers Codex's extra steps (from step n) on the
// supervisor's screen: the late denial once exec_command has returned,
// and the pty command's prompt, which the model's "y" must not answer.
func (m *tmuxScreen) codexLateAndPty(r *rig, n int) {
	t := r.t
	m.waitPrompt(`touch late\.txt`)
	waitResult(t, r.srv, n)
	settled()
	m.keys("n")
	m.waitScreen(`(?i)note`)
	m.keys("too late")
	m.enter()
	m.waitPrompt(`touch pty\.txt`)
	waitResult(t, r.srv, n+3)
	// The model typed y on the command's pty; the prompt is the
	// supervisor's and still waits.
	time.Sleep(time.Second)
	if s := m.screen(false); !strings.Contains(s, "touch pty.txt") {
		t.Errorf("the prompt for touch pty.txt went away after the model typed y:\n%s", s)
	}
	settled()
	m.keys("n")
	m.waitScreen(`(?i)note`)
	m.enter()
	type outcome struct{ Late, LateNote, Pty, PtyRefused bool }
	time.Sleep(2 * time.Second)
	got := outcome{Late: r.exists("late.txt"), LateNote: strings.Contains(r.result(n+1), "guardrun: denied by user: too late"),
		Pty: r.exists("pty.txt"), PtyRefused: strings.Contains(r.result(n+4), "guardrun: denied by user")}
	if diff := cmp.Diff(got, outcome{LateNote: true, PtyRefused: true}); diff != "" {
		t.Errorf("late answers and the pty (-got +want):\n%s\nrequests:\n%s", diff, r.srv.Summary())
	}
}

// waitResult waits until the model has got step n's result.
func waitResult(t *testing.T, srv *fakemodel.Server, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if _, ok := srv.ToolResult(n); ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the model never got the result of step %d:\n%s", n, srv.Summary())
}

// TestAgentsClaudeDialogApprovesWithATicket runs Claude Code's own
// interactive screen (in tmux, no supervisor): a command that needs
// approval is asked in Claude Code's permission dialog, and approving
// there runs it, once, under guardrun, through the hook's ticket.
func TestAgentsClaudeDialogApprovesWithATicket(t *testing.T) {
	a := fakemodel.Claude
	r := newRig(t, a, func(r *rig) []fakemodel.Step {
		return []fakemodel.Step{
			a.Shell("touch dialog.txt"),
			fakemodel.Say("done"),
		}
	})
	if out, code := r.guardrun("integrate", "claude-code"); code != 0 {
		t.Fatalf("integrate: %d %s", code, out)
	}
	// The key Claude Code's first start asks about, and the trust dialog
	// of the project, answered as a person would have before.
	const key = "sk-ant-fakemodel-0123456789abcdefghij"
	state, _ := json.Marshal(map[string]any{
		"hasCompletedOnboarding": true, "theme": "dark",
		"customApiKeyResponses": map[string]any{"approved": []string{key[len(key)-20:]}, "rejected": []string{}},
		"projects":              map[string]any{r.w.Project: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
	})
	fakemodel.WriteFile(t, filepath.Join(r.w.Home, ".claude.json"), string(state))
	env := append(unsetEnv(r.env, "ANTHROPIC_API_KEY"), "ANTHROPIC_API_KEY="+key, "TERM=xterm-256color")
	iw := &world{work: r.w.Project, tmp: r.w.Tmp, env: env}
	// Claude Code's interactive default is "auto" mode, which answers
	// permission prompts itself; the hook asks only in "default" mode.
	m := startTmux(t, iw, nil, "exec "+shq(r.argv[0])+" --permission-mode default")
	m.waitScreen(`❯`)
	time.Sleep(2 * time.Second)
	m.keys("run the scripted steps")
	time.Sleep(500 * time.Millisecond)
	m.enter()
	s := m.waitScreen(`(?is)touch dialog\.txt.*(yes|proceed|allow)`)
	t.Logf("Claude Code's dialog:\n%s", s)
	if fileExists(filepath.Join(r.w.Project, "dialog.txt")) {
		t.Fatal("dialog.txt exists before the person approved")
	}
	// The first choice, Yes. A TUI that is still drawing the dialog can
	// drop a key (seen on a loaded machine), so the key is sent again
	// while the dialog stays up; a dialog that has gone takes no more.
	dialog := regexp.MustCompile(`Do you want to proceed\?`)
	for try := 0; try < 4; try++ {
		settled()
		if !dialog.MatchString(m.screen(false)) {
			break
		}
		m.enter()
		time.Sleep(3 * time.Second)
	}
	var by []string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		by = nil
		for _, rec := range r.records() {
			if rec.Script == "touch dialog.txt" {
				by = append(by, rec.Outcome+" by "+rec.DecidedBy+" in "+rec.Sandbox)
			}
		}
		if len(by) >= 3 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("after approving:\n%s", m.screen(false))
	type outcome struct {
		Made bool
		Runs []string
	}
	got := outcome{r.exists("dialog.txt"), by}
	want := outcome{true, []string{"asked by  in ", "started by person in bwrap", "ran by person in bwrap"}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("approving in Claude Code's dialog (-got +want):\n%s\nrequests:\n%s", diff, r.srv.Summary())
	}
}
