//go:build unix

package fakemodel_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestAgentsRunScriptedTools(t *testing.T) {
	for _, a := range []fakemodel.Agent{fakemodel.Claude, fakemodel.Codex, fakemodel.Gemini} {
		t.Run(a.Name, func(t *testing.T) {
			w := fakemodel.NewWorld(t)
			const written = "written by the agent's file tool\n"
			srv := fakemodel.Start(t,
				a.Shell("ls"),
				a.Shell("cat README.md"),
				a.Shell("touch made-by-agent.txt"),
				a.Write(w, "written.txt", written),
				fakemodel.Say("done"),
			)
			out := fakemodel.Run(t, a, w, srv, "")

			type outcome struct {
				Played      int
				Exhausted   bool
				MadeByAgent bool
				Written     string
				// Results says, per step, whether its tool output reached
				// the model and held what the step should have shown.
				Results []bool
			}
			got := outcome{Played: srv.Played(), MadeByAgent: exists(filepath.Join(w.Project, "made-by-agent.txt"))}
			if b, err := os.ReadFile(filepath.Join(w.Project, "written.txt")); err == nil {
				got.Written = string(b)
			}
			for _, r := range srv.Requests() {
				got.Exhausted = got.Exhausted || r.Exhausted
			}
			for i, want := range []string{"README.md", strings.TrimSpace(fakemodel.Readme), "", "written.txt"} {
				res, ok := srv.ToolResult(i)
				got.Results = append(got.Results, ok && strings.Contains(res.Output, want))
				t.Logf("step %d result: %q", i, res.Output)
			}
			want := outcome{Played: 5, MadeByAgent: true, Written: written, Results: []bool{true, true, true, true}}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("%s run (-got +want):\n%s\noutput:\n%s\nrequests:\n%s", a.Name, diff, out, srv.Summary())
			}
		})
	}
}

// hookScript writes a hook that logs each input it gets on stdin into
// dir/hook-N.json and answers: the allow reply for a command that names
// hook-rewrite-me, the deny reply for one that names hook-deny-me, and
// nothing (the agent's default) otherwise.
func hookScript(t *testing.T, dir, allow, deny string) string {
	t.Helper()
	path := filepath.Join(dir, "hook.sh")
	fakemodel.WriteFile(t, path, `#!/bin/sh
n=$(ls `+shQuote(dir)+` | grep -c '^hook-.*\.json$')
in=$(cat)
printf '%s\n' "$in" > `+shQuote(dir)+`/hook-$n.json
case $in in
*hook-rewrite-me*) printf '%s\n' `+shQuote(allow)+` ;;
*hook-deny-me*) printf '%s\n' `+shQuote(deny)+` ;;
esac
exit 0
`)
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

type hookInput struct {
	Event   string
	Tool    string
	Command string
}

func hookInputs(t *testing.T, dir string) []hookInput {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "hook-*.json"))
	n := func(f string) int {
		i, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "hook-"), ".json"))
		return i
	}
	sort.Slice(files, func(i, j int) bool { return n(files[i]) < n(files[j]) })
	var got []hookInput
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var in struct {
			Event     string `json:"hook_event_name"`
			Tool      string `json:"tool_name"`
			ToolInput struct {
				Command string `json:"command"`
			} `json:"tool_input"`
		}
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatalf("%s: %v: %s", f, err, b)
		}
		got = append(got, hookInput{in.Event, in.Tool, in.ToolInput.Command})
	}
	return got
}

// TestAgentsHookRewritesAndDenies wires a pre-tool hook for one run of
// each agent, without touching a file outside the throwaway home, and
// records what the model receives when the hook rewrites a command and
// when it refuses one.
func TestAgentsHookRewritesAndDenies(t *testing.T) {
	const reason = "refused by the test hook: hook-deny-me is not allowed"
	tests := []struct {
		agent fakemodel.Agent
		event string
		// rewritten is the tool output the model gets for the rewritten
		// command, denied the one for the refused command.
		rewrittenSuffix string
		denied          string
	}{
		{fakemodel.Claude, "PreToolUse", "(Bash completed with no output)",
			"PreToolUse:Bash hook error: " + reason},
		{fakemodel.Codex, "PreToolUse", "Process exited with code 0\nOriginal token count: 0\nOutput:\n",
			"Command blocked by PreToolUse hook: " + reason + ". Command: touch hook-deny-me.txt"},
		{fakemodel.Gemini, "BeforeTool", "</untrusted_context>\n\n[System] Tool input parameters were modified by a hook before execution.",
			"Tool execution blocked: " + reason},
	}
	for _, tt := range tests {
		a := tt.agent
		t.Run(a.Name, func(t *testing.T) {
			w := fakemodel.NewWorld(t)
			hookDir := filepath.Join(filepath.Dir(w.Home), "hook")
			if err := os.Mkdir(hookDir, 0o755); err != nil {
				t.Fatal(err)
			}
			hook := hookScript(t, hookDir,
				a.HookAllow("touch hook-rewritten.txt", "rewritten by the test hook"),
				a.HookDeny("touch hook-deny-me.txt", reason))
			srv := fakemodel.Start(t,
				a.Shell("touch hook-rewrite-me.txt"),
				a.Shell("touch hook-deny-me.txt"),
				fakemodel.Say("done"),
			)
			out := fakemodel.Run(t, a, w, srv, hook)

			type outcome struct {
				Files     []string
				Hook      []hookInput
				Rewritten bool
				Denied    string
			}
			var got outcome
			entries, _ := os.ReadDir(w.Project)
			for _, e := range entries {
				got.Files = append(got.Files, e.Name())
			}
			got.Hook = hookInputs(t, hookDir)
			r0, _ := srv.ToolResult(0)
			got.Rewritten = strings.HasSuffix(r0.Output, tt.rewrittenSuffix)
			r1, _ := srv.ToolResult(1)
			got.Denied = r1.Output
			t.Logf("model got for the rewritten command: %q", r0.Output)
			t.Logf("model got for the denied command: %q (is_error %v)", r1.Output, r1.IsError)
			want := outcome{
				Files: []string{"README.md", "hook-rewritten.txt"},
				Hook: []hookInput{
					{tt.event, a.ShellToolName, "touch hook-rewrite-me.txt"},
					{tt.event, a.ShellToolName, "touch hook-deny-me.txt"},
				},
				Rewritten: true,
				Denied:    tt.denied,
			}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("%s with a hook (-got +want):\n%s\noutput:\n%s\nrequests:\n%s", a.Name, diff, out, srv.Summary())
			}
		})
	}
}
