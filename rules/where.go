package rules

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/guardrun/guardrun/shellparse"
)

// maxDirs bounds the directories a path is judged in: each cd that may
// have failed doubles them.
const maxDirs = 16

// dirs returns the directories a command or file operation may run in:
// cwd followed through the script's cd, pushd and popd. A cd that may
// have failed leaves both the old and the new directory possible; a
// logical cd (bash's default -L) cleans `..` against the directory as
// named, and falls back to the physical reading, so both are possible.
// why is set when the directory cannot be known before running.
func (e *Engine) dirs(d shellparse.Dir, cwd string) (out []string, why string) {
	if d.Unknown != "" {
		return nil, d.Unknown
	}
	out = []string{cwd}
	for _, s := range d.Steps {
		var next []string
		add := func(p string) {
			if !contains(next, p) {
				next = append(next, p)
			}
		}
		target := e.expandHome(s.Path)
		if target == "" {
			return nil, "cd to an empty directory name"
		}
		for _, dir := range out {
			phys := Resolve(target, dir)
			if !s.Physical {
				logical := target
				if !filepath.IsAbs(logical) {
					logical = dir + "/" + logical
				}
				add(Resolve(filepath.Clean(logical), "/"))
			}
			add(phys)
			if !s.Certain {
				add(dir)
			}
		}
		if len(next) > maxDirs {
			return nil, fmt.Sprintf("more than %d directories are possible after its cd commands", maxDirs)
		}
		out = next
	}
	return out, ""
}

// inDirs judges a path relative to each directory the script may be in
// and keeps the strictest verdict. judge is called once per directory.
func (e *Engine) inDirs(path string, d shellparse.Dir, cwd, text string, judge func(dir string) Part) Part {
	if filepath.IsAbs(path) {
		return judge(cwd)
	}
	ds, why := e.dirs(d, cwd)
	if why != "" {
		return Part{
			Kind: "file", Decision: Ask, Dynamic: true, Path: path,
			Reason: fmt.Sprintf("%s: relative path %s, but the working directory is not known until run time (%s)", text, path, why),
		}
	}
	var best Part
	for i, dir := range ds {
		p := judge(dir)
		if dir != cwd {
			p.Reason += " (working directory " + dir + ")"
		}
		if i == 0 || p.Decision > best.Decision {
			best = p
		}
	}
	return best
}

// bound judges op on a path that names a descriptor (/dev/stdout,
// /dev/fd/3, /proc/self/fd/0): as the file the script bound to it, never
// as guardrun's own descriptor.
func (e *Engine) bound(op Op, b *shellparse.Binding, name, cwd string) Part {
	p := Part{Kind: "file", Op: string(op), Path: name}
	switch b.Kind {
	case "file":
		fp := e.inDirs(e.expandHome(b.Path.Value), b.Dir, cwd, name, func(dir string) Part {
			return e.file(op, e.expandHome(b.Path.Value), dir, true)
		})
		fp.Reason = fmt.Sprintf("%s is descriptor %d, bound to %s: %s", name, b.Fd, b.Path.Value, fp.Reason)
		return fp
	case "pipe":
		p.Decision = Allow
		p.Reason = fmt.Sprintf("%s is descriptor %d, a pipe or here-document of the script", name, b.Fd)
	case "closed":
		p.Decision = Allow
		p.Reason = fmt.Sprintf("%s is descriptor %d, which the script closed", name, b.Fd)
	case "unbound", "inherited":
		if b.Fd == 1 || b.Fd == 2 || op == OpRead && b.Fd == 0 {
			p.Decision = Allow
			p.Reason = fmt.Sprintf("%s is the command's own %s", name, [...]string{"input", "output", "error output"}[b.Fd])
			return p
		}
		p.Decision = Ask
		p.Reason = fmt.Sprintf("%s %s: descriptor %d is not bound by the script; it is whatever the caller left open", op, name, b.Fd)
	default:
		p.Decision, p.Dynamic = Ask, true
		p.Reason = fmt.Sprintf("%s %s: descriptor %d is bound to a target known only at run time", op, name, b.Fd)
	}
	return p
}

// bindingFor returns the binding a command sees for the descriptor a
// path names, or nil when the path names none.
func bindingFor(path string, fds []shellparse.Binding) *shellparse.Binding {
	n, ok := shellparse.FdPath(path)
	if !ok {
		return nil
	}
	for _, b := range fds {
		if b.Fd == n {
			return &b
		}
	}
	return &shellparse.Binding{Fd: n, Kind: "unbound"}
}

// privateTmp is the sandbox's own /tmp: empty at start, gone at the end.
const privateTmp = "/tmp"

// inPrivateTmp reports whether a resolved path lies in the sandbox's
// private /tmp, which only exists when commands run in an OS sandbox.
func (e *Engine) inPrivateTmp(resolved string) bool {
	return e.cfg.Sandbox.RequireOSSandbox && Within(resolved, privateTmp)
}

// processPath reports a resolved path that reaches a process's own files
// (through a symlink to /dev/stdin or /proc/self/fd/N): what it names
// depends on the process that opens it.
// ProcessPath reports whether the resolved path p leads through a
// process's own view (/proc/self, /proc/PID, /dev/fd, /dev/stdin ...),
// so that what it names depends on the process that opens it.
func ProcessPath(p string) bool { return processPath(p) }

func processPath(p string) bool {
	if _, ok := shellparse.FdPath(p); ok {
		return true
	}
	for _, pre := range []string{"/proc/self", "/proc/thread-self", "/dev/fd"} {
		if Within(p, pre) {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(p, "/proc/"); ok {
		pid, _, _ := strings.Cut(rest, "/")
		return pid != "" && strings.Trim(pid, "0123456789") == ""
	}
	return false
}
