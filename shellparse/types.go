package shellparse

import (
	"fmt"

	"mvdan.cc/sh/v3/syntax"
)

// Pos is a position in the analysed source, 1-based like the parser's.
// Commands found inside nested code (a `bash -c` string, an eval argument,
// a heredoc fed to a shell) carry the position of the outer word that holds
// that code, so a position always points into the text the person wrote.
type Pos struct {
	Offset uint `json:"offset"`
	Line   uint `json:"line"`
	Col    uint `json:"col"`
}

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Word is one argv word as bash would see it after quote removal and brace
// expansion.
type Word struct {
	// Value is the word after quote removal, with ANSI-C escapes decoded and
	// a leading ~ expanded when Options.Home is set. For a dynamic word it
	// holds the static prefix only; never trust it as the whole value.
	Value string `json:"value"`
	// Source is the word as written in the script.
	Source string `json:"source"`
	// Dynamic is set when the value depends on run-time state: a parameter,
	// command, arithmetic or process substitution anywhere in the word.
	Dynamic bool `json:"dynamic,omitempty"`
	// Glob is set when the word holds unquoted pathname-expansion
	// characters (*, ?, [, extglob), so bash may replace it with file names.
	Glob bool `json:"glob,omitempty"`
	// Split is set when an unquoted expansion may turn the word into zero
	// or several words, so positions after it are not known statically.
	Split bool `json:"split,omitempty"`
	Pos   Pos  `json:"pos"`
}

// Static reports whether the word's value is fully known before running.
func (w Word) Static() bool { return !w.Dynamic && !w.Glob && !w.Split }

// Assign is a NAME=value (or NAME+=value, or an array assignment) that
// prefixes a command or stands alone.
type Assign struct {
	Name  string `json:"name"`
	Value Word   `json:"value"`
	Pos   Pos    `json:"pos"`
}

// Command is one simple command that bash could run.
type Command struct {
	// Argv is the command as bash would execute it: quote removal and brace
	// expansion done, the command name as written (path not stripped).
	Argv []Word `json:"argv"`
	// Assigns are the assignments written before the command (or passed
	// through env VAR=value).
	Assigns []Assign `json:"assigns,omitempty"`
	// Wrapper is set when this command only runs another one (env, nice,
	// timeout, xargs, find -exec, sudo, sh -c ...). The wrapped command is
	// reported as its own Command right after this one. Policy judges a
	// wrapper only where a rule names it.
	Wrapper bool `json:"wrapper,omitempty"`
	// ArgsFromInput is set when more arguments are supplied at run time
	// (xargs appends from stdin, find -exec substitutes file names).
	ArgsFromInput bool `json:"args_from_input,omitempty"`
	// Replace is the string xargs -I or find -exec replaces with input in
	// the command's words; "" when xargs appends its input instead.
	Replace string `json:"replace,omitempty"`
	// ByProgram is set when a program starts the command (env, nice,
	// timeout, xargs, find -exec, ...: they exec it) rather than the
	// shell, which runs its builtins and functions without an exec.
	ByProgram bool `json:"by_program,omitempty"`
	// Via says how the command was reached, outermost first, for example
	// "$(...)", "bash -c", "find -exec", "trap", "function f". Empty for a
	// command written directly at top level.
	Via []string `json:"via,omitempty"`
	// Text is the source text of the command (for nested code, the text of
	// the nested command).
	Text string `json:"text"`
	Pos  Pos    `json:"pos"`
	// Dir is the working directory the command runs in.
	Dir Dir `json:"dir,omitempty"`
	// Fds are the descriptors the script bound for this command (its own
	// redirections, enclosing ones, pipes), innermost first.
	Fds []Binding `json:"fds,omitempty"`
	// Script is the file a shell runs as its script (bash x.sh): code
	// guardrun does not read, which policy judges by where it lies and
	// never pre-approves as a command's mere argument. Nil for a shell
	// given -c or -s or reading its input, and for other commands.
	Script *Word `json:"script,omitempty"`
}

// Name returns the command name with any directory stripped ("/bin/rm" ->
// "rm"), or "" for an empty argv.
func (c Command) Name() string {
	if len(c.Argv) == 0 {
		return ""
	}
	v := c.Argv[0].Value
	for i := len(v) - 1; i >= 0; i-- {
		if v[i] == '/' {
			return v[i+1:]
		}
	}
	return v
}

// Op is a kind of file operation.
type Op string

const (
	OpRead   Op = "read"
	OpWrite  Op = "write"
	OpDelete Op = "delete"
)

// FileOp is a file the script touches through a redirection.
type FileOp struct {
	Op   Op   `json:"op"`
	Path Word `json:"path"`
	// Fd is the file descriptor redirected (1 for `>`, 0 for `<`, ...).
	Fd   int      `json:"fd"`
	Via  []string `json:"via,omitempty"`
	Text string   `json:"text"`
	Pos  Pos      `json:"pos"`
	// Dir is the working directory the path is relative to.
	Dir Dir `json:"dir,omitempty"`
	// Bound is set when Path names a descriptor (/dev/stdout,
	// /dev/fd/N, /proc/self/fd/N): what the script bound it to, or Kind
	// "unbound".
	Bound *Binding `json:"bound,omitempty"`
}

// Severity is how a Finding must be treated by policy.
type Severity string

const (
	// Ask: cannot be known statically, so a person must approve it.
	Ask Severity = "ask"
	// Block: guardrun cannot read it (nested code that does not parse,
	// nesting too deep), so it never runs.
	Block Severity = "block"
)

// Finding is something in the script that policy must not pre-approve,
// independent of any rule: a dynamic command name, eval of non-literal
// text, a shell reading code from stdin (or a script file named at run
// time; see Command.Script), an assignment to PATH,
// LD_*, BASH_ENV, ENV, IFS and the like, nested code that does not parse.
type Finding struct {
	Severity Severity `json:"severity"`
	Reason   string   `json:"reason"`
	Text     string   `json:"text"`
	Via      []string `json:"via,omitempty"`
	Pos      Pos      `json:"pos"`
}

// Script is everything found in one piece of shell code.
type Script struct {
	Commands []Command `json:"commands"`
	Files    []FileOp  `json:"files"`
	Findings []Finding `json:"findings"`
	// Feeds is the text the script feeds its commands from itself, in
	// the order the parser of its dialect met it: each here-document as
	// "heredoc " and its operator and delimiter as written, a newline
	// and its body; each here-string as "herestring " and its word as
	// written. The commands that read it are in Commands; what they do
	// with it (python3 - <<'EOF') is not, so a session grant for the
	// script must cover it.
	Feeds []string `json:"feeds,omitempty"`
	// single is the script's one statement, when it has exactly one
	// (Carry reads it).
	single *syntax.Stmt
}

// Options controls analysis.
type Options struct {
	// Dialect is the grammar; the zero value means bash.
	Dialect syntax.LangVariant
	// Home, when set, is used to expand a leading ~ or ~/ in words.
	Home string
	// MaxDepth bounds recursion into nested code (sh -c strings, eval,
	// trap, heredocs to shells, ...). Zero means 8. Deeper code is a Block
	// finding.
	MaxDepth int
}

// ParseError is a script that does not parse.
type ParseError struct {
	Pos Pos
	Msg string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s: %s", e.Pos, e.Msg) }
