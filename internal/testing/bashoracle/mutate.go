package bashoracle

import (
	"strings"
)

// Mutate derives a script from seed, steered by ops: each pair of bytes
// picks a grammar-aware change (a construct wrapped around part of the
// script, an operator or special byte sequence inserted between tokens,
// a command name respelled, another seed spliced in) and where it
// applies. The same inputs always give the same script.
func Mutate(seed string, ops []byte) string {
	s := seed
	for i := 0; i+1 < len(ops) && i < 16; i += 2 {
		s = mutateOnce(s, ops[i], ops[i+1])
		if len(s) > 4096 {
			break
		}
	}
	return s
}

// wrappers put code inside a construct; %s is the code.
var wrappers = []string{
	"$(%s)", "`%s`", "echo \"$(%s)\"", "sh -c '%s'", "bash -c '%s'", "eval '%s'",
	"f() { %s; }; f", "( %s )", "{ %s; }", "if true; then %s; fi", "true && %s",
	"%s | cat", "echo x | %s", "while false; do :; done; %s", "case x in x) %s;; esac",
	"cat <(%s)", "echo $( (%s) )", "echo $((%s))", "x=$(%s); echo \"$x\"", "%s\n",
	"env %s", "command %s", "time %s", "nice %s", "timeout 5 %s", "builtin %s",
	"sh -c \"%s\"", "bash -c \"%s\"", "eval \"%s\"", "trap '%s' EXIT", "echo ${x:-$(%s)}",
	"bash -c $'%s'", "exec %s",
}

// pieces are inserted between tokens or at a byte offset.
var pieces = []string{
	";", "&&", "||", "|", "&", "\n", "\r", "\\\n", "#", "'", "\"", "$", "$(", ")", "`",
	"{", "}", "(", "((", "$((", "))", "<<EOF\n", "\nEOF\n", "\nEOF)\n", "<<'EOF'\n",
	"<<<", ">", ">>", "2>&1", "<(", ">(", "{,", ",}", "$'", "\\", "=", "[", "]", "[[ ", " ]]",
	" touch p ", " rm -rf x ", " curl x ", "; touch p", "\ntouch p\n", "$(touch p)",
	"`touch p`", "IFS=/ ", "PATH=. ", "BASH_CMDS[ls]=/usr/bin/touch ", "a[$(touch p)]",
	"'a[$(touch p)]'", "set -k; ", "shopt -s expand_aliases; ", "alias ls='touch p;'\n",
	"POSIXLY_CORRECT=1; ", "x=-v; ", "printf $x ", "\x00", "\xff", "\t", " ", "\\\n(",
	"${x:=", "${!", "@P}", "$\"", "!", "coproc ", "{x}>", "declare ", "read ", "let ",
}

// names respell a command name.
var names = []string{
	"\\%s", "'%s'", "\"%s\"", "/usr/bin/%s", "$'%s'", "%s''", "{%s,}", "{,%s}", "%s\\\n",
	"command %s", "env %s", "\"$(echo %s)\"", "${x:-%s}",
}

func pick[T any](l []T, b byte) T { return l[int(b)%len(l)] }

func mutateOnce(s string, op, arg byte) string {
	toks := tokens(s)
	at := 0
	if len(toks) > 0 {
		at = int(arg) % (len(toks) + 1)
	}
	switch op % 6 {
	case 0: // wrap a suffix of tokens in a construct
		w := pick(wrappers, op/6+arg)
		head, tail := strings.Join(toks[:at], ""), strings.Join(toks[at:], "")
		if strings.Contains(w, "'") {
			tail = strings.ReplaceAll(tail, "'", `'\''`)
		}
		return head + strings.Replace(w, "%s", tail, 1)
	case 1: // insert a piece between tokens
		p := pick(pieces, op/6+arg*7)
		return strings.Join(toks[:at], "") + p + strings.Join(toks[at:], "")
	case 2: // insert a piece at a byte offset
		p := pick(pieces, op/6+arg*3)
		i := 0
		if len(s) > 0 {
			i = int(arg) % (len(s) + 1)
		}
		return s[:i] + p + s[i:]
	case 3: // respell a word
		if len(toks) == 0 {
			return s
		}
		i := int(arg) % len(toks)
		if strings.TrimSpace(toks[i]) == "" {
			return s
		}
		toks[i] = strings.Replace(pick(names, op/6), "%s", toks[i], 1)
		return strings.Join(toks, "")
	case 4: // splice another seed in
		other := pick(Seeds, arg)
		sep := pick([]string{"; ", "\n", " && ", " | ", " "}, op/6)
		if op&64 != 0 {
			return other + sep + s
		}
		return s + sep + other
	default: // drop a token
		if len(toks) == 0 {
			return s
		}
		i := int(arg) % len(toks)
		return strings.Join(toks[:i], "") + strings.Join(toks[i+1:], "")
	}
}

// tokens splits s into runs of blanks, runs of operator characters and
// runs of everything else, so that joining them gives s back.
func tokens(s string) []string {
	var out []string
	class := func(c byte) int {
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			return 0
		case strings.IndexByte(";&|()<>`$", c) >= 0:
			return 1
		}
		return 2
	}
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && class(s[j]) == class(s[i]) {
			j++
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}
