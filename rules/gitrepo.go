package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/guardrun/guardrun/shellparse"
)

// A pre-approved git command is pre-approved for the project's own
// repository. git finds its repository by walking up from the directory
// it runs in, and uses the first it meets: a .git directory or file, or
// a directory shaped like a git directory (HEAD, objects/, refs/), a
// bare repository. That repository's config names programs git runs
// (core.fsmonitor for git status, diff and textconv drivers for git
// diff and log -p, core.pager), so a vendored directory shaped like a
// repository, or one assembled inside the project (git branch
// x/objects/a, git branch x/refs/a, git branch x/HEAD make
// .git/refs/heads/x one), would run whatever its config says under a
// pre-approved git status. gitRepository asks unless git would use the
// repository it uses from the project's root, found there through a .git
// entry, and the script writes nothing where a repository could appear
// on the way (the directories between the project's repository and the
// one git runs in).

// gitRepo is a repository git discovers: its git directory, and its work
// tree ("" for a bare one, or a git directory entered).
type gitRepo struct {
	gitDir, workTree string
	bad              string // why git would refuse it, or "" when found
}

// discoverGit walks up from dir as git does (GIT_DIR unset; ceilings
// and file-system boundaries are not known here, and only make git stop
// earlier).
func discoverGit(dir string) (gitRepo, bool) {
	for d := dir; ; {
		entry := filepath.Join(d, ".git")
		if fi, err := os.Lstat(entry); err == nil {
			switch {
			case fi.IsDir() && isGitDir(entry):
				return gitRepo{gitDir: entry, workTree: d}, true
			case fi.Mode().IsRegular():
				target := readGitFile(entry)
				if target == "" {
					return gitRepo{gitDir: entry, workTree: d, bad: "a .git file git cannot read"}, true
				}
				if !filepath.IsAbs(target) {
					target = filepath.Join(d, target)
				}
				return gitRepo{gitDir: Resolve(target, "/"), workTree: d}, true
			}
		}
		if isGitDir(d) {
			return gitRepo{gitDir: d}, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return gitRepo{}, false
		}
		d = parent
	}
}

// isGitDir is git's test for a git directory: a HEAD file (or link) and
// either objects/ and refs/ or a commondir file.
func isGitDir(dir string) bool {
	if fi, err := os.Lstat(filepath.Join(dir, "HEAD")); err != nil || fi.IsDir() {
		return false
	}
	if _, err := os.Lstat(filepath.Join(dir, "commondir")); err == nil {
		return true
	}
	o, err1 := os.Stat(filepath.Join(dir, "objects"))
	r, err2 := os.Stat(filepath.Join(dir, "refs"))
	return err1 == nil && err2 == nil && o.IsDir() && r.IsDir()
}

// readGitFile returns the target of a .git file ("gitdir: PATH"), or ""
// when it is not one.
func readGitFile(file string) string {
	b, err := os.ReadFile(file)
	if err != nil || len(b) > 4096 {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "gitdir: ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(v)
}

// gitChdirs returns the -C directories of a git command line, in order,
// and false when one is not known until run time.
func gitChdirs(argv []shellparse.Word) ([]string, bool) {
	var out []string
	for i := 1; i < len(argv); i++ {
		w := argv[i]
		if !w.Static() {
			return out, false
		}
		switch v := w.Value; {
		case v == "-C":
			if i+1 >= len(argv) || !argv[i+1].Static() {
				return out, false
			}
			i++
			out = append(out, argv[i].Value)
		case v == "-c":
			i++
		case strings.HasPrefix(v, "-"):
		default:
			return out, true
		}
	}
	return out, true
}

// gitRepositories checks every pre-approved git command of a decision
// against the repository it would run in; parts holds the decision's
// parts so far, whose writes may build a repository on the way.
func (e *Engine) gitRepositories(cmds []shellparse.Command, judged []Part, parts []Part, cwd string) []Part {
	var out []Part
	for i, c := range cmds {
		if c.Name() != "git" || judged[i].Decision != Allow || judged[i].Kind != "command" {
			continue
		}
		if p, ask := e.gitRepository(c, judged[i], parts, cwd); ask {
			out = append(out, p)
		}
	}
	return out
}

func (e *Engine) gitRepository(c shellparse.Command, cmd Part, parts []Part, cwd string) (Part, bool) {
	if len(c.Argv) > 1 && c.Argv[1].Static() {
		switch c.Argv[1].Value {
		case "--version", "version", "--help", "help", "-h":
			return Part{}, false // git reads no repository for these
		}
	}
	display := e.quoted(argvValues(c.Argv))
	p := Part{Kind: "finding", Text: cmd.Text, Pos: cmd.Pos, Via: c.Via, Rule: cmd.Rule, RuleAt: cmd.RuleAt, Decision: Ask}
	ask := func(why string) (Part, bool) {
		p.Reason = fmt.Sprintf("%s: %s; the rule that pre-approves it covers the project's own repository only", display, why)
		return p, true
	}
	dirs, why := e.dirs(c.Dir, cwd)
	if why != "" {
		p.Dynamic = true
		return ask("git finds its repository from the directory it runs in, which is not known until run time (" + why + ")")
	}
	chdirs, ok := gitChdirs(c.Argv)
	if !ok {
		p.Dynamic = true
		return ask("git -C names a directory not known until run time")
	}
	for _, d := range dirs {
		for _, cd := range chdirs {
			d = Resolve(e.expandHome(cd), d)
		}
		if why := e.foreignRepository(d, parts); why != "" {
			return ask(why)
		}
	}
	return Part{}, false
}

// foreignRepository says why git run in dir would not use the project's
// own repository, or "" when it would (or would find none, and fail).
func (e *Engine) foreignRepository(dir string, parts []Part) string {
	z := e.zoneFor(dir)
	if z == nil || z.Mode != ReadWrite {
		return fmt.Sprintf("it runs in %s, outside the project, where git uses whatever repository it finds", dir)
	}
	home, hasHome := discoverGit(z.root)
	here, found := discoverGit(dir)
	// top is where git's walk stops mattering: the project's work tree,
	// whose .git git meets first, or above the project's root.
	top := filepath.Dir(z.root)
	switch {
	case hasHome && (home.bad != "" || home.workTree == ""):
		return fmt.Sprintf("git finds %s from the project's root, not a repository with a work tree", orShape(home))
	case !found && hasHome:
		return "git finds no repository there"
	case found && here.bad != "":
		return fmt.Sprintf("git finds %s there", here.bad)
	case found && (!hasHome || here.gitDir != home.gitDir || here.workTree != home.workTree):
		where := orShape(here)
		if hasHome && here.gitDir == home.gitDir && here.workTree == "" {
			where = "the git directory " + home.gitDir + " itself"
		}
		return fmt.Sprintf("git would use %s, not the project's repository, and its configuration can name programs git runs (core.fsmonitor, diff drivers)", where)
	case hasHome:
		if dir == home.workTree {
			return ""
		}
		top = home.workTree
	}
	// The script may build a repository on the way before git runs: a
	// directory git visits that has, or is given, a HEAD, objects/ and
	// refs/ (or a .git), or that is written whole (cp -r, mv into it).
	for d := dir; d != top && Within(d, top); d = filepath.Dir(d) {
		if why := builtRepository(d, parts); why != "" {
			return why
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return ""
}

// builtRepository says how the script's writes (parts) could make d a
// place where git finds a repository, or "" when they cannot.
func builtRepository(d string, parts []Part) string {
	wrote := func(name string) bool {
		for _, q := range parts {
			if q.Kind == "file" && q.Op != string(OpRead) && !q.Dynamic && q.Path != "" && Within(q.Path, filepath.Join(d, name)) {
				return true
			}
		}
		return false
	}
	has := func(name string) bool {
		_, err := os.Lstat(filepath.Join(d, name))
		return err == nil || wrote(name)
	}
	for _, q := range parts {
		if q.Kind != "file" || q.Op == string(OpRead) {
			continue
		}
		switch {
		case q.Dynamic || q.Path == "":
			return "the script writes a file whose path is not known until run time, which could make a git repository where git looks for one"
		case q.Path == d:
			return fmt.Sprintf("the script writes %s, where git looks for a repository before it reaches the project's", d)
		}
	}
	if wrote(".git") || wrote("commondir") && has("HEAD") || wrote("HEAD") || wrote("objects") || wrote("refs") {
		if wrote(".git") || has("HEAD") && (has("commondir") || has("objects") && has("refs")) {
			return fmt.Sprintf("the script makes %s shaped like a git repository, where git looks for one before it reaches the project's", d)
		}
	}
	return ""
}

// orShape describes a repository git found.
func orShape(r gitRepo) string {
	switch {
	case r.bad != "":
		return r.bad
	case r.workTree == "":
		return "the directory " + r.gitDir + ", shaped like a git repository"
	}
	return "the repository at " + r.workTree
}
