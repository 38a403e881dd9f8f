package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/guardrun/guardrun/internal/agents"
	"github.com/guardrun/guardrun/internal/sys/atomicfile"
)

const integrateUsage = `Usage:
  guardrun integrate AGENT [--project] [--remove] [--dry-run]
  guardrun integrate --status

Wires guardrun into an agent CLI's own pre-tool hook, so that every shell
command it runs goes through guardrun (decision, approval, sandbox and
audit) and its file tools are judged by guardrun's file zones, whether or
not it runs under guardrun supervise. AGENT is claude-code, codex or
gemini. The hook is written into the agent's user settings:

  claude-code  ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json)
  codex        ~/.codex/config.toml ($CODEX_HOME/config.toml), with the
               entry that trusts the hook (Codex skips untrusted hooks;
               the hash comes from codex app-server, so codex must be
               on PATH)
  gemini       ~/.gemini/settings.json ($GEMINI_CLI_HOME/.gemini/...)

or, with --project, into the project's (the working directory's) own:
.claude/settings.local.json or .gemini/settings.json (Codex trusts a
project's hooks only from the user config: use the user file).

Running it again changes nothing. Everything else in the file stays as
it was, byte for byte; the file as it was is kept next to it
(NAME.guardrun.bak), and the new one replaces it in one step, with the
same mode. A file that cannot be read as JSON (TOML for Codex) is
reported with its line and left alone.

Flags:
  --project   the project's settings instead of the user's
  --remove    take guardrun's hook out again
  --dry-run   show the change as a diff; write nothing
  --status    where guardrun is wired, per agent, and with which guardrun
`

func cmdIntegrate(g *global, args []string, io IO) error {
	vf, help, err := verbStart(g, args, integrateUsage, nil, []string{"--project", "--remove", "--dry-run", "--status"}, io)
	if err != nil || help {
		return err
	}
	words := append(append([]string{}, vf.args...), vf.rest...)
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("integrate: guardrun's own path: %w", err)
	}
	if vf.bools["--status"] {
		if len(words) > 0 || vf.bools["--project"] || vf.bools["--remove"] || vf.bools["--dry-run"] {
			return usagef("integrate --status takes nothing else")
		}
		return integrateStatus(exe, io)
	}
	if len(words) != 1 {
		return usagef("integrate needs one agent: claude-code, codex or gemini (or --status)")
	}
	a, err := agents.ByName(words[0])
	if err != nil {
		return usagef("%v", err)
	}
	t, err := wiringTarget(a, vf.bools["--project"])
	if err != nil {
		return err
	}
	old, updated, note, err := t.edit(exe, vf.bools["--remove"])
	if err != nil {
		return err
	}
	if string(old) == string(updated) {
		what := "already wired"
		if vf.bools["--remove"] {
			what = "not wired"
		}
		fmt.Fprintf(io.Stdout, "guardrun: %s: %s in %s; nothing to change\n", a.Title, what, t.path)
		return nil
	}
	if vf.bools["--dry-run"] {
		fmt.Fprint(io.Stdout, udiff.Unified(t.path, t.path, string(old), string(updated)))
		if note != "" {
			fmt.Fprintln(io.Stdout, note)
		}
		return nil
	}
	if err := writeConfig(t.path, updated); err != nil {
		return err
	}
	if vf.bools["--remove"] {
		fmt.Fprintf(io.Stdout, "guardrun: %s: guardrun's hook removed from %s\n", a.Title, t.path)
	} else {
		fmt.Fprintf(io.Stdout, "guardrun: %s: guardrun's hook written to %s (%s)\n", a.Title, t.path, agents.HookCommand(exe, a))
	}
	if note != "" {
		fmt.Fprintln(io.Stdout, note)
	}
	return nil
}

// wiring is one settings file guardrun's hook goes into.
type wiring struct {
	agent *agents.Agent
	scope string // "user" or "project"
	path  string
}

// wiringTarget is where integrate writes a's hook.
func wiringTarget(a *agents.Agent, project bool) (*wiring, error) {
	if project {
		if a == agents.Codex {
			return nil, usagef("Codex trusts a project's hooks only from the user's config.toml; run guardrun integrate codex without --project")
		}
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		return &wiring{a, "project", projectSettings(a, wd)}, nil
	}
	p, err := userSettings(a)
	if err != nil {
		return nil, err
	}
	return &wiring{a, "user", p}, nil
}

// userSettings is a's user settings file.
func userSettings(a *agents.Agent) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil && a != agents.Codex {
		return "", fmt.Errorf("integrate: no home directory: %w", err)
	}
	switch a {
	case agents.Claude:
		if d := os.Getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(d) {
			return filepath.Join(d, "settings.json"), nil
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
	case agents.Codex:
		return filepath.Join(codexHome(), "config.toml"), nil
	}
	if d := os.Getenv("GEMINI_CLI_HOME"); filepath.IsAbs(d) {
		home = d
	}
	return filepath.Join(home, ".gemini", "settings.json"), nil
}

// codexHome is Codex's $CODEX_HOME, else ~/.codex.
func codexHome() string {
	if d := os.Getenv("CODEX_HOME"); filepath.IsAbs(d) {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".codex")
}

// projectSettings is a's settings file in project dir.
func projectSettings(a *agents.Agent, dir string) string {
	switch a {
	case agents.Claude:
		return filepath.Join(dir, ".claude", "settings.local.json")
	case agents.Codex:
		return filepath.Join(dir, ".codex", "config.toml")
	}
	return filepath.Join(dir, ".gemini", "settings.json")
}

// read returns the file's bytes, nil when it does not exist.
func (w *wiring) read() ([]byte, error) {
	b, err := os.ReadFile(w.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("integrate: %w", err)
	}
	return b, nil
}

// edit returns the file as it is and as it would be with guardrun's hook
// for exe in it (or out of it, remove), and a note for the person.
func (w *wiring) edit(exe string, remove bool) (old, updated []byte, note string, err error) {
	if old, err = w.read(); err != nil {
		return nil, nil, "", err
	}
	if w.agent == agents.Codex {
		return w.editCodex(old, exe, remove)
	}
	if remove {
		if old == nil {
			return nil, nil, "", nil
		}
		updated, err = agents.RemoveJSONHook(w.path, old, w.agent)
		return old, updated, "", err
	}
	updated, _, err = agents.AddJSONHook(w.path, old, w.agent, exe)
	return old, updated, "", err
}

// editCodex adds guardrun's block, with the entry that trusts its hook,
// to Codex's config.toml. The trust entry's key and hash are Codex's own
// (codex app-server, hooks/list, run on a copy of the new file).
func (w *wiring) editCodex(old []byte, exe string, remove bool) ([]byte, []byte, string, error) {
	if remove {
		updated, _, err := agents.RemoveTOMLBlock(w.path, old)
		return old, updated, "", err
	}
	if b, err := agents.CodexBlockIn(w.path, old); err != nil {
		return nil, nil, "", err
	} else if b != "" && strings.Contains(b, "trusted_hash") && b == codexCurrentBlock(b, exe) {
		return old, old, "", nil
	}
	untrusted, _, err := agents.SetTOMLBlock(w.path, old, agents.CodexBlock(exe, nil))
	if err != nil {
		return nil, nil, "", err
	}
	trust, err := codexHookTrust(w.path, untrusted, agents.HookCommand(exe, agents.Codex))
	if err != nil {
		return old, untrusted, fmt.Sprintf("guardrun: warning: %v\nCodex skips a hook it does not trust: open codex once and trust guardrun's hook (/hooks), or run guardrun integrate codex again with codex on PATH.", err), nil
	}
	if agents.CodexTrusted(old, *trust) {
		// Trusted already (through Codex's own review): a second entry
		// for the same key would make the file invalid.
		return old, untrusted, "", nil
	}
	updated, _, err := agents.SetTOMLBlock(w.path, old, agents.CodexBlock(exe, trust))
	return old, updated, "", err
}

// codexCurrentBlock is the block guardrun would write for exe keeping the
// trust entry of block b, to tell whether b is current.
func codexCurrentBlock(b, exe string) string {
	i := strings.Index(b, "[hooks.state.")
	if i < 0 {
		return ""
	}
	var key, hash string
	for _, line := range strings.Split(b[i:], "\n") {
		if k, ok := strings.CutPrefix(line, "[hooks.state."); ok {
			key = unquoteTOML(strings.TrimSuffix(k, "]"))
		}
		if h, ok := strings.CutPrefix(line, "trusted_hash = "); ok {
			hash = unquoteTOML(h)
		}
	}
	return agents.CodexBlock(exe, &agents.CodexTrust{Key: key, Hash: hash})
}

func unquoteTOML(s string) string {
	return strings.Trim(strings.TrimSpace(s), `"`)
}

// writeConfig replaces the settings file at path with data: a backup of
// the old one next to it (NAME.guardrun.bak), the new one written to a
// temporary file in the same directory with the old one's mode and
// renamed over it. A symbolic link is followed: the file it names is the
// one replaced.
func writeConfig(path string, data []byte) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	mode := fs.FileMode(0o600)
	old, err := os.ReadFile(path)
	switch {
	case err == nil:
		fi, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("integrate: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("integrate: %s is not a regular file", path)
		}
		mode = fi.Mode().Perm()
		if err := writeAtomic(path+".guardrun.bak", old, mode); err != nil {
			return err
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("integrate: %w", err)
		}
	default:
		return fmt.Errorf("integrate: %w", err)
	}
	return writeAtomic(path, data, mode)
}

func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := atomicfile.Replace(path, data, atomicfile.Options{Perm: mode, Durable: true}); err != nil {
		return fmt.Errorf("integrate: write %s: %w", path, err)
	}
	return nil
}

// integrateStatus says, per agent, where guardrun's hook is wired (user
// and project settings), which guardrun it runs, and whether that is
// still this one.
func integrateStatus(exe string, io IO) error {
	wd, _ := os.Getwd()
	for _, a := range agents.All {
		var files []*wiring
		if p, err := userSettings(a); err == nil {
			files = append(files, &wiring{a, "user", p})
		}
		if wd != "" {
			files = append(files, &wiring{a, "project", projectSettings(a, wd)})
		}
		for _, w := range files {
			fmt.Fprintf(io.Stdout, "%-12s %-8s %s: %s\n", a.Name, w.scope, w.path, w.status(exe))
		}
		if wd != "" {
			// Wired or not, the agent runs no hook at all here.
			if err := hooksTurnedOff(a, wd); err != nil {
				fmt.Fprintf(io.Stdout, "%-12s %-8s %s\n", a.Name, "off", strings.TrimPrefix(err.Error(), "supervise: "))
			}
		}
	}
	return nil
}

// status is one line about guardrun's hook in w's file.
func (w *wiring) status(exe string) string {
	src, err := w.read()
	switch {
	case err != nil:
		return err.Error()
	case src == nil:
		return "no file"
	}
	found, err := w.find(src, exe)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	if len(found) == 0 {
		return "not wired"
	}
	var out []string
	for _, f := range found {
		s := fmt.Sprintf("wired at line %d: %s", f.Line, f.Command)
		switch {
		case f.Exe != exe && !fileExists(f.Exe):
			s += fmt.Sprintf(" (stale: %s does not exist; run guardrun integrate %s again)", f.Exe, w.agent.Name)
		case f.Exe != exe:
			s += fmt.Sprintf(" (another guardrun than this one, %s)", exe)
		case !f.Current:
			s += fmt.Sprintf(" (an older entry; run guardrun integrate %s again)", w.agent.Name)
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// find returns guardrun's hooks in src.
func (w *wiring) find(src []byte, exe string) ([]agents.Wired, error) {
	if w.agent != agents.Codex {
		return agents.FindJSONHooks(w.path, src, w.agent, exe)
	}
	if err := agents.CheckTOML(w.path, src); err != nil {
		return nil, err
	}
	b, err := agents.CodexBlockIn(w.path, src)
	if err != nil || b == "" {
		return nil, err
	}
	line := 1 + strings.Count(string(src[:strings.Index(string(src), b)]), "\n")
	var found []agents.Wired
	for _, l := range strings.Split(b, "\n") {
		if c, ok := strings.CutPrefix(l, "command = "); ok {
			cmd := unquoteTOML(c)
			e, ag, _ := agents.ParseHookCommand(cmd)
			cur := strings.Contains(b, "trusted_hash") && b == codexCurrentBlock(b, exe)
			found = append(found, agents.Wired{Command: cmd, Exe: e, Agent: ag, Current: cur, Line: line})
		}
	}
	if len(found) > 0 && !strings.Contains(b, "trusted_hash") {
		found[0].Command += " (not trusted: Codex skips it)"
	}
	return found, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
