package agents

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
)

// HookTimeout is the hook timeout guardrun's wiring sets, in seconds: an
// agent whose hook overstays goes on as if there were none (every one of
// them fails open), so a hook that waits for a person answers before it
// (HookDeadline).
const HookTimeout = 600

// HookDeadline is how long `guardrun hook` waits for a person before it
// denies, well inside HookTimeout.
const HookDeadline = HookTimeout - 30

// HookCommand is the command line an agent runs as guardrun's hook:
// exe, quoted for sh where it needs to be, then "hook" and the agent.
func HookCommand(exe string, a *Agent) string {
	return ShellQuote(exe) + " hook " + a.Name
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./+:@%^,=-]+$`)

// ShellQuote quotes s as one word for sh, bash and zsh.
func ShellQuote(s string) string {
	if s != "" && plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ParseHookCommand reports whether command is a guardrun hook command
// (`PATH/guardrun hook AGENT`, the path maybe quoted), and returns the
// guardrun path and the agent it names.
func ParseHookCommand(command string) (exe, agent string, ok bool) {
	words, ok := shWords(command)
	if !ok || len(words) != 3 || words[1] != "hook" {
		return "", "", false
	}
	if !strings.HasPrefix(filepath.Base(words[0]), "guardrun") {
		return "", "", false
	}
	return words[0], words[2], true
}

// shWords splits a simple command line into words: bare words and
// single- or double-quoted parts, nothing else (no expansions).
func shWords(s string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	in, started := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in, started = true, true
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 || strings.ContainsAny(s[i+1:i+1+j], "$`\\") {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in, started = true, true
		case c == ' ' || c == '\t':
			if started {
				words = append(words, cur.String())
				cur.Reset()
				in, started = false, false
			}
		case strings.IndexByte("$`\\|&;<>(){}*?[]#~\n", c) >= 0 && !in:
			return nil, false
		default:
			cur.WriteByte(c)
			started = true
		}
	}
	if started {
		words = append(words, cur.String())
	}
	return words, true
}

// Settings entries, with their fields in the order people read them.
type jsonGroup struct {
	Matcher string     `json:"matcher"`
	Hooks   []jsonHook `json:"hooks"`
}

type jsonHook struct {
	Name    string `json:"name,omitempty"`
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// jsonEntry is guardrun's entry for a JSON-configured agent.
func jsonEntry(a *Agent, command string) jsonGroup {
	h := jsonHook{Type: "command", Command: command, Timeout: HookTimeout}
	if a == Gemini {
		// Gemini CLI's timeouts are milliseconds; a name lets a person
		// list the hook as theirs (hooksConfig.disabled takes names).
		h.Name, h.Timeout = "guardrun", HookTimeout*1000
	}
	return jsonGroup{Matcher: a.Matcher, Hooks: []jsonHook{h}}
}

// Wired is one guardrun hook found in a settings file.
type Wired struct {
	// Command is the hook's command line, Exe the guardrun it runs.
	Command, Exe string
	// Agent is the agent its command names.
	Agent string
	// Current says the entry is exactly what guardrun writes now for
	// this agent and guardrun path (matcher, timeout and all).
	Current bool
	// Line is where the hook's command stands in the file.
	Line int
}

// hookRef is a guardrun hook object inside a settings document: the
// group (element of the event's array) and the hook's index in it.
type hookRef struct {
	group int
	hook  int
	w     Wired
}

// findJSON returns the event's array in doc (nil when absent) and the
// guardrun hooks in it.
func findJSON(src []byte, doc *jsonValue, a *Agent, exe string) (*jsonValue, []hookRef, error) {
	if doc.kind != '{' {
		return nil, nil, (&jsonParser{src: src}).fail(doc.start, "the settings are not a JSON object")
	}
	hooks, _ := doc.member("hooks")
	if hooks == nil {
		return nil, nil, nil
	}
	if hooks.kind != '{' {
		return nil, nil, (&jsonParser{src: src}).fail(hooks.start, `"hooks" is not an object`)
	}
	arr, _ := hooks.member(a.Event)
	if arr == nil {
		return nil, nil, nil
	}
	if arr.kind != '[' {
		return nil, nil, (&jsonParser{src: src}).fail(arr.start, "%q is not a list", "hooks."+a.Event)
	}
	want := render(jsonEntry(a, HookCommand(exe, a)), "", "", true)
	var refs []hookRef
	for gi, g := range arr.elems {
		hs, _ := g.member("hooks")
		if hs == nil || hs.kind != '[' {
			continue
		}
		for hi, h := range hs.elems {
			cmd, _ := h.member("command")
			if cmd == nil || cmd.kind != '"' {
				continue
			}
			e, ag, ok := ParseHookCommand(cmd.str)
			if !ok {
				continue
			}
			line := 1 + strings.Count(string(src[:cmd.start]), "\n")
			cur := len(hs.elems) == 1 && compactJSON(src[g.start:g.end]) == want
			refs = append(refs, hookRef{gi, hi, Wired{Command: cmd.str, Exe: e, Agent: ag, Current: cur, Line: line}})
		}
	}
	return arr, refs, nil
}

// compactJSON is a value's text without the white space between tokens
// (and without comments), to compare entries by content.
func compactJSON(b []byte) string {
	v, err := parseJSON(b)
	if err != nil {
		return ""
	}
	var out strings.Builder
	var walk func(v *jsonValue)
	walk = func(v *jsonValue) {
		switch v.kind {
		case '{':
			out.WriteByte('{')
			for i, m := range v.members {
				if i > 0 {
					out.WriteByte(',')
				}
				out.WriteString(quoteJSON(m.key))
				out.WriteByte(':')
				walk(m.val)
			}
			out.WriteByte('}')
		case '[':
			out.WriteByte('[')
			for i, e := range v.elems {
				if i > 0 {
					out.WriteByte(',')
				}
				walk(e)
			}
			out.WriteByte(']')
		case '"':
			out.WriteString(quoteJSON(v.str))
		default:
			out.Write(b[v.start:v.end])
		}
	}
	walk(v)
	return out.String()
}

func quoteJSON(s string) string { return render(s, "", "", true) }

// parseSettings parses a JSON settings file; an empty one is an empty
// object.
func parseSettings(file string, src []byte) ([]byte, *jsonValue, error) {
	if strings.TrimSpace(string(src)) == "" {
		src = []byte("{}\n")
	}
	doc, err := parseJSON(src)
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			se.File = file
		}
		return nil, nil, err
	}
	return src, doc, nil
}

func withFile(file string, err error) error {
	var se *SyntaxError
	if errors.As(err, &se) {
		se.File = file
	}
	return err
}

// plainJSON refuses a settings file of a, which guardrun's own parser
// read, that the agent does not read:
// Claude Code parses its settings as plain JSON and ignores a file with
// anything else in it (a comment, which guardrun's own parser keeps)
// whole, and guardrun's hook in it with it (measured).
func plainJSON(a *Agent, file string, src []byte) error {
	if a != Claude || strings.TrimSpace(string(src)) == "" || json.Valid(src) {
		return nil
	}
	var v any
	err := json.Unmarshal(src, &v)
	at := 0
	var se *json.SyntaxError
	if errors.As(err, &se) {
		at = int(se.Offset) - 1
	}
	p := &jsonParser{src: src}
	e := p.fail(at, "Claude Code reads its settings as plain JSON and ignores this file whole (a comment is not JSON): %v", err).(*SyntaxError)
	e.File = file
	return e
}

// FindJSONHooks returns the guardrun hooks for a in the JSON settings
// src (of file, for errors), exe being the guardrun that would write
// them now. A file the agent does not read holds none.
func FindJSONHooks(file string, src []byte, a *Agent, exe string) ([]Wired, error) {
	src, doc, err := parseSettings(file, src)
	if err != nil {
		return nil, err
	}
	if err := plainJSON(a, file, src); err != nil {
		return nil, err
	}
	_, refs, err := findJSON(src, doc, a, exe)
	if err != nil {
		return nil, withFile(file, err)
	}
	var out []Wired
	for _, r := range refs {
		out = append(out, r.w)
	}
	return out, nil
}

// AddJSONHook returns src with guardrun's hook for a (running exe) in
// it: unchanged when exactly that hook is there already; with any other
// guardrun hook for a replaced; else added as the last entry of
// hooks.EVENT, creating hooks and the event's list where they are
// missing. Every byte outside what it inserts or removes stays as it was.
func AddJSONHook(file string, src []byte, a *Agent, exe string) ([]byte, bool, error) {
	orig := src
	src, doc, err := parseSettings(file, src)
	if err != nil {
		return nil, false, err
	}
	if err := plainJSON(a, file, src); err != nil {
		return nil, false, err
	}
	_, refs, err := findJSON(src, doc, a, exe)
	if err != nil {
		return nil, false, withFile(file, err)
	}
	if len(refs) == 1 && refs[0].w.Current {
		return orig, false, nil
	}
	if len(refs) > 0 {
		if src, err = RemoveJSONHook(file, src, a); err != nil {
			return nil, false, err
		}
		if src, doc, err = parseSettings(file, src); err != nil {
			return nil, false, err
		}
	}
	unit := indentUnit(src, doc)
	entry := jsonEntry(a, HookCommand(exe, a))
	hooks, _ := doc.member("hooks")
	switch {
	case hooks == nil:
		src = appendMember(src, doc, "hooks", map[string]any{a.Event: []any{entry}}, unit)
	default:
		arr, _ := hooks.member(a.Event)
		if arr == nil {
			src = appendMember(src, hooks, a.Event, []any{entry}, unit)
		} else {
			src = appendElem(src, arr, entry, unit)
		}
	}
	if _, err := parseJSON(src); err != nil {
		return nil, false, withFile(file, err)
	}
	return src, true, nil
}

// RemoveJSONHook returns src without guardrun's hooks for a: a group
// holding only guardrun's hook goes, a group holding others too loses
// only guardrun's; an event list and a hooks object left empty go too.
func RemoveJSONHook(file string, src []byte, a *Agent) ([]byte, error) {
	for {
		s, doc, err := parseSettings(file, src)
		if err != nil {
			return nil, err
		}
		arr, refs, err := findJSON(s, doc, a, "")
		if err != nil {
			return nil, withFile(file, err)
		}
		if len(refs) == 0 {
			return src, nil
		}
		r := refs[len(refs)-1]
		g := arr.elems[r.group]
		hs, _ := g.member("hooks")
		if len(hs.elems) > 1 {
			src = removeElem(s, hs, r.hook)
			continue
		}
		if len(arr.elems) > 1 {
			src = removeElem(s, arr, r.group)
			continue
		}
		hooks, _ := doc.member("hooks")
		_, ei := hooks.member(a.Event)
		if len(hooks.members) > 1 {
			src = removeMember(s, hooks, ei)
			continue
		}
		_, hi := doc.member("hooks")
		src = removeMember(s, doc, hi)
	}
}

// Setting is one value looked up in a JSON settings file.
type Setting struct {
	// JSON is the value's text, compacted; Line where it stands.
	JSON string
	Line int
}

// LookupJSON returns the value at keys (object members, outermost first)
// in the JSON settings src of file; ok false when it is not there.
func LookupJSON(file string, src []byte, keys ...string) (s Setting, ok bool, err error) {
	src, doc, err := parseSettings(file, src)
	if err != nil {
		return Setting{}, false, err
	}
	v := doc
	for _, k := range keys {
		if v, _ = v.member(k); v == nil {
			return Setting{}, false, nil
		}
	}
	return Setting{JSON: compactJSON(src[v.start:v.end]), Line: 1 + strings.Count(string(src[:v.start]), "\n")}, true, nil
}

// ClaudeSettings is a Claude Code --settings value holding guardrun's
// hook, running exe, and nothing else.
func ClaudeSettings(exe string) string {
	return render(map[string]any{"hooks": map[string]any{Claude.Event: []any{jsonEntry(Claude, HookCommand(exe, Claude))}}}, "", "", true)
}
