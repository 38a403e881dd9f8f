package rules

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/testing/testenv"
	"github.com/guardrun/guardrun/sandbox"
)

// TestPredictionHoldsRealRuns runs each script of
// testdata/predict/commands.txt with bash under strace, in a fresh copy
// of a small project, and checks that every program it executes and
// every write-like call it makes (open for writing, create, truncate,
// rename, link, symlink, delete, mkdir, chmod, chown, utimes, xattrs) is
// inside the decision's prediction, matched as the run-time filter
// matches it (sandbox.Prediction.MatchExec and MatchWrite), beside what
// the filter always allows: /dev/null and the like, the terminal, the
// command's own $TMPDIR (the sandbox's private /tmp). A failed exec of a
// path where no file exists is execvp's PATH search, which the filter
// answers itself.
func TestPredictionHoldsRealRuns(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		testenv.Missing(t, "strace is not installed: the prediction cannot be checked against real runs")
	}
	for _, p := range []string{"/bin/bash", "git", "tar", "gzip"} {
		if _, err := exec.LookPath(p); err != nil {
			testenv.Missing(t, "%s is not installed: the commands need it", p)
		}
	}
	root := hostDir(t)
	template, work, home, tmp := filepath.Join(root, "template"), filepath.Join(root, "w"), filepath.Join(root, "home"), filepath.Join(root, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{
		"PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": tmp, "LANG": "C.UTF-8",
		"GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z",
	}
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	makeProject(t, template, env)

	c := Default(Env{Cwd: work, Home: home, StateDir: filepath.Join(home, ".state")})
	e, err := New(c, home)
	if err != nil {
		t.Fatal(err)
	}
	e.SetCommandEnv(func(k string) string { return vars[k] })

	tr := &tracer{strace: strace, env: env, work: work, template: template, tmp: tmp}
	if !tr.usable(t) {
		testenv.Missing(t, "strace cannot trace here (ptrace not permitted?)")
	}

	// The harness must see what runs and what is written, or every
	// check passes.
	t.Run("the harness sees an exec and a write outside a prediction", func(t *testing.T) {
		d := e.Script("touch zz", work)
		p := d.Prediction([]string{c.Shell.Program, "-c", "touch zz"})
		p.Write = nil
		got := tr.run(t, "touch zz", p)
		if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "/zz") }) {
			t.Fatalf("a prediction without the write of zz let every call through: %q", got)
		}
		p.Exec = p.Exec[:1]
		got = tr.run(t, "touch zz", p)
		if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "exec /usr/bin/touch") }) {
			t.Fatalf("a prediction with only the shell let touch run: %q", got)
		}
	})

	// On a terminal git starts its pager: the system's (pager), or
	// less.
	t.Run("git pages to a terminal", func(t *testing.T) {
		if _, err := exec.LookPath("script"); err != nil {
			testenv.Missing(t, "script (util-linux) is not installed: no terminal to page to")
		}
		const script = "git log -1"
		d := e.Script(script, work)
		p := d.Prediction([]string{c.Shell.Program, "-c", script})
		tty := *tr
		tty.tty = true
		if bad := tty.run(t, script, p); len(bad) > 0 {
			t.Errorf("on a terminal, %s did what the prediction does not hold: %q", script, bad)
		}
		if !slices.ContainsFunc(tty.seen, func(x string) bool { return x == "/usr/bin/pager" || x == "/usr/bin/less" }) {
			t.Errorf("git started no pager on the terminal (the test sees no terminal?): it ran %q", tty.seen)
		}
	})

	data, err := os.ReadFile("testdata/predict/commands.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		script := strings.NewReplacer("@W@", work, "@H@", home).Replace(line)
		t.Run(line, func(t *testing.T) {
			d := e.Script(script, work)
			if !d.Bounded {
				t.Fatalf("not bounded: %s", d.Unbounded)
			}
			p := d.Prediction([]string{c.Shell.Program, "-c", script})
			for _, bad := range tr.run(t, script, p) {
				t.Errorf("%s, which the prediction does not hold", bad)
			}
			if t.Failed() {
				t.Logf("predicted: %s", describe(p))
			}
		})
	}
	if n < 100 {
		t.Errorf("the corpus has %d commands; it should hold about a hundred", n)
	}
}

// makeProject makes the project the commands run in: a git repository
// with two commits and a changed file, sources, an archive, a Makefile.
func makeProject(t *testing.T, dir string, env []string) {
	t.Helper()
	files := map[string]string{
		"README.md":     "# guardrun demo\nguardrun runs this\n",
		"f":             "a\nb\n",
		"in":            "x\ny\n",
		"src/app.go":    "package main\n\nfunc main() {}\n",
		"src/util.go":   "package main\n",
		"docs/notes.md": "notes\n",
		"a/d/z":         "x\n",
		"sub/Makefile":  "all:\n\t@echo hi\n",
		"hooks/a.sh":    "#!/bin/sh\n",
		"tool.sh":       "#!/bin/sh\n",
		"in.json":       "{\"a\": 1}\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"tar", "-czf", "x.tgz", "f", "in"},
		{"git", "init", "-q", "."},
		{"git", "-c", "user.name=a", "-c", "user.email=a@b", "add", "-A"},
		{"git", "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "one"},
		{"sh", "-c", "echo c >> in"},
		{"git", "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qam", "two"},
		{"sh", "-c", "echo x >> f && git add f && echo y >> README.md"},
	} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, out)
		}
	}
}

// tracer runs scripts under strace and checks what they did.
type tracer struct {
	strace, work, template, tmp string
	env                         []string
	// tty: run on a terminal (script(1)'s).
	tty bool
	// seen are the programs the last run executed.
	seen []string
}

// traced are the system calls the filter holds outside the prediction,
// and those that tell which directory a process is in.
const traced = "execve,execveat,open,openat,openat2,creat,truncate,rename,renameat,renameat2,link,linkat,symlink,symlinkat," +
	"unlink,unlinkat,rmdir,mkdir,mkdirat,mknod,mknodat,chmod,fchmodat,chown,lchown,fchownat,utime,utimes,utimensat,futimesat," +
	"setxattr,lsetxattr,removexattr,lremovexattr,chdir,fchdir,clone,clone3,fork,vfork"

func (tr *tracer) usable(t *testing.T) bool {
	out := filepath.Join(t.TempDir(), "probe")
	err := exec.Command(tr.strace, "-f", "-qq", "-e", "trace=execve", "-o", out, "true").Run()
	b, _ := os.ReadFile(out)
	return err == nil && strings.Contains(string(b), "execve(")
}

// run runs script with bash in a fresh copy of the project and returns
// each exec and write it made that p does not hold, as "exec PATH ARGV"
// or "SYSCALL PATH".
func (tr *tracer) run(t *testing.T, script string, p *sandbox.Prediction) []string {
	t.Helper()
	if err := os.RemoveAll(tr.work); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", tr.template, tr.work).CombinedOutput(); err != nil {
		t.Fatalf("copying the project: %v\n%s", err, out)
	}
	log := filepath.Join(t.TempDir(), "trace")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	argv := []string{tr.strace, "-f", "-qq", "-y", "-s", "65536", "-e", "trace=" + traced, "-o", log, "--", "/bin/bash", "-c", script}
	if tr.tty {
		var quoted []string
		for _, a := range argv {
			quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
		}
		argv = []string{"script", "-qfec", strings.Join(quoted, " "), "/dev/null"}
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = tr.work, tr.env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s did not end: %s", script, out)
	}
	_ = err // the script's own status does not matter
	calls, err := readTrace(log, tr.work)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 || calls[0].name != "execve" {
		t.Fatalf("the trace does not start with the shell's exec: %v", calls)
	}
	var bad []string
	tr.seen = nil
	for _, c := range calls {
		if c.name == "execve" && c.err == "" {
			tr.seen = append(tr.seen, c.paths[0])
		}
		if why := tr.check(c, p); why != "" {
			bad = append(bad, why)
		}
	}
	return bad
}

// check returns what a call does that p does not hold, or "".
func (tr *tracer) check(c call, p *sandbox.Prediction) string {
	switch c.name {
	case "execve", "execveat":
		if c.err == "ENOENT" || c.err == "ENOTDIR" {
			return ""
		}
		path := c.paths[0]
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			real = path
		}
		if _, ok := p.MatchExec(path, real, c.argv); ok {
			return ""
		}
		return fmt.Sprintf("exec %s %q", path, c.argv)
	}
	for _, path := range c.paths {
		if alwaysWritable(path, tr.tmp) {
			continue
		}
		name := filepath.Join(Resolve(filepath.Dir(path), "/"), filepath.Base(path))
		if _, ok := p.MatchWrite(name); ok {
			continue
		}
		if _, ok := p.MatchWrite(Resolve(path, "/")); ok && c.follows {
			continue
		}
		return fmt.Sprintf("%s %s (%s)", c.name, path, c.raw)
	}
	return ""
}

// alwaysWritable are the paths the filter lets every command write.
func alwaysWritable(p, tmp string) bool {
	switch p {
	case "/dev/null", "/dev/zero", "/dev/full", "/dev/tty":
		return true
	}
	return Within(p, "/dev/pts") || Within(p, tmp)
}

// call is one traced system call: for an exec, the path and argv; for a
// write-like call, the paths it changes, made absolute in the caller's
// directory (or the directory descriptor's).
type call struct {
	pid     int
	name    string
	paths   []string
	argv    []string
	err     string
	follows bool // the call follows a symlink in the last component
	raw     string
}

// readTrace reads strace -f -y output: the calls that exec or write,
// with their paths resolved against each process's working directory.
func readTrace(file, start string) ([]call, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type event struct {
		pid  int
		text string
	}
	// Calls another process interrupts come in two lines; join them,
	// at the place of the first.
	var events []*event
	pending := map[int]*event{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		pidText, rest, _ := strings.Cut(line, " ")
		pid, err := strconv.Atoi(pidText)
		if err != nil {
			continue
		}
		rest = strings.TrimLeft(rest, " ")
		switch {
		case strings.HasSuffix(rest, " <unfinished ...>"):
			ev := &event{pid, strings.TrimSuffix(rest, " <unfinished ...>")}
			pending[pid] = ev
			events = append(events, ev)
		case strings.HasPrefix(rest, "<... "):
			if ev := pending[pid]; ev != nil {
				_, tail, _ := strings.Cut(rest, " resumed>")
				ev.text += tail
				delete(pending, pid)
			}
		case strings.HasPrefix(rest, "+++") || strings.HasPrefix(rest, "---"):
		default:
			events = append(events, &event{pid, rest})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	cwd := map[int]string{}
	var out []call
	for i, ev := range events {
		name, args, ret, errno, ok := splitCall(ev.text)
		if !ok {
			continue
		}
		if i == 0 {
			cwd[ev.pid] = start
		}
		dir := cwd[ev.pid]
		if dir == "" {
			dir = start
		}
		abs := func(dirfd, p string) string {
			if filepath.IsAbs(p) {
				return filepath.Clean(p)
			}
			base := dir
			if dirfd != "AT_FDCWD" {
				base = fdPath(dirfd)
			}
			return filepath.Clean(base + "/" + p)
		}
		arg := func(k int) string {
			if k < len(args) {
				return args[k]
			}
			return ""
		}
		str := func(k int) string { return unquote(arg(k)) }
		c := call{pid: ev.pid, name: name, err: errno, raw: ev.text}
		switch name {
		case "clone", "clone3", "fork", "vfork":
			if child, err := strconv.Atoi(ret); err == nil && child > 0 {
				cwd[child] = dir
			}
			continue
		case "chdir":
			if ret == "0" {
				cwd[ev.pid] = abs("AT_FDCWD", str(0))
			}
			continue
		case "fchdir":
			if ret == "0" {
				cwd[ev.pid] = fdPath(arg(0))
			}
			continue
		case "execve":
			c.paths, c.argv = []string{abs("AT_FDCWD", str(0))}, unquoteList(arg(1))
		case "execveat":
			c.paths, c.argv = []string{abs(arg(0), str(1))}, unquoteList(arg(2))
		case "open", "creat", "openat", "openat2":
			path, flags := str(0), arg(1)
			dirfd := "AT_FDCWD"
			if name == "openat" || name == "openat2" {
				dirfd, path, flags = arg(0), str(1), arg(2)
			}
			if name != "creat" && !writeFlags(flags) {
				continue
			}
			c.paths, c.follows = []string{abs(dirfd, path)}, !strings.Contains(flags, "O_NOFOLLOW") && !strings.Contains(flags, "O_EXCL")
		case "truncate", "chmod", "chown", "utime", "utimes", "setxattr", "removexattr":
			c.paths, c.follows = []string{abs("AT_FDCWD", str(0))}, true
		case "lchown", "lsetxattr", "lremovexattr", "unlink", "rmdir", "mkdir", "mknod":
			c.paths = []string{abs("AT_FDCWD", str(0))}
		case "unlinkat", "mkdirat", "mknodat":
			c.paths = []string{abs(arg(0), str(1))}
		case "fchmodat", "fchownat", "futimesat", "utimensat":
			if arg(1) == "NULL" {
				// utimensat(fd, NULL, ...): the file the descriptor is.
				c.paths = []string{fdPath(arg(0))}
			} else {
				c.paths, c.follows = []string{abs(arg(0), str(1))}, !strings.Contains(strings.Join(args[2:], ","), "AT_SYMLINK_NOFOLLOW")
			}
		case "rename", "link":
			c.paths = []string{abs("AT_FDCWD", str(0)), abs("AT_FDCWD", str(1))}
			if name == "link" {
				c.paths = c.paths[1:]
			}
		case "renameat", "renameat2":
			c.paths = []string{abs(arg(0), str(1)), abs(arg(2), str(3))}
		case "linkat":
			c.paths = []string{abs(arg(2), str(3))}
		case "symlink":
			c.paths = []string{abs("AT_FDCWD", str(1))}
		case "symlinkat":
			c.paths = []string{abs(arg(1), str(2))}
		default:
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// writeFlags reports open flags that write, create or truncate.
func writeFlags(flags string) bool {
	if strings.Contains(flags, "O_PATH") {
		return false
	}
	for _, f := range []string{"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"} {
		if strings.Contains(flags, f) {
			return true
		}
	}
	return false
}

// fdPath is the path strace -y shows for a descriptor: 3</w/x>.
func fdPath(a string) string {
	_, p, ok := strings.Cut(a, "<")
	if !ok {
		return a
	}
	return strings.TrimSuffix(p, ">")
}

// splitCall splits `name(args) = ret [ERRNO (text)]`.
func splitCall(s string) (name string, args []string, ret, errno string, ok bool) {
	// strace pads short calls: `chdir("/x")          = 0`.
	open, eq := strings.IndexByte(s, '('), strings.LastIndex(s, " = ")
	if open < 0 || eq < open {
		return "", nil, "", "", false
	}
	left := strings.TrimRight(s[:eq], " ")
	if !strings.HasSuffix(left, ")") {
		return "", nil, "", "", false
	}
	name, ret = s[:open], s[eq+3:]
	eq = len(left) - 1
	if i := strings.IndexByte(ret, ' '); i >= 0 {
		errno = strings.Fields(ret[i:])[0]
		ret = ret[:i]
	}
	if j := strings.IndexByte(ret, '<'); j >= 0 {
		ret = ret[:j] // 3</w/x>
	}
	return name, splitArgs(s[open+1 : eq]), ret, errno, true
}

// splitArgs splits strace arguments at top-level commas.
func splitArgs(s string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '[' || c == '{' || c == '(':
			depth++
		case c == ']' || c == '}' || c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// unquote reads a string as strace shows it.
func unquote(a string) string {
	a = strings.TrimSuffix(a, "...")
	if u, err := strconv.Unquote(a); err == nil {
		return u
	}
	return strings.Trim(a, `"`)
}

// unquoteList reads an argv as strace shows it: ["a", "b"].
func unquoteList(a string) []string {
	a = strings.TrimSuffix(strings.TrimPrefix(a, "["), "]")
	if a == "" {
		return nil
	}
	var out []string
	for _, w := range splitArgs(a) {
		out = append(out, unquote(w))
	}
	return out
}
