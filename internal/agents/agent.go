package agents

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Agent is one agent CLI guardrun wires into. Its Name is what `guardrun
// hook` and `guardrun integrate` take and what the audit log records as
// "via".
type Agent struct {
	// Name is the agent's name on guardrun's command line and in the
	// audit log: claude-code, codex or gemini.
	Name string
	// Title is the agent's name for people.
	Title string
	// Binaries are the basenames of the commands that start it.
	Binaries []string
	// ShellTool is the tool_name of its shell tool in hook input.
	ShellTool string
	// Matcher is the hook matcher guardrun's wiring uses: the shell
	// tool and the file tools Tools judges.
	Matcher string
	// Event is the hook event guardrun is wired to.
	Event string
}

// The agents guardrun knows. Keep in sync with the tool tables in
// hookinput.go and with the versions scripts/agents-install.sh pins.
var (
	Claude = &Agent{
		Name: "claude-code", Title: "Claude Code", Binaries: []string{"claude"},
		ShellTool: "Bash", Event: "PreToolUse",
		Matcher: "Bash|Write|Edit|MultiEdit|NotebookEdit|Read|Glob|Grep",
	}
	Codex = &Agent{
		Name: "codex", Title: "Codex", Binaries: []string{"codex"},
		ShellTool: "Bash", Event: "PreToolUse",
		Matcher: "^(Bash|apply_patch)$",
	}
	Gemini = &Agent{
		Name: "gemini", Title: "Gemini CLI", Binaries: []string{"gemini"},
		ShellTool: "run_shell_command", Event: "BeforeTool",
		Matcher: "^(run_shell_command|write_file|replace|read_file|read_many_files|list_directory|glob|search_file_content|grep_search)$",
	}
)

// All are the known agents, in the order guardrun lists them.
var All = []*Agent{Claude, Codex, Gemini}

// ByName returns the agent named name (claude-code, codex, gemini; claude
// is taken for claude-code).
func ByName(name string) (*Agent, error) {
	if name == "claude" {
		return Claude, nil
	}
	for _, a := range All {
		if a.Name == name {
			return a, nil
		}
	}
	return nil, fmt.Errorf("unknown agent %q (want claude-code, codex or gemini)", name)
}

// ForCommand returns the agent argv starts, by the basename of its first
// word, or, through npx/bunx/pnpx, of the package it runs (npx
// @openai/codex, npx -y @google/gemini-cli); nil when it is none of them.
func ForCommand(argv []string) *Agent {
	if len(argv) == 0 {
		return nil
	}
	if a := byBinary(filepath.Base(argv[0])); a != nil {
		return a
	}
	switch filepath.Base(argv[0]) {
	case "npx", "bunx", "pnpx":
	default:
		return nil
	}
	for _, w := range argv[1:] {
		if strings.HasPrefix(w, "-") {
			continue
		}
		pkg := w
		if i := strings.LastIndexByte(pkg[1:], '@'); i >= 0 {
			pkg = pkg[:i+1] // drop @version
		}
		switch pkg {
		case "@anthropic-ai/claude-code":
			return Claude
		case "@openai/codex":
			return Codex
		case "@google/gemini-cli":
			return Gemini
		}
		return byBinary(filepath.Base(pkg))
	}
	return nil
}

func byBinary(name string) *Agent {
	for _, a := range All {
		for _, b := range a.Binaries {
			if name == b {
				return a
			}
		}
	}
	return nil
}
