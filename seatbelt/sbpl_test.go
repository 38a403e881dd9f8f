package seatbelt

import (
	"fmt"
	"slices"
	"strings"
)

// This file is an independent reader for the subset of SBPL that Render
// writes. It is deliberately strict: anything Render should never produce
// (an unknown escape, an unterminated string, a stray symbol after a
// filter) is an error, so a rendering bug cannot hide behind a lenient
// parser.

type nodeKind int

const (
	listNode nodeKind = iota
	symbolNode
	stringNode
	regexNode
)

type node struct {
	kind  nodeKind
	text  string // symbol name, string value or regex source
	kids  []*node
	param string // set on a stringNode that replaced (param "NAME")
}

func (n *node) String() string {
	switch n.kind {
	case symbolNode:
		return n.text
	case stringNode:
		return fmt.Sprintf("%q", n.text)
	case regexNode:
		return `#"` + n.text + `"`
	}
	parts := make([]string, len(n.kids))
	for i, k := range n.kids {
		parts[i] = k.String()
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// parseSBPL reads every top-level form of src.
func parseSBPL(src string) ([]*node, error) {
	r := &reader{src: src}
	var forms []*node
	for {
		r.skip()
		if r.pos >= len(r.src) {
			return forms, nil
		}
		if r.src[r.pos] == ')' {
			return nil, r.errorf("unbalanced )")
		}
		n, err := r.read()
		if err != nil {
			return nil, err
		}
		forms = append(forms, n)
	}
}

type reader struct {
	src string
	pos int
}

func (r *reader) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", r.pos, fmt.Sprintf(format, args...))
}

// skip passes whitespace and ; comments.
func (r *reader) skip() {
	for r.pos < len(r.src) {
		switch c := r.src[r.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			r.pos++
		case c == ';':
			for r.pos < len(r.src) && r.src[r.pos] != '\n' {
				r.pos++
			}
		default:
			return
		}
	}
}

func (r *reader) read() (*node, error) {
	r.skip()
	if r.pos >= len(r.src) {
		return nil, r.errorf("unexpected end of input")
	}
	switch c := r.src[r.pos]; {
	case c == '(':
		r.pos++
		n := &node{kind: listNode}
		for {
			r.skip()
			if r.pos >= len(r.src) {
				return nil, r.errorf("unterminated list")
			}
			if r.src[r.pos] == ')' {
				r.pos++
				return n, nil
			}
			k, err := r.read()
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, k)
		}
	case c == '"':
		return r.readString()
	case strings.HasPrefix(r.src[r.pos:], `#"`):
		r.pos += 2
		end := strings.IndexByte(r.src[r.pos:], '"')
		if end < 0 {
			return nil, r.errorf("unterminated regex")
		}
		re := r.src[r.pos : r.pos+end]
		if strings.ContainsAny(re, "\n\r") {
			return nil, r.errorf("regex spans lines")
		}
		r.pos += end + 1
		return &node{kind: regexNode, text: re}, nil
	case c == ')':
		return nil, r.errorf("unexpected )")
	default:
		start := r.pos
		for r.pos < len(r.src) && !strings.ContainsRune(" \t\n\r()\";", rune(r.src[r.pos])) {
			r.pos++
		}
		sym := r.src[start:r.pos]
		if strings.ContainsAny(sym, "#\\'`,") {
			return nil, r.errorf("unexpected symbol %q", sym)
		}
		return &node{kind: symbolNode, text: sym}, nil
	}
}

func (r *reader) readString() (*node, error) {
	r.pos++ // opening quote
	var b strings.Builder
	for r.pos < len(r.src) {
		c := r.src[r.pos]
		switch {
		case c == '"':
			r.pos++
			return &node{kind: stringNode, text: b.String()}, nil
		case c == '\\':
			if r.pos+1 >= len(r.src) {
				return nil, r.errorf("unterminated escape")
			}
			e := r.src[r.pos+1]
			if e != '\\' && e != '"' {
				return nil, r.errorf("escape \\%c is not one Render writes", e)
			}
			b.WriteByte(e)
			r.pos += 2
		case c < 0x20 || c == 0x7f:
			return nil, r.errorf("raw control character %#x in string", c)
		default:
			b.WriteByte(c)
			r.pos++
		}
	}
	return nil, r.errorf("unterminated string")
}

// Operations Render may use. A name outside this list is either a typo or
// a grant nobody reviewed.
var knownOps = []string{
	"default",
	"file-ioctl", "file-map-executable",
	"file-read*", "file-read-data", "file-read-metadata",
	"file-write*", "file-write-create", "file-write-data", "file-write-unlink",
	"ipc-posix-sem", "ipc-posix-shm-read-data",
	"mach-lookup",
	"network-bind", "network-inbound", "network-outbound",
	"process-exec*", "process-fork", "process-info*",
	"pseudo-tty", "signal", "sysctl-read", "system-socket",
}

// Filters Render may use, and the bare symbols allowed as their arguments.
var (
	knownFilters = []string{
		"global-name", "ioctl-command", "ipc-posix-name", "literal", "local",
		"param", "path-literal", "regex", "remote", "socket-domain", "subpath",
		"sysctl-name", "sysctl-name-prefix", "target",
	}
	knownSymbols = []string{
		"AF_INET", "AF_INET6", "AF_UNIX", "TIOCSTI", "ip", "same-sandbox", "unix-socket",
	}
	// unconditional are the only rules allowed to have no filter.
	unconditional = []string{"process-fork", "ipc-posix-sem", "pseudo-tty"}
)

// rule is one parsed (allow|deny op... filter...) form.
type rule struct {
	action  string
	ops     []string
	filters []*node
}

// checkProfile parses text and verifies its shape: the header, known
// operations and filters, filters present where a rule must be
// conditional, denials after allows, and parameters that match params
// exactly. It returns the rules with each (param "X") replaced by a string
// node carrying X's value, as sandbox-exec would see them.
func checkProfile(text string, params []Param) ([]rule, error) {
	forms, err := parseSBPL(text)
	if err != nil {
		return nil, err
	}
	if len(forms) < 2 || forms[0].String() != "(version 1)" || forms[1].String() != "(deny default)" {
		return nil, fmt.Errorf("profile must start with (version 1) (deny default)")
	}
	values := map[string]string{}
	for _, p := range params {
		if _, dup := values[p.Name]; dup {
			return nil, fmt.Errorf("parameter %s listed twice", p.Name)
		}
		values[p.Name] = p.Value
	}
	used := map[string]bool{}
	var rules []rule
	seenDeny := false
	for _, f := range forms[2:] {
		if f.kind != listNode || len(f.kids) < 2 || f.kids[0].kind != symbolNode {
			return nil, fmt.Errorf("not a rule: %s", f)
		}
		ru := rule{action: f.kids[0].text}
		switch ru.action {
		case "allow":
			if seenDeny {
				return nil, fmt.Errorf("allow after a deny: %s", f)
			}
		case "deny":
			seenDeny = true
		default:
			return nil, fmt.Errorf("unknown action in %s", f)
		}
		i := 1
		for ; i < len(f.kids) && f.kids[i].kind == symbolNode; i++ {
			op := f.kids[i].text
			if !slices.Contains(knownOps, op) || op == "default" {
				return nil, fmt.Errorf("unknown operation %q in %s", op, f)
			}
			ru.ops = append(ru.ops, op)
		}
		if len(ru.ops) == 0 {
			return nil, fmt.Errorf("rule without operation: %s", f)
		}
		for ; i < len(f.kids); i++ {
			k := f.kids[i]
			if k.kind != listNode {
				return nil, fmt.Errorf("operation %s after a filter in %s", k, f)
			}
			if err := checkFilter(k, values, used); err != nil {
				return nil, fmt.Errorf("%w in %s", err, f)
			}
			ru.filters = append(ru.filters, k)
		}
		if len(ru.filters) == 0 && (ru.action != "allow" || len(ru.ops) != 1 || !slices.Contains(unconditional, ru.ops[0])) {
			return nil, fmt.Errorf("unfiltered rule: %s", f)
		}
		rules = append(rules, ru)
	}
	for name := range values {
		if !used[name] {
			return nil, fmt.Errorf("parameter %s is never referenced", name)
		}
	}
	return rules, nil
}

// checkFilter validates n and replaces (param "X") forms in it, in place,
// by X's value.
func checkFilter(n *node, values map[string]string, used map[string]bool) error {
	if len(n.kids) == 0 || n.kids[0].kind != symbolNode || !slices.Contains(knownFilters, n.kids[0].text) {
		return fmt.Errorf("unknown filter %s", n)
	}
	head := n.kids[0].text
	if head == "param" {
		return fmt.Errorf("bare param %s", n)
	}
	if len(n.kids) < 2 {
		return fmt.Errorf("filter without argument %s", n)
	}
	for i, k := range n.kids[1:] {
		switch k.kind {
		case symbolNode:
			if !slices.Contains(knownSymbols, k.text) {
				return fmt.Errorf("unknown symbol %q", k.text)
			}
		case listNode:
			if len(k.kids) > 0 && k.kids[0].kind == symbolNode && k.kids[0].text == "param" {
				if len(k.kids) != 2 || k.kids[1].kind != stringNode {
					return fmt.Errorf("malformed %s", k)
				}
				name := k.kids[1].text
				v, ok := values[name]
				if !ok {
					return fmt.Errorf("undefined parameter %q", name)
				}
				used[name] = true
				n.kids[i+1] = &node{kind: stringNode, text: v, param: name}
				continue
			}
			if err := checkFilter(k, values, used); err != nil {
				return err
			}
		}
	}
	return nil
}

// grant is one (action, operation, filter) triple with the filter's path
// flattened: `allow network-outbound remote unix-socket subpath` + value.
type grant struct {
	Action, Op, Filter, Value string
	Param                     bool
}

func (g grant) String() string {
	return fmt.Sprintf("%s %s (%s %q)", g.Action, g.Op, g.Filter, g.Value)
}

// grants flattens rules into one grant per operation and filter.
func grants(rules []rule) []grant {
	var out []grant
	for _, ru := range rules {
		for _, op := range ru.ops {
			if len(ru.filters) == 0 {
				out = append(out, grant{Action: ru.action, Op: op})
			}
			for _, f := range ru.filters {
				path, leaf := flatten(f)
				out = append(out, grant{Action: ru.action, Op: op, Filter: path, Value: leaf.text, Param: leaf.param != ""})
			}
		}
	}
	return out
}

// flatten turns (remote unix-socket (subpath "x")) into
// "remote unix-socket subpath" and the "x" node.
func flatten(f *node) (string, *node) {
	var words []string
	for {
		words = append(words, f.kids[0].text)
		var next *node
		for _, k := range f.kids[1:] {
			switch k.kind {
			case symbolNode:
				words = append(words, k.text)
			case listNode:
				next = k
			default:
				return strings.Join(words, " "), k
			}
		}
		if next == nil {
			return strings.Join(words, " "), &node{kind: symbolNode, text: words[len(words)-1]}
		}
		f = next
	}
}
