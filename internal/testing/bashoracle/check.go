package bashoracle

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/guardrun/guardrun/rules"
	"github.com/guardrun/guardrun/shellparse"
)

// Config is the config the oracle judges scripts with: rm and curl
// blocked; ls, cat, echo, printf, grep, sort, git status/diff/log, true
// and test pre-approved; everything else asks.
func Config(program string) string {
	return `shell:
  program: ` + program + `
  default: {allowed: true, approval: true}
  rules:
    - {pattern: rm, allowed: false}
    - {pattern: curl, allowed: false}
    - {pattern: ls, approval: false}
    - {pattern: cat, approval: false}
    - {pattern: echo, approval: false}
    - {pattern: printf, approval: false}
    - {pattern: grep, approval: false}
    - {pattern: sort, approval: false}
    - {pattern: "git status", approval: false}
    - {pattern: "git diff", approval: false}
    - {pattern: "git log", approval: false}
    - {pattern: "true", approval: false}
    - {pattern: test, approval: false}
sandbox:
  paths:
    ws: {root: ., mode: rw, write_approval: false, read_approval: false, delete_approval: true}
`
}

// Engine compiles Config for a workspace directory.
func Engine(program, dir string) (*rules.Engine, error) {
	c, err := rules.Parse(path.Join(dir, ".guardrun.yaml"), []byte(Config(program)), dir, rules.Env{Cwd: dir, Home: "/nonexistent-home"})
	if err != nil {
		return nil, err
	}
	return rules.New(c, "/nonexistent-home")
}

// Miss is something bash did that the analysis did not report.
type Miss struct {
	What string // "exec" or "write"
	Desc string
}

func (m Miss) String() string { return m.What + ": " + m.Desc }

// Compare lists what the trace shows that the analysis s of the script
// (run in ws) did not report.
func Compare(s *shellparse.Script, t *Trace, ws string) []Miss {
	var out []Miss
	for _, e := range t.Execs {
		if !explainedExec(s, e) {
			out = append(out, Miss{"exec", fmt.Sprintf("%s %q (run by %s)", e.Path, e.Argv, e.By)})
		}
	}
	for _, w := range t.Writes {
		if !isShell(w.By) || harmlessWrite(w.Path) {
			continue
		}
		if !explainedWrite(s, w, ws) {
			out = append(out, Miss{"write", fmt.Sprintf("%s %s (by %s)", w.Call, w.Path, w.By)})
		}
	}
	return out
}

func isShell(image string) bool {
	switch image {
	case "bash", "sh", "dash", "rbash":
		return true
	}
	return false
}

// harmlessWrite: the terminal and the null device, the descriptors a
// process substitution hands over, and the temporary file bash keeps a
// here-document in.
func harmlessWrite(p string) bool {
	switch {
	case p == "/dev/null" || p == "/dev/tty":
		return true
	case strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/"):
		return true
	case strings.HasPrefix(p, "/tmp/sh-thd") || strings.HasPrefix(p, "/tmp/sh-np"):
		return true
	}
	return false
}

func explainedExec(s *shellparse.Script, e Exec) bool {
	names := []string{path.Base(e.Path)}
	if len(e.Argv) > 0 {
		names = append(names, path.Base(e.Argv[0]))
	}
	for _, c := range s.Commands {
		if len(c.Argv) == 0 || !slices.Contains(names, path.Base(c.Argv[0].Value)) {
			continue
		}
		if c.ArgsFromInput || !allStatic(c.Argv) || braced(c.Argv) {
			// Arguments only known at run time; or brace expansion,
			// which dash does not perform while the analysis does (sh
			// may be bash): the program is the one reported.
			return true
		}
		if len(e.Argv) == len(c.Argv) {
			same := true
			for i := 1; i < len(e.Argv); i++ {
				if e.Argv[i] != c.Argv[i].Value {
					same = false
					break
				}
			}
			if same {
				return true
			}
		}
	}
	return false
}

func braced(ws []shellparse.Word) bool {
	for _, w := range ws {
		if strings.Contains(w.Source, "{") && strings.Contains(w.Source, "}") {
			return true
		}
	}
	return false
}

func allStatic(ws []shellparse.Word) bool {
	for _, w := range ws {
		if !w.Static() {
			return false
		}
	}
	return true
}

func explainedWrite(s *shellparse.Script, w Write, ws string) bool {
	for _, f := range s.Files {
		if f.Op != shellparse.OpWrite && w.Call != "openat" {
			continue
		}
		if !f.Path.Static() {
			return true
		}
		if abs(ws, f.Path.Value) == w.Path {
			return true
		}
		// dash does not expand braces: it writes the word as written.
		if strings.Contains(f.Path.Source, "{") && abs(ws, f.Path.Source) == w.Path {
			return true
		}
	}
	return false
}

// ShellFor is the program that runs a script for a config's
// shell.program: /bin/sh is dash on Debian, so the oracle runs dash.
func ShellFor(program string) string {
	if path.Base(program) == "sh" {
		return "/bin/dash"
	}
	return program
}

// Outcome is one script judged and, when allowed, run.
type Outcome struct {
	Decision *rules.Decision
	Ran      bool
	Misses   []Miss
	Result   *Result
}

// Check decides script under Config(program); when the verdict is allow
// it runs the script in the sandbox and compares what ran with what the
// analysis reported.
func (o *Oracle) Check(e *rules.Engine, program, script string) (*Outcome, error) {
	d := e.Script(script, o.decideDir())
	out := &Outcome{Decision: d}
	if d.Decision != rules.Allow {
		return out, nil
	}
	s, err := shellparse.Parse(script, shellparse.Options{Dialect: shellparse.DialectFor(program), Home: o.homeDir()})
	if err != nil {
		return nil, fmt.Errorf("allowed, yet it does not parse: %v", err)
	}
	res, err := o.Run(ShellFor(program), script)
	if err != nil {
		return nil, err
	}
	out.Ran, out.Result = true, res
	out.Misses = Compare(s, res.Trace, res.Workspace)
	return out, nil
}
