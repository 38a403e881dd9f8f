package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/guardrun/guardrun/cmdsem"
	"github.com/guardrun/guardrun/shellparse"
)

// effects turns what a well-known command's options and operands do
// (package cmdsem) into parts of their own: files it writes or deletes
// are judged by zones like redirections, files it reads by deny, and
// options that run programs ask whatever rule matched. A rule's
// pre-approval covers only what its own literal words name: `python -m
// pytest` pre-approves running pytest, `sort` does not pre-approve
// `sort --compress-program=sh`. Unknown options and redirecting
// environment variables ask only where the command was pre-approved.
func (e *Engine) effects(c shellparse.Command, cmd Part, r *compiledRule, cwd string) []Part {
	if len(c.Argv) == 0 || !c.Argv[0].Static() || !cmdsem.Known(c.Name()) {
		return nil
	}
	args := make([]cmdsem.Arg, len(c.Argv))
	for i, w := range c.Argv {
		args[i] = cmdsem.Arg{Value: w.Value, Static: w.Static(), Glob: w.Glob || w.Split}
	}
	var env []string
	for _, a := range c.Assigns {
		env = append(env, a.Name)
	}
	display := e.quoted(argvValues(c.Argv))
	var out []Part
	if c.ArgsFromInput && cmdsem.Risky(c.Name()) && cmd.Decision == Allow {
		// xargs and find -exec add words, which may be options.
		out = append(out, Part{Kind: "finding", Text: cmd.Text, Pos: cmd.Pos, Via: c.Via, Rule: cmd.Rule, RuleAt: cmd.RuleAt,
			Decision: Ask, Dynamic: true,
			Reason: fmt.Sprintf("%s: arguments supplied at run time may be options that write files or run programs", display)})
	}
	for _, ef := range cmdsem.Analyze(args, env) {
		if c.ArgsFromInput {
			// xargs -I and find -exec replace words with input.
			ef.Dynamic = true
		}
		// A finding: what no rule pre-approves. Its text is the
		// command as written, assignments included, so that a session
		// grant remembers exactly what was approved.
		p := Part{Kind: "finding", Text: cmd.Text, Pos: cmd.Pos, Via: c.Via, Rule: cmd.Rule, RuleAt: cmd.RuleAt}
		if ef.Word >= 0 && ef.Word < len(c.Argv) {
			p.Pos = c.Argv[ef.Word].Pos.String()
		}
		what := ef.Option
		if what == "" && ef.Word >= 0 && ef.Word < len(c.Argv) {
			what = c.Argv[ef.Word].Source
		}
		switch ef.Kind {
		case cmdsem.Write, cmdsem.Delete, cmdsem.Read:
			out = append(out, e.effectFile(c, ef, display, cwd)...)
			continue
		case cmdsem.Exec:
			if covered(r, c, ef.Word) || ef.Terminal && outputAway(c.Fds) || e.codeCovered(r, c, ef, cwd) {
				continue
			}
			p.Decision = Ask
			p.Reason = fmt.Sprintf("%s: %s; a rule's pre-approval does not cover running programs", display, naming(ef.Why, what))
			if _, found, _ := e.codeWhere(c, ef, nil, cwd); ef.Code != "" && !found {
				p.Reason = fmt.Sprintf("%s: %s", display, notFoundWhy(ef, c.Name()))
			}
		case cmdsem.Unknown:
			if cmd.Decision != Allow || covered(r, c, ef.Word) {
				continue
			}
			p.Decision = Ask
			p.Reason = fmt.Sprintf("%s: %s; the rule that pre-approves it does not cover that", display, naming(strings.TrimPrefix(ef.Why, c.Name()+" "), ef.Option))
		case cmdsem.Env:
			if cmd.Decision != Allow {
				continue
			}
			p.Decision = Ask
			p.Reason = fmt.Sprintf("%s: %s is set for it, which %s; the rule that pre-approves it does not cover that", display, ef.Option, strings.TrimSuffix(ef.Why, "."))
		default:
			continue
		}
		out = append(out, p)
	}
	return out
}

// covered reports whether the rule's own literal words name argv word i
// (the person wrote `python -m pytest`, so -m is pre-approved).
func covered(r *compiledRule, c shellparse.Command, i int) bool {
	if r == nil || i < 1 || i >= len(r.words) {
		return false
	}
	for j := 1; j <= i && j < len(r.words); j++ {
		if _, lit := r.words[j].Literal(); !lit {
			return false
		}
	}
	return true
}

// effectFile judges a file a command's option or operand names.
func (e *Engine) effectFile(c shellparse.Command, ef cmdsem.Effect, display, cwd string) []Part {
	op := OpWrite
	switch ef.Kind {
	case cmdsem.Read:
		op = OpRead
	case cmdsem.Delete:
		op = OpDelete
	}
	pos := ""
	if ef.Word >= 0 && ef.Word < len(c.Argv) {
		pos = c.Argv[ef.Word].Pos.String()
	}
	label := ef.Option
	if label == "" {
		label = "operand"
	}
	text := fmt.Sprintf("%s (%s %s)", display, label, ef.Path)
	mk := func(p Part) Part {
		p.Kind, p.Text, p.Pos, p.Via, p.Op = "file", text, pos, c.Via, string(op)
		return p
	}
	if ef.Dynamic && op != OpRead && ef.Word >= 0 && ef.Word < len(c.Argv) && ef.Path == c.Argv[ef.Word].Value {
		// chmod +x hooks/*.sh: the files a glob can match lie in the
		// directory before its first pattern, under names the pattern
		// decides.
		if dir, rest, plain, ok := e.globTarget(c.Argv[ef.Word]); ok {
			p := mk(e.inDirs(dir, c.Dir, cwd, text, func(d string) Part {
				return e.file(op, filepath.Join(dir, rest), d, true)
			}))
			if plain || p.Decision == Block {
				p.Dynamic = true
				p.Reason = fmt.Sprintf("%s: %s %s (the files %s matches): %s", display, label, ef.Why, c.Argv[ef.Word].Source, p.Reason)
				return []Part{p}
			}
		}
	}
	if ef.Dynamic {
		if op == OpRead {
			// A run-time read cannot be judged here; the sandbox hides
			// denied paths.
			return nil
		}
		return []Part{mk(Part{Decision: Ask, Dynamic: true, Path: ef.Path,
			Reason: fmt.Sprintf("%s: %s %s, and the path is not known until run time", display, label, ef.Why)})}
	}
	path := e.expandHome(ef.Path)
	if path == "" {
		return nil
	}
	dir := c.Dir
	if ef.Dir != "" && !filepath.IsAbs(path) {
		path = filepath.Join(e.expandHome(ef.Dir), path)
	}
	judge := func(p string) Part {
		if b := bindingFor(p, c.Fds); b != nil {
			return e.bound(op, b, p, cwd)
		}
		if alwaysFine[p] || op == OpRead && readable[p] {
			return Part{Decision: Allow, Reason: p + " is always fine", Path: p}
		}
		return e.inDirs(p, dir, cwd, text, func(d string) Part {
			if op == OpRead {
				return e.readByDeny(p, d)
			}
			if op == OpDelete && ef.MovedTo != "" && e.keeps(ef, p, d) {
				// mv within the rw zones: the file lives on at its
				// destination, so the source is changed, not lost.
				fp := e.file(OpWrite, p, d, true)
				fp.Op = string(OpDelete)
				fp.Reason = "moved to " + ef.MovedTo + ", which keeps it: " + fp.Reason
				return fp
			}
			fp := e.file(op, p, d, true)
			// cp a b dir/: the files land inside an existing directory.
			if len(ef.Into) > 0 && op == OpWrite {
				if fi, err := os.Stat(Resolve(p, d)); err == nil && fi.IsDir() {
					// An existing directory is not written itself; the
					// files land inside it.
					for i, name := range ef.Into {
						q := e.file(op, filepath.Join(p, name), d, true)
						if i == 0 || q.Decision > fp.Decision {
							fp = q
						}
					}
				}
			}
			return fp
		})
	}
	p := mk(judge(path))
	if op == OpWrite && p.Decision == Allow && treeWriters[c.Name()] {
		// cp -rT stage .venv: the tree lands over a PATH directory.
		if d := e.onPath(p.Path, true); d != "" {
			p.Decision = Ask
			p.Reason = fmt.Sprintf("write %s: it may hold %s, which is on PATH, so a program copied there runs in place of the one a command names", ef.Path, d)
		}
	}
	p.Reason = fmt.Sprintf("%s: %s %s: %s", display, label, ef.Why, p.Reason)
	return []Part{p}
}

// treeWriters are the commands whose destination may receive a whole
// tree (a directory copied, moved or linked there).
var treeWriters = map[string]bool{"cp": true, "mv": true, "ln": true, "install": true, "git": true}

// readByDeny judges a read a command's argument names: only deny refuses
// it (zones bound what the sandbox shows, and reads outside them simply
// fail there).
func (e *Engine) readByDeny(path, cwd string) Part {
	resolved := Resolve(path, cwd)
	lexical := path
	if !filepath.IsAbs(lexical) {
		lexical = filepath.Join(cwd, lexical)
	}
	p := Part{Path: resolved}
	if e.denied(resolved) || e.denied(filepath.Clean(lexical)) {
		p.Decision = Block
		p.Reason = fmt.Sprintf("read %s: the path is denied (sandbox.deny)", path)
		return p
	}
	p.Decision = Allow
	p.Reason = fmt.Sprintf("read %s: not denied", path)
	return p
}

// systemProgram reports whether a command named by a path is a system
// program: an absolute path under the system directories, outside every
// writable zone, so that a rule naming the program by its base name may
// pre-approve it.
func (e *Engine) systemProgram(p string) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	r := Resolve(p, "/")
	if z := e.zoneFor(r); z != nil && z.Mode == ReadWrite || e.inPrivateTmp(r) {
		return false
	}
	return e.systemReadable(r)
}

// systemBin are the directories a bare command name usually resolves to.
var systemBin = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// systemHas reports whether a system program has this name: then a rule
// naming it means that program, and ./name is an impostor. A rule naming
// a program the system does not have (a project's own build output)
// matches it wherever it is run from.
func systemHas(name string) bool {
	for _, d := range systemBin {
		if _, err := os.Stat(filepath.Join(d, name)); err == nil {
			return true
		}
	}
	return false
}

// outputAway reports whether the script sends the command's standard
// output to a pipe or a file, so that it is not a terminal (a pager
// then copies its input and takes no commands).
func outputAway(fds []shellparse.Binding) bool {
	for _, b := range fds {
		if b.Fd != 1 {
			continue
		}
		switch {
		case b.Kind == "pipe":
			return true
		case b.Kind == "file" && b.Path.Static():
			return !strings.HasPrefix(b.Path.Value, "/dev/") || b.Path.Value == "/dev/null"
		}
		return false
	}
	return false
}

// keeps reports whether mv's destination for the source src (in
// directory d) lies in a rw zone, where the moved file lives on; the
// sandbox's private /tmp does not keep it.
func (e *Engine) keeps(ef cmdsem.Effect, src, d string) bool {
	dest := e.expandHome(ef.MovedTo)
	if ef.Dir != "" && !filepath.IsAbs(dest) {
		dest = filepath.Join(e.expandHome(ef.Dir), dest)
	}
	r := Resolve(dest, d)
	if fi, err := os.Stat(r); err == nil && fi.IsDir() {
		r = filepath.Join(r, filepath.Base(src))
	}
	z := e.zoneFor(r)
	return z != nil && z.Mode == ReadWrite && !e.denied(r)
}

// globTarget splits a glob word whose only run-time part is pathname
// expansion into its static directory and the pattern after it; plain
// is set when no name the pattern can match is protected or denied (so
// every match is judged as the directory's ordinary files are). The
// pattern is matched as if dotglob were set: * counts as matching .git.
func (e *Engine) globTarget(w shellparse.Word) (dir, rest string, plain, ok bool) {
	if w.Dynamic || w.Split || !w.Glob || strings.Contains(w.Value, "**") || strings.ContainsAny(w.Value, "@+!") {
		return "", "", false, false
	}
	comps := strings.Split(e.expandHome(w.Value), "/")
	k := 0
	for k < len(comps) && !strings.ContainsAny(comps[k], "*?[") {
		k++
	}
	if k == len(comps) {
		return "", "", false, false
	}
	var names []string
	names = append(names, e.names...)
	for _, n := range e.protect {
		names = append(names, n...)
	}
	names = append(names, ".git", "config", "config.worktree", "hooks", "commondir", ".env")
	plain = true
	for _, pat := range comps[k:] {
		if _, err := filepath.Match(pat, "x"); err != nil {
			return "", "", false, false
		}
		for _, n := range names {
			if m, _ := filepath.Match(strings.ToLower(pat), strings.ToLower(n)); m {
				plain = false
			}
		}
	}
	dir = strings.Join(comps[:k], "/")
	if dir == "" && k > 0 {
		dir = "/"
	} else if dir == "" {
		dir = "."
	}
	return dir, strings.Join(comps[k:], "/"), plain, true
}

// naming says why with the option or word it is about: as it is when
// why already names it ("the awk program runs shell commands with
// system()"), else with it in parentheses ("python runs the code or
// module given (-m)").
func naming(why, what string) string {
	if what == "" {
		return why
	}
	for i := 0; ; {
		k := strings.Index(why[i:], what)
		if k < 0 {
			break
		}
		k += i
		end := k + len(what)
		before := k == 0 || !isWordChar(why[k-1])
		after := end == len(why) || !isWordChar(why[end])
		if before && after {
			return why
		}
		i = k + 1
	}
	return why + " (" + what + ")"
}

func isWordChar(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
