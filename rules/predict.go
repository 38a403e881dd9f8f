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
	write     []sandbox.Write
	unbounded string
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
		if y.Name == x.Name && slices.Equal(y.Paths, x.Paths) && slices.Equal(y.Args, x.Args) {
			return
		}
	}
	p.exec = append(p.exec, x)
}

func (p *prediction) addWrite(w sandbox.Write) {
	for i, y := range p.write {
		if y.Path == w.Path && y.Match == w.Match {
			for _, op := range w.Ops {
				if !slices.Contains(y.Ops, op) {
					p.write[i].Ops = append(slices.Clip(p.write[i].Ops), op)
				}
			}
			return
		}
	}
	p.write = append(p.write, w)
}

// partPrediction is what one part may do.
type partPrediction struct {
	exec      []sandbox.Exec
	write     []sandbox.Write
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
func (e *Engine) predictCommand(c shellparse.Command, cwd string) partPrediction {
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
	x, why := e.program(w0.Value, dirs, dirWhy)
	x.Args = execArgs(c)
	q.exec = append(q.exec, x)
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
	pr := cmdsem.Predict(inputArgs(c), env)
	if !pr.Bounded {
		q.unbound(display + ": " + pr.Unbounded)
	}
	if c.ArgsFromInput && cmdsem.Risky(c.Name()) {
		q.unbound(display + ": arguments supplied at run time may be options that write files or run programs")
	}
	for _, h := range pr.Helpers {
		q.exec = append(q.exec, e.helpers(h, dirs)...)
	}
	for _, f := range pr.Files {
		ws, why := e.predictFile(f, c.Dir, dirs, dirWhy, cwd)
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

// execArgs is the argument pattern of c's exec: run-time words as
// wildcards, and what xargs or find -exec add.
func execArgs(c shellparse.Command) []sandbox.Arg {
	out := []sandbox.Arg{}
	for i, w := range c.Argv[1:] {
		last := i == len(c.Argv)-2
		if c.ArgsFromInput && c.Replace != "" && strings.Contains(w.Value, c.Replace) {
			if last && w.Value == c.Replace {
				// find -exec CMD {} +: as many names as fit.
				out = append(out, sandbox.Arg{Kind: sandbox.ArgMany})
			} else {
				pre, _, _ := strings.Cut(w.Value, c.Replace)
				out = append(out, sandbox.Arg{Kind: sandbox.ArgAny, Value: pre})
			}
			continue
		}
		out = append(out, wordArg(w))
	}
	if c.ArgsFromInput && c.Replace == "" {
		out = append(out, sandbox.Arg{Kind: sandbox.ArgMany})
	}
	return out
}

// wordArg is one argv word as a pattern.
func wordArg(w shellparse.Word) sandbox.Arg {
	switch {
	case w.Static():
		return sandbox.Arg{Kind: sandbox.ArgWord, Value: w.Value}
	case w.Split:
		return sandbox.Arg{Kind: sandbox.ArgMany}
	case w.Glob:
		pat, _ := shellparse.GlobPattern(w)
		return sandbox.Arg{Kind: sandbox.ArgMany, Value: pat}
	}
	return sandbox.Arg{Kind: sandbox.ArgAny, Value: w.Value}
}

// program resolves a command name as the shell will: a name with a / is
// that file (relative to the working directory), any other is looked up
// in PATH. why is set when the program cannot be bounded: not found, in
// a writable zone (the project's own code), or the directory unknown.
func (e *Engine) program(name string, dirs []string, dirWhy string) (sandbox.Exec, string) {
	x := sandbox.Exec{Name: filepath.Base(name)}
	var found []string
	if strings.Contains(name, "/") {
		if filepath.IsAbs(name) {
			found = []string{e.expandHome(name)}
		} else if dirWhy != "" {
			return x, "the working directory is not known until run time (" + dirWhy + ")"
		} else {
			for _, d := range dirs {
				found = append(found, filepath.Clean(d+"/"+name))
			}
		}
		for _, f := range found {
			if !executable(f) {
				return x, name + " is not an executable file"
			}
		}
	} else {
		var why string
		found, why = e.lookPath(name, dirs, dirWhy)
		if why != "" {
			return x, why
		}
		if len(found) == 0 {
			return x, name + " is not found in PATH"
		}
	}
	for _, f := range found {
		x.Paths = appendNew(x.Paths, f)
		r := Resolve(f, "/")
		x.Paths = appendNew(x.Paths, r)
		if z := e.zoneFor(r); z != nil && z.Mode == ReadWrite || e.inPrivateTmp(r) {
			return x, fmt.Sprintf("%s runs %s, which the request can change (the project's own code)", name, f)
		}
	}
	return x, ""
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
func (e *Engine) helpers(h cmdsem.Helper, dirs []string) []sandbox.Exec {
	args := []sandbox.Arg{{Kind: sandbox.ArgMany}}
	if !h.AnyArgs {
		args = []sandbox.Arg{}
		for _, a := range h.Args {
			args = append(args, sandbox.Arg{Kind: sandbox.ArgWord, Value: a})
		}
	}
	switch {
	case h.Pager:
		return e.pagers(h.Why, dirs)
	case h.Where == cmdsem.GitExecPath:
		var out []sandbox.Exec
		// git's exec path lies beside its program, or in one of the
		// usual places.
		execPaths := gitExecPaths
		if g, why := e.program("git", dirs, ""); why == "" {
			top := filepath.Dir(filepath.Dir(g.Paths[len(g.Paths)-1]))
			execPaths = append([]string{filepath.Join(top, "lib", "git-core"), filepath.Join(top, "libexec", "git-core")}, execPaths...)
		}
		for _, d := range execPaths {
			if !executable(filepath.Join(d, "git")) {
				continue
			}
			x := sandbox.Exec{Name: h.Program, Args: args, Helper: h.Why}
			if strings.ContainsAny(h.Program, "*?[") {
				x.Paths = []string{filepath.Join(d, h.Program)}
			} else if f := filepath.Join(d, h.Program); executable(f) {
				x.Paths = appendNew([]string{f}, Resolve(f, "/"))
			} else {
				continue
			}
			out = append(out, x)
			break
		}
		// git puts its exec path first in PATH; without the program
		// there, PATH's is the one.
		if len(out) > 0 {
			return out
		}
		if x, why := e.program(h.Program, dirs, ""); why == "" {
			x.Args, x.Helper = args, h.Why
			out = append(out, x)
		}
		return out
	}
	x, why := e.program(h.Program, dirs, "")
	if why != "" {
		return nil
	}
	x.Args, x.Helper = args, h.Why
	return []sandbox.Exec{x}
}

// pagerSpecial are the characters for which git runs a pager command
// through sh -c instead of executing it.
const pagerSpecial = "|&;<>()$`\\\"' \t\n*?[#~=%"

// pagers are the execs of the pager git may start: the command named,
// directly, or through /bin/sh -c and what that runs.
func (e *Engine) pagers(why string, dirs []string) []sandbox.Exec {
	var out []sandbox.Exec
	for _, v := range e.run.pagers {
		if v == "" || v == "cat" {
			continue
		}
		if !strings.ContainsAny(v, pagerSpecial) {
			if x, bad := e.program(v, dirs, ""); bad == "" {
				x.Args, x.Helper = []sandbox.Arg{}, why
				out = append(out, x)
			}
			continue
		}
		sh, bad := e.program("/bin/sh", dirs, "")
		if bad != "" {
			continue
		}
		sh.Args = []sandbox.Arg{{Kind: sandbox.ArgWord, Value: "-c"}, {Kind: sandbox.ArgWord, Value: v}, {Kind: sandbox.ArgWord, Value: v}}
		sh.Helper = why + " (through sh -c)"
		out = append(out, sh)
		s, err := shellparse.Parse(v, shellparse.Options{Dialect: shellparse.DialectFor("sh"), Home: e.home})
		if err != nil {
			continue
		}
		for _, c := range s.Commands {
			if !c.Execs() || !c.Argv[0].Static() {
				continue
			}
			x, bad := e.program(c.Argv[0].Value, dirs, "")
			if bad != "" {
				continue
			}
			x.Args, x.Helper = execArgs(c), why
			out = append(out, x)
		}
	}
	return out
}

// predictFile turns a file a command writes into the paths it may act
// on, in each directory the command may run in.
func (e *Engine) predictFile(f cmdsem.File, d shellparse.Dir, dirs []string, dirWhy, cwd string) ([]sandbox.Write, string) {
	ops := make([]sandbox.WriteOp, len(f.Ops))
	for i, op := range f.Ops {
		ops[i] = sandbox.WriteOp(op)
	}
	p := e.expandHome(f.Path)
	if f.Dynamic {
		if p == "(run-time value)" {
			p = ""
		}
		return e.anywhere(p, ops, f.Why, dirs), ""
	}
	if p == "" {
		return nil, ""
	}
	if filepath.IsAbs(p) && f.Base == cmdsem.BaseWorkDir {
		dirs = []string{"/"}
	} else if dirWhy != "" {
		return nil, fmt.Sprintf("%s is relative, but the working directory is not known until run time (%s)", f.Path, dirWhy)
	}
	var out []sandbox.Write
	for _, dir := range dirs {
		if f.Dir != "" {
			cd := e.expandHome(f.Dir)
			if !filepath.IsAbs(cd) {
				cd = dir + "/" + cd
			}
			dir = Resolve(cd, "/")
		}
		if f.Base == cmdsem.BaseGitDir {
			dir = gitDir(dir)
			if dir == "" {
				// Not in a repository: git refuses to run.
				continue
			}
		}
		match := sandbox.MatchExact
		switch {
		case f.Tree:
			match = sandbox.MatchTree
		case f.Glob:
			match = sandbox.MatchGlob
		}
		add := func(path string, m sandbox.MatchKind, ops []sandbox.WriteOp) {
			for _, r := range resolvedNames(path, dir, m) {
				out = append(out, sandbox.Write{Path: r, Match: m, Ops: ops, Why: f.Why})
			}
		}
		add(p, match, ops)
		for _, name := range f.Into {
			add(p+"/"+name, match, ops)
		}
		if f.Parents {
			var mk []sandbox.WriteOp
			for _, op := range ops {
				if op == sandbox.OpMkdir || op == sandbox.OpDelete {
					mk = append(mk, op)
				}
			}
			for q := filepath.Dir(p); q != "." && q != "/"; q = filepath.Dir(q) {
				add(q, sandbox.MatchExact, mk)
			}
			if filepath.IsAbs(p) {
				add("/", sandbox.MatchExact, mk)
			}
		}
	}
	return out, ""
}

// resolvedNames are the paths a call on p (relative to dir) acts on: p
// with the directories before its last component resolved, and, where
// the last component is a symlink, what it leads to. A pattern keeps
// its last component as written.
func resolvedNames(p, dir string, m sandbox.MatchKind) []string {
	if !filepath.IsAbs(p) {
		p = dir + "/" + p
	}
	base := filepath.Base(p)
	if base == ".." || base == "." || base == "/" || strings.HasSuffix(p, "/") && m != sandbox.MatchGlob {
		return []string{Resolve(p, "/")}
	}
	name := filepath.Join(Resolve(filepath.Dir(p), "/"), base)
	if m == sandbox.MatchGlob {
		return []string{name}
	}
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
func (e *Engine) anywhere(prefix string, ops []sandbox.WriteOp, why string, dirs []string) []sandbox.Write {
	var out []sandbox.Write
	if prefix != "" {
		for _, d := range dirs {
			if filepath.IsAbs(prefix) {
				d = "/"
			}
			var w sandbox.Write
			if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
				w = sandbox.Write{Path: Resolve(prefix[:i+1], d), Match: sandbox.MatchTree, Ops: ops, Why: why}
			} else {
				w = sandbox.Write{Path: filepath.Join(Resolve(".", d), globQuote(prefix)+"*"), Match: sandbox.MatchGlob, Ops: ops, Why: why}
			}
			if z := e.zoneFor(strings.TrimSuffix(w.Path, "*")); z == nil || z.Mode != ReadWrite {
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
			out = append(out, sandbox.Write{Path: z.root, Match: sandbox.MatchTree, Ops: ops, Why: why + " (anywhere in zone " + z.Name + ")"})
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
	ops := []sandbox.WriteOp{sandbox.OpWrite}
	dirs, why := e.dirs(f.Dir, cwd)
	p := e.expandHome(f.Path.Value)
	switch {
	case f.Path.Static():
		ws, bad := e.predictFile(cmdsem.File{Path: p, Ops: []cmdsem.Op{cmdsem.OpWrite}, Why: f.Text}, f.Dir, dirs, why, cwd)
		q.write = ws
		if bad != "" {
			q.unbound(f.Text + ": " + bad)
		}
	case f.Path.Glob && !f.Path.Dynamic && !f.Path.Split:
		pat, ok := shellparse.GlobPattern(f.Path)
		if !ok {
			q.write = e.anywhere("", ops, f.Text, dirs)
			break
		}
		ws, bad := e.predictFile(cmdsem.File{Path: pat, Glob: true, Ops: []cmdsem.Op{cmdsem.OpWrite}, Why: f.Text}, f.Dir, dirs, why, cwd)
		q.write = ws
		if bad != "" {
			q.unbound(f.Text + ": " + bad)
		}
	default:
		if why != "" && !filepath.IsAbs(p) {
			q.unbound(fmt.Sprintf("%s: the working directory is not known until run time (%s)", f.Text, why))
			break
		}
		q.write = e.anywhere(p, ops, f.Text+": the path is known only at run time", dirs)
	}
	return q
}

// finish completes a decision's prediction: the script's shell first,
// then what the parts may do.
func (e *Engine) finish(d *Decision, pr *prediction, shell []string) {
	if len(shell) > 0 {
		x, why := e.program(shell[0], nil, "")
		x.Args = []sandbox.Arg{}
		for _, a := range shell[1:] {
			x.Args = append(x.Args, sandbox.Arg{Kind: sandbox.ArgWord, Value: a})
		}
		if why != "" && pr.unbounded == "" {
			pr.unbounded = "the shell " + shell[0] + ": " + why
		}
		pr.exec = append([]sandbox.Exec{x}, pr.exec...)
	}
	d.Bounded = pr.unbounded == "" && d.ParseError == ""
	d.Unbounded = pr.unbounded
	d.MayExec, d.MayWrite = pr.exec, pr.write
	if d.MayExec == nil {
		d.MayExec = []sandbox.Exec{}
	}
	if d.MayWrite == nil {
		d.MayWrite = []sandbox.Write{}
	}
	d.Verified = d.Bounded && d.Decision == Allow
}

// Prediction is what the filter verifies a request against: the
// decision's predicted execs and writes, with first (the argv guardrun
// executes: the shell's program, its options, -c, the script and its
// positional arguments, or the command of an argv request) as the first
// exec, and the sandbox's private /tmp as the command's own.
func (d *Decision) Prediction(first []string) *sandbox.Prediction {
	p := &sandbox.Prediction{
		Bounded: d.Bounded, Unbounded: d.Unbounded,
		Write:    slices.Clone(d.MayWrite),
		TempDirs: []string{privateTmp},
	}
	execs := d.MayExec
	if d.shell && len(execs) > 0 {
		execs = execs[1:]
	}
	if len(first) > 0 {
		x := sandbox.Exec{Name: filepath.Base(first[0]), Args: []sandbox.Arg{}}
		if d.shell && len(d.MayExec) > 0 && d.MayExec[0].Name == x.Name {
			x.Paths = d.MayExec[0].Paths
		} else if filepath.IsAbs(first[0]) {
			x.Paths = appendNew([]string{first[0]}, Resolve(first[0], "/"))
		}
		for _, a := range first[1:] {
			x.Args = append(x.Args, sandbox.Arg{Kind: sandbox.ArgWord, Value: a})
		}
		p.Exec = append(p.Exec, x)
	} else if d.shell && len(d.MayExec) > 0 {
		p.Exec = append(p.Exec, d.MayExec[0])
	}
	p.Exec = append(p.Exec, execs...)
	return p
}
