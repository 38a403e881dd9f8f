package agents

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Codex's config.toml takes guardrun's hook as a block between two
// marker lines, appended at the end of the file; nothing outside the
// block is ever changed.
const (
	tomlBegin = "# >>> guardrun hook (guardrun integrate codex; remove with guardrun integrate codex --remove)"
	tomlEnd   = "# <<< guardrun hook"
)

// CodexTrust is Codex's trust entry for one hook: the key it files the
// hook under (SOURCE:pre_tool_use:GROUP:HANDLER) and the hash of the
// hook's definition, as `codex app-server` reports them (hooks/list).
type CodexTrust struct {
	Key, Hash string
}

// CodexBlock is the block guardrun writes into Codex's config.toml: its
// PreToolUse hook running exe and, when trust is set, the entry that
// trusts it (without one Codex skips the hook, silently in codex exec).
func CodexBlock(exe string, trust *CodexTrust) string {
	var b strings.Builder
	b.WriteString(tomlBegin + "\n")
	fmt.Fprintf(&b, "[[hooks.PreToolUse]]\nmatcher = %s\n\n", strconv.Quote(Codex.Matcher))
	fmt.Fprintf(&b, "[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = %s\ntimeout = %d\n",
		strconv.Quote(HookCommand(exe, Codex)), HookTimeout)
	if trust != nil {
		fmt.Fprintf(&b, "\n[hooks.state.%s]\ntrusted_hash = %s\n", strconv.Quote(trust.Key), strconv.Quote(trust.Hash))
	}
	b.WriteString(tomlEnd + "\n")
	return b.String()
}

// CheckTOML reports whether src is TOML, with the file and line of the
// first error.
func CheckTOML(file string, src []byte) error {
	var v map[string]any
	_, err := toml.Decode(string(src), &v)
	if err == nil {
		return nil
	}
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d:%d: %s", file, pe.Position.Line, pe.Position.Col, pe.Message)
	}
	return fmt.Errorf("%s: %v", file, err)
}

// findBlock returns the byte span of guardrun's block in src, from the
// start of its first marker line to the end of the last, or ok false.
func findBlock(file string, src []byte) (start, end int, ok bool, err error) {
	s := string(src)
	b := lineStart(s, tomlBegin)
	if b < 0 {
		if lineStart(s, tomlEnd) >= 0 {
			return 0, 0, false, fmt.Errorf("%s: %q without the line that opens guardrun's block", file, tomlEnd)
		}
		return 0, 0, false, nil
	}
	e := lineStart(s[b:], tomlEnd)
	if e < 0 {
		return 0, 0, false, fmt.Errorf("%s:%d: guardrun's block is not closed by %q", file, 1+strings.Count(s[:b], "\n"), tomlEnd)
	}
	e += b + len(tomlEnd)
	if e < len(s) && s[e] == '\n' {
		e++
	}
	if lineStart(s[e:], tomlBegin) >= 0 {
		return 0, 0, false, fmt.Errorf("%s: guardrun's block appears twice", file)
	}
	return b, e, true, nil
}

// lineStart is the offset of the line that is exactly line, or -1.
func lineStart(s, line string) int {
	for off := 0; off <= len(s); {
		i := strings.Index(s[off:], line)
		if i < 0 {
			return -1
		}
		at := off + i
		end := at + len(line)
		if (at == 0 || s[at-1] == '\n') && (end == len(s) || s[end] == '\n' || s[end] == '\r') {
			return at
		}
		off = at + 1
	}
	return -1
}

// CodexBlockIn returns the text of guardrun's block in src ("" none).
func CodexBlockIn(file string, src []byte) (string, error) {
	b, e, ok, err := findBlock(file, src)
	if err != nil || !ok {
		return "", err
	}
	return string(src[b:e]), nil
}

// SetTOMLBlock returns src with block as guardrun's block: unchanged when
// it is there already, in the old block's place when one differs, else
// appended after a blank line. The file must be TOML before and after.
func SetTOMLBlock(file string, src []byte, block string) ([]byte, bool, error) {
	if err := CheckTOML(file, src); err != nil {
		return nil, false, err
	}
	b, e, ok, err := findBlock(file, src)
	if err != nil {
		return nil, false, err
	}
	var out []byte
	switch {
	case ok && string(src[b:e]) == block:
		return src, false, nil
	case ok:
		out = splice(src, b, e, block)
	default:
		sep := "\n"
		switch {
		case len(src) == 0:
			sep = ""
		case src[len(src)-1] != '\n':
			sep = "\n\n"
		}
		out = append(append(append([]byte{}, src...), sep...), block...)
	}
	if err := CheckTOML(file, out); err != nil {
		return nil, false, fmt.Errorf("guardrun's hook cannot be added to it: %w", err)
	}
	return out, true, nil
}

// RemoveTOMLBlock returns src without guardrun's block and the blank line
// before it.
func RemoveTOMLBlock(file string, src []byte) ([]byte, bool, error) {
	b, e, ok, err := findBlock(file, src)
	if err != nil || !ok {
		return src, false, err
	}
	if b >= 2 && src[b-1] == '\n' && src[b-2] == '\n' {
		b--
	} else if b == 1 && src[0] == '\n' {
		b = 0
	}
	return splice(src, b, e, ""), true, nil
}

// CodexTrusted reports whether src (Codex's config.toml) holds a trust
// entry for key with hash, outside guardrun's block or in it.
func CodexTrusted(src []byte, t CodexTrust) bool {
	var v struct {
		Hooks struct {
			State map[string]struct {
				TrustedHash string `toml:"trusted_hash"`
			} `toml:"state"`
		} `toml:"hooks"`
	}
	if _, err := toml.Decode(string(src), &v); err != nil {
		return false
	}
	st, ok := v.Hooks.State[t.Key]
	return ok && st.TrustedHash == t.Hash
}
