package shellparse

import (
	"path"
	"strings"
)

// What a script executes. The shell that reads the script is the first
// program (guardrun runs `bash -c SCRIPT`). For each simple command it
// forks, and the child execs the program, unless the command is a
// builtin or a function, which the shell runs itself; the last command
// of a `bash -c` string may be exec'd without a fork, and `exec CMD`
// execs CMD in place of the shell. Pipelines, subshells, $(...), <(...)
// and the like fork without an exec: only the simple commands inside
// them exec. A program that runs another (env, nice, timeout, xargs,
// find -exec) execs it itself, so a builtin's name there names a
// program.

// Execs reports whether running c execs a program: false for a builtin
// or keyword the shell runs itself (echo, cd, test, read, command,
// exec ...), true for every other command, and for a builtin's name that
// a program (Command.ByProgram) or the exec builtin starts. A name known
// only at run time may name a program.
func (c Command) Execs() bool {
	if len(c.Argv) == 0 {
		return false
	}
	w := c.Argv[0]
	if !w.Static() || strings.Contains(w.Value, "/") || c.ByProgram {
		return true
	}
	if n := len(c.Via); n > 0 && c.Via[n-1] == "exec" {
		// exec never runs a builtin: `exec echo` runs /bin/echo.
		return true
	}
	return !Builtin(w.Value)
}

// Builtin reports whether bash runs name itself, without an exec.
func Builtin(name string) bool { return bashBuiltins[name] }

// bashBuiltins are bash's builtin commands (`enable -a`) and the
// keywords a command name can be.
var bashBuiltins = map[string]bool{
	".": true, ":": true, "[": true, "alias": true, "bg": true, "bind": true, "break": true,
	"builtin": true, "caller": true, "cd": true, "command": true, "compgen": true, "complete": true,
	"compopt": true, "continue": true, "declare": true, "dirs": true, "disown": true, "echo": true,
	"enable": true, "eval": true, "exec": true, "exit": true, "export": true, "false": true,
	"fc": true, "fg": true, "getopts": true, "hash": true, "help": true, "history": true,
	"jobs": true, "kill": true, "let": true, "local": true, "logout": true, "mapfile": true,
	"popd": true, "printf": true, "pushd": true, "pwd": true, "read": true, "readarray": true,
	"readonly": true, "return": true, "set": true, "shift": true, "shopt": true, "source": true,
	"suspend": true, "test": true, "times": true, "trap": true, "true": true, "type": true,
	"typeset": true, "ulimit": true, "umask": true, "unalias": true, "unset": true, "wait": true,
	"coproc": true, "nameref": true,
}

// GlobPattern returns a word's pathname-expansion pattern in path.Match
// notation, when it has one that notation can express: [!x] becomes
// [^x]; character classes ([[:alpha:]]) and extended globs cannot be
// written and report false. Quoted glob characters in the word are read
// as pattern characters too, so the pattern may match more than bash
// would, never less.
func GlobPattern(w Word) (string, bool) {
	if !w.Glob || w.Dynamic || w.Split {
		return "", false
	}
	v := w.Value
	if strings.Contains(v, "[:") || strings.Contains(v, "[=") || strings.Contains(v, "[.") || strings.ContainsAny(v, `\`) {
		return "", false
	}
	for _, x := range []string{"@(", "!(", "+(", "*(", "?("} {
		if strings.Contains(v, x) {
			return "", false
		}
	}
	v = strings.ReplaceAll(v, "[!", "[^")
	if _, err := path.Match(v, ""); err != nil {
		return "", false
	}
	return v, true
}
