package sandbox

import (
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Prediction is what the analysis of a request says the request may do
// at run time: the programs it may execute, with the arguments each may
// run with, and the paths it may write, create, rename, link, delete or
// change the metadata of. It is plain data, filled by the policy layer
// (shellparse, cmdsem, rules: one Exec per command a part runs, one Path
// per file a part writes) and shown by explain --json as may_exec and
// may_write.
//
// A request pre-approved because of its prediction runs verified: the
// backend routes every exec and every write-like system call of the
// command to guardrun (seccomp user notification), which lets through
// what the prediction allows (and what is always allowed: /dev/null, the
// terminal, pipes, the command's own temporary directory) and holds the
// rest (HeldCall). Reads, the network and the content written to a
// predicted path are not verified; the profile bounds them as it bounds
// every command.
//
// The zero value predicts nothing: every exec and every write is held.
// The script's own shell (bash -c SCRIPT, the request's first exec) must
// be one of Exec like any other program.
type Prediction struct {
	// Exec are the programs the request may execute.
	Exec []Exec `json:"may_exec,omitempty"`
	// Write are the paths the request may write, create, rename, link,
	// delete or change the metadata of.
	Write []PathPattern `json:"may_write,omitempty"`
}

// Exec is one program a request may execute and the arguments it may
// run with.
type Exec struct {
	// Program names the file executed: a base name ("sed"), matched
	// against the last component of the path the program is executed
	// by (/usr/bin/sed, /bin/sed), or an absolute, clean path
	// ("/usr/bin/sed"), matched against that path made absolute or
	// against the file it resolves to. Verification lets a program run
	// only from a tree the command cannot write (system directories, a
	// read-only zone), whatever its name: a predicted name in a
	// writable tree is held.
	Program string `json:"program"`
	// Args are the arguments after the program's name (argv[1:]), one
	// Word each. argv[0] itself is not compared: shells and wrappers
	// pass the name they were given.
	Args []Word `json:"args,omitempty"`
	// AnyArgs matches every argv: a helper program the part's
	// command-semantics row declares it runs (git's git-* programs,
	// gzip for tar -z, a pager), whose arguments the analysis does not
	// know. Args is then ignored.
	AnyArgs bool `json:"any_args,omitempty"`
	// Part is the part of the request the program belongs to, as the
	// person is shown it ("sed -n p file"): the run-time message names
	// it when that program makes a call the prediction does not allow.
	Part string `json:"part,omitempty"`
}

// Word is one predicted argument: a literal word, or a word known only
// at run time (a variable, a command substitution, a glob, what xargs
// appends).
type Word struct {
	// Text is the word itself; with Glob, a pattern the word must match
	// (path.Match syntax: '*' and '?' do not match '/').
	Text string `json:"text,omitempty"`
	// Glob makes Text a pattern.
	Glob bool `json:"glob,omitempty"`
	// Any is a word that can be anything (Text is ignored).
	Any bool `json:"any,omitempty"`
	// Many stands for zero or more words, each matching this one (Any,
	// Glob or the literal Text): an unquoted expansion that splits, a
	// glob that expands to several names, the names xargs or find -exec
	// {} + append.
	Many bool `json:"many,omitempty"`
}

// PathPattern is one path, or set of paths, a request may change.
type PathPattern struct {
	// Path is an absolute, clean path, as the analysis resolved it (the
	// way the kernel resolves it: each symbolic link before the ".."
	// that follows it); with Glob, a pattern in path.Match syntax over
	// such paths ('*' and '?' do not match '/').
	Path string `json:"path"`
	// Glob makes Path a pattern.
	Glob bool `json:"glob,omitempty"`
	// Tree matches the path (or each path Glob matches) and everything
	// beneath it: the destination of cp -r, what rm -r removes, mkdir -p.
	Tree bool `json:"tree,omitempty"`
	// Part is the part of the request the write belongs to, as the
	// person is shown it.
	Part string `json:"part,omitempty"`
}

// HeldCall is a call of a verified request that its prediction does not
// allow, as guardrun holds it: the caller waits in the system call while
// the approval gate is asked (an interactive prompt), and the call is
// made if the answer allows it; otherwise it fails with EPERM and the
// request ends refused (exit 77). Every held call is recorded with its
// answer.
type HeldCall struct {
	// Kind is what the call would do: HeldExec, HeldWrite, HeldCreate,
	// HeldRemove, HeldRename, HeldLink or HeldMetadata.
	Kind string `json:"kind"`
	// By is the part of the request that made the call (Exec.Part of
	// the program the caller runs), or, when guardrun cannot tell, the
	// caller's own command line.
	By string `json:"by"`
	// Program and Argv are, for HeldExec, what the caller asked to run:
	// the path as it was given (made absolute) and the whole argv.
	Program string   `json:"program,omitempty"`
	Argv    []string `json:"argv,omitempty"`
	// Path is, for the other kinds, the path the call changes (for a
	// rename or link, its destination), resolved as the kernel resolved
	// it; Source is a rename's or link's source.
	Path   string `json:"path,omitempty"`
	Source string `json:"source,omitempty"`
	// Pid is the caller's process id as guardrun sees it.
	Pid int `json:"pid"`
	// Allowed is the answer; Reason says why the call was refused
	// without asking when it was (a multi-threaded caller's exec, no one
	// to ask) or what the gate answered.
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason,omitempty"`
}

// The kinds of HeldCall.
const (
	HeldExec     = "exec"
	HeldWrite    = "write"
	HeldCreate   = "create"
	HeldRemove   = "remove"
	HeldRename   = "rename"
	HeldLink     = "link"
	HeldMetadata = "metadata"
)

// MatchExec reports which Exec allows running the program executed by
// path (the path as the caller gave it, made absolute) or real (the
// file it resolves to) with argv (argv[0] included, and not compared).
func (p *Prediction) MatchExec(path, real string, argv []string) (Exec, bool) {
	if p == nil {
		return Exec{}, false
	}
	var args []string
	if len(argv) > 0 {
		args = argv[1:]
	}
	for _, e := range p.Exec {
		if !e.matchesProgram(path, real) {
			continue
		}
		if e.AnyArgs || matchWords(e.Args, args) {
			return e, true
		}
	}
	return Exec{}, false
}

func (e Exec) matchesProgram(path, real string) bool {
	if e.Program == "" {
		return false
	}
	if strings.HasPrefix(e.Program, "/") {
		return e.Program == path || e.Program == real
	}
	return !strings.Contains(e.Program, "/") && baseName(path) == e.Program
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// matchWords reports whether args match pats, a Many word taking zero or
// more arguments that each match it. One row of booleans per pattern
// word over the arguments: at most len(pats) times len(args) steps,
// whatever the patterns (a greedy walk that only backs up to the last
// Many is wrong once a Many constrains what it takes).
func matchWords(pats []Word, args []string) bool {
	// ok[j]: the patterns so far match args[:j].
	ok := make([]bool, len(args)+1)
	ok[0] = true
	for _, p := range pats {
		if p.Many {
			// Zero words, or one more after a match.
			for j := 1; j <= len(args); j++ {
				ok[j] = ok[j] || ok[j-1] && p.matches(args[j-1])
			}
			continue
		}
		for j := len(args); j >= 1; j-- {
			ok[j] = ok[j-1] && p.matches(args[j-1])
		}
		ok[0] = false
	}
	return ok[len(args)]
}

func (w Word) matches(s string) bool {
	switch {
	case w.Any:
		return true
	case w.Glob:
		ok, err := path.Match(w.Text, s)
		return ok && err == nil
	}
	return w.Text == s
}

// MatchWrite reports which PathPattern allows changing the file at p,
// an absolute, clean path with no symbolic links in it. A relative or
// unclean path matches nothing.
func (pr *Prediction) MatchWrite(p string) (PathPattern, bool) {
	if pr == nil || !strings.HasPrefix(p, "/") || path.Clean(p) != p {
		return PathPattern{}, false
	}
	for _, w := range pr.Write {
		if w.matches(p) {
			return w, true
		}
	}
	return PathPattern{}, false
}

func (w PathPattern) matches(p string) bool {
	one := func(x string) bool {
		if !w.Glob {
			return x == w.Path
		}
		ok, err := path.Match(w.Path, x)
		return ok && err == nil
	}
	if one(p) {
		return true
	}
	if !w.Tree {
		return false
	}
	// Every ancestor of p, by component.
	for x := p; x != "/"; {
		x = path.Dir(x)
		if one(x) {
			return true
		}
	}
	return false
}

// Line is the one line guardrun prints for a call the prediction did not
// allow, which the agent reads: what made it, what it wanted, and that
// the analysis did not predict it. quote shows an argv as the person's
// shell would read it back (nil: each word quoted if it needs it, for
// sh).
func (h HeldCall) Line(quote func([]string) string) string {
	if quote == nil {
		quote = QuoteSh
	}
	var want string
	switch h.Kind {
	case HeldExec:
		argv := h.Argv
		if len(argv) == 0 {
			argv = []string{h.Program}
		}
		want = "run " + quote(argv)
	case HeldWrite:
		want = "write " + quote([]string{h.Path})
	case HeldCreate:
		want = "create " + quote([]string{h.Path})
	case HeldRemove:
		want = "remove " + quote([]string{h.Path})
	case HeldRename:
		want = "rename " + quote([]string{h.Source}) + " to " + quote([]string{h.Path})
	case HeldLink:
		want = "link " + quote([]string{h.Source}) + " to " + quote([]string{h.Path})
	case HeldMetadata:
		want = "change the metadata of " + quote([]string{h.Path})
	default:
		want = h.Kind + " " + quote([]string{h.Path})
	}
	by := h.By
	if by == "" {
		by = "the command"
	}
	line := "guardrun: refused at run time: " + by + " wants to " + want + ", which the analysis did not predict"
	if h.Reason != "" {
		line += " (" + h.Reason + ")"
	}
	return line
}

// QuoteSh quotes each word for sh when it needs it: single quotes, with
// a quote inside closed, escaped and reopened. Control characters are shown escaped, as
// Go does, so that nothing in the line can move the cursor.
func QuoteSh(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = quoteWord(a)
	}
	return strings.Join(out, " ")
}

func quoteWord(a string) string {
	if a == "" {
		return "''"
	}
	plain := true
	for _, r := range a {
		switch {
		case r < 0x20 || r == 0x7f || !utf8.ValidRune(r) || r == utf8.RuneError:
			return strconv.Quote(a)
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("-_./=:,+@%", r):
		default:
			plain = false
		}
	}
	if plain {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}
