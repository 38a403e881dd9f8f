package agents

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const exe = "/usr/local/bin/guardrun"

func TestAddJSONHookKeepsTheRestOfTheFile(t *testing.T) {
	tests := []struct {
		name  string
		agent *Agent
		in    string
		want  string
	}{
		{"no file becomes one holding only the hook", Claude, "",
			`{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "` + Claude.Matcher + `",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/guardrun hook claude-code",
            "timeout": 600
          }
        ]
      }
    ]
  }
}
`},
		{"an empty object in the file's four-space indentation", Claude, "{\n    \"model\": \"opus\"\n}\n",
			`{
    "model": "opus",
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "` + Claude.Matcher + `",
                "hooks": [
                    {
                        "type": "command",
                        "command": "/usr/local/bin/guardrun hook claude-code",
                        "timeout": 600
                    }
                ]
            }
        ]
    }
}
`},
		{"the person's own hooks stay first, comments and all", Gemini,
			`{
  // my settings
  "hooks": {
    "BeforeTool": [
      {"matcher": "write_file", "hooks": [{"type": "command", "command": "lint"}]}
    ]
  },
  "ui": {"theme": "Dark"} /* end */
}`,
			`{
  // my settings
  "hooks": {
    "BeforeTool": [
      {"matcher": "write_file", "hooks": [{"type": "command", "command": "lint"}]},
      {
        "matcher": "` + Gemini.Matcher + `",
        "hooks": [
          {
            "name": "guardrun",
            "type": "command",
            "command": "/usr/local/bin/guardrun hook gemini",
            "timeout": 600000
          }
        ]
      }
    ]
  },
  "ui": {"theme": "Dark"} /* end */
}`},
		{"an event list of another agent's event is left alone", Claude,
			"{\"hooks\": {\"PostToolUse\": []}}",
			`{"hooks": {"PostToolUse": [], "PreToolUse": [{"matcher":"` + Claude.Matcher + `","hooks":[{"type":"command","command":"/usr/local/bin/guardrun hook claude-code","timeout":600}]}]}}`},
		{"a hook of an older guardrun path is replaced in place of adding a second", Claude,
			"{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"'/old dir/guardrun' hook claude-code\"}]}\n    ]\n  }\n}\n",
			`{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "` + Claude.Matcher + `",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/guardrun hook claude-code",
            "timeout": 600
          }
        ]
      }
    ]
  }
}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed, err := AddJSONHook("settings.json", []byte(tt.in), tt.agent, exe)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(got), tt.want); diff != "" {
				t.Errorf("after adding (-got +want):\n%s", diff)
			}
			if !changed {
				t.Errorf("changed = false")
			}
			again, changed, err := AddJSONHook("settings.json", got, tt.agent, exe)
			if err != nil || changed || string(again) != string(got) {
				t.Errorf("adding twice changed the file (changed %v, err %v):\n%s", changed, err, again)
			}
		})
	}
}

func TestRemoveJSONHookRestoresTheFile(t *testing.T) {
	for _, in := range []string{
		"{\n  \"model\": \"opus\"\n}\n",
		"{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"audit.sh\"}]}\n    ]\n  }\n}\n",
		"{\"hooks\":{\"PreToolUse\":[{\"matcher\":\"x\",\"hooks\":[]}],\"Stop\":[]},\"a\":1}",
		"{\n\t\"hooks\": {\n\t\t\"Stop\": []\n\t}\n}",
		"{}",
	} {
		added, _, err := AddJSONHook("s.json", []byte(in), Claude, exe)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		got, err := RemoveJSONHook("s.json", added, Claude)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if diff := cmp.Diff(string(got), in); diff != "" {
			t.Errorf("add then remove (-got +want):\n%s\nadded:\n%s", diff, added)
		}
	}
}

func TestRemoveJSONHookTakesOnlyGuardrunsHookFromAMixedGroup(t *testing.T) {
	in := `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}, {"type": "command", "command": "guardrun hook claude-code"}]}]}}`
	got, err := RemoveJSONHook("s.json", []byte(in), Claude)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}]}}`
	if diff := cmp.Diff(string(got), want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

func TestJSONSettingsErrorsSayWhere(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"a trailing comma", "{\n  \"a\": 1,\n}\n", `s.json:3:1: unexpected '}', want a member name`},
		{"not an object", "[1, 2]\n", `s.json:1:1: the settings are not a JSON object`},
		{"hooks of the wrong type", "{\n  \"hooks\": []\n}", `s.json:2:12: "hooks" is not an object`},
		{"the event of the wrong type", "{\"hooks\": {\"PreToolUse\": {}}}", `s.json:1:26: "hooks.PreToolUse" is not a list`},
		{"a duplicate member", "{\"a\": 1, \"a\": 2}", `s.json:1:10: member "a" appears twice`},
		{"an unterminated string", "{\"a\": \"x\n", `s.json:1:9: a control character in a string`},
		{"text after the object", "{} x", `s.json:1:4: unexpected 'x' after the end of the document`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := AddJSONHook("s.json", []byte(tt.in), Claude, exe)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("error = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFindJSONHooksSaysWhetherTheHookIsCurrent(t *testing.T) {
	added, _, _ := AddJSONHook("s.json", []byte("{}"), Claude, exe)
	type found struct {
		Exe     string
		Current bool
	}
	var got []found
	for _, e := range []string{exe, "/opt/guardrun"} {
		ws, err := FindJSONHooks("s.json", added, Claude, e)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			got = append(got, found{w.Exe, w.Current})
		}
	}
	want := []found{{exe, true}, {exe, false}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

func TestCodexBlock(t *testing.T) {
	user := "model = \"gpt-5.5\"\n\n[features]\nplugins = false\n"
	block := CodexBlock(exe, &CodexTrust{Key: "/h/.codex/config.toml:pre_tool_use:0:0", Hash: "sha256:ab"})
	added, changed, err := SetTOMLBlock("config.toml", []byte(user), block)
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	if !strings.HasPrefix(string(added), user+"\n"+tomlBegin) {
		t.Errorf("the block does not follow the file after a blank line:\n%s", added)
	}
	if !CodexTrusted(added, CodexTrust{Key: "/h/.codex/config.toml:pre_tool_use:0:0", Hash: "sha256:ab"}) {
		t.Errorf("the trust entry is not read back:\n%s", added)
	}
	again, changed, err := SetTOMLBlock("config.toml", added, block)
	if err != nil || changed || string(again) != string(added) {
		t.Errorf("setting twice changed the file (changed %v, err %v)", changed, err)
	}
	removed, changed, err := RemoveTOMLBlock("config.toml", added)
	if err != nil || !changed {
		t.Fatalf("remove: changed %v, err %v", changed, err)
	}
	if diff := cmp.Diff(string(removed), user); diff != "" {
		t.Errorf("add then remove (-got +want):\n%s", diff)
	}

	for _, tt := range []struct{ name, in, want string }{
		{"not TOML", "model = \n", "config.toml:1:9: expected value but found '\\n' instead"},
		{"hooks.PreToolUse already a list", "[hooks]\nPreToolUse = []\n", "guardrun's hook cannot be added to it: config.toml:"},
	} {
		_, _, err := SetTOMLBlock("config.toml", []byte(tt.in), block)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to start with %q", tt.name, err, tt.want)
		}
	}
}

func TestParseHookCommand(t *testing.T) {
	tests := []struct {
		cmd        string
		exe, agent string
		ok         bool
	}{
		{"/usr/local/bin/guardrun hook codex", "/usr/local/bin/guardrun", "codex", true},
		{"'/my dir/guardrun' hook gemini", "/my dir/guardrun", "gemini", true},
		{"guardrun hook claude-code", "guardrun", "claude-code", true},
		{"/usr/bin/lint hook codex", "", "", false},
		{"guardrun hook codex; rm -rf x", "", "", false},
		{"guardrun -c 'x'", "", "", false},
	}
	for _, tt := range tests {
		exe, agent, ok := ParseHookCommand(tt.cmd)
		if exe != tt.exe || agent != tt.agent || ok != tt.ok {
			t.Errorf("ParseHookCommand(%q) = %q, %q, %v; want %q, %q, %v", tt.cmd, exe, agent, ok, tt.exe, tt.agent, tt.ok)
		}
	}
}

// TestClaudeSettingsItWouldSkip: a settings file Claude Code would skip
// whole (a setting it checks has a value of the wrong kind, or one its
// enumeration does not hold) is refused, saying where and why; settings
// it does not check, and Gemini CLI's files, are left alone.
func TestClaudeSettingsItWouldSkip(t *testing.T) {
	tests := []struct {
		name string
		a    *Agent
		in   string
		want string // "" for accepted
	}{
		{"model a number", Claude, `{"model": 5}`, `s.json:1:11: model is a number; Claude Code ` + claudeKindsVersion + ` wants a string`},
		{"model null", Claude, "{\n  \"model\": null\n}", `s.json:2:12: model is null; Claude Code ` + claudeKindsVersion + ` wants a string`},
		{"a bad permission mode", Claude, `{"permissions": {"defaultMode": "bogus"}}`, `s.json:1:33: permissions.defaultMode is "bogus"; Claude Code ` + claudeKindsVersion + ` takes acceptEdits, auto, bypassPermissions, default, dontAsk, manual, plan`},
		{"an allow rule not a string", Claude, `{"permissions": {"allow": ["Bash(ls)", 3]}}`, `s.json:1:40: permissions.allow entry is a number; Claude Code ` + claudeKindsVersion + ` wants a string`},
		{"permissions a list", Claude, `{"permissions": []}`, `s.json:1:17: permissions is a list; Claude Code ` + claudeKindsVersion + ` wants an object`},
		{"a boolean as a string", Claude, `{"verbose": "yes"}`, `s.json:1:13: verbose is a string; Claude Code ` + claudeKindsVersion + ` wants true or false`},
		{"an enumeration", Claude, `{"defaultShell": "fish"}`, `s.json:1:18: defaultShell is "fish"; Claude Code ` + claudeKindsVersion + ` takes bash, powershell`},
		{"a period below its minimum", Claude, `{"cleanupPeriodDays": -1}`, `s.json:1:23: cleanupPeriodDays is -1; Claude Code ` + claudeKindsVersion + ` wants a whole number, above 0`},
		{"a fractional period", Claude, `{"cleanupPeriodDays": 1.5}`, `s.json:1:23: cleanupPeriodDays is 1.5; Claude Code ` + claudeKindsVersion + ` wants a whole number, above 0`},
		{"a rate above its maximum", Claude, `{"feedbackSurveyRate": 2}`, `s.json:1:24: feedbackSurveyRate is 2; Claude Code ` + claudeKindsVersion + ` wants at least 0, at most 1`},
		{"a rate at its maximum", Claude, `{"feedbackSurveyRate": 1, "skillListingBudgetFraction": 0.5}`, ""},
		{"a fraction at its open bound", Claude, `{"skillListingBudgetFraction": 0}`, `s.json:1:32: skillListingBudgetFraction is 0; Claude Code ` + claudeKindsVersion + ` wants above 0, at most 1`},
		{"a model list entry not a string", Claude, `{"availableModels": ["opus", 5]}`, `s.json:1:30: availableModels entry is a number; Claude Code ` + claudeKindsVersion + ` wants a string`},
		{"a permission switch given as text", Claude, `{"permissions": {"disableBypassPermissionsMode": "yes"}}`, `s.json:1:50: permissions.disableBypassPermissionsMode is "yes"; Claude Code ` + claudeKindsVersion + ` takes disable`},
		{"a permission switch", Claude, `{"permissions": {"disableBypassPermissionsMode": "disable", "denyInsteadOfPrompting": true}}`, ""},
		{"a hook matcher not a string", Claude, `{"hooks": {"PreToolUse": [{"matcher": 5, "hooks": []}]}}`, `s.json:1:39: hooks.PreToolUse[0].matcher is a number; Claude Code ` + claudeKindsVersion + ` wants a string`},
		{"a status line of another type", Claude, `{"statusLine": {"type": "bogus", "command": "x"}}`, `s.json:1:25: statusLine.type is "bogus"; Claude Code ` + claudeKindsVersion + ` takes command`},
		{"a status line without its command", Claude, `{"statusLine": {"type": "command"}}`, `s.json:1:16: statusLine has no command, which Claude Code ` + claudeKindsVersion + ` requires`},
		{"the sandbox switched on by a word", Claude, `{"sandbox": {"enabled": "yes"}}`, `s.json:1:25: sandbox.enabled is a string; Claude Code ` + claudeKindsVersion + ` wants true or false`},
		{"the alias manual", Claude, `{"permissions": {"defaultMode": "manual"}}`, ""},
		{"good settings", Claude, `{"model": "opus", "verbose": true, "cleanupPeriodDays": 9, "statusLine": {"type": "command", "command": "x"}}`, ""},
		{"an unknown key", Claude, `{"guardrunTestUnknown": 5}`, ""},
		{"gemini keeps its own", Gemini, `{"model": 5}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := AddJSONHook("s.json", []byte(tt.in), tt.a, exe)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tt.want == "" && got != "" || tt.want != "" && !strings.HasPrefix(got, tt.want+"; Claude Code skips") {
				t.Errorf("error = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestClaudeSettingsWithEveryHookOff: a settings file that turns every
// hook off is refused; one that says so false is taken.
func TestClaudeSettingsWithEveryHookOff(t *testing.T) {
	for in, want := range map[string]string{
		`{"disableAllHooks": true}`:          `s.json:1:21: disableAllHooks is true: Claude Code runs no hook of any settings file, guardrun's included`,
		`{"disableAllHook\u0073": true}`:     `s.json:1:26: disableAllHooks is true: Claude Code runs no hook of any settings file, guardrun's included`,
		`{"disableAllHooks": false}`:         "",
		`{"env": {"disableAllHooks": true}}`: "",
	} {
		_, _, err := AddJSONHook("s.json", []byte(in), Claude, exe)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if want == "" && got != "" || want != "" && !strings.HasPrefix(got, want) {
			t.Errorf("%s: error = %q, want %q", in, got, want)
		}
	}
}
