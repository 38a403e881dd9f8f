package agents

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func hookJSON(t *testing.T, event, tool string, input any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"session_id": "s1", "cwd": "/p", "hook_event_name": event, "tool_name": tool,
		"tool_input": input, "tool_use_id": "t1", "permission_mode": "default", "prompt_id": "x",
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// op is a file operation as a test compares it.
type op struct {
	Op   Op
	Path string
	From string
	New  string // what Apply makes of the file "a\nb\nc\n"
}

func ops(c *Call) []op {
	var out []op
	for _, f := range c.Files {
		o := op{Op: f.Op, Path: f.Path, From: f.From}
		if f.Apply != nil {
			b, err := f.Apply([]byte("a\nb\nc\n"))
			if err != nil {
				o.New = "error: " + err.Error()
			} else {
				o.New = string(b)
			}
		}
		out = append(out, o)
	}
	return out
}

func TestParseHookReadsWhatEachToolDoes(t *testing.T) {
	tests := []struct {
		name    string
		agent   *Agent
		tool    string
		input   any
		command string
		dir     string
		files   []op
	}{
		{"claude bash", Claude, "Bash", map[string]any{"command": "ls -la", "description": "list", "run_in_background": false}, "ls -la", "", nil},
		{"codex bash", Codex, "Bash", map[string]any{"command": "make"}, "make", "", nil},
		{"gemini shell in a subdirectory", Gemini, "run_shell_command", map[string]any{"command": "make", "dir_path": "sub"}, "make", "/p/sub", nil},
		{"claude write", Claude, "Write", map[string]any{"file_path": "/p/x", "content": "new\n"}, "", "", []op{{Op: OpWrite, Path: "/p/x", New: "new\n"}}},
		{"claude edit", Claude, "Edit", map[string]any{"file_path": "/p/x", "old_string": "b", "new_string": "B", "replace_all": false}, "", "", []op{{Op: OpEdit, Path: "/p/x", New: "a\nB\nc\n"}}},
		{"claude multiedit in order", Claude, "MultiEdit", map[string]any{"file_path": "/p/x", "edits": []any{
			map[string]any{"old_string": "a", "new_string": "b"}, map[string]any{"old_string": "b\nb", "new_string": "z"}}}, "", "", []op{{Op: OpEdit, Path: "/p/x", New: "z\nc\n"}}},
		{"claude read", Claude, "Read", map[string]any{"file_path": "/etc/hosts", "limit": 5}, "", "", []op{{Op: OpRead, Path: "/etc/hosts"}}},
		{"claude glob lists its directory", Claude, "Glob", map[string]any{"pattern": "*.go"}, "", "", []op{{Op: OpList, Path: "/p"}}},
		{"claude notebook edit", Claude, "NotebookEdit", map[string]any{"notebook_path": "/p/n.ipynb", "new_source": "x"}, "", "", []op{{Op: OpEdit, Path: "/p/n.ipynb"}}},
		{"gemini write relative", Gemini, "write_file", map[string]any{"file_path": "x.txt", "content": "hi"}, "", "", []op{{Op: OpWrite, Path: "x.txt", New: "hi"}}},
		{"gemini replace all", Gemini, "replace", map[string]any{"file_path": "x", "old_string": "\n", "new_string": ";", "allow_multiple": true, "instruction": "x"}, "", "", []op{{Op: OpEdit, Path: "x", New: "a;b;c;"}}},
		{"codex patch", Codex, "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: n.txt\n+one\n*** Update File: x\n@@\n a\n-b\n+B\n*** Update File: m\n*** Move to: m2\n@@\n-c\n+C\n*** Delete File: gone\n*** End Patch\n"}, "", "",
			[]op{{Op: OpWrite, Path: "n.txt", New: "one\n"}, {Op: OpEdit, Path: "x", New: "a\nB\nc\n"},
				{Op: OpRead, Path: "m"}, {Op: OpWrite, Path: "m2", From: "m", New: "a\nb\nC\n"}, {Op: OpDelete, Path: "m"}, {Op: OpDelete, Path: "gone"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseHook(tt.agent, hookJSON(t, tt.agent.Event, tt.tool, tt.input))
			if err != nil {
				t.Fatal(err)
			}
			if c.Command != tt.command || c.Dir != tt.dir {
				t.Errorf("command %q dir %q, want %q %q", c.Command, c.Dir, tt.command, tt.dir)
			}
			if diff := cmp.Diff(ops(c), tt.files); diff != "" {
				t.Errorf("files (-got +want):\n%s", diff)
			}
		})
	}
}

func TestParseHookRefusesWhatItDoesNotKnow(t *testing.T) {
	big := strings.Repeat("x", MaxHookInput)
	tests := []struct {
		name  string
		agent *Agent
		data  []byte
		want  string
	}{
		{"malformed JSON", Claude, []byte(`{"tool_name": "Bash",`), "guardrun: the hook input is not the JSON Claude Code sends: unexpected EOF"},
		{"two documents", Claude, []byte(`{} {}`), "guardrun: the hook input holds more than one JSON value"},
		{"too large", Claude, hookJSON(t, "PreToolUse", "Write", map[string]any{"file_path": "/p/x", "content": big}), "guardrun: the hook input is larger than 8 MiB"},
		{"another event", Claude, hookJSON(t, "PostToolUse", "Bash", map[string]any{"command": "ls"}), `guardrun: hook event "PostToolUse" is not Claude Code's PreToolUse`},
		{"an unknown tool", Claude, hookJSON(t, "PreToolUse", "WebFetch", map[string]any{"url": "x"}), `guardrun: Claude Code tool "WebFetch" is not one guardrun knows, so it is refused`},
		{"an unknown field", Claude, hookJSON(t, "PreToolUse", "Bash", map[string]any{"command": "ls", "shell": "zsh"}), `guardrun: Bash input field "shell" is not one guardrun knows, so the call is refused`},
		{"a field of the wrong type", Codex, hookJSON(t, "PreToolUse", "Bash", map[string]any{"command": []string{"ls"}}), `guardrun: Bash input field "command" is not a string`},
		{"a missing command", Gemini, hookJSON(t, "BeforeTool", "run_shell_command", map[string]any{"description": "x"}), `guardrun: run_shell_command input has no "command"`},
		{"a relative cwd", Claude, []byte(`{"cwd": "p", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}`), `guardrun: the hook input's cwd "p" is not an absolute path`},
		{"a search over a directory", Gemini, hookJSON(t, "BeforeTool", "grep_search", map[string]any{"pattern": "key"}), "guardrun: grep_search reads files under a directory that guardrun cannot check one by one; search with the shell tool (rg, grep, find), which runs in guardrun's sandbox"},
		{"a patch with an unknown header", Codex, hookJSON(t, "PreToolUse", "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Copy File: a\n*** End Patch"}), `guardrun: apply_patch: line 2: unknown patch line "*** Copy File: a"`},
		{"a patch line before any file", Codex, hookJSON(t, "PreToolUse", "apply_patch", map[string]any{"command": "*** Begin Patch\n+x\n*** End Patch"}), `guardrun: apply_patch: line 2: a line before the first file header`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseHook(tt.agent, tt.data)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("error = %q\n want %q", got, tt.want)
			}
		})
	}
}

func TestRenderSpeaksEachAgentsAnswer(t *testing.T) {
	claudeCall, _ := ParseHook(Claude, hookJSON(t, "PreToolUse", "Bash", map[string]any{"command": "ls", "run_in_background": true}))
	codexCall, _ := ParseHook(Codex, hookJSON(t, "PreToolUse", "Bash", map[string]any{"command": "ls"}))
	geminiCall, _ := ParseHook(Gemini, hookJSON(t, "BeforeTool", "run_shell_command", map[string]any{"command": "ls"}))
	tests := []struct {
		name string
		c    *Call
		a    Answer
		want string
	}{
		{"claude rewrite keeps the other fields", claudeCall, Answer{Verdict: Allow, Command: "g -c ls"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"g -c ls","run_in_background":true}}}`},
		{"claude ask with a rewrite", claudeCall, Answer{Verdict: Ask, Reason: "r", Command: "g -c ls"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"r","updatedInput":{"command":"g -c ls","run_in_background":true}}}`},
		{"codex deny", codexCall, Answer{Verdict: Deny, Reason: "guardrun: blocked: x"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guardrun: blocked: x"}}`},
		{"codex never gets ask", codexCall, Answer{Verdict: Ask, Reason: "r"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"}}`},
		{"gemini rewrite", geminiCall, Answer{Verdict: Allow, Command: "g -c ls"},
			`{"decision":"allow","hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"g -c ls"}}}`},
		{"gemini never gets ask", geminiCall, Answer{Verdict: Ask, Reason: "r"}, `{"decision":"deny","reason":"r"}`},
		{"pass is no answer", geminiCall, Answer{Verdict: Pass}, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.TrimSuffix(string(Render(tt.c, tt.a)), "\n")
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestForCommand(t *testing.T) {
	tests := []struct {
		argv []string
		want *Agent
	}{
		{[]string{"claude"}, Claude},
		{[]string{"/home/u/.npm/bin/codex", "exec", "x"}, Codex},
		{[]string{"npx", "-y", "@google/gemini-cli@0.61.0"}, Gemini},
		{[]string{"npx", "@openai/codex"}, Codex},
		{[]string{"npx", "cowsay"}, nil},
		{[]string{"aider"}, nil},
	}
	for _, tt := range tests {
		if got := ForCommand(tt.argv); got != tt.want {
			t.Errorf("ForCommand(%q) = %v, want %v", tt.argv, got, tt.want)
		}
	}
}

func TestTicketsApproveOnceAndOnlyTheirRequest(t *testing.T) {
	s := &TicketStore{Dir: t.TempDir() + "/tickets"}
	now := time.Now()
	id, err := s.Mint(Ticket{Agent: "claude-code", Session: "s1", Script: "rm x", Cwd: "/p", Key: "k", Expires: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	expired, _ := s.Mint(Ticket{Script: "rm x", Expires: now.Add(-time.Second)})
	match := func(tk *Ticket) error {
		if tk.Script != "rm x" || tk.Session != "s1" {
			return &ErrTicket{"is for another request"}
		}
		return nil
	}
	var got []string
	for _, try := range []struct {
		id    string
		check func(*Ticket) error
	}{
		{"../../etc/passwd", match},
		{strings.Repeat("0", 32), match},
		{expired, match},
		{id, func(*Ticket) error { return &ErrTicket{"is for another request"} }},
		{id, match}, // burnt by the mismatch before
	} {
		err := s.Consume(try.id, now, try.check)
		got = append(got, errText(err))
	}
	id2, _ := s.Mint(Ticket{Session: "s1", Script: "rm x", Expires: now.Add(time.Minute)})
	got = append(got, errText(s.Consume(id2, now, match)), errText(s.Consume(id2, now, match)))
	want := []string{
		"the approval ticket is not a ticket id",
		"the approval ticket is unknown or was used already",
		"the approval ticket has expired",
		"the approval ticket is for another request",
		"the approval ticket is unknown or was used already",
		"",
		"the approval ticket is unknown or was used already",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
