package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"golang.org/x/term"

	"github.com/guardrun/guardrun/internal/agents"
)

// agentRun is how supervise puts guardrun between a known agent and the
// machine for one run, without changing the person's files where the
// agent allows that.
type agentRun struct {
	argv []string
	// say is the one line said at start.
	say string
}

// wireAgent finds out which agent argv starts and how its tool calls
// reach guardrun: Claude Code takes guardrun's hook for the run with
// --settings; Codex and Gemini CLI
// read hooks only from their settings files, which must hold guardrun's
// (guardrun integrate, offered here when there is a terminal). An agent
// guardrun does not know runs as it is, with a warning unless
// trustShell: only what it runs through $SHELL is checked.
func wireAgent(argv []string, trustShell bool, exe string, io IO) (*agentRun, error) {
	a := agents.ForCommand(argv)
	if a == nil {
		if trustShell {
			return &agentRun{argv: argv}, nil
		}
		return &agentRun{argv: argv, say: fmt.Sprintf("guardrun: warning: %s is not an agent guardrun knows (Claude Code, Codex, Gemini CLI): only the commands it runs through $SHELL are checked; --trust-shell if that is all it runs", filepath.Base(argv[0]))}, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if err := hooksTurnedOff(a, wd); err != nil {
		return nil, err
	}
	if a == agents.Claude {
		// Always for the run, wired in a file or not: Claude Code ignores
		// a settings file that fails its validation whole (a key of the
		// wrong type, measured), guardrun's hook with it, and runs the
		// same hook command given twice once.
		at := commandWord(argv) + 1
		out := slices.Concat(argv[:at], []string{"--settings", agents.ClaudeSettings(exe)}, argv[at:])
		return &agentRun{argv: out, say: "guardrun: Claude Code: its shell and file tools go through guardrun (hook added for this run with --settings)"}, nil
	}
	if w := wiredFor(a, wd, exe, projectHooksRead(a, argv)); w != nil {
		return &agentRun{argv: argv, say: fmt.Sprintf("guardrun: %s: its shell and file tools go through guardrun (the hook in %s)", a.Title, w.path)}, nil
	}
	w, err := wiringTarget(a, false)
	if err != nil {
		return nil, err
	}
	why := map[*agents.Agent]string{
		agents.Codex:  "Codex runs a hook only once it is trusted in its own config.toml, and the one way to trust it for a single run would trust the project's own hooks too",
		agents.Gemini: "Gemini CLI reads hooks only from its settings files (the per-run system settings file must belong to root)",
	}[a]
	if err := offerIntegrate(w, exe, why, io); err != nil {
		return nil, err
	}
	return &agentRun{argv: argv, say: fmt.Sprintf("guardrun: %s: its shell and file tools go through guardrun (the hook in %s)", a.Title, w.path)}, nil
}

// commandWord is the index of the word that names the agent: 0, or
// behind npx (and bunx, pnpx) the package it runs.
func commandWord(argv []string) int {
	switch filepath.Base(argv[0]) {
	case "npx", "bunx", "pnpx":
		for i, w := range argv[1:] {
			if !strings.HasPrefix(w, "-") {
				return i + 1
			}
		}
	}
	return 0
}

// agentFiles are the settings files of a that may hold guardrun's hook
// for a run in dir: the user's and the project's.
func agentFiles(a *agents.Agent, dir string) []*wiring {
	var out []*wiring
	if p, err := userSettings(a); err == nil {
		out = append(out, &wiring{a, "user", p})
	}
	switch a {
	case agents.Claude:
		out = append(out, &wiring{a, "project", filepath.Join(dir, ".claude", "settings.json")}, &wiring{a, "project", projectSettings(a, dir)})
	case agents.Gemini:
		out = append(out, &wiring{a, "project", projectSettings(a, dir)})
	}
	return out
}

// wiredFor is the settings file that holds guardrun's current hook for
// a (running exe, trusted where the agent needs it), nil for none; a
// project's file only where project says the agent reads its hooks.
func wiredFor(a *agents.Agent, dir, exe string, project bool) *wiring {
	for _, w := range agentFiles(a, dir) {
		if w.scope == "project" && !project {
			continue
		}
		src, err := w.read()
		if err != nil || src == nil {
			continue
		}
		found, err := w.find(src, exe)
		if err != nil {
			continue
		}
		for _, f := range found {
			if f.Current {
				return w
			}
		}
	}
	return nil
}

// projectHooksRead reports whether the agent argv starts surely reads
// the hooks of its project's settings. Gemini CLI does so only in a
// folder it trusts: with folder trust on (security.folderTrust.enabled
// in the person's or the system's settings) it may not, and with
// --skip-trust it does not (measured), so there only the user's
// settings count.
func projectHooksRead(a *agents.Agent, argv []string) bool {
	if a != agents.Gemini || os.Getenv("GEMINI_CLI_TRUST_WORKSPACE") == "true" && !slices.Contains(argv, "--skip-trust") {
		return true
	}
	if slices.Contains(argv, "--skip-trust") {
		return false
	}
	system := os.Getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
	if system == "" {
		system = "/etc/gemini-cli/settings.json"
	}
	files := []string{system}
	if p, err := userSettings(a); err == nil {
		files = append(files, p)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s, ok, err := agents.LookupJSON(f, src, "security", "folderTrust", "enabled")
		if err != nil || ok && s.JSON != "false" && s.JSON != "null" {
			return false
		}
	}
	return true
}

// hooksTurnedOff refuses a run whose settings switch the agent's hooks
// off, guardrun's with them: Claude Code's disableAllHooks, Gemini CLI's
// hooksConfig.enabled false or guardrun's hook listed in
// hooksConfig.disabled. A project's settings can do that as well as the
// person's; Codex's features.hooks too (codexHooksOff). Only a value that
// surely leaves the hooks on passes: Gemini
// CLI keeps a value that fails its own validation and reads it as
// JavaScript does (0, "" and "false" switch its hooks off, measured), so
// any other type is refused too.
func hooksTurnedOff(a *agents.Agent, dir string) error {
	type off struct {
		keys []string
		bad  func(json string) bool
	}
	var checks []off
	switch a {
	case agents.Codex:
		return codexHooksOff(dir)
	case agents.Claude:
		checks = []off{{[]string{"disableAllHooks"}, func(j string) bool { return j != "false" && j != "null" }}}
	case agents.Gemini:
		checks = []off{
			{[]string{"hooksConfig", "enabled"}, func(j string) bool { return j != "true" && j != "null" }},
			{[]string{"hooksConfig", "disabled"}, namesGuardrun},
		}
	default:
		return nil
	}
	for _, w := range agentFiles(a, dir) {
		src, err := w.read()
		if err != nil || src == nil {
			continue
		}
		for _, c := range checks {
			s, ok, err := agents.LookupJSON(w.path, src, c.keys...)
			if err != nil {
				return fmt.Errorf("supervise: %w", err)
			}
			if ok && c.bad(s.JSON) {
				return fmt.Errorf("supervise: %s:%d: %s %s turns %s's hooks off, guardrun's among them; remove it, then start again",
					w.path, s.Line, strings.Join(c.keys, "."), s.JSON, a.Title)
			}
		}
	}
	return nil
}

// codexHooksOff refuses a run whose Codex config switches hooks off
// (features.hooks, or its older name features.codex_hooks, anything but
// true), in the person's config.toml or the .codex/config.toml of the
// working directory or any directory above it, which Codex reads for a
// project it trusts (measured); in a profile too, whether or not the run
// uses it.
func codexHooksOff(dir string) error {
	files := []string{filepath.Join(codexHome(), "config.toml")}
	for d := dir; ; d = filepath.Dir(d) {
		if f := filepath.Join(d, ".codex", "config.toml"); f != files[0] {
			files = append(files, f)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var doc map[string]any
		if _, err := toml.Decode(string(src), &doc); err != nil {
			return fmt.Errorf("supervise: %s: %w", f, err)
		}
		if where := featuresHooksOff(doc, ""); where != "" {
			return fmt.Errorf("supervise: %s: %s turns Codex's hooks off, guardrun's among them; remove it, then start again", f, where)
		}
	}
	return nil
}

// featuresHooksOff finds a features table in doc (at any depth, under
// prefix) whose hooks or codex_hooks is not true, and names the key.
func featuresHooksOff(doc map[string]any, prefix string) string {
	for k, v := range doc {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if k == "features" {
			for _, name := range []string{"hooks", "codex_hooks"} {
				if on, ok := m[name]; ok && on != true {
					return fmt.Sprintf("%s%s.%s = %v", prefix, k, name, on)
				}
			}
		}
		if where := featuresHooksOff(m, prefix+k+"."); where != "" {
			return where
		}
	}
	return ""
}

// namesGuardrun reports whether a hooksConfig.disabled value (compact
// JSON) may disable guardrun's hook, whose name is guardrun: a list
// holding that name, or a value of another type that holds it anywhere
// (Gemini CLI tests the list with includes, which a string answers for
// any part of itself).
func namesGuardrun(j string) bool {
	var list []string
	if err := json.Unmarshal([]byte(j), &list); err == nil {
		return slices.Contains(list, "guardrun")
	}
	return j != "null" && strings.Contains(j, "guardrun")
}

// offerIntegrate asks the person, on the terminal, to wire guardrun's
// hook into w (as guardrun integrate does) and does it on yes; without a
// terminal, or on no, it fails saying what to run.
func offerIntegrate(w *wiring, exe, why string, io IO) error {
	cmd := "guardrun integrate " + w.agent.Name
	in, ok := io.Stdin.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		return fmt.Errorf("supervise: %s; run `%s` once (it writes guardrun's hook into %s), then start again", why, cmd, w.path)
	}
	fmt.Fprintf(io.Stderr, "guardrun: %s.\nWire guardrun's hook into %s now (as `%s`)? [y/N] ", why, w.path, cmd)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		return errors.New("supervise: no answer")
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
	default:
		return fmt.Errorf("supervise: not started: %s's tool calls would not be checked (run `%s` to wire it)", w.agent.Title, cmd)
	}
	old, updated, note, err := w.edit(exe, false)
	if err != nil {
		return err
	}
	if string(old) != string(updated) {
		if err := writeConfig(w.path, updated); err != nil {
			return err
		}
	}
	if note != "" {
		fmt.Fprintln(io.Stderr, note)
		return fmt.Errorf("supervise: %s's hook is not trusted yet", w.agent.Title)
	}
	return nil
}
