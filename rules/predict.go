package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/guardrun/guardrun/cmdsem"
	"github.com/guardrun/guardrun/internal/sys/regfile"
	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/shellparse"
)

// The prediction (SPEC §3, "Run-time verification"): for each part,
// what it may execute and which paths it may write, and whether the
// analysis bounded it. A request is pre-approved by analysis (Decision.
// Verified) only when it is allowed and every part is bounded; it then
// runs under a filter that holds every exec and write outside
// Decision.Prediction. Otherwise it is judged and run as before, confined
// by the sandbox.
//
// A part is bounded when the program it runs is known (a static name
// found in PATH outside every writable zone, or a builtin), its options
// are known and run nothing the table cannot see (cmdsem.Predict), and
// every file it writes is predicted: its redirections, the files its
// options and operands name, and the files it writes of its own accord.
// Findings (a command name known only at run time, eval of run-time
// text, source) are never bounded.

// commandEnv is what the engine knows of the environment commands run
// with: PATH says which program a name runs, GIT_PAGER and PAGER which
// pager git starts.
type commandEnv struct {
	path   []string
	pagers []string
}

// SetCommandEnv tells the engine the environment its commands run with
// (getenv looks a variable up), for the prediction: PATH decides which
// program a command name runs, GIT_PAGER and PAGER the pager git may
// start. Call it before deciding; without it PATH is the system's
// program directories and the pager the system's.
func (e *Engine) SetCommandEnv(getenv func(string) string) { e.run = newCommandEnv(getenv) }

func newCommandEnv(getenv func(string) string) commandEnv {
	var env commandEnv
	if p := getenv("PATH"); p != "" {
		env.path = filepath.SplitList(p)
	} else {
		env.path = systemBin
	}
	// git takes GIT_PAGER, then core.pager (its configuration, which
	// the analysis does not read), then PAGER, then its default: "pager"
	// on Debian, "less" upstream.
	switch {
	case getenv("GIT_PAGER") != "":
		env.pagers = []string{getenv("GIT_PAGER")}
	case getenv("PAGER") != "":
		env.pagers = []string{getenv("PAGER")}
	default:
		env.pagers = []string{"pager", "less"}
	}
	return env
}

// prediction collects what the parts of one request may do.
type prediction struct {
	exec      []sandbox.Exec
	write     []sandbox.PathPattern
	unbounded string
	// found remembers, for this request, what a program name resolved
	// to in a directory: a script names the same programs again.
	found map[string]programFound
}

type programFound struct {
	execs []sandbox.Exec
	why   string
}

func (p *prediction) add(q partPrediction) {
	for _, x := range q.exec {
		p.addExec(x)
	}
	for _, w := range q.write {
		p.addWrite(w)
	}
	if q.unbounded != "" && p.unbounded == "" {
		p.unbounded = q.unbounded
	}
}

func (p *prediction) addExec(x sandbox.Exec) {
	for _, y := range p.exec {
		if y.Program == x.Program && y.AnyArgs == x.AnyArgs && slices.Equal(y.Args, x.Args) {
			return
		}
	}
	p.exec = append(p.exec, x)
}

func (p *prediction) addWrite(w sandbox.PathPattern) {
	for _, y := range p.write {
		if y.Path == w.Path && y.Glob == w.Glob && y.Tree == w.Tree {
			return
		}
	}
	p.write = append(p.write, w)
}

// partPrediction is what one part may do.
type partPrediction struct {
	exec      []sandbox.Exec
	write     []sandbox.PathPattern
	unbounded string
}

func (q *partPrediction) unbound(why string) {
	if q.unbounded == "" {
		q.unbounded = why
	}
}

// show puts the prediction on the part explain shows.
func (q partPrediction) show(p *Part) {
	p.MayExec, p.MayWrite, p.Unbounded = q.exec, q.write, q.unbounded
}

// predictCommand is what running c may execute and write.
func (e *Engine) predictCommand(c shellparse.Command, cwd string, pr *prediction) partPrediction {
	var q partPrediction
	if len(c.Argv) == 0 {
		return q
	}
	display := e.quoted(argvValues(c.Argv))
	w0 := c.Argv[0]
	if !w0.Static() {
		q.unbound(display + ": the command name is not known until run time")
		return q
	}
	if !c.Execs() {
		if why := unboundedBuiltins[w0.Value]; why != "" {
			q.unbound(display + ": " + why)
		}
		return q
	}
	dirs, dirWhy := e.dirs(c.Dir, cwd)
	if hasVia(c, "find -execdir", "find -okdir") {
		dirs, dirWhy = nil, "find -execdir runs it in the directory of each file found"
	}
	xs, why := pr.program(e, w0.Value, dirs, dirWhy)
	args := execArgs(c)
	for _, x := range xs {
		x.Args, x.Part = args, display
		q.exec = append(q.exec, x)
	}
	if why != "" {
		q.unbound(display + ": " + why)
	}
	if c.Wrapper && !hasArgEffects(c) {
		// env, nice, timeout ...: shellparse read their options; what
		// they run is the next part.
		if why := wrapperUnbounded[c.Name()]; why != "" {
			q.unbound(display + ": " + why)
		}
		return q
	}
	var env []string
	for _, a := range c.Assigns {
		env = append(env, a.Name)
	}
	cp := cmdsem.Predict(inputArgs(c), env)
	if !cp.Bounded {
		q.unbound(display + ": " + cp.Unbounded)
	}
	if c.ArgsFromInput && cmdsem.Risky(c.Name()) {
		q.unbound(display + ": arguments supplied at run time may be options that write files or run programs")
	}
	for _, h := range cp.Helpers {
		xs, why := pr.helpers(e, h, dirs)
		for _, x := range xs {
			x.Part = display
			q.exec = append(q.exec, x)
		}
		if why != "" {
			q.unbound(display + ": " + why)
		}
	}
	for _, f := range cp.Files {
		ws, why := e.predictFile(f, dirs, dirWhy, display)
		q.write = append(q.write, ws...)
		if why != "" {
			q.unbound(display + ": " + why)
		}
	}
	return q
}

// hasArgEffects reports a wrapper the table describes itself (xargs,
// find): its own options may write.
func hasArgEffects(c shellparse.Command) bool {
	switch c.Name() {
	case "find", "xargs":
		return true
	}
	return false
}

// unboundedBuiltins are the builtins that run or write what the script
// does not name.
var unboundedBuiltins = map[string]string{
	"fc":      "fc starts an editor",
	"history": "history can write the history file",
	"source":  "source runs the code in a file",
	".":       ". runs the code in a file",
	"enable":  "enable loads builtins or turns them off",
	"bind":    "bind can run commands",
}

// wrapperUnbounded are the programs that run a command, which
// shellparse reports as its own part, and that write or run more
// themselves.
var wrapperUnbounded = map[string]string{
	"nohup":   "nohup may write nohup.out",
	"sudo":    "sudo runs the command as another user",
	"doas":    "doas runs the command as another user",
	"flock":   "flock creates its lock file",
	"watch":   "watch runs the command through sh -c",
	"su":      "su runs a shell as another user",
	"runuser": "runuser runs a shell as another user",
}

func hasVia(c shellparse.Command, vias ...string) bool {
	for _, v := range c.Via {
		if slices.Contains(vias, v) {
			return true
		}
	}
	return false
}

// inputArgs is c's argv as cmdsem reads it, with what xargs or find
// -exec supply at run time: a word holding the replaced string is known
// only up to it, and xargs appends words known only at run time.
func inputArgs(c shellparse.Command) []cmdsem.Arg {
	args := make([]cmdsem.Arg, len(c.Argv))
	for i, w := range c.Argv {
		args[i] = cmdsem.Arg{Value: w.Value, Static: w.Static(), Glob: w.Glob || w.Split}
		if c.ArgsFromInput && c.Replace != "" && i > 0 && strings.Contains(w.Value, c.Replace) {
			pre, _, _ := strings.Cut(w.Value, c.Replace)
			args[i] = cmdsem.Arg{Value: pre, Glob: true}
		}
	}
	if c.ArgsFromInput && c.Replace == "" {
		args = append(args, cmdsem.Arg{Glob: true})
	}
	return args
}

var (
	anyWord  = sandbox.Word{Any: true}
	anyWords = sandbox.Word{Any: true, Many: true}
)

// execArgs is the argument pattern of c's exec: run-time words as
// wildcards, and what xargs or find -exec add.
func execArgs(c shellparse.Command) []sandbox.Word {
	out := []sandbox.Word{}
	for i, w := range c.Argv[1:] {
		last := i == len(c.Argv)-2
		if c.ArgsFromInput && c.Replace != "" && strings.Contains(w.Value, c.Replace) {
			if last && w.Value == c.Replace {
				// find -exec CMD {} +: as many names as fit.
				out = append(out, anyWords)
			} else {
				out = append(out, anyWord)
			}
			continue
		}
		out = append(out, wordArg(w))
	}
	if c.ArgsFromInput && c.Replace == "" {
		out = append(out, anyWords)
	}
	return out
}

// wordArg is one argv word as a pattern: a static word itself, a word
// with a run-time part any one word, an unquoted expansion any number of
// words, a glob any number of names it matches (or the glob itself, when
// it matches none).
func wordArg(w shellparse.Word) sandbox.Word {
	switch {
	case w.Static():
		return sandbox.Word{Text: w.Value}
	case w.Split:
		return anyWords
	case w.Glob:
		if pat, ok := shellparse.GlobPattern(w); ok {
			return sandbox.Word{Text: pat, Glob: true, Many: true}
		}
		return anyWords
	}
	return anyWord
}

// literal is argv words as a pattern of themselves.
func literal(words []string) []sandbox.Word {
	out := make([]sandbox.Word, len(words))
	for i, w := range words {
		out[i] = sandbox.Word{Text: w}
	}
	return out
}

// program is e.program, once per name and directory in a request.
func (pr *prediction) program(e *Engine, name string, dirs []string, dirWhy string) ([]sandbox.Exec, string) {
	key := name + "\x00" + strings.Join(dirs, "\x00") + "\x00" + dirWhy
	if f, ok := pr.found[key]; ok {
		return slices.Clone(f.execs), f.why
	}
	xs, why := e.program(name, dirs, dirWhy)
	if pr.found == nil {
		pr.found = map[string]programFound{}
	}
	pr.found[key] = programFound{slices.Clone(xs), why}
	return xs, why
}

// program resolves a command name as the shell will: a name with a / is
// that file (relative to the working directory), any other is looked up
// in PATH. The Exec's Program is the path the program is executed by
// (the filter also takes the file it resolves to, but not another name
// of that file: a multi-call program acts by its name). why is set when
// the program cannot be bounded: not found, in a writable zone (the
// project's own code), or the directory unknown; the Exec then names
// the program as written.
func (e *Engine) program(name string, dirs []string, dirWhy string) ([]sandbox.Exec, string) {
	unresolved := []sandbox.Exec{{Program: name}}
	var found []string
	if strings.Contains(name, "/") {
		if filepath.IsAbs(name) {
			found = []string{filepath.Clean(e.expandHome(name))}
		} else if dirWhy != "" {
			return unresolved, "the working directory is not known until run time (" + dirWhy + ")"
		} else {
			for _, d := range dirs {
				found = append(found, filepath.Clean(d+"/"+name))
			}
		}
		for _, f := range found {
			if !executable(f) {
				return unresolved, name + " is not an executable file"
			}
		}
	} else {
		var why string
		found, why = e.lookPath(name, dirs, dirWhy)
		if why != "" {
			return unresolved, why
		}
		if d := e.plantable(found, dirs); d != "" {
			// The request may put a program named name there before
			// this command runs (cp, a redirection, chmod +x), which
			// then runs instead.
			return unresolved, fmt.Sprintf("%s is looked up in PATH, which holds %s, a directory the request can write, before it reaches the program: a program the request puts there runs instead", name, d)
		}
		if len(found) == 0 {
			return unresolved, name + notInPath
		}
	}
	var out []sandbox.Exec
	for _, f := range found {
		out = append(out, sandbox.Exec{Program: f})
		r := Resolve(f, "/")
		if z := e.zoneFor(r); z != nil && z.Mode == ReadWrite || e.inPrivateTmp(r) {
			return out, fmt.Sprintf("%s runs %s, which the request can change (the project's own code)", name, f)
		}
	}
	return out, ""
}

// lookPath finds name in PATH as bash does: the first directory holding
// an executable file of that name. A relative PATH entry is relative to
// the working directory.
func (e *Engine) lookPath(name string, dirs []string, dirWhy string) ([]string, string) {
	var out []string
	for _, d := range e.run.path {
		if d == "" {
			d = "."
		}
		if filepath.IsAbs(d) {
			if f := filepath.Join(d, name); executable(f) {
				return appendNew(out, f), ""
			}
			continue
		}
		if dirWhy != "" {
			return nil, "PATH holds the relative directory " + d + " and the working directory is not known until run time (" + dirWhy + ")"
		}
		for _, wd := range dirs {
			if f := filepath.Join(wd, d, name); executable(f) {
				out = appendNew(out, f)
			}
		}
		if len(out) > 0 {
			return out, ""
		}
	}
	return out, ""
}

// notInPath ends the reason program gives for a name PATH does not hold.
const notInPath = " is not found in PATH"

// plantable returns the first PATH directory that lies in a writable
// zone (or the private /tmp) and that the lookup of a name searches
// before the directory the name was found in (found; every directory
// when it was not found): "" when there is none. A relative entry is
// relative to each directory the command may run in.
func (e *Engine) plantable(found []string, dirs []string) string {
	stop := ""
	if len(found) > 0 {
		stop = filepath.Dir(found[0])
	}
	for _, d := range e.run.path {
		if d == "" {
			d = "."
		}
		cands := []string{d}
		if !filepath.IsAbs(d) {
			cands = nil
			for _, wd := range dirs {
				cands = append(cands, filepath.Join(wd, d))
			}
		}
		for _, c := range cands {
			if c == stop {
				return ""
			}
			r := Resolve(c, "/")
			if z := e.zoneFor(r); z != nil && z.Mode == ReadWrite || e.inPrivateTmp(r) {
				return c
			}
		}
	}
	return ""
}

// executable reports an executable regular file (symlinks followed).
func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// gitExecPaths are where git keeps its own programs (git --exec-path).
var gitExecPaths = []string{"/usr/lib/git-core", "/usr/libexec/git-core", "/usr/local/libexec/git-core",
	"/opt/homebrew/opt/git/libexec/git-core", "/Library/Developer/CommandLineTools/usr/libexec/git-core"}

// helpers resolves the programs a command may start by itself. A helper
// not found is left out: it cannot run.
func (pr *prediction) helpers(e *Engine, h cmdsem.Helper, dirs []string) ([]sandbox.Exec, string) {
	with := func(xs []sandbox.Exec) []sandbox.Exec {
		for i := range xs {
			xs[i].AnyArgs = h.AnyArgs
			if !h.AnyArgs {
				xs[i].Args = literal(h.Args)
			}
		}
		return xs
	}
	switch {
	case h.Pager:
		return pr.pagers(e, dirs)
	case h.Where == cmdsem.GitExecPath:
		// git's exec path lies beside its program, or in one of the
		// usual places; git puts it first in PATH, so without the
		// program there, PATH's is the one.
		execPaths := gitExecPaths
		if g, why := pr.program(e, "git", dirs, ""); why == "" {
			top := filepath.Dir(filepath.Dir(Resolve(g[0].Program, "/")))
			execPaths = append([]string{filepath.Join(top, "lib", "git-core"), filepath.Join(top, "libexec", "git-core")}, execPaths...)
		}
		for _, d := range execPaths {
			if !executable(filepath.Join(d, "git")) {
				continue
			}
			if f := filepath.Join(d, h.Program); executable(f) {
				return with([]sandbox.Exec{{Program: f}}), ""
			}
			break
		}
	}
	xs, why := pr.program(e, h.Program, dirs, "")
	if strings.HasSuffix(why, notInPath) {
		return nil, "" // it cannot run
	}
	if why != "" {
		return nil, "it may start " + h.Program + ": " + why
	}
	return with(xs), ""
}

// pagerSpecial are the characters for which git runs a pager command
// through sh -c instead of executing it.
const pagerSpecial = "|&;<>()$`\\\"' \t\n*?[#~=%"

// pagers are the execs of the pager git may start: the command named,
// directly, or through /bin/sh -c and what that runs.
func (pr *prediction) pagers(e *Engine, dirs []string) ([]sandbox.Exec, string) {
	var out []sandbox.Exec
	why := ""
	lookUp := func(name string) ([]sandbox.Exec, bool) {
		xs, bad := pr.program(e, name, dirs, "")
		if bad != "" && !strings.HasSuffix(bad, notInPath) && why == "" {
			why = "its pager may start " + name + ": " + bad
		}
		return xs, bad == ""
	}
	for _, v := range e.run.pagers {
		if v == "" || v == "cat" {
			continue
		}
		if !strings.ContainsAny(v, pagerSpecial) {
			if xs, ok := lookUp(v); ok {
				out = append(out, xs...)
			}
			continue
		}
		// git runs `/bin/sh -c PAGER PAGER`.
		if !executable("/bin/sh") {
			continue
		}
		out = append(out, sandbox.Exec{Program: "/bin/sh", Args: literal([]string{"-c", v, v})})
		s, err := shellparse.Parse(v, shellparse.Options{Dialect: shellparse.DialectFor("sh"), Home: e.home})
		if err != nil {
			continue
		}
		for _, c := range s.Commands {
			if !c.Execs() || !c.Argv[0].Static() {
				continue
			}
			xs, ok := lookUp(c.Argv[0].Value)
			if !ok {
				continue
			}
			for _, x := range xs {
				x.Args = execArgs(c)
				out = append(out, x)
			}
		}
	}
	return out, why
}

// predictFile turns a file a command writes into the paths it may act
// on, in each directory the command may run in; part is the part as
// shown.
func (e *Engine) predictFile(f cmdsem.File, dirs []string, dirWhy, part string) ([]sandbox.PathPattern, string) {
	p := e.expandHome(f.Path)
	if f.Dynamic {
		if strings.HasPrefix(p, "(") && strings.HasSuffix(p, ")") {
			// "(run-time value)", "(named by the awk program)": no
			// static prefix.
			p = ""
		}
		return e.anywhere(p, part, dirs, dirWhy), ""
	}
	if p == "" {
		return nil, ""
	}
	switch {
	case filepath.IsAbs(p) && f.Base == cmdsem.BaseWorkDir, f.Base == cmdsem.BaseHome:
		dirs = []string{"/"}
	case dirWhy != "":
		return nil, fmt.Sprintf("%s is relative, but the working directory is not known until run time (%s)", f.Path, dirWhy)
	}
	var out []sandbox.PathPattern
	for _, dir := range dirs {
		if f.Dir != "" {
			cd := e.expandHome(f.Dir)
			if !filepath.IsAbs(cd) {
				cd = dir + "/" + cd
			}
			dir = Resolve(cd, "/")
		}
		switch f.Base {
		case cmdsem.BaseGitDir:
			dir = gitDir(dir)
			if dir == "" {
				// Not in a repository: git refuses to run.
				continue
			}
		case cmdsem.BaseHome:
			if e.home == "" {
				continue
			}
			dir = Resolve(e.home, "/")
		}
		add := func(path string, glob, tree bool) {
			for _, r := range resolvedNames(path, dir, glob) {
				out = append(out, sandbox.PathPattern{Path: r, Glob: glob, Tree: tree, Part: part})
			}
		}
		add(p, f.Glob, f.Tree)
		for _, name := range f.Into {
			add(p+"/"+name, f.Glob, f.Tree)
		}
		if f.Parents {
			for q := filepath.Dir(p); q != "." && q != "/"; q = filepath.Dir(q) {
				add(q, false, false)
			}
			if filepath.IsAbs(p) {
				add("/", false, false)
			}
		}
	}
	return out, ""
}

// resolvedNames are the paths a call on p (relative to dir) acts on: p
// with the directories before its last component resolved, and, where
// the last component is a symlink, what it leads to. A pattern keeps
// its last component as written.
func resolvedNames(p, dir string, glob bool) []string {
	if !filepath.IsAbs(p) {
		p = dir + "/" + p
	}
	base := filepath.Base(p)
	if base == ".." || base == "." || base == "/" || strings.HasSuffix(p, "/") && !glob {
		return []string{Resolve(p, "/")}
	}
	if glob {
		// The directory is literal, whatever characters it holds.
		return []string{filepath.Join(globQuote(Resolve(filepath.Dir(p), "/")), base)}
	}
	name := filepath.Join(Resolve(filepath.Dir(p), "/"), base)
	out := []string{name}
	if full := Resolve(p, "/"); full != name {
		out = append(out, full)
	}
	return out
}

// anywhere is the prediction for a write whose path is known only at
// run time, from its static prefix: within the directory the prefix
// names, or a name starting with it in the working directory, when that
// lies in a writable zone; else anywhere in every writable zone.
func (e *Engine) anywhere(prefix, part string, dirs []string, dirWhy string) []sandbox.PathPattern {
	var out []sandbox.PathPattern
	if prefix != "" && (dirWhy == "" || filepath.IsAbs(prefix)) {
		if filepath.IsAbs(prefix) {
			dirs = []string{"/"}
		}
		for _, d := range dirs {
			// where: the directory the writes stay within.
			var w sandbox.PathPattern
			where := Resolve(".", d)
			if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
				where = Resolve(prefix[:i+1], d)
				w = sandbox.PathPattern{Path: where, Tree: true, Part: part}
			} else {
				w = sandbox.PathPattern{Path: filepath.Join(globQuote(where), globQuote(prefix)+"*"), Glob: true, Tree: true, Part: part}
			}
			if z := e.zoneFor(where); z == nil || z.Mode != ReadWrite {
				out = nil
				break
			}
			out = append(out, w)
		}
		if len(out) > 0 {
			return out
		}
	}
	for _, z := range e.zones {
		if z.Mode == ReadWrite {
			out = append(out, sandbox.PathPattern{Path: z.root, Tree: true, Part: part})
		}
	}
	return out
}

// globQuote escapes pattern characters in a literal name for path.Match.
func globQuote(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// gitDir returns the git directory of the repository dir is in: the
// first .git directory found walking up, or where a .git file points;
// "" outside every repository.
func gitDir(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		g := filepath.Join(d, ".git")
		if fi, err := os.Lstat(g); err == nil {
			if fi.IsDir() {
				return Resolve(g, "/")
			}
			if data, err := regfile.ReadFile(g, 4096); err == nil {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: "); ok {
					return Resolve(rest, d)
				}
			}
			return ""
		}
		if d == "/" {
			return ""
		}
	}
}

// predictRedirect is what a redirection makes the shell write.
func (e *Engine) predictRedirect(f shellparse.FileOp, cwd string) partPrediction {
	var q partPrediction
	if f.Op == shellparse.OpRead || f.Bound != nil || f.Path.Static() && alwaysFine[f.Path.Value] {
		return q
	}
	dirs, why := e.dirs(f.Dir, cwd)
	p := e.expandHome(f.Path.Value)
	file := cmdsem.File{Path: p, Ops: []cmdsem.Op{cmdsem.OpWrite}}
	switch {
	case f.Path.Static():
	case f.Path.Glob && !f.Path.Dynamic && !f.Path.Split:
		pat, ok := shellparse.GlobPattern(f.Path)
		file.Path, file.Glob = pat, true
		if !ok {
			file.Path, file.Dynamic = "", true
		}
	default:
		file.Dynamic = true
	}
	ws, bad := e.predictFile(file, dirs, why, f.Text)
	q.write = ws
	if bad != "" {
		q.unbound(f.Text + ": " + bad)
	}
	return q
}

// theScript is the Part of the script's shell in a prediction, first in
// MayExec; no command's argv is shown so (a quote is quoted).
const theScript = "the script's shell"

// finish completes a decision's prediction: the script's shell first,
// then what the parts may do.
func (e *Engine) finish(d *Decision, pr *prediction, shell []string) {
	if len(shell) > 0 {
		xs, why := e.program(shell[0], nil, "")
		for i := range xs {
			xs[i].Args, xs[i].Part = literal(shell[1:]), theScript
		}
		if why != "" && pr.unbounded == "" {
			pr.unbounded = "the shell " + shell[0] + ": " + why
		}
		pr.exec = append(xs, pr.exec...)
	}
	d.Bounded = pr.unbounded == "" && d.ParseError == ""
	d.Unbounded = pr.unbounded
	d.MayExec, d.MayWrite = pr.exec, pr.write
	if d.MayExec == nil {
		d.MayExec = []sandbox.Exec{}
	}
	if d.MayWrite == nil {
		d.MayWrite = []sandbox.PathPattern{}
	}
	d.Verified = d.Bounded && d.Decision == Allow
}

// Prediction is what the filter verifies a request against: the
// decision's predicted execs and writes, with first as the first exec:
// the argv guardrun executes, the shell's program, its options, -c, the
// script and its positional arguments, or the command of an argv
// request (nil: the shell as explain shows it).
func (d *Decision) Prediction(first []string) *sandbox.Prediction {
	p := &sandbox.Prediction{Write: slices.Clone(d.MayWrite)}
	n := 0
	for n < len(d.MayExec) && d.MayExec[n].Part == theScript {
		n++
	}
	shell, parts := d.MayExec[:n], d.MayExec[n:]
	if len(first) > 0 {
		x := sandbox.Exec{Program: first[0], Args: literal(first[1:]), Part: theScript}
		if len(shell) > 0 && filepath.Base(first[0]) == filepath.Base(shell[0].Program) {
			x.Program = shell[0].Program
		}
		shell = []sandbox.Exec{x}
	}
	p.Exec = append(slices.Clone(shell), parts...)
	return p
}
