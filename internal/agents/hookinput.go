package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// MaxHookInput bounds the hook input read from the agent: a file write's
// content travels in it. Larger input is refused.
const MaxHookInput = 8 << 20

// Call is one tool call as a hook sees it, read into what guardrun
// judges: a shell command, or file operations.
type Call struct {
	Agent *Agent
	// Tool is tool_name as the agent sent it.
	Tool string
	// Session is the agent's session id, ToolUseID its id of this call
	// ("" where the agent sends none), PermissionMode Claude Code's
	// permission mode.
	Session, ToolUseID, PermissionMode string
	// Cwd is where the agent says the call runs: the shell's directory
	// (Claude Code), the command's workdir (Codex), the project (Gemini
	// CLI).
	Cwd string

	// Command is the shell command of a shell tool, Dir the directory it
	// runs in ("" for Cwd); Input is the tool input as sent, which a
	// rewrite keeps but for the command.
	Command string
	Dir     string
	Input   map[string]json.RawMessage

	// Files are the file operations of a file tool, in order.
	Files []FileOp
}

// Shell reports whether c is a shell command.
func (c *Call) Shell() bool { return c.Files == nil }

// Op is what a file operation does, as the file zones judge it.
type Op string

const (
	OpRead   Op = "read"
	OpWrite  Op = "write"
	OpEdit   Op = "edit" // a read and a write
	OpDelete Op = "rm"
	OpList   Op = "ls"
)

// FileOp is one file operation of a file tool.
type FileOp struct {
	Op Op
	// Path is the file as the tool names it; a relative one is taken
	// from the call's Cwd.
	Path string
	// From is the file whose content Apply is given when it is not Path
	// (a patch that moves a file).
	From string
	// Apply computes the file's new content from its current one (nil
	// when it does not exist) for a write or an edit: what the person is
	// shown as a diff. nil when the tool's result cannot be computed
	// here (a notebook cell); the prompt then says so.
	Apply func(old []byte) ([]byte, error)
}

// HookError is input a hook refuses: malformed, unknown or too large.
// The hook answers it with the agent's native denial and Error as the
// reason.
type HookError struct{ Msg string }

func (e *HookError) Error() string { return e.Msg }

func refusef(format string, args ...any) error {
	return &HookError{fmt.Sprintf(format, args...)}
}

// hookEnvelope is the part of the hook input every agent sends alike.
type hookEnvelope struct {
	SessionID      string                     `json:"session_id"`
	Cwd            string                     `json:"cwd"`
	HookEventName  string                     `json:"hook_event_name"`
	ToolName       string                     `json:"tool_name"`
	ToolInput      map[string]json.RawMessage `json:"tool_input"`
	ToolUseID      string                     `json:"tool_use_id"`
	PermissionMode string                     `json:"permission_mode"`
}

// ParseHook reads agent a's hook input. Anything it does not know (a
// malformed document, another event, an unknown tool, a field of the
// tool's input that is not in its table) is a *HookError. The fields
// around tool_input that agents add from one release to the next
// (prompt_id, effort, model, timestamp) are not read.
func ParseHook(a *Agent, data []byte) (*Call, error) {
	if len(data) > MaxHookInput {
		return nil, refusef("guardrun: the hook input is larger than %d MiB", MaxHookInput>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var env hookEnvelope
	if err := dec.Decode(&env); err != nil {
		return nil, refusef("guardrun: the hook input is not the JSON %s sends: %v", a.Title, err)
	}
	if dec.More() {
		return nil, refusef("guardrun: the hook input holds more than one JSON value")
	}
	switch {
	case env.HookEventName != a.Event:
		return nil, refusef("guardrun: hook event %q is not %s's %s", clip(env.HookEventName), a.Title, a.Event)
	case env.ToolName == "":
		return nil, refusef("guardrun: the hook input names no tool")
	case env.ToolInput == nil:
		return nil, refusef("guardrun: the hook input for %s has no tool_input object", clip(env.ToolName))
	case env.Cwd == "" || !filepath.IsAbs(env.Cwd):
		return nil, refusef("guardrun: the hook input's cwd %q is not an absolute path", clip(env.Cwd))
	}
	c := &Call{
		Agent: a, Tool: env.ToolName, Session: env.SessionID, ToolUseID: env.ToolUseID,
		PermissionMode: env.PermissionMode, Cwd: filepath.Clean(env.Cwd), Input: env.ToolInput,
	}
	spec, ok := toolTable[a][env.ToolName]
	if !ok {
		return nil, refusef("guardrun: %s tool %q is not one guardrun knows, so it is refused", a.Title, clip(env.ToolName))
	}
	in := input{tool: env.ToolName, fields: env.ToolInput}
	if err := in.check(spec.fields); err != nil {
		return nil, err
	}
	if err := spec.read(c, in); err != nil {
		return nil, err
	}
	return c, nil
}

// A field's JSON type: s string, n number, b boolean, a array, o object.
type fieldSpec struct {
	kind     byte
	required bool
}

type toolSpec struct {
	fields map[string]fieldSpec
	read   func(c *Call, in input) error
}

func req(kind byte) fieldSpec { return fieldSpec{kind: kind, required: true} }
func opt(kind byte) fieldSpec { return fieldSpec{kind: kind} }

// toolTable is every tool guardrun judges, per agent, with the fields of
// its input. Keep in sync with the matchers in agent.go.
var toolTable = map[*Agent]map[string]toolSpec{
	Claude: {
		"Bash": {map[string]fieldSpec{
			"command": req('s'), "description": opt('s'), "timeout": opt('n'),
			"run_in_background": opt('b'), "dangerouslyDisableSandbox": opt('b'),
		}, readShell("command", "")},
		"Write":        {map[string]fieldSpec{"file_path": req('s'), "content": req('s')}, readWrite("file_path", "content")},
		"Edit":         {map[string]fieldSpec{"file_path": req('s'), "old_string": req('s'), "new_string": req('s'), "replace_all": opt('b')}, readEdit("file_path", "replace_all", "")},
		"MultiEdit":    {map[string]fieldSpec{"file_path": req('s'), "edits": req('a')}, readMultiEdit},
		"NotebookEdit": {map[string]fieldSpec{"notebook_path": req('s'), "new_source": opt('s'), "cell_id": opt('s'), "cell_type": opt('s'), "edit_mode": opt('s')}, readNotebook},
		"Read":         {map[string]fieldSpec{"file_path": req('s'), "offset": opt('n'), "limit": opt('n'), "pages": opt('s')}, readRead("file_path")},
		"Glob":         {map[string]fieldSpec{"pattern": req('s'), "path": opt('s')}, readGlob("pattern", "path")},
		"Grep":         {grepFields, refuseSearch},
	},
	Codex: {
		"Bash":        {map[string]fieldSpec{"command": req('s')}, readShell("command", "")},
		"apply_patch": {map[string]fieldSpec{"command": req('s')}, readPatch},
	},
	Gemini: {
		"run_shell_command": {map[string]fieldSpec{
			"command": req('s'), "description": opt('s'), "dir_path": opt('s'),
			"is_background": opt('b'), "delay_ms": opt('n'),
		}, readShell("command", "dir_path")},
		"write_file":      {map[string]fieldSpec{"file_path": req('s'), "content": req('s')}, readWrite("file_path", "content")},
		"replace":         {map[string]fieldSpec{"file_path": req('s'), "old_string": req('s'), "new_string": req('s'), "instruction": opt('s'), "allow_multiple": opt('b'), "expected_replacements": opt('n')}, readEdit("file_path", "allow_multiple", "expected_replacements")},
		"read_file":       {map[string]fieldSpec{"file_path": req('s'), "start_line": opt('n'), "end_line": opt('n'), "offset": opt('n'), "limit": opt('n')}, readRead("file_path")},
		"list_directory":  {map[string]fieldSpec{"dir_path": req('s'), "ignore": opt('a'), "file_filtering_options": opt('o')}, readList("dir_path")},
		"glob":            {map[string]fieldSpec{"pattern": req('s'), "dir_path": opt('s'), "case_sensitive": opt('b'), "respect_git_ignore": opt('b'), "respect_gemini_ignore": opt('b')}, readGlob("pattern", "dir_path")},
		"grep_search":     {nil, refuseSearch},
		"read_many_files": {nil, refuseSearch},
	},
}

var grepFields = map[string]fieldSpec{
	"pattern": req('s'), "path": opt('s'), "glob": opt('s'), "output_mode": opt('s'),
	"-A": opt('n'), "-B": opt('n'), "-C": opt('n'), "-n": opt('b'), "-i": opt('b'),
	"context": opt('n'), "type": opt('s'), "head_limit": opt('n'), "offset": opt('n'), "multiline": opt('b'),
}

// input is a tool's input, checked against its fields.
type input struct {
	tool   string
	fields map[string]json.RawMessage
}

// check refuses a field the table does not list, a value of another
// type, and a required field that is missing. A nil table takes any
// input (the tool is refused whatever it holds).
func (in input) check(fields map[string]fieldSpec) error {
	if fields == nil {
		return nil
	}
	names := make([]string, 0, len(in.fields))
	for k := range in.fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		f, ok := fields[k]
		if !ok {
			return refusef("guardrun: %s input field %q is not one guardrun knows, so the call is refused", in.tool, clip(k))
		}
		if got := kindOf(in.fields[k]); got != f.kind && got != 'z' {
			return refusef("guardrun: %s input field %q is not a %s", in.tool, k, kindName(f.kind))
		}
	}
	for k, f := range fields {
		if _, ok := in.fields[k]; f.required && !ok {
			return refusef("guardrun: %s input has no %q", in.tool, k)
		}
	}
	return nil
}

// kindOf is the JSON type of v: s, n, b, a, o, or z for null.
func kindOf(v json.RawMessage) byte {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return 0
	}
	switch c := v[0]; {
	case c == '"':
		return 's'
	case c == '{':
		return 'o'
	case c == '[':
		return 'a'
	case c == 't' || c == 'f':
		return 'b'
	case c == 'n':
		return 'z'
	default:
		return 'n'
	}
}

func kindName(k byte) string {
	return map[byte]string{'s': "string", 'n': "number", 'b': "boolean", 'a': "list", 'o': "object"}[k]
}

func (in input) str(k string) string {
	var s string
	if v, ok := in.fields[k]; ok {
		json.Unmarshal(v, &s)
	}
	return s
}

func (in input) boolean(k string) bool {
	var b bool
	if v, ok := in.fields[k]; ok {
		json.Unmarshal(v, &b)
	}
	return b
}

func (in input) path(k string) (string, error) {
	p := in.str(k)
	if p == "" {
		return "", refusef("guardrun: %s names no file (%s is empty)", in.tool, k)
	}
	if strings.ContainsRune(p, 0) {
		return "", refusef("guardrun: %s's %s holds a NUL byte", in.tool, k)
	}
	return p, nil
}

func readShell(command, dir string) func(c *Call, in input) error {
	return func(c *Call, in input) error {
		c.Command = in.str(command)
		if strings.TrimSpace(c.Command) == "" {
			return refusef("guardrun: %s has an empty command", in.tool)
		}
		if strings.ContainsRune(c.Command, 0) {
			return refusef("guardrun: %s's command holds a NUL byte", in.tool)
		}
		if dir != "" {
			if d := in.str(dir); d != "" {
				if strings.ContainsRune(d, 0) {
					return refusef("guardrun: %s's %s holds a NUL byte", in.tool, dir)
				}
				if !filepath.IsAbs(d) {
					d = filepath.Join(c.Cwd, d)
				}
				c.Dir = filepath.Clean(d)
			}
		}
		return nil
	}
}

func readWrite(pathKey, contentKey string) func(c *Call, in input) error {
	return func(c *Call, in input) error {
		p, err := in.path(pathKey)
		if err != nil {
			return err
		}
		content := []byte(in.str(contentKey))
		c.Files = []FileOp{{Op: OpWrite, Path: p, Apply: func([]byte) ([]byte, error) { return content, nil }}}
		return nil
	}
}

// readEdit reads an edit of old_string into new_string; all names the
// boolean that replaces every occurrence, count the number that says how
// many there must be ("" for none).
func readEdit(pathKey, all, count string) func(c *Call, in input) error {
	return func(c *Call, in input) error {
		p, err := in.path(pathKey)
		if err != nil {
			return err
		}
		old, repl, every := in.str("old_string"), in.str("new_string"), in.boolean(all)
		want := 0
		if count != "" {
			if v, ok := in.fields[count]; ok {
				json.Unmarshal(v, &want)
			}
		}
		if want > 1 {
			every = true
		}
		c.Files = []FileOp{{Op: OpEdit, Path: p, Apply: func(cur []byte) ([]byte, error) {
			if old == "" && len(cur) == 0 {
				return []byte(repl), nil // a new file, as both agents create one
			}
			return replace(cur, old, repl, every)
		}}}
		return nil
	}
}

// MaxEditResult bounds the content an edit is computed to for the
// person's diff: a short text replaced everywhere by a longer one (a
// kilobyte for each "a" of a megabyte) would otherwise take gigabytes,
// and a hook killed for its memory fails open.
const MaxEditResult = 64 << 20

func replace(cur []byte, old, repl string, every bool) ([]byte, error) {
	if old == "" {
		return nil, errors.New("the text to replace is empty")
	}
	n := bytes.Count(cur, []byte(old))
	switch {
	case n == 0:
		return nil, errors.New("the text to replace is not in the file")
	case n > 1 && !every:
		return nil, fmt.Errorf("the text to replace occurs %d times", n)
	}
	if size := int64(len(cur)) + int64(n)*(int64(len(repl))-int64(len(old))); size > MaxEditResult {
		return nil, fmt.Errorf("the file would grow to %d bytes, more than %d MiB", size, MaxEditResult>>20)
	}
	if every {
		return bytes.ReplaceAll(cur, []byte(old), []byte(repl)), nil
	}
	return bytes.Replace(cur, []byte(old), []byte(repl), 1), nil
}

func readMultiEdit(c *Call, in input) error {
	p, err := in.path("file_path")
	if err != nil {
		return err
	}
	var edits []map[string]json.RawMessage
	if err := json.Unmarshal(in.fields["edits"], &edits); err != nil {
		return refusef("guardrun: MultiEdit's edits are not a list of objects")
	}
	type edit struct {
		old, repl string
		all       bool
	}
	var list []edit
	for _, e := range edits {
		ein := input{tool: "MultiEdit edit", fields: e}
		if err := ein.check(map[string]fieldSpec{"old_string": req('s'), "new_string": req('s'), "replace_all": opt('b')}); err != nil {
			return err
		}
		list = append(list, edit{ein.str("old_string"), ein.str("new_string"), ein.boolean("replace_all")})
	}
	c.Files = []FileOp{{Op: OpEdit, Path: p, Apply: func(cur []byte) ([]byte, error) {
		var err error
		for _, e := range list {
			if cur, err = replace(cur, e.old, e.repl, e.all); err != nil {
				return nil, err
			}
		}
		return cur, nil
	}}}
	return nil
}

func readNotebook(c *Call, in input) error {
	p, err := in.path("notebook_path")
	if err != nil {
		return err
	}
	c.Files = []FileOp{{Op: OpEdit, Path: p}}
	return nil
}

func readRead(pathKey string) func(c *Call, in input) error {
	return func(c *Call, in input) error {
		p, err := in.path(pathKey)
		if err != nil {
			return err
		}
		c.Files = []FileOp{{Op: OpRead, Path: p}}
		return nil
	}
}

// readList reads a tool that lists names under a directory (the call's
// directory when the field is absent), as guardrun fs ls is judged: a
// read of the directory.
func readList(dirKey string) func(c *Call, in input) error {
	return func(c *Call, in input) error {
		d := in.str(dirKey)
		if d == "" {
			d = c.Cwd
		}
		if strings.ContainsRune(d, 0) {
			return refusef("guardrun: %s's %s holds a NUL byte", in.tool, dirKey)
		}
		c.Files = []FileOp{{Op: OpList, Path: d}}
		return nil
	}
}

// readGlob reads a tool that lists the names a glob pattern matches
// under a directory: the pattern reaches where its words before the
// first wildcard lead (an absolute pattern from /, a relative one from
// the directory), so that directory is the one listed; a pattern with no
// wildcard names one path, whose directory it lists. A .. in the pattern
// is refused: after a wildcard it leads anywhere.
func readGlob(patternKey, dirKey string) func(c *Call, in input) error {
	list := readList(dirKey)
	return func(c *Call, in input) error {
		if err := list(c, in); err != nil {
			return err
		}
		pat := in.str(patternKey)
		if strings.ContainsRune(pat, 0) {
			return refusef("guardrun: %s's %s holds a NUL byte", in.tool, patternKey)
		}
		words := strings.Split(filepath.ToSlash(pat), "/")
		if slices.Contains(words, "..") {
			return refusef("guardrun: %s's pattern %q holds .., which guardrun cannot follow past a wildcard; give the directory as %s", in.tool, clip(pat), dirKey)
		}
		dir := c.Files[0].Path
		if filepath.IsAbs(pat) {
			dir = "/"
		}
		wild := false
		var static []string
		for i, w := range words {
			if strings.ContainsAny(w, "*?[{") {
				wild = true
				break
			}
			if i < len(words)-1 || w == "" {
				static = append(static, w)
			}
		}
		if wild || len(static) > 0 {
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(c.Cwd, dir)
			}
			dir = filepath.Join(append([]string{dir}, static...)...)
		}
		c.Files[0].Path = dir
		return nil
	}
}

// refuseSearch refuses a tool that reads every file under a directory:
// the zones cannot tell which of them it reads (a name sandbox.deny
// lists may lie anywhere below), while the same search through the
// shell tool runs in the sandbox, where denied paths are hidden.
func refuseSearch(c *Call, in input) error {
	return refusef("guardrun: %s reads files under a directory that guardrun cannot check one by one; search with the shell tool (rg, grep, find), which runs in guardrun's sandbox", in.tool)
}

func readPatch(c *Call, in input) error {
	p, err := ParsePatch(in.str("command"))
	if err != nil {
		return refusef("guardrun: apply_patch: %v", err)
	}
	c.Files = p.Ops()
	return nil
}

// clip shortens a string from the input for a refusal line.
func clip(s string) string {
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return strings.ToValidUTF8(s, "?")
}
