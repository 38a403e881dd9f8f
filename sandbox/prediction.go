package sandbox

import (
	"path"
	"slices"
	"strings"
)

// Prediction is what the analysis of a request predicts it may do: the
// programs it may execute and the paths it may write. A request that is
// pre-approved because of it runs under a filter that holds every exec
// and every write-like call outside it (SPEC §3, "Run-time
// verification"). Reads are not part of it.
//
// An exec matches an Exec when the file executed, resolved as the kernel
// resolves it (in the caller's root and working directory, every symlink
// followed), is one of its Paths, the base name of argv[0] is its Name
// (a multi-call program such as busybox or git's hard links acts by the
// name it is called by) and argv[1:] matches Args. An exec of a path
// where no file exists (execvp and dash try each PATH directory in turn)
// runs nothing: the filter answers ENOENT itself, without letting the
// call continue, whatever the prediction says.
//
// A write-like call matches a Write when its operation is one of Ops and
// the path it acts on matches Path. The path is resolved in the caller's
// root and working directory (or the directory descriptor it names), with
// every symlink before the last component followed; the last component
// is followed only where the call follows it (an open without
// O_NOFOLLOW), as the kernel does. Where a predicted path is a symlink,
// the prediction holds both the link and what it leads to.
type Prediction struct {
	// Bounded is set when the analysis bounded every part of the
	// request: each program known, with known options, and every write
	// predicted. Only a bounded prediction of a pre-approved request is
	// verified at run time; Unbounded says why a prediction is not.
	Bounded   bool   `json:"bounded"`
	Unbounded string `json:"unbounded,omitempty"`
	// Exec are the programs the request may execute. The first is the
	// script's shell (`bash -c SCRIPT`), when the request is a script.
	Exec []Exec `json:"may_exec"`
	// Write are the paths it may write, create, rename, link, delete or
	// change the metadata of.
	Write []Write `json:"may_write"`
	// TempDirs are directories where every write is allowed: the
	// command's own $TMPDIR, the sandbox's private /tmp.
	TempDirs []string `json:"temp_dirs,omitempty"`
}

// Exec is one program a request may execute.
type Exec struct {
	// Name is the program's name: the base name argv[0] has. A helper's
	// Name may be a pattern (path.Match: "git-*").
	Name string `json:"name"`
	// Paths are the files the name resolves to (as found in PATH, and
	// with its symlinks resolved), absolute; the last element may be a
	// pattern. Empty when the analysis could not resolve it; such an
	// exec is never bounded.
	Paths []string `json:"paths,omitempty"`
	// Args are the arguments after argv[0], words known only at run
	// time standing as wildcards.
	Args []Arg `json:"args"`
	// Helper, when set, says why the program runs although no part of
	// the request names it: a command runs it by itself (git's pager,
	// tar -z's gzip), as its command-semantics row declares.
	Helper string `json:"helper,omitempty"`
}

// ArgKind is what one element of an argument pattern matches.
type ArgKind string

const (
	// ArgWord matches exactly the word Value.
	ArgWord ArgKind = "word"
	// ArgAny matches one word that starts with Value (the static prefix
	// of a word with a run-time part, "$x" or "pre$x").
	ArgAny ArgKind = "any"
	// ArgMany matches any number of words, none included: "$@", an
	// unquoted expansion, a glob, what xargs appends. When Value is set,
	// each word matches it as a pattern (path.Match) or equals it (a
	// glob that matches no file stays as written).
	ArgMany ArgKind = "many"
)

// Arg is one element of an argument pattern.
type Arg struct {
	Kind  ArgKind `json:"kind"`
	Value string  `json:"value,omitempty"`
}

// WriteOp is a kind of write-like call.
type WriteOp string

const (
	// OpWrite: an open for writing, creating or truncating (open,
	// openat, openat2, creat, truncate), and the new name of a rename,
	// link or symlink, or a mknod: the content at the path changes or a
	// name appears there.
	OpWrite WriteOp = "write"
	// OpMkdir: mkdir, mkdirat.
	OpMkdir WriteOp = "mkdir"
	// OpDelete: unlink, unlinkat, rmdir, and the old name of a rename.
	OpDelete WriteOp = "delete"
	// OpMetadata: chmod, chown, utimes, the xattr calls, file_setattr.
	OpMetadata WriteOp = "metadata"
)

// MatchKind is how a Write's Path matches.
type MatchKind string

const (
	// MatchExact (empty): the path itself.
	MatchExact MatchKind = ""
	// MatchTree: the path and everything below it.
	MatchTree MatchKind = "tree"
	// MatchGlob: Path is a pattern (path.Match, so * stays within one
	// component).
	MatchGlob MatchKind = "glob"
)

// Write is a path, tree or pattern a request may write.
type Write struct {
	Path  string    `json:"path"`
	Match MatchKind `json:"match,omitempty"`
	Ops   []WriteOp `json:"ops"`
	// Why says which part or which program writes it.
	Why string `json:"why,omitempty"`
}

// AlwaysWritable are the paths any command may write: they hold no
// file (/dev/null, /dev/zero, /dev/full) or are the terminal. Pipes and
// sockets are descriptors, not paths; a reopen of one through
// /proc/self/fd/N is a write to the pipe.
var AlwaysWritable = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

// terminals holds the pseudo-terminals a command may write.
const terminals = "/dev/pts"

// AllowsExec reports whether running the file at resolved (absolute,
// symlinks resolved) with argv is predicted.
func (p *Prediction) AllowsExec(resolved string, argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	name := path.Base(argv[0])
	for _, x := range p.Exec {
		if x.Matches(resolved, name, argv[1:]) {
			return true
		}
	}
	return false
}

// Matches reports whether running the file at resolved, called name,
// with args is this Exec.
func (x Exec) Matches(resolved, name string, args []string) bool {
	if ok, err := path.Match(x.Name, name); !ok || err != nil {
		return false
	}
	found := false
	for _, p := range x.Paths {
		if ok, err := path.Match(p, resolved); ok && err == nil {
			found = true
			break
		}
	}
	return found && MatchArgs(x.Args, args)
}

// MatchArgs reports whether args match the pattern.
func MatchArgs(pattern []Arg, args []string) bool {
	if len(pattern) == 0 {
		return len(args) == 0
	}
	a := pattern[0]
	switch a.Kind {
	case ArgWord:
		return len(args) > 0 && args[0] == a.Value && MatchArgs(pattern[1:], args[1:])
	case ArgAny:
		return len(args) > 0 && strings.HasPrefix(args[0], a.Value) && MatchArgs(pattern[1:], args[1:])
	case ArgMany:
		// Consecutive wildcards without a value match what one does.
		rest := pattern[1:]
		for len(rest) > 0 && rest[0].Kind == ArgMany && rest[0].Value == "" && a.Value == "" {
			rest = rest[1:]
		}
		for i := 0; i <= len(args); i++ {
			if MatchArgs(rest, args[i:]) {
				return true
			}
			if i < len(args) && !manyWord(a.Value, args[i]) {
				return false
			}
		}
		return false
	}
	return false
}

func manyWord(pattern, w string) bool {
	if pattern == "" || w == pattern {
		return true
	}
	ok, err := path.Match(pattern, w)
	return ok && err == nil
}

// AllowsWrite reports whether op on the path (absolute, resolved as the
// call resolves it) is predicted, or always allowed.
func (p *Prediction) AllowsWrite(op WriteOp, resolved string) bool {
	if slices.Contains(AlwaysWritable, resolved) && op == OpWrite || Within(resolved, terminals) && op == OpWrite {
		return true
	}
	for _, d := range p.TempDirs {
		if Within(resolved, d) && resolved != d {
			return true
		}
	}
	for _, w := range p.Write {
		if w.Matches(op, resolved) {
			return true
		}
	}
	return false
}

// Matches reports whether op on the resolved path is this Write.
func (w Write) Matches(op WriteOp, resolved string) bool {
	if !slices.Contains(w.Ops, op) {
		return false
	}
	switch w.Match {
	case MatchTree:
		return Within(resolved, w.Path)
	case MatchGlob:
		ok, err := path.Match(w.Path, resolved)
		return ok && err == nil
	}
	return resolved == w.Path
}
