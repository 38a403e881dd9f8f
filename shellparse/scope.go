package shellparse

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Dir is the working directory a command or file operation runs in, as
// the changes the script made before it: the script's starting directory
// followed by each cd, pushd and popd that may have happened. Policy
// resolves it against the real starting directory.
type Dir struct {
	// Steps are the directory changes in force, oldest first.
	Steps []DirStep `json:"steps,omitempty"`
	// Unknown, when set, says why the directory cannot be known before
	// running (a cd to a run-time value, cd -, a function that changes
	// directory, a cd in a loop); relative paths then cannot be judged.
	Unknown string `json:"unknown,omitempty"`
}

// DirStep is one directory change.
type DirStep struct {
	// Path is the cd operand, ~ already expanded.
	Path string `json:"path"`
	// Physical is cd -P: symlinks are followed before `..`. Otherwise
	// bash (cd -L) cleans `..` lexically against the logical directory,
	// and falls back to the physical reading when that fails.
	Physical bool `json:"physical,omitempty"`
	// Certain is set when the change surely happened before the command
	// (`cd x && cmd`); otherwise the cd may have failed and left the
	// directory where it was.
	Certain bool `json:"certain,omitempty"`
}

// Binding is what the script bound a file descriptor to with its own
// redirections (or a pipe), as seen by a command or redirection.
type Binding struct {
	Fd int `json:"fd"`
	// Kind is "file", "pipe" (a pipeline, here-document or here-string),
	// "closed", or "unknown" (a target only known at run time).
	Kind string `json:"kind"`
	// Op, Path and Dir describe a file binding: how it was opened, the
	// target as written and the directory it was opened in.
	Op   Op   `json:"op,omitempty"`
	Path Word `json:"path,omitempty"`
	Dir  Dir  `json:"dir,omitempty"`
}

// scope is the shell state that decides where paths lead: the working
// directory (shared by the statements of one shell process) and the
// descriptors bound by enclosing redirections.
type scope struct {
	parent *scope
	fds    []Binding
	dir    *dirState
}

type dirState struct {
	steps   []DirStep
	unknown string
	stack   [][]DirStep
	loop    int // nesting of loop bodies being walked
}

func newScope() *scope { return &scope{dir: &dirState{}} }

// child is a scope for a statement's redirections: same process, same
// directory.
func (s *scope) child() *scope { return &scope{parent: s, dir: s.dir} }

// subshell is a scope run by another process: a copy of the directory
// that later changes do not leak out of.
func (s *scope) subshell() *scope {
	d := *s.dir
	d.steps = slices.Clone(d.steps)
	d.stack = slices.Clone(d.stack)
	return &scope{parent: s, dir: &d}
}

func (s *scope) bind(b Binding) {
	for i := range s.fds {
		if s.fds[i].Fd == b.Fd {
			s.fds[i] = b
			return
		}
	}
	s.fds = append(s.fds, b)
}

func (s *scope) lookup(fd int) (Binding, bool) {
	for ; s != nil; s = s.parent {
		for _, b := range s.fds {
			if b.Fd == fd {
				return b, true
			}
		}
	}
	return Binding{}, false
}

// bindings returns every descriptor binding in force, innermost first.
func (s *scope) bindings() []Binding {
	var out []Binding
	for ; s != nil; s = s.parent {
	next:
		for _, b := range s.fds {
			for _, o := range out {
				if o.Fd == b.Fd {
					continue next
				}
			}
			out = append(out, b)
		}
	}
	return out
}

func (s *scope) snapshot() Dir {
	if s.dir.unknown != "" {
		return Dir{Unknown: s.dir.unknown}
	}
	return Dir{Steps: slices.Clone(s.dir.steps)}
}

func (d *dirState) setUnknown(why string) {
	if d.unknown == "" {
		d.unknown = why
	}
}

// FdPath returns the descriptor a path names through /dev/stdin,
// /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N or
// /proc/thread-self/fd/N, after lexical cleaning.
func FdPath(p string) (int, bool) {
	if !strings.HasPrefix(p, "/") {
		return 0, false
	}
	p = cleanSlash(p)
	switch p {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, pre := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"} {
		if rest, ok := strings.CutPrefix(p, pre); ok {
			return atoi(rest)
		}
	}
	return 0, false
}

// cleanSlash collapses // and /./ without touching `..`, which the
// kernel resolves after the links before it.
func cleanSlash(p string) string {
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, c := range parts {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return "/" + strings.Join(out, "/")
}

// bindRedirect records what one redirection binds fd to.
func (f *frame) bindRedirect(fd int, op Op, w wval, kind string) {
	b := Binding{Fd: fd, Kind: kind}
	if kind == "file" {
		if !w.Static() {
			b.Kind = "unknown"
		} else if n, ok := FdPath(w.Value); ok {
			// 3>/dev/stdout binds 3 to whatever 1 is.
			if prev, ok := f.sc.lookup(n); ok {
				prev.Fd = fd
				f.sc.bind(prev)
			} else {
				f.sc.bind(Binding{Fd: fd, Kind: "inherited"})
			}
			return
		}
		b.Op, b.Path, b.Dir = op, w.Word, f.sc.snapshot()
	}
	f.sc.bind(b)
}

// bindDup records N>&M, N<&M and N>&-.
func (f *frame) bindDup(fd int, target string) {
	if target == "-" {
		f.sc.bind(Binding{Fd: fd, Kind: "closed"})
		return
	}
	m, _ := atoi(strings.TrimSuffix(target, "-"))
	if prev, ok := f.sc.lookup(m); ok {
		prev.Fd = fd
		f.sc.bind(prev)
	} else {
		f.sc.bind(Binding{Fd: fd, Kind: "inherited", Path: Word{Value: target}})
	}
	if strings.HasSuffix(target, "-") {
		f.sc.bind(Binding{Fd: m, Kind: "closed"})
	}
}

// fdBinding is what a path naming a descriptor writes to or reads from:
// the script's own binding, or an "unbound" one.
func (f *frame) fdBinding(w Word) *Binding {
	if !w.Static() {
		return nil
	}
	n, ok := FdPath(w.Value)
	if !ok {
		return nil
	}
	if b, ok := f.sc.lookup(n); ok {
		return &b
	}
	return &Binding{Fd: n, Kind: "unbound"}
}

// changeDir follows cd, pushd and popd run in the current shell.
func (f *frame) changeDir(c call) {
	name := baseName(c.args[0].Value)
	d := f.sc.dir
	if d.loop > 0 {
		d.setUnknown(name + " inside a loop")
		return
	}
	args := c.args[1:]
	physical := false
	for len(args) > 0 && args[0].Static() && strings.HasPrefix(args[0].Value, "-") && args[0].Value != "-" {
		v := args[0].Value
		args = args[1:]
		if v == "--" {
			break
		}
		switch {
		case name == "cd" && strings.Trim(v[1:], "LPe@") == "":
			physical = strings.LastIndexByte(v, 'P') > strings.LastIndexByte(v, 'L')
		default:
			d.setUnknown(name + " " + v)
			return
		}
	}
	if name == "popd" {
		if len(args) > 0 || len(d.stack) == 0 {
			d.setUnknown("popd with an empty or unknown directory stack")
			return
		}
		d.steps = d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		return
	}
	var target string
	switch {
	case len(args) == 0 && name == "pushd":
		d.setUnknown("pushd without a directory swaps the stack")
		return
	case len(args) == 0:
		if f.a.opts.Home == "" {
			d.setUnknown("cd to $HOME")
			return
		}
		target = f.a.opts.Home
	case len(args) > 1 && name == "cd":
		// bash refuses more than one operand and stays.
		return
	case !args[0].Static():
		d.setUnknown(name + " to " + args[0].Source + ", known only at run time")
		return
	default:
		target = args[0].Value
	}
	switch {
	case target == "-", name == "pushd" && (strings.HasPrefix(target, "+") || strings.HasPrefix(target, "-")):
		d.setUnknown(name + " " + target)
		return
	case target != "" && !strings.HasPrefix(target, "/") && !strings.HasPrefix(target, "./") &&
		!strings.HasPrefix(target, "../") && target != "." && target != ".." && f.cdpathSet():
		d.setUnknown("cd " + target + " searches CDPATH")
		return
	}
	if name == "pushd" {
		d.stack = append(d.stack, slices.Clone(d.steps))
	}
	d.steps = append(d.steps, DirStep{Path: target, Physical: physical})
}

// cdpathSet reports whether the script assigned CDPATH, which makes a
// bare cd operand a search.
func (f *frame) cdpathSet() bool { return f.a.cdpath }

// isDirChange reports whether a command changes the working directory of
// the shell that runs it.
func isDirChange(c call) bool {
	if !c.args[0].Static() {
		return false
	}
	switch baseName(c.args[0].Value) {
	case "cd", "pushd", "popd":
		return true
	}
	return false
}

// changesDir reports whether code contains a directory change anywhere.
func changesDir(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if found {
			return false
		}
		if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
			name := ce.Args[0].Lit()
			if (name == "builtin" || name == "command") && len(ce.Args) > 1 {
				name = ce.Args[1].Lit()
			}
			switch name {
			case "cd", "pushd", "popd", "eval", "source", ".", "":
				// "": a name known only at run time may be cd.
				found = true
			}
		}
		return true
	})
	return found
}

// certain marks the steps from index i on as having surely happened,
// for the right side of &&, and returns a function undoing it.
func (d *dirState) certain(i int) func() {
	var marked []int
	for j := i; j < len(d.steps); j++ {
		if !d.steps[j].Certain {
			d.steps[j].Certain = true
			marked = append(marked, j)
		}
	}
	return func() {
		for _, j := range marked {
			if j < len(d.steps) {
				d.steps[j].Certain = false
			}
		}
	}
}
