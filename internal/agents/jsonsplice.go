package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The JSON editor: a parser that keeps every value's byte span, and
// splices that insert or remove one array element or object member,
// touching no byte outside the span they change. Comments (// and /* */)
// are read as white space, as Gemini CLI reads its settings.

// jsonValue is a parsed value with its place in the source.
type jsonValue struct {
	kind       byte // '{', '[', '"', 'n' (number), 't', 'f', 'z' (null)
	start, end int  // the value's bytes: src[start:end]
	members    []jsonMember
	elems      []*jsonValue
	str        string // a string's value
}

type jsonMember struct {
	key      string
	keyStart int
	val      *jsonValue
}

// member returns the member named key of an object, and its index.
func (v *jsonValue) member(key string) (*jsonValue, int) {
	if v == nil || v.kind != '{' {
		return nil, -1
	}
	for i, m := range v.members {
		if m.key == key {
			return m.val, i
		}
	}
	return nil, -1
}

// SyntaxError is a settings file that is not JSON, with where.
type SyntaxError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

type jsonParser struct {
	src   []byte
	pos   int
	depth int
}

// maxJSONDepth bounds nesting, so a hostile file cannot exhaust the stack.
const maxJSONDepth = 200

func (p *jsonParser) fail(at int, format string, args ...any) error {
	line, col := 1, 1
	for i := 0; i < at && i < len(p.src); i++ {
		if p.src[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// parseJSON reads a whole document: one value with white space and
// comments around it.
func parseJSON(src []byte) (*jsonValue, error) {
	p := &jsonParser{src: src}
	if err := p.space(); err != nil {
		return nil, err
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos != len(src) {
		return nil, p.fail(p.pos, "unexpected %s after the end of the document", p.what())
	}
	return v, nil
}

func (p *jsonParser) what() string {
	if p.pos >= len(p.src) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.src[p.pos:])
	return strconv.QuoteRune(r)
}

func (p *jsonParser) space() error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			end := bytes.Index(p.src[p.pos+2:], []byte("*/"))
			if end < 0 {
				return p.fail(p.pos, "unterminated comment")
			}
			p.pos += end + 4
		default:
			return nil
		}
	}
	return nil
}

func (p *jsonParser) value() (*jsonValue, error) {
	if p.pos >= len(p.src) {
		return nil, p.fail(p.pos, "unexpected end of file, want a value")
	}
	start := p.pos
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		return &jsonValue{kind: '"', start: start, end: p.pos, str: s}, nil
	case c == 't' || c == 'f' || c == 'n':
		for _, w := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.src[p.pos:], []byte(w)) {
				p.pos += len(w)
				k := w[0]
				if k == 'n' {
					k = 'z'
				}
				return &jsonValue{kind: k, start: start, end: p.pos}, nil
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		end := p.pos
		for end < len(p.src) && strings.IndexByte("+-.eE0123456789", p.src[end]) >= 0 {
			end++
		}
		var f float64
		if err := json.Unmarshal(p.src[p.pos:end], &f); err != nil {
			return nil, p.fail(p.pos, "bad number %q", p.src[p.pos:end])
		}
		p.pos = end
		return &jsonValue{kind: 'n', start: start, end: end}, nil
	}
	return nil, p.fail(p.pos, "unexpected %s, want a value", p.what())
}

func (p *jsonParser) string() (string, error) {
	start := p.pos
	p.pos++
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == '"':
			p.pos++
			var s string
			if err := json.Unmarshal(p.src[start:p.pos], &s); err != nil {
				return "", p.fail(start, "bad string: %v", err)
			}
			return s, nil
		case c == '\\':
			p.pos += 2
		case c < 0x20:
			return "", p.fail(p.pos, "a control character in a string")
		default:
			p.pos++
		}
	}
	return "", p.fail(start, "unterminated string")
}

func (p *jsonParser) nest() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.fail(p.pos, "nested more than %d deep", maxJSONDepth)
	}
	return nil
}

func (p *jsonParser) object() (*jsonValue, error) {
	v := &jsonValue{kind: '{', start: p.pos}
	if err := p.nest(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.pos++
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		v.end = p.pos
		return v, nil
	}
	seen := map[string]bool{}
	for {
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return nil, p.fail(p.pos, "unexpected %s, want a member name", p.what())
		}
		ks := p.pos
		key, err := p.string()
		if err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, p.fail(ks, "member %q appears twice", key)
		}
		seen[key] = true
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, p.fail(p.pos, "unexpected %s, want ':'", p.what())
		}
		p.pos++
		if err := p.space(); err != nil {
			return nil, err
		}
		val, err := p.value()
		if err != nil {
			return nil, err
		}
		v.members = append(v.members, jsonMember{key: key, keyStart: ks, val: val})
		if end, err := p.next(v, '}'); err != nil {
			return nil, err
		} else if end {
			return v, nil
		}
	}
}

// next reads what follows a member or element of v: a comma and white
// space (false: another one comes), or close, which ends v (true).
func (p *jsonParser) next(v *jsonValue, close byte) (bool, error) {
	if err := p.space(); err != nil {
		return false, err
	}
	if p.pos < len(p.src) && p.src[p.pos] == ',' {
		p.pos++
		return false, p.space()
	}
	if p.pos < len(p.src) && p.src[p.pos] == close {
		p.pos++
		v.end = p.pos
		return true, nil
	}
	return false, p.fail(p.pos, "unexpected %s, want ',' or '%c'", p.what(), close)
}

func (p *jsonParser) array() (*jsonValue, error) {
	v := &jsonValue{kind: '[', start: p.pos}
	if err := p.nest(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.pos++
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		v.end = p.pos
		return v, nil
	}
	for {
		e, err := p.value()
		if err != nil {
			return nil, err
		}
		v.elems = append(v.elems, e)
		if end, err := p.next(v, ']'); err != nil {
			return nil, err
		} else if end {
			return v, nil
		}
	}
}

// lineIndent is the white space at the start of the line that holds
// offset at.
func lineIndent(src []byte, at int) string {
	s := bytes.LastIndexByte(src[:at], '\n') + 1
	e := s
	for e < len(src) && (src[e] == ' ' || src[e] == '\t') {
		e++
	}
	return string(src[s:e])
}

// sameLine reports whether offsets a and b are on one line.
func sameLine(src []byte, a, b int) bool {
	return bytes.IndexByte(src[a:b], '\n') < 0
}

// indentUnit is the file's indentation step: the indentation of the
// first member of the root object when it starts its own line, else two
// spaces.
func indentUnit(src []byte, root *jsonValue) string {
	if root != nil && root.kind == '{' && len(root.members) > 0 {
		ks := root.members[0].keyStart
		if !sameLine(src, root.start, ks) {
			if in := lineIndent(src, ks); in != "" && in != lineIndent(src, root.start) {
				return strings.TrimPrefix(in, lineIndent(src, root.start))
			}
		}
	}
	return "  "
}

// render marshals v as it would stand at indent (the indentation of the
// line it starts on), unit per level; compact when compact.
func render(v any, indent, unit string, compact bool) string {
	var b []byte
	var err error
	if compact {
		b, err = json.Marshal(v)
	} else {
		b, err = json.MarshalIndent(v, indent, unit)
	}
	if err != nil {
		panic("agents: render settings entry: " + err.Error())
	}
	return string(b)
}

// splice replaces src[start:end] with text.
func splice(src []byte, start, end int, text string) []byte {
	out := make([]byte, 0, len(src)-(end-start)+len(text))
	out = append(out, src[:start]...)
	out = append(out, text...)
	return append(out, src[end:]...)
}

// appendElem inserts v as the last element of array arr.
func appendElem(src []byte, arr *jsonValue, v any, unit string) []byte {
	compact := sameLine(src, arr.start, arr.end) && len(arr.elems) > 0
	if len(arr.elems) > 0 {
		last := arr.elems[len(arr.elems)-1]
		if compact || sameLine(src, arr.start, last.start) {
			return splice(src, last.end, last.end, ", "+render(v, "", unit, true))
		}
		in := lineIndent(src, last.start)
		return splice(src, last.end, last.end, ",\n"+in+render(v, in, unit, false))
	}
	base := lineIndent(src, arr.start)
	in := base + unit
	return splice(src, arr.start+1, arr.end-1, "\n"+in+render(v, in, unit, false)+"\n"+base)
}

// appendMember inserts "key": v as the last member of object obj.
func appendMember(src []byte, obj *jsonValue, key string, v any, unit string) []byte {
	k, _ := json.Marshal(key)
	if len(obj.members) > 0 {
		last := obj.members[len(obj.members)-1]
		if sameLine(src, obj.start, obj.end) {
			return splice(src, last.val.end, last.val.end, ", "+string(k)+": "+render(v, "", unit, true))
		}
		in := lineIndent(src, last.keyStart)
		return splice(src, last.val.end, last.val.end, ",\n"+in+string(k)+": "+render(v, in, unit, false))
	}
	base := lineIndent(src, obj.start)
	in := base + unit
	return splice(src, obj.start+1, obj.end-1, "\n"+in+string(k)+": "+render(v, in, unit, false)+"\n"+base)
}

// removeAt removes the i-th of the spans (start of item, end of item)
// of a container whose contents run from open+1 to close-1, with the
// comma and white space that joined it to its neighbours: the exact
// inverse of appendElem and appendMember.
func removeAt(src []byte, open, close int, starts, ends []int, i int) []byte {
	switch {
	case len(starts) == 1:
		return splice(src, open+1, close-1, "")
	case i > 0:
		return splice(src, ends[i-1], ends[i], "")
	default:
		return splice(src, starts[0], starts[1], "")
	}
}

func removeElem(src []byte, arr *jsonValue, i int) []byte {
	var s, e []int
	for _, el := range arr.elems {
		s, e = append(s, el.start), append(e, el.end)
	}
	return removeAt(src, arr.start, arr.end, s, e, i)
}

func removeMember(src []byte, obj *jsonValue, i int) []byte {
	var s, e []int
	for _, m := range obj.members {
		s, e = append(s, m.keyStart), append(e, m.val.end)
	}
	return removeAt(src, obj.start, obj.end, s, e, i)
}
