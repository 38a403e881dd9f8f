package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/term"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/shellparse"
)

const shellUsage = `Usage: guardrun shell

A supervised shell for a person or an agent typing commands line by line.
Each input is checked against the rules, asks for approval when they say
so, and runs in the OS sandbox. Input that does not end a command (an
open quote, a trailing | or &&, an unfinished if or heredoc) is read on
until it does.

cd, export and unset on a line of their own are checked and run like any
command and then also take effect for the lines that follow; exit [N] ends
the shell. After cd, the lines that follow run under the config of the new
directory, found and trusted as at start (its .guardrun.yaml, if any). Everything else runs in a fresh sandboxed shell, so shell
variables, functions and aliases do not carry over from one input to the
next: export what later lines need.

With a terminal on stdin, ^C abandons the line being typed; ^D at an empty
prompt ends the shell. From a pipe, commands read the rest of the input
after their own line, as with sh.

Exit status: that of the last command, or N from exit N.
`

// shell is the state `guardrun shell` carries from one input to the next.
type shell struct {
	s           *request.Session
	io          IO
	interactive bool
	lang        syntax.LangVariant
	in          *lineReader

	cwd     string
	environ []string
	status  int
}

func runShell(g *global, args []string, io IO) error {
	vf, help, err := verbStart(g, args, shellUsage, nil, nil, io)
	if err != nil || help {
		return err
	}
	if len(vf.args) > 0 || vf.dashes {
		return usagef("shell takes no arguments (to run one script: guardrun -c 'SCRIPT')")
	}
	s, err := request.Open(g.Options, io)
	if err != nil {
		return err
	}
	sh := &shell{
		s: s, io: io,
		lang:    shellparse.DialectFor(s.Loaded.Cfg.Shell.Program),
		in:      &lineReader{r: io.Stdin},
		cwd:     s.Env.Cwd,
		environ: os.Environ(),
	}
	if f, ok := io.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		sh.interactive = true
	}
	return sh.loop()
}

// loop reads inputs until exit or end of input. A complete input is one
// the parser can read to its end.
func (sh *shell) loop() error {
	var intr chan os.Signal
	if sh.interactive {
		// ^C reaches guardrun too (it shares the terminal's foreground
		// group with the command); it abandons the line, not the shell.
		intr = make(chan os.Signal, 1)
		signal.Notify(intr, os.Interrupt)
		defer signal.Stop(intr)
	}
	var src strings.Builder
	for {
		if sh.interactive {
			if src.Len() == 0 {
				fmt.Fprint(sh.io.Stderr, sh.ps1())
			} else {
				fmt.Fprint(sh.io.Stderr, "> ")
			}
		}
		line, err, interrupted := sh.in.next(intr)
		if interrupted {
			src.Reset()
			fmt.Fprintln(sh.io.Stderr)
			continue
		}
		src.WriteString(line)
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return fmt.Errorf("shell: read: %w", err)
		}
		input := src.String()
		if !eof && shellparse.Incomplete(input, sh.lang) {
			continue
		}
		src.Reset()
		if strings.TrimSpace(input) != "" {
			if exit, code := sh.execute(input); exit {
				return statusError(code)
			}
		}
		if eof {
			if sh.interactive {
				fmt.Fprintln(sh.io.Stderr, "exit")
			}
			return statusError(sh.status)
		}
		if intr != nil {
			// A ^C that stopped the command is spent; like bash, end
			// the line it interrupted.
			select {
			case <-intr:
			default:
			}
			if sh.status == 128+int(syscall.SIGINT) {
				fmt.Fprintln(sh.io.Stderr)
			}
		}
	}
}

func statusError(code int) error {
	if code == 0 {
		return nil
	}
	return &exitStatus{Code: code}
}

func (sh *shell) ps1() string {
	dir := sh.cwd
	if home := sh.s.Env.Home; home != "" && (dir == home || strings.HasPrefix(dir, home+"/")) {
		dir = "~" + dir[len(home):]
	}
	return "guardrun:" + dir + "$ "
}

// execute runs one complete input. exit reports that the shell ends,
// with code.
func (sh *shell) execute(src string) (exit bool, code int) {
	b, note := sh.stateBuiltin(src)
	if b != nil && b.name == "exit" {
		return sh.exit(b.args)
	}
	if b != nil && b.name == "cd" && len(b.args) == 1 && b.args[0] == "-" {
		// The sandbox has no OLDPWD (it describes the host), so the
		// directory is named: the person approves, and the audit shows,
		// where the shell goes.
		old, ok := getenvFrom(sh.environ, "OLDPWD")
		if !ok || old == "" {
			fmt.Fprintln(sh.io.Stderr, "guardrun: cd: OLDPWD not set")
			sh.status = 1
			return false, 0
		}
		q, err := syntax.Quote(old, sh.lang)
		if err != nil {
			fmt.Fprintf(sh.io.Stderr, "guardrun: cd: %v\n", err)
			sh.status = 1
			return false, 0
		}
		src = "cd -- " + q
		b.args, b.show = []string{"--", old}, true
	}
	j := &request.Job{Script: src, Cwd: sh.cwd, Environ: sh.environ}
	err := sh.s.Run(context.Background(), j, sh.io)
	sh.status = report(err, sh.io.Stderr)
	if note != "" {
		fmt.Fprintf(sh.io.Stderr, "guardrun: note: %s\n", note)
	}
	// The builtin ran (approved, sandboxed, audited) and succeeded
	// there; now it takes effect for the lines that follow.
	if err == nil && b != nil {
		sh.status = sh.apply(b)
	}
	return false, 0
}

// builtinCall is a cd, export, unset or exit whose words are known
// without running anything.
type builtinCall struct {
	name string
	args []string
	// show prints the new directory after cd, as `cd -` does.
	show bool
	// assigns are export's NAME=VALUE words, already split; args then
	// hold the options and bare names.
	assigns []assign
}

type assign struct {
	name, value string
	append      bool
}

// stateBuiltin recognises an input that is exactly one cd, export, unset
// or exit: one plain command, no redirections, assignments, pipes or
// background. Its words must expand without running anything (no command
// substitution) and without globbing; otherwise note says why its effect
// cannot carry over.
func (sh *shell) stateBuiltin(src string) (b *builtinCall, note string) {
	f, err := syntax.NewParser(syntax.Variant(sh.lang)).Parse(strings.NewReader(src), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, ""
	}
	st := f.Stmts[0]
	if st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 {
		return nil, ""
	}
	cfg := &expand.Config{Env: expand.ListEnviron(sh.environ...)}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) == 0 && len(c.Assigns) > 0 && c.Assigns[0].Name != nil {
			// Each input runs in a fresh shell: a plain variable dies
			// with it.
			n := c.Assigns[0].Name.Value
			return nil, fmt.Sprintf("%s= does not carry over to the next line; use export %s=...", n, n)
		}
		if len(c.Assigns) > 0 || len(c.Args) == 0 {
			return nil, ""
		}
		name := c.Args[0].Lit()
		switch name {
		case "cd", "export", "unset", "exit":
		default:
			return nil, ""
		}
		for _, w := range c.Args[1:] {
			if hasGlob(w) {
				return nil, fmt.Sprintf("%s with a pattern does not carry over to the next line; name it literally", name)
			}
		}
		var args []string
		for _, w := range c.Args[1:] {
			var ws []string
			var err error
			if name == "export" && isAssignWord(w) {
				// A declaration utility: NAME=$X is not split (POSIX
				// dialects parse export as a plain command).
				var v string
				v, err = expand.Literal(cfg, w)
				ws = []string{v}
			} else {
				ws, err = expand.Fields(cfg, w)
			}
			if err != nil {
				return nil, fmt.Sprintf("%s's words need running something (%v), so its effect does not carry over to the next line", name, err)
			}
			args = append(args, ws...)
		}
		b = &builtinCall{name: name, args: args}
		if name == "export" {
			b.args = nil
			for _, a := range args {
				if n, v, ok := strings.Cut(a, "="); ok && !strings.HasPrefix(a, "-") {
					ap := strings.HasSuffix(n, "+")
					b.assigns = append(b.assigns, assign{name: strings.TrimSuffix(n, "+"), value: v, append: ap})
				} else {
					b.args = append(b.args, a)
				}
			}
		}
		return b, ""
	case *syntax.DeclClause:
		if c.Variant == nil || c.Variant.Value != "export" {
			return nil, ""
		}
		b = &builtinCall{name: "export"}
		for _, a := range c.Args {
			if a.Array != nil || a.Index != nil {
				return nil, "export of an array does not carry over to the next line"
			}
			switch {
			case a.Naked && a.Name != nil:
				b.args = append(b.args, a.Name.Value)
			case a.Naked:
				if hasGlob(a.Value) {
					return nil, "export with a pattern does not carry over to the next line; name it literally"
				}
				ws, err := expand.Fields(cfg, a.Value)
				if err != nil {
					return nil, fmt.Sprintf("export's words need running something (%v), so its effect does not carry over to the next line", err)
				}
				b.args = append(b.args, ws...)
			default:
				v := ""
				if a.Value != nil {
					var err error
					if v, err = expand.Literal(cfg, a.Value); err != nil {
						return nil, fmt.Sprintf("export's value needs running something (%v), so it does not carry over to the next line", err)
					}
				}
				b.assigns = append(b.assigns, assign{name: a.Name.Value, value: v, append: a.Append})
			}
		}
		return b, ""
	}
	return nil, ""
}

var assignPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\+?=`) })

// isAssignWord reports whether w starts with a literal NAME= or NAME+=.
func isAssignWord(w *syntax.Word) bool {
	if len(w.Parts) == 0 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && assignPrefix().MatchString(l.Value)
}

// hasGlob reports whether a word has an unquoted pattern character, which
// the sandboxed shell would expand against files guardrun does not list.
func hasGlob(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.ContainsAny(l.Value, "*?[") {
			return true
		}
		if _, ok := p.(*syntax.ExtGlob); ok {
			return true
		}
	}
	return false
}

var varName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// apply makes a builtin that succeeded in the sandbox take effect here,
// and returns the status, as bash would report it.
func (sh *shell) apply(b *builtinCall) int {
	switch b.name {
	case "cd":
		return sh.cd(b.args, b.show)
	case "export":
		unexport := false
		for _, a := range b.args {
			switch {
			case a == "-n":
				unexport = true
			case strings.HasPrefix(a, "-"):
			case unexport && varName().MatchString(a):
				sh.environ = unsetenv(sh.environ, a)
			}
		}
		for _, a := range b.assigns {
			if !varName().MatchString(a.name) {
				continue
			}
			v := a.value
			if a.append {
				old, _ := getenvFrom(sh.environ, a.name)
				v = old + v
			}
			if unexport {
				sh.environ = unsetenv(sh.environ, a.name)
				continue
			}
			sh.environ = setenv(sh.environ, a.name, v)
		}
	case "unset":
		for _, a := range b.args {
			if a == "-f" {
				return 0 // functions do not outlive a line anyway
			}
			if !strings.HasPrefix(a, "-") && varName().MatchString(a) {
				sh.environ = unsetenv(sh.environ, a)
			}
		}
	}
	return 0
}

// cd moves the shell, logically (as bash's default cd -L): DIR relative
// to the current directory, `cd` alone to $HOME. (`cd -` arrives here
// already resolved.)
func (sh *shell) cd(args []string, show bool) int {
	var dirs []string
	for i, a := range args {
		if a == "--" {
			dirs = append(dirs, args[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			continue // -L, -P, -e, -@
		}
		dirs = append(dirs, a)
	}
	if len(dirs) > 1 {
		fmt.Fprintln(sh.io.Stderr, "guardrun: cd: too many arguments")
		return 1
	}
	target := ""
	switch {
	case len(dirs) == 0:
		h, ok := getenvFrom(sh.environ, "HOME")
		if !ok || h == "" {
			fmt.Fprintln(sh.io.Stderr, "guardrun: cd: HOME not set")
			return 1
		}
		target = h
	default:
		target = dirs[0]
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(sh.cwd, target)
	}
	target = filepath.Clean(target)
	fi, err := os.Stat(target)
	switch {
	case err != nil && errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(sh.io.Stderr, "guardrun: cd: %s: No such file or directory\n", dirs0(dirs, target))
		return 1
	case err != nil:
		fmt.Fprintf(sh.io.Stderr, "guardrun: cd: %s: %v\n", dirs0(dirs, target), errors.Unwrap(err))
		return 1
	case !fi.IsDir():
		fmt.Fprintf(sh.io.Stderr, "guardrun: cd: %s: Not a directory\n", dirs0(dirs, target))
		return 1
	}
	// The lines that follow run under the config of the new directory,
	// found and trusted as at start; one that does not load keeps the
	// shell where it is.
	l, err := sh.configFor(target)
	if err != nil {
		fmt.Fprintf(sh.io.Stderr, "guardrun: cd: %s: %v\n", dirs0(dirs, target), err)
		return 1
	}
	if sh.s.Sandboxed {
		// Every later command would fail to start there; say so now.
		if _, err := request.ProfileFor(l, sh.s.Env, target, false); err != nil {
			if inner := errors.Unwrap(err); inner != nil {
				err = inner
			}
			fmt.Fprintf(sh.io.Stderr, "guardrun: cd: %s: commands cannot run there: %v\n", dirs0(dirs, target), err)
			return 1
		}
	}
	sh.environ = setenv(sh.environ, "OLDPWD", sh.cwd)
	sh.environ = setenv(sh.environ, "PWD", target)
	sh.cwd = target
	sh.useConfig(l)
	if show {
		fmt.Fprintln(sh.io.Stdout, target)
	}
	return 0
}

func dirs0(dirs []string, target string) string {
	if len(dirs) > 0 {
		return dirs[0]
	}
	return target
}

// exit ends the shell with N (mod 256), or the last status without one.
func (sh *shell) exit(args []string) (bool, int) {
	if sh.interactive {
		fmt.Fprintln(sh.io.Stderr, "exit")
	}
	switch len(args) {
	case 0:
		return true, sh.status
	case 1:
		n, err := strconv.Atoi(strings.TrimSpace(args[0]))
		if err != nil {
			fmt.Fprintf(sh.io.Stderr, "guardrun: exit: %s: numeric argument required\n", args[0])
			return true, 2
		}
		return true, n & 0xff
	}
	fmt.Fprintln(sh.io.Stderr, "guardrun: exit: too many arguments")
	sh.status = 1
	return false, 0
}

// lineReader reads input a line at a time, one byte per read, so that
// what follows a line is still there for the command it runs (sh does the
// same on a pipe).
type lineReader struct {
	r io.Reader
	// pending is a read still under way after a ^C abandoned the wait
	// for it; its line belongs to the next prompt.
	pending chan lineResult
}

type lineResult struct {
	line string
	err  error
}

// next returns the next line, its newline included. With intr, the wait
// can be interrupted; the read goes on and its line is returned by the
// next call. Reading happens only while next waits, so a command that
// runs in between has the input to itself.
func (lr *lineReader) next(intr <-chan os.Signal) (line string, err error, interrupted bool) {
	if intr == nil {
		line, err = lr.read()
		return line, err, false
	}
	if lr.pending == nil {
		ch := make(chan lineResult, 1)
		lr.pending = ch
		go func() {
			l, err := lr.read()
			ch <- lineResult{l, err}
		}()
	}
	select {
	case res := <-lr.pending:
		lr.pending = nil
		return res.line, res.err, false
	case <-intr:
		return "", nil, true
	}
}

func (lr *lineReader) read() (string, error) {
	var b []byte
	var c [1]byte
	for {
		n, err := lr.r.Read(c[:])
		if n == 1 {
			b = append(b, c[0])
			if c[0] == '\n' {
				return string(b), nil
			}
		}
		if err != nil {
			return string(b), err
		}
	}
}
