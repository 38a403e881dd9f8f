package sandbox

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
