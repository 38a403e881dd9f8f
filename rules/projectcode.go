package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/guardrun/guardrun/cmdsem"
	"github.com/guardrun/guardrun/shellparse"
)

// The project's own code: a rule with code_in applies only to a command
// that runs code (an interpreter's script, a Makefile, package.json's
// scripts, a program of node_modules/.bin, a program named by its path,
// code written on the command line) and only where every file of that
// code lies in the rule's zones; its pre-approval then covers running it.
// Where the code is comes from the command semantics table (Effect.Code)
// and, for a program named by a path and a shell's script, from the
// command itself; it is looked up in the file system when the decision
// is made.

// codeOf returns the code command c runs: what the table says, the
// program itself when it is named by a path (./build.sh, bin/tool), and
// a shell's script.
func (e *Engine) codeOf(c shellparse.Command) []cmdsem.Effect {
	if len(c.Argv) == 0 || !c.Argv[0].Static() {
		return nil
	}
	var out []cmdsem.Effect
	if v := c.Argv[0].Value; strings.Contains(v, "/") && !e.systemProgram(v) {
		out = append(out, cmdsem.Effect{Kind: cmdsem.Code, Word: 0, Code: cmdsem.CodeFile, Path: v, Why: "runs the program"})
	}
	if c.Script != nil {
		out = append(out, scriptEffect(c))
	}
	if cmdsem.Known(c.Name()) {
		for _, ef := range cmdsem.Analyze(cmdArgs(c), nil) {
			if ef.Code != "" {
				// xargs -I and find -exec replace words with input.
				ef.Dynamic = ef.Dynamic || c.ArgsFromInput
				out = append(out, ef)
			}
		}
	}
	return out
}

// scriptEffect is a shell's script as an Exec of the code in it.
func scriptEffect(c shellparse.Command) cmdsem.Effect {
	word := 1
	for i, w := range c.Argv {
		if w.Pos == c.Script.Pos && w.Value == c.Script.Value {
			word = i
		}
	}
	return cmdsem.Effect{Kind: cmdsem.Exec, Word: word, Code: cmdsem.CodeFile, Path: c.Script.Value,
		Why: fmt.Sprintf("%s runs the script %s, which guardrun cannot read", c.Name(), c.Script.Source)}
}

func cmdArgs(c shellparse.Command) []cmdsem.Arg {
	args := make([]cmdsem.Arg, len(c.Argv))
	for i, w := range c.Argv {
		args[i] = cmdsem.Arg{Value: w.Value, Static: w.Static(), Glob: w.Glob || w.Split}
	}
	return args
}

// located is where a piece of code was found from one directory.
type located struct {
	// path is the resolved file or directory; "" for code on the
	// command line.
	path string
	// found is false when a lookup found nothing (a module python
	// would take from elsewhere, a program npx would download).
	found bool
}

// locate finds the code ef names, for a command run in dir.
func (e *Engine) locate(ef cmdsem.Effect, dir string) located {
	base := dir
	if ef.Dir != "" {
		base = Resolve(e.expandHome(ef.Dir), dir)
	}
	switch ef.Code {
	case cmdsem.CodeInline:
		return located{found: true}
	case cmdsem.CodeFile:
		return located{path: Resolve(e.expandHome(ef.Path), base), found: true}
	case cmdsem.CodeFirst:
		names := strings.Fields(ef.Path)
		for _, n := range names {
			if exists(filepath.Join(base, n)) {
				return located{path: Resolve(n, base), found: true}
			}
		}
		// None there: the program fails; it runs nothing from elsewhere.
		return located{path: Resolve(names[len(names)-1], base), found: true}
	case cmdsem.CodeUp:
		for d := Resolve(base, "/"); ; d = filepath.Dir(d) {
			if exists(filepath.Join(d, ef.Path)) {
				return located{path: Resolve(ef.Path, d), found: true}
			}
			if d == "/" {
				return located{path: Resolve(ef.Path, base), found: true}
			}
		}
	case cmdsem.CodeModule:
		rel, ok := modulePath(ef.Path)
		if !ok {
			return located{}
		}
		for _, p := range []string{rel + ".py", rel} {
			if exists(filepath.Join(base, p)) {
				return located{path: Resolve(p, base), found: true}
			}
		}
		return located{}
	case cmdsem.CodeNodeModule:
		if !validPackage(ef.Path) {
			return located{}
		}
		for d := Resolve(base, "/"); ; d = filepath.Dir(d) {
			if p := filepath.Join(d, "node_modules", ef.Path); exists(p) {
				return located{path: Resolve(p, "/"), found: true}
			}
			if d == "/" {
				return located{}
			}
		}
	case cmdsem.CodeBin:
		if strings.ContainsAny(ef.Path, "/\\") || ef.Path == "" || ef.Path == "." || ef.Path == ".." {
			return located{}
		}
		for d := Resolve(base, "/"); ; d = filepath.Dir(d) {
			if exists(filepath.Join(d, "package.json")) || exists(filepath.Join(d, "node_modules")) {
				bin := filepath.Join(d, "node_modules", ".bin", ef.Path)
				if !exists(bin) {
					return located{}
				}
				return located{path: Resolve(bin, "/"), found: true}
			}
			if d == "/" {
				return located{}
			}
		}
	}
	return located{}
}

// validPackage reports whether name is a package name as node_modules
// holds it (x, or @scope/x), naming no directory elsewhere.
func validPackage(name string) bool {
	parts := strings.Split(name, "/")
	if len(parts) > 2 || len(parts) == 2 && !strings.HasPrefix(parts[0], "@") {
		return false
	}
	for _, p := range parts {
		if p == "" || p == "@" || p == "." || p == ".." || strings.ContainsAny(p, "\\") {
			return false
		}
	}
	return true
}

// modulePath turns a Python module name (a.b.c) into the relative path
// of its file without .py (a/b/c); ok is false for a name that is not
// one.
func modulePath(mod string) (string, bool) {
	parts := strings.Split(mod, ".")
	for _, p := range parts {
		if p == "" || strings.ContainsAny(p, "/\\ ") || p[0] >= '0' && p[0] <= '9' {
			return "", false
		}
	}
	return filepath.Join(parts...), true
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// codeWhere judges the code ef names for command c run from cwd against
// zones: inside (every directory the command may run in finds it in one
// of them), outside (why says where), or not found (a lookup found
// nothing: it is not the project's code).
func (e *Engine) codeWhere(c shellparse.Command, ef cmdsem.Effect, zones []string, cwd string) (inside, found bool, why string) {
	if ef.Code == "" {
		return false, true, "it names no code"
	}
	if ef.Dynamic {
		return false, true, fmt.Sprintf("%s is not known until run time", ef.Path)
	}
	if ef.Code == cmdsem.CodeInline {
		return true, true, ""
	}
	dirs, dwhy := e.dirs(c.Dir, cwd)
	if dwhy != "" {
		return false, true, "the working directory is not known until run time (" + dwhy + ")"
	}
	for _, d := range dirs {
		l := e.locate(ef, d)
		if !l.found {
			return false, false, ""
		}
		if e.denied(l.path) {
			return false, true, fmt.Sprintf("%s is denied", l.path)
		}
		z := e.zoneFor(l.path)
		if z == nil || !contains(zones, z.Name) {
			return false, true, fmt.Sprintf("%s is outside %s", l.path, strings.Join(zones, ", "))
		}
	}
	return true, true, ""
}

// codeInside reports whether command c runs code, all of it inside
// zones (code_in): code a lookup does not find (npx's download, an
// installed module) does not keep the rule from applying, but is not
// covered by it (codeCovered), so it asks.
func (e *Engine) codeInside(c shellparse.Command, zones []string, cwd string) (bool, string) {
	codes := e.codeOf(c)
	if len(codes) == 0 {
		return false, "it runs no code of a file guardrun can find"
	}
	if v := c.Argv[0].Value; strings.Contains(v, "/") && !e.systemProgram(v) && systemHas(c.Name()) {
		// ./cat, bin/ls: a program of the project named like a system
		// one reads, to a person, as that program.
		return false, fmt.Sprintf("%s is named like the system's %s", v, c.Name())
	}
	for _, ef := range codes {
		inside, found, why := e.codeWhere(c, ef, zones, cwd)
		if found && !inside {
			return false, why
		}
	}
	return true, ""
}

// codeCovered reports whether rule r's pre-approval covers running the
// code of ef: r says code_in and the code lies there (code on the
// command line included), or r says sandbox_paths and the script lies
// there.
func (e *Engine) codeCovered(r *compiledRule, c shellparse.Command, ef cmdsem.Effect, cwd string) bool {
	if r == nil || ef.Code == "" {
		return false
	}
	if len(r.CodeIn) > 0 {
		if inside, _, _ := e.codeWhere(c, ef, r.CodeIn, cwd); inside {
			return true
		}
	}
	if len(r.SandboxPaths) > 0 && ef.Code != cmdsem.CodeInline {
		if inside, _, _ := e.codeWhere(c, ef, r.SandboxPaths, cwd); inside {
			return true
		}
	}
	return false
}

// notFoundWhy says why code a lookup did not find is not the
// project's, for the question it becomes; prog is the program.
func notFoundWhy(ef cmdsem.Effect, prog string) string {
	switch ef.Code {
	case cmdsem.CodeBin:
		return fmt.Sprintf("%s is not in the project's node_modules/.bin, so %s would download a package of that name and run it", ef.Path, prog)
	case cmdsem.CodeModule:
		return fmt.Sprintf("%s is not a module of the project (none in the working directory), so %s would run an installed one", ef.Path, prog)
	case cmdsem.CodeNodeModule:
		return fmt.Sprintf("%s is not a package of the project's node_modules, so %s would load an installed one", ef.Path, prog)
	}
	return ef.Why + ", which is not the project's"
}

// scriptParts are the questions of a shell's script (bash x.sh): it
// asks unless the matched rule names it or covers the code in it
// (code_in, sandbox_paths), as an interpreter's script does.
func (e *Engine) scriptParts(c shellparse.Command, cmd Part, r *compiledRule, cwd string) []Part {
	if c.Script == nil {
		return nil
	}
	ef := scriptEffect(c)
	if covered(r, c, ef.Word) || e.codeCovered(r, c, ef, cwd) {
		return nil
	}
	return []Part{{Kind: "finding", Text: cmd.Text, Pos: c.Script.Pos.String(), Via: c.Via, Rule: cmd.Rule, RuleAt: cmd.RuleAt,
		Decision: Ask, Dynamic: true, Unbounded: ef.Why,
		Reason: fmt.Sprintf("%s: %s; a rule's pre-approval does not cover running it", e.quoted(argvValues(c.Argv)), ef.Why)}}
}
