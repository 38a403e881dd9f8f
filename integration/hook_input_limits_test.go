//go:build linux

package integration

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHookRefusesWhatItCannotRead: every agent runs the call when its
// hook crashes, is killed, overstays or prints something else than JSON,
// so `guardrun hook` answers input it cannot read with a refusal: the
// agent's denial, or exit status 2, which all three take as one. Never
// an empty answer (the agent would run the call as if guardrun were not
// there), never another status, never more than a bounded time and
// memory (a hook killed for its memory fails open).
func TestHookRefusesWhatItCannotRead(t *testing.T) {
	requireSandbox(t)
	w := hookWorld(t)
	env := func(tool string, toolInput string) string {
		return `{"session_id":"s1","cwd":` + jsonString(w.work) + `,"hook_event_name":"PreToolUse","tool_name":` + jsonString(tool) + `,"tool_input":` + toolInput + `,"tool_use_id":"t1","permission_mode":"default"}`
	}
	bash := func(command string) string { return env("Bash", `{"command":`+jsonString(command)+`}`) }
	payload := "echo ran > " + w.work + "/../outside-by-hook\n"
	tests := []struct {
		name, agent, input string
	}{
		{"a megabyte of if, after a command", "claude-code", bash(payload + strings.Repeat("if ", 349_000))},
		{"a megabyte of while", "codex", bash(payload + strings.Repeat("while ", 174_000))},
		{"a megabyte of function definitions", "claude-code", bash(strings.Repeat("f()", 349_000))},
		{"a megabyte of time", "claude-code", bash(strings.Repeat("time ", 209_000))},
		{"nested parentheses", "claude-code", bash(strings.Repeat("(", 1_000_000))},
		{"nested command substitutions", "codex", bash(strings.Repeat("$(", 500_000))},
		{"a script over the size limit", "claude-code", bash(payload + strings.Repeat("#", 2<<20))},
		{"input over 8 MiB", "claude-code", bash(strings.Repeat("x", 9<<20))},
		{"JSON nested deeper than the decoder takes, in an ignored field", "claude-code", `{"prompt_id":` + strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000) + `,` + bash("ls")[1:]},
		{"JSON nested in the tool input", "codex", env("Bash", `{"command":"ls","x":`+strings.Repeat("[", 20_000)+strings.Repeat("]", 20_000)+`}`)},
		{"empty input", "gemini", ""},
		{"white space only", "claude-code", " \n\t"},
		{"null", "claude-code", "null"},
		{"an array", "codex", "[]"},
		{"two documents", "claude-code", bash("ls") + bash("touch x")},
		{"trailing garbage", "claude-code", bash("ls") + " x"},
		{"a byte order mark", "claude-code", "\ufeff" + bash("ls")},
		{"a number for the command", "claude-code", env("Bash", `{"command":1}`)},
		{"an object for the command", "codex", env("Bash", `{"command":{"a":"ls"}}`)},
		{"null for the command", "claude-code", env("Bash", `{"command":null}`)},
		{"no command", "claude-code", env("Bash", `{"description":"x"}`)},
		{"a NUL in the command", "claude-code", bash("ls\x00; touch x")},
		{"an empty command", "codex", bash(" \n ")},
		{"a number for the tool name", "claude-code", strings.Replace(bash("ls"), `"tool_name":"Bash"`, `"tool_name":1`, 1)},
		{"the tool in lower case", "claude-code", env("bash", `{"command":"ls"}`)},
		{"the tool with a zero-width space", "claude-code", env("Bash\u200b", `{"command":"ls"}`)},
		{"the tool with a lone surrogate", "claude-code", env("Bash\\ud800", `{"command":"ls"}`)},
		{"a field in another case", "claude-code", env("Bash", `{"command":"ls","Command":"touch x"}`)},
		{"Codex's shell parameter", "codex", env("Bash", `{"command":"ls","shell":"/bin/zsh"}`)},
		{"a tool_input that is a list", "claude-code", env("Bash", `["ls"]`)},
		{"a tool_input that is null", "claude-code", env("Bash", `null`)},
		{"another event", "claude-code", strings.Replace(bash("ls"), "PreToolUse", "PostToolUse", 1)},
		{"Gemini's event from Claude Code", "claude-code", strings.Replace(bash("ls"), "PreToolUse", "BeforeTool", 1)},
		{"a relative cwd", "claude-code", strings.Replace(bash("ls"), `"cwd":`+jsonString(w.work), `"cwd":"project"`, 1)},
		{"a number for the session", "claude-code", strings.Replace(bash("ls"), `"session_id":"s1"`, `"session_id":7`, 1)},
		{"MultiEdit with a null edit", "claude-code", env("MultiEdit", `{"file_path":`+jsonString(w.work+"/x")+`,"edits":[null]}`)},
		{"MultiEdit with a number for an edit", "claude-code", env("MultiEdit", `{"file_path":`+jsonString(w.work+"/x")+`,"edits":[1]}`)},
		{"a patch naming too many files", "codex", env("apply_patch", `{"command":`+jsonString("*** Begin Patch\n"+strings.Repeat("*** Delete File: x\n", 1001)+"*** End Patch\n")+`}`)},
		{"a patch wrapped in a here-document", "codex", env("apply_patch", `{"command":`+jsonString("<<'EOF'\n*** Begin Patch\n*** Add File: ../x\n+x\n*** End Patch\nEOF\n")+`}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(guardrunBin, "hook", tt.agent)
			cmd.Dir, cmd.Env = w.work, w.env
			cmd.Stdin = strings.NewReader(tt.input)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
			var ans map[string]any
			jsonErr := json.Unmarshal(stdout.Bytes(), &ans)
			d, reason, rewritten := decision(ans)
			refused := code == 2 || code == 0 && jsonErr == nil && d == "deny" && reason != "" && rewritten == ""
			if !refused {
				t.Errorf("exit %d, answer %q (stderr %.300s): want a denial or exit status 2", code, stdout.String(), stderr.String())
			}
			if rss > 256<<20 || took > 30*time.Second {
				t.Errorf("the hook took %v and %d MiB to answer", took, rss>>20)
			}
			if fileExists(w.work + "/../outside-by-hook") {
				t.Fatal("the payload ran")
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
