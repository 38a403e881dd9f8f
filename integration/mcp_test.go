//go:build linux

package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/supervisor"
)

// mcpConfig has a command that runs (echo, cat, ...), one that asks
// (touch, as every command no rule names), one that is blocked (rm), and
// zones of every kind. WORK is the work directory.
const mcpConfig = `mode: interactive
shell:
  program: /bin/bash
  default: {allowed: true, approval: true}
  rules:
    - {pattern: echo, approval: false}
    - {pattern: cat, approval: false}
    - {pattern: sleep, approval: false}
    - {pattern: exit, approval: false}
    - {pattern: seq, approval: false}
    - {pattern: env, approval: false}
    - {pattern: rm, allowed: false}
sandbox:
  paths:
    workspace: {root: "WORK", mode: rw}
    notes: {root: "WORK/notes", mode: rw, write_approval: true}
    guarded: {root: "WORK/guarded", mode: rw, read_approval: true}
    docs: {root: "WORK/docs", mode: ro}
  deny: [.env, "WORK/secret"]
`

var mcpFiles = map[string]string{
	"a.txt":            "alpha\nbeta\ngamma\n",
	"twice.txt":        "x and x\n",
	"sub/f.txt":        "in sub\n",
	"sub/deep/g.go":    "package deep // alpha\n",
	".env":             "TOKEN=alpha-secret\n",
	"secret/s.txt":     "alpha hidden\n",
	"notes/n.txt":      "note\n",
	"guarded/g.txt":    "alpha guarded\n",
	"docs/readme.md":   "# docs\n",
	"bin.dat":          "a\x00b",
	".git/HEAD":        "ref: refs/heads/main\n",
	".git/config":      "[core]\n",
	".git/hooks/READY": "",
}

// TestMCPToolList: the tools, their hints and their input schemas as a
// client sees them, and the protocol and capabilities guardrun offers.
func TestMCPToolList(t *testing.T) {
	requireSandbox(t)
	w := mcpWorld(t, mcpConfig, nil)
	s := startMCP(t, w, "stdio", nil)
	init := s.session.InitializeResult()
	if init.ProtocolVersion != "2025-11-25" {
		t.Errorf("negotiated protocol %q, want 2025-11-25", init.ProtocolVersion)
	}
	caps := init.Capabilities
	//lint:ignore SA1019 guardrun speaks protocols up to 2025-11-25, where logging is current
	if caps.Tools == nil || caps.Logging == nil || caps.Resources != nil || caps.Prompts != nil || caps.Completions != nil {
		t.Errorf("capabilities %+v: want tools and logging only", caps)
	}
	res, err := s.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	type hints struct{ ReadOnly, Destructive, Idempotent, OpenWorld bool }
	got := map[string]hints{}
	for _, tool := range res.Tools {
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: every hint should be given, got %+v", tool.Name, a)
			continue
		}
		got[tool.Name] = hints{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}
		if len(tool.Description) < 100 || !strings.Contains(tool.Description, `"guardrun:"`) {
			t.Errorf("%s: the description should say what it does and how a refusal reads: %q", tool.Name, tool.Description)
		}
		schema, _ := tool.InputSchema.(map[string]any)
		if schema["type"] != "object" || schema["additionalProperties"] != false {
			t.Errorf("%s: input schema %v: want an object without other properties", tool.Name, schema)
		}
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			if _, ok := p.(map[string]any)["type"].(string); !ok {
				t.Errorf("%s.%s: type %v, want one type (some clients read no list)", tool.Name, name, p.(map[string]any)["type"])
			}
		}
	}
	want := map[string]hints{
		"run":            {ReadOnly: false, Destructive: true, Idempotent: false, OpenWorld: true},
		"read_file":      {ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: false},
		"write_file":     {ReadOnly: false, Destructive: true, Idempotent: true, OpenWorld: false},
		"edit_file":      {ReadOnly: false, Destructive: true, Idempotent: false, OpenWorld: false},
		"list_directory": {ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: false},
		"search_files":   {ReadOnly: true, Destructive: false, Idempotent: true, OpenWorld: false},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("tools and hints (-got +want)\n%s", diff)
	}
}

// TestMCPRun: what the run tool returns for scripts that run, fail,
// are blocked, ask with nobody to ask, print too much or run too long,
// over both transports; and what the audit log says of them.
func TestMCPRun(t *testing.T) {
	requireSandbox(t)
	tests := []struct {
		name    string
		args    map[string]any
		server  []string
		isError bool
		text    string         // regexp the text content must match
		out     map[string]any // fields the structured content must hold
		absent  string         // a file that must not exist afterwards
	}{
		{name: "an allowed script runs", args: map[string]any{"script": "echo hi; echo oops >&2"},
			text: `^exit status 0\n--- stdout ---\nhi\n--- stderr ---\noops\n$`,
			out:  map[string]any{"exit_code": 0.0, "stdout": "hi\n", "stderr": "oops\n", "stdout_truncated": false, "timed_out": false}},
		{name: "a script that fails is a result, not an error", args: map[string]any{"script": "echo no; exit 3"},
			text: `^exit status 3\n`, out: map[string]any{"exit_code": 3.0}},
		{name: "it runs in cwd", args: map[string]any{"script": "cat f.txt", "cwd": "sub"},
			out: map[string]any{"stdout": "in sub\n"}},
		{name: "a blocked script is a tool error with the reason", args: map[string]any{"script": "echo x > gone; rm -f a.txt"}, isError: true,
			text: `^guardrun: blocked: .*rm -f a\.txt.*"rm"`, absent: "gone"},
		{name: "a script that asks, with nobody to ask, is refused as in strict mode", args: map[string]any{"script": "touch made"}, isError: true,
			text: `^guardrun: denied \(no terminal to ask; interactive mode acts as strict\): touch made needs approval`, absent: "made"},
		{name: "strict mode refuses what asks", args: map[string]any{"script": "touch made"}, server: []string{"--strict"}, isError: true,
			text: `^guardrun: denied \(strict mode\): touch made needs approval$`, absent: "made"},
		{name: "a write outside every zone is blocked", args: map[string]any{"script": "echo x > /etc/guardrun-mcp-test"}, isError: true,
			text: `^guardrun: blocked: .*outside every rw zone`},
		{name: "the end of a long output is kept", args: map[string]any{"script": "seq 1 100000", "max_output_bytes": 1024},
			text: `--- stdout ---\n\[guardrun: the first \d+ bytes \(\d+ lines\) of stdout were dropped; the last \d+ bytes follow\]\n\d+\n(.*\n)*100000\n$`,
			out:  map[string]any{"stdout_truncated": true, "stdout_bytes": 588895.0}},
		{name: "a script is ended at its timeout", args: map[string]any{"script": "sleep 30", "timeout_seconds": 1},
			text: `^exit status 143 \(ended after the timeout of 1s\)`, out: map[string]any{"exit_code": 143.0, "timed_out": true}},
		{name: "an empty script", args: map[string]any{"script": "  \n"}, isError: true, text: `^guardrun: the script is empty$`},
		{name: "a missing cwd", args: map[string]any{"script": "echo", "cwd": "nope"}, isError: true, text: `^guardrun: cwd .*/nope: no such file or directory$`},
		{name: "an unknown argument", args: map[string]any{"script": "echo", "shell": "zsh"}, isError: true, text: `unexpected additional properties \["shell"\]`},
		{name: "a timeout out of bounds", args: map[string]any{"script": "echo", "timeout_seconds": 99999}, isError: true, text: `timeout_seconds`},
	}
	for _, transport := range mcpTransports {
		t.Run(transport, func(t *testing.T) {
			w := mcpWorld(t, mcpConfig, mcpFiles)
			servers := map[string]*mcpServer{}
			outer := t
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					key := strings.Join(tt.server, " ")
					if servers[key] == nil {
						servers[key] = startMCP(outer, w, transport, nil, tt.server...)
					}
					r := servers[key].call(t, "run", tt.args)
					checkResult(t, r, tt.isError, tt.text, tt.out)
					if tt.absent != "" && exists(filepath.Join(w.work, tt.absent)) {
						t.Errorf("%s exists: the refused script ran", tt.absent)
					}
				})
			}
			for _, s := range servers {
				s.close()
			}
			var scripts []string
			for _, rec := range auditRecords(t, w) {
				if rec["outcome"] != "started" && rec["script"] != nil {
					if rec["via"] != "mcp" {
						t.Errorf("audit record %v: via %v, want mcp", rec["script"], rec["via"])
					}
					scripts = append(scripts, fmt.Sprintf("%s %s", rec["outcome"], rec["script"]))
				}
			}
			for _, want := range []string{"ran echo hi; echo oops >&2", "refused echo x > gone; rm -f a.txt", "refused touch made", "ran sleep 30"} {
				if !slices.Contains(scripts, want) {
					t.Errorf("the audit log has no record %q; it has %q", want, scripts)
				}
			}
		})
	}
}

// checkResult checks a tool's result: an error or not, its text, and
// fields of its structured content.
func checkResult(t *testing.T, r *mcp.CallToolResult, isError bool, textRe string, out map[string]any) {
	t.Helper()
	if r.IsError != isError {
		t.Errorf("isError %v, want %v: %s", r.IsError, isError, describe(r))
	}
	if textRe != "" && !regexp.MustCompile(textRe).MatchString(toolText(r)) {
		t.Errorf("text %q, want a match for %q", toolText(r), textRe)
	}
	if len(out) == 0 {
		return
	}
	sc, _ := r.StructuredContent.(map[string]any)
	got := map[string]any{}
	for k := range out {
		got[k] = sc[k]
	}
	if diff := cmp.Diff(got, out); diff != "" {
		t.Errorf("structured content (-got +want)\n%s\nall of it: %v", diff, sc)
	}
}

// TestMCPApproval: the person's answer in the client's form, for a
// script and for a file write, over both transports: once and session
// run (session: the same request does not ask again), deny carries the
// note back, decline and cancel deny, a form that fails or comes back
// without a valid decision runs nothing. The form shows the request as
// the terminal prompt does: the script and why it asks, the diff.
func TestMCPApproval(t *testing.T) {
	requireSandbox(t)
	type answer struct {
		name   string
		reply  func(*mcp.ElicitParams) (*mcp.ElicitResult, error)
		done   bool
		text   string // regexp of a refusal's text
		second int    // forms the same request sends again afterwards
		only   string // the request it is for, when not every one
	}
	answers := []answer{
		{name: "approve once", reply: accept("once", ""), done: true, second: 1},
		{name: "approve for the session", reply: accept("session", ""), done: true, second: 0},
		{name: "deny with a note", reply: accept("deny", "use the notes tool\ninstead"), text: `^guardrun: denied by user: use the notes tool instead$`, second: 1},
		{name: "deny without a note", reply: accept("deny", ""), text: `^guardrun: denied by user: .* was not approved$`, second: 1},
		{name: "decline", reply: action("decline"), text: `^guardrun: denied by user: `, second: 1},
		{name: "cancel", reply: action("cancel"), text: `^guardrun: denied by user: `, second: 1},
		{name: "a form the client fails", reply: func(*mcp.ElicitParams) (*mcp.ElicitResult, error) { return nil, fmt.Errorf("no person here") },
			text: `^guardrun: prompt: the client's approval form failed: `, second: 1},
		{name: "an answer outside the choices", reply: accept("forever", ""), text: `^guardrun: prompt: the client's approval form failed: .*does not match`, second: 1},
		// A script with one asking command is offered a rule for the
		// project; a file write is not, so there the choice is outside
		// the form.
		{name: "always in this project", reply: accept("always", ""), done: true, second: 0, only: "run"},
		{name: "always where no rule is offered", reply: accept("always", ""), text: `^guardrun: prompt: the client's approval form failed: .*does not match`, second: 1, only: "write_file"},
	}
	requests := []struct {
		name string
		tool string
		args map[string]any
		// done reports whether the request was carried out.
		done func(w *world) bool
		form []string // what the form's message must show
	}{
		{name: "run", tool: "run", args: map[string]any{"script": "touch made"},
			done: func(w *world) bool { return exists(filepath.Join(w.work, "made")) },
			form: []string{"approval needed", "$ touch made", "matches no rule", "sandbox:"}},
		{name: "write_file", tool: "write_file", args: map[string]any{"path": "notes/n.txt", "content": "note\nsecond line\n"},
			done: func(w *world) bool {
				b, _ := os.ReadFile(filepath.Join(w.work, "notes/n.txt"))
				return string(b) != "note\n"
			},
			form: []string{"approval needed", "write_file notes/n.txt", `zone "notes" needs approval to write`, "+second line"}},
	}
	for _, transport := range mcpTransports {
		for _, rq := range requests {
			for _, ans := range answers {
				if ans.only != "" && ans.only != rq.name {
					continue
				}
				t.Run(transport+"/"+rq.name+"/"+ans.name, func(t *testing.T) {
					w := mcpWorld(t, mcpConfig, mcpFiles)
					a := &answerer{answer: ans.reply}
					s := startMCP(t, w, transport, a)
					r := s.call(t, rq.tool, rq.args)
					if got := rq.done(w); got != ans.done {
						t.Errorf("carried out: %v, want %v (%s)", got, ans.done, describe(r))
					}
					if r.IsError == ans.done {
						t.Errorf("isError %v: %s", r.IsError, describe(r))
					}
					if ans.text != "" && !regexp.MustCompile(ans.text).MatchString(toolText(r)) {
						t.Errorf("text %q, want a match for %q", toolText(r), ans.text)
					}
					forms := a.asked()
					if len(forms) != 1 {
						t.Fatalf("%d forms sent, want 1", len(forms))
					}
					f := forms[0]
					for _, want := range rq.form {
						if !strings.Contains(f.Message, want) {
							t.Errorf("the form's message does not show %q:\n%s", want, f.Message)
						}
					}
					if strings.Contains(f.Message, "\x1b") {
						t.Errorf("the form's message holds escape sequences: %q", f.Message)
					}
					s.call(t, rq.tool, rq.args)
					if n := len(a.asked()) - 1; n != ans.second {
						t.Errorf("the same request again sent %d forms, want %d", n, ans.second)
					}
				})
			}
		}
	}
}

// TestMCPApprovalFallback: a client that offers no form (or a server
// told not to use it) leaves the prompt to whoever guardrun finds: the
// supervisor on $GUARDRUN_SOCKET answers it; without one it is refused
// as in strict mode; a terminal is never asked.
func TestMCPApprovalFallback(t *testing.T) {
	requireSandbox(t)
	for _, transport := range mcpTransports {
		t.Run(transport+"/the supervisor answers a client without elicitation", func(t *testing.T) {
			w := mcpWorld(t, mcpConfig, mcpFiles)
			p := &countingPrompter{answer: approval.Answer{Approve: true}}
			sv, err := supervisor.Listen(t.TempDir(), p)
			if err != nil {
				t.Fatal(err)
			}
			go sv.Serve()
			t.Cleanup(func() { sv.Close() })
			w.env = append(w.env, "GUARDRUN_SOCKET="+sv.Path())
			s := startMCP(t, w, transport, nil)
			r := s.call(t, "run", map[string]any{"script": "touch made"})
			if r.IsError || !exists(filepath.Join(w.work, "made")) || p.count() != 1 {
				t.Errorf("want the supervisor asked once and the script run: %s, asked %d", describe(r), p.count())
			}
		})
		t.Run(transport+"/--no-elicitation sends no form", func(t *testing.T) {
			w := mcpWorld(t, mcpConfig, mcpFiles)
			a := &answerer{answer: accept("once", "")}
			s := startMCP(t, w, transport, a, "--no-elicitation")
			r := s.call(t, "run", map[string]any{"script": "touch made"})
			checkResult(t, r, true, `^guardrun: denied \(no terminal to ask; interactive mode acts as strict\): touch made needs approval`, nil)
			if n := len(a.asked()); n != 0 || exists(filepath.Join(w.work, "made")) {
				t.Errorf("%d forms sent, made exists: %v", n, exists(filepath.Join(w.work, "made")))
			}
		})
	}
}

// countingPrompter stands for the person at the supervisor's terminal.
type countingPrompter struct {
	answer approval.Answer
	n      atomic.Int32
}

func (p *countingPrompter) Prompt(context.Context, *approval.Request) (approval.Answer, error) {
	p.n.Add(1)
	return p.answer, nil
}

func (p *countingPrompter) count() int { return int(p.n.Load()) }

// TestMCPFiles: the file tools through the zones, as guardrun fs goes:
// what each returns, what it refuses and why, what the files hold
// afterwards.
func TestMCPFiles(t *testing.T) {
	requireSandbox(t)
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		isError bool
		text    string
		out     map[string]any
		after   map[string]string // file contents afterwards ("" absent)
	}{
		{name: "read a file", tool: "read_file", args: map[string]any{"path": "a.txt"}, text: `^alpha\nbeta\ngamma\n$`,
			out: map[string]any{"start_line": 1.0, "end_line": 3.0, "more": false, "total_bytes": 17.0}},
		{name: "read lines 2 to 2", tool: "read_file", args: map[string]any{"path": "a.txt", "start_line": 2, "end_line": 2},
			text: `^beta\n\[guardrun: lines 2-2 of .*/a\.txt \(17 bytes\); the file goes on: read on with start_line=3\]$`,
			out:  map[string]any{"content": "beta\n", "more": true, "next_line": 3.0}},
		{name: "read up to max_bytes, ending at a line's end", tool: "read_file", args: map[string]any{"path": "a.txt", "max_bytes": 12},
			out: map[string]any{"content": "alpha\nbeta\n", "end_line": 2.0, "more": true, "next_line": 3.0, "cut": false}},
		{name: "a first line longer than max_bytes is cut", tool: "read_file", args: map[string]any{"path": "a.txt", "max_bytes": 3},
			out: map[string]any{"content": "alp", "cut": true, "next_line": 1.0}},
		{name: "read past the end", tool: "read_file", args: map[string]any{"path": "a.txt", "start_line": 9},
			text: `ends before line 9`, out: map[string]any{"content": "", "more": false}},
		{name: "read a binary file", tool: "read_file", args: map[string]any{"path": "bin.dat"}, isError: true, text: `^guardrun: .*/bin\.dat: is not text`},
		{name: "read a denied file", tool: "read_file", args: map[string]any{"path": ".env"}, isError: true,
			text: `^guardrun: blocked: read \.env: the path is denied \(sandbox\.deny\)$`},
		{name: "read outside every zone", tool: "read_file", args: map[string]any{"path": "../guardrun.yaml"}, isError: true, text: `^guardrun: blocked: read \.\./guardrun\.yaml: `},
		{name: "read guardrun's own state", tool: "read_file", args: map[string]any{"path": "../home/.local/state/guardrun/audit.jsonl"}, isError: true, text: `^guardrun: blocked: `},
		{name: "read in a zone that asks, with nobody to ask", tool: "read_file", args: map[string]any{"path": "guarded/g.txt"}, isError: true,
			text: `^guardrun: denied \(no terminal to ask; interactive mode acts as strict\): read guarded/g\.txt needs approval`},

		{name: "write a new file in new directories", tool: "write_file", args: map[string]any{"path": "new/dir/n.txt", "content": "fresh\n"},
			text: `^created .*/new/dir/n\.txt \(6 bytes\)$`, out: map[string]any{"created": true, "bytes": 6.0}, after: map[string]string{"new/dir/n.txt": "fresh\n"}},
		{name: "replace a file", tool: "write_file", args: map[string]any{"path": "a.txt", "content": "one\n"},
			out: map[string]any{"created": false}, after: map[string]string{"a.txt": "one\n"}},
		{name: "write in a read-only zone", tool: "write_file", args: map[string]any{"path": "docs/readme.md", "content": "x"}, isError: true,
			text: `^guardrun: blocked: write docs/readme\.md: zone "docs" is read-only$`, after: map[string]string{"docs/readme.md": "# docs\n"}},
		{name: "write a denied file", tool: "write_file", args: map[string]any{"path": "secret/s.txt", "content": "x"}, isError: true,
			text: `the path is denied`, after: map[string]string{"secret/s.txt": "alpha hidden\n"}},
		{name: "write a protected name asks", tool: "write_file", args: map[string]any{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}, isError: true,
			text: `^guardrun: denied \(no terminal to ask; interactive mode acts as strict\): write \.git/hooks/pre-commit needs approval`, after: map[string]string{".git/hooks/pre-commit": ""}},
		{name: "write guardrun's own config", tool: "write_file", args: map[string]any{"path": ".guardrun.yaml", "content": "mode: approve-all\n"}, isError: true,
			text: `guardrun's own config and state`, after: map[string]string{".guardrun.yaml": ""}},
		{name: "write outside every zone", tool: "write_file", args: map[string]any{"path": "/tmp/guardrun-mcp-never", "content": "x"}, isError: true,
			text: `outside every rw zone`},

		{name: "edit once", tool: "edit_file", args: map[string]any{"path": "a.txt", "old_string": "beta", "new_string": "BETA"},
			out: map[string]any{"replacements": 1.0}, after: map[string]string{"a.txt": "alpha\nBETA\ngamma\n"}},
		{name: "edit every occurrence", tool: "edit_file", args: map[string]any{"path": "twice.txt", "old_string": "x", "new_string": "y", "replace_all": true},
			text: `^edited .*twice\.txt: 2 replacements`, after: map[string]string{"twice.txt": "y and y\n"}},
		{name: "edit text found twice", tool: "edit_file", args: map[string]any{"path": "twice.txt", "old_string": "x", "new_string": "y"}, isError: true,
			text: `^guardrun: old_string was found 2 times in .*twice\.txt; it must occur exactly once \(include more of the surrounding text\)$`, after: map[string]string{"twice.txt": "x and x\n"}},
		{name: "edit text not found", tool: "edit_file", args: map[string]any{"path": "a.txt", "old_string": "delta", "new_string": "y"}, isError: true,
			text: `^guardrun: old_string was not found in .*a\.txt; it must occur exactly once$`},
		{name: "edit a missing file", tool: "edit_file", args: map[string]any{"path": "nope.txt", "old_string": "a", "new_string": "b"}, isError: true, text: `does not exist`},
		{name: "edit in a read-only zone", tool: "edit_file", args: map[string]any{"path": "docs/readme.md", "old_string": "docs", "new_string": "x"}, isError: true,
			text: `zone "docs" is read-only`},

		{name: "list leaves out what is denied and a zone that asks", tool: "list_directory", args: map[string]any{},
			text: `(?s)^dir +\d+ \.git/\nfile +17 a\.txt\nfile +3 bin\.dat\ndir +\d+ docs/\ndir +\d+ notes/\ndir +\d+ sub/\nfile +8 twice\.txt\n\[guardrun: 3 entries left out`,
			out:  map[string]any{"skipped": 3.0, "truncated": false}},
		{name: "list two levels", tool: "list_directory", args: map[string]any{"path": "sub", "depth": 2},
			text: `^dir +\d+ deep/\nfile +\d+ deep/g\.go\nfile +\d+ f\.txt\n$`},
		{name: "list a denied directory", tool: "list_directory", args: map[string]any{"path": "secret"}, isError: true, text: `the path is denied`},

		{name: "search content skips denied files and asking zones", tool: "search_files", args: map[string]any{"content": "alpha"},
			text: `^a\.txt:1: alpha\nsub/deep/g\.go:1: package deep // alpha\n\[guardrun: \d+ entries were not searched`},
		{name: "search by name", tool: "search_files", args: map[string]any{"name": "*.go"}, text: `^sub/deep/g\.go\n\[guardrun: 3 entries were not searched`},
		{name: "search by name and regular expression", tool: "search_files", args: map[string]any{"name": "*.txt", "content": "^(be|ga)", "regex": true},
			text: `^a\.txt:2: beta\na\.txt:3: gamma\n`},
		{name: "search ignoring case", tool: "search_files", args: map[string]any{"content": "ALPHA", "case_insensitive": true, "max_results": 1},
			text: `^a\.txt:1: alpha\n\[guardrun: the search stopped early`},
		{name: "search with nothing to look for", tool: "search_files", args: map[string]any{"path": "sub"}, isError: true, text: `needs name, content, or both`},
		{name: "search a bad regular expression", tool: "search_files", args: map[string]any{"content": "(", "regex": true}, isError: true, text: `not a regular expression`},
	}
	for _, transport := range mcpTransports {
		t.Run(transport, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					w := mcpWorld(t, mcpConfig, mcpFiles)
					s := startMCP(t, w, transport, nil)
					checkResult(t, s.call(t, tt.tool, tt.args), tt.isError, tt.text, tt.out)
					for name, want := range tt.after {
						b, err := os.ReadFile(filepath.Join(w.work, name))
						got := string(b)
						if err != nil {
							got = ""
						}
						if got != want {
							t.Errorf("%s holds %q, want %q", name, got, want)
						}
					}
				})
			}
		})
	}
}

// TestMCPCancel: a script ends, sandbox and all, when its call is
// cancelled, when a stdio client closes the connection, and when an HTTP
// client deletes its session (which the SDK alone does not cancel).
func TestMCPCancel(t *testing.T) {
	requireSandbox(t)
	type how struct {
		transport string
		name      string
		end       func(s *mcpServer, cancel context.CancelFunc)
	}
	for i, h := range []how{
		{"stdio", "the call is cancelled", func(s *mcpServer, cancel context.CancelFunc) { cancel() }},
		{"http", "the call is cancelled", func(s *mcpServer, cancel context.CancelFunc) { cancel() }},
		{"stdio", "the client closes the connection", func(s *mcpServer, cancel context.CancelFunc) { s.stdin.Close() }},
		{"http", "the client deletes its session", func(s *mcpServer, cancel context.CancelFunc) { s.deleteSession(t) }},
	} {
		t.Run(h.transport+"/"+h.name, func(t *testing.T) {
			w := mcpWorld(t, mcpConfig, nil)
			s := startMCP(t, w, h.transport, nil)
			marker := fmt.Sprintf("300.%d%d", 100000+os.Getpid()%900000, i)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			returned := make(chan error, 1)
			go func() {
				_, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"script": "sleep " + marker + "; echo late > late"}})
				returned <- err
			}()
			deadline := time.Now().Add(15 * time.Second)
			for len(markerProcs(marker)) == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("sleep %s never started; stderr: %s", marker, s.stderr)
				}
				time.Sleep(20 * time.Millisecond)
			}
			h.end(s, cancel)
			noneLeft(t, 10*time.Second, h.name, marker)
			if exists(filepath.Join(w.work, "late")) {
				t.Errorf("the script went on after its sleep was ended")
			}
			select {
			case <-returned:
			case <-time.After(10 * time.Second):
				t.Errorf("the call did not return within 10s")
			}
		})
	}
}

// TestMCPHTTPGuards: guardrun mcp --listen answers only a request with
// its token, its own Host and no foreign Origin, on its one path; and a
// command in the sandbox neither sees the token nor reaches the port.
func TestMCPHTTPGuards(t *testing.T) {
	requireSandbox(t)
	w := mcpWorld(t, mcpConfig, nil)
	s := startMCP(t, w, "http", nil, "--approve-all")
	host := strings.TrimPrefix(strings.TrimSuffix(s.url, "/mcp"), "http://")
	_, port, _ := strings.Cut(host, ":")
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	tests := []struct {
		name   string
		url    string
		header map[string]string
		status int
	}{
		{name: "the token as a bearer token", url: s.url, header: map[string]string{"Authorization": "Bearer " + s.token}, status: 200},
		{name: "the token in the URL", url: s.url + "?token=" + s.token, status: 200},
		{name: "no token", url: s.url, status: 401},
		{name: "a wrong token", url: s.url, header: map[string]string{"Authorization": "Bearer " + s.token + "x"}, status: 401},
		{name: "the token under another scheme", url: s.url, header: map[string]string{"Authorization": "Basic " + s.token}, status: 401},
		{name: "a foreign Host, with the token", url: s.url, header: map[string]string{"Authorization": "Bearer " + s.token, "Host": "evil.example:" + port}, status: 403},
		{name: "localhost with the port", url: s.url, header: map[string]string{"Authorization": "Bearer " + s.token, "Host": "localhost:" + port}, status: 200},
		{name: "a foreign Origin, with the token", url: s.url, header: map[string]string{"Authorization": "Bearer " + s.token, "Origin": "http://evil.example"}, status: 403},
		{name: "its own Origin", url: s.url, header: map[string]string{"Authorization": "Bearer " + s.token, "Origin": "http://" + host}, status: 200},
		{name: "another path", url: strings.TrimSuffix(s.url, "/mcp") + "/other?token=" + s.token, status: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", tt.url, strings.NewReader(initialize))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tt.header {
				if k == "Host" {
					req.Host = v
					continue
				}
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
		})
	}
	t.Run("a sandboxed command sees no token and cannot reach the port", func(t *testing.T) {
		r := s.call(t, "run", map[string]any{"script": "env; curl -sS -m 5 -o /dev/null -w 'HTTP %{http_code}' " + s.url})
		out := toolText(r)
		if r.IsError || strings.Contains(out, s.token) || !strings.Contains(out, "HTTP 000") || !strings.Contains(out, "exit status 7") {
			t.Errorf("want the connection refused inside the sandbox and no token in its environment: %s", describe(r))
		}
	})
}

// deleteSession deletes the client's HTTP session as a client that is
// done with it does (the SDK's client would first wait for its calls).
func (s *mcpServer) deleteSession(t *testing.T) {
	req, _ := http.NewRequest("DELETE", s.url, nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Mcp-Session-Id", s.session.ID())
	// The SDK answers once the session's calls have returned.
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("DELETE of the session: %v (its calls went on running)", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE of the session: status %d, want 204", resp.StatusCode)
	}
}

// TestMCPProgress: a call that asked for progress hears, every few
// seconds, what it waits for, so that a client whose timeout restarts on
// progress waits out a long run (or a person thinking).
func TestMCPProgress(t *testing.T) {
	requireSandbox(t)
	w := mcpWorld(t, mcpConfig, nil)
	s := startMCP(t, w, "stdio", nil)
	p := &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"script": "sleep 6"}}
	p.SetProgressToken("tok-1")
	r, err := s.session.CallTool(context.Background(), p)
	if err != nil || r.IsError {
		t.Fatalf("run: %v %v", err, r)
	}
	if got := s.progress.String(); !regexp.MustCompile(`^(tok-1 guardrun: running \(\d+s\)\n)+$`).MatchString(got) {
		t.Errorf("progress notifications %q, want at least one saying it runs", got)
	}
	s.call(t, "run", map[string]any{"script": "sleep 6"})
	if n := strings.Count(s.progress.String(), "\n"); n != 1 {
		t.Errorf("%d progress notifications in all, want only the first call's: a call without a token gets none", n)
	}
}

// TestMCPStart: guardrun mcp refuses to start, with the usual exit
// statuses, where it could never serve: a bad config (125), an address
// that is not loopback or a stray argument (2).
func TestMCPStart(t *testing.T) {
	requireSandbox(t)
	w := mcpWorld(t, "shell:\n  bogus: 1\n", nil)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"a bad config", []string{"mcp"}, 125, `shell\.bogus: unknown key`},
		{"an address that is not loopback", []string{"mcp", "--listen", "0.0.0.0:8080"}, 2, `loopback address only`},
		{"no port", []string{"mcp", "--listen", "127.0.0.1"}, 2, `want HOST:PORT`},
		{"a stray argument", []string{"mcp", "serve"}, 2, `mcp takes no arguments`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runPlain(t, w, "", nil, tt.args...)
			if code != tt.code || !regexp.MustCompile(tt.stderr).MatchString(stderr) {
				t.Errorf("exit %d, stderr %q; want %d and a match for %q", code, stderr, tt.code, tt.stderr)
			}
		})
	}
}
