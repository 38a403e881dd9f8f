package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
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
	if b != nil && b.Builtin == "exit" {
		return sh.exit(b.Args)
	}
	if b != nil && b.Builtin == "cd" && len(b.Args) == 1 && b.Args[0] == "-" {
		// The sandbox has no OLDPWD (it describes the host), so the
		// directory is named: the person approves, and the audit shows,
		// where the shell goes.
		old, ok := getenvFrom(sh.environ, "OLDPWD")
		if !ok || old == "" {
			fmt.Fprintln(sh.io.Stderr, "guardrun: cd: OLDPWD not set")
			sh.status = 1
			return false, 0
		}
		q, err := shellparse.Quote(old, sh.lang)
		if err != nil {
			fmt.Fprintf(sh.io.Stderr, "guardrun: cd: %v\n", err)
			sh.status = 1
			return false, 0
		}
		src = "cd -- " + q
		b.Args, b.show = []string{"--", old}, true
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
	*shellparse.Carried
	// show prints the new directory after cd, as `cd -` does.
	show bool
}

// stateBuiltin recognises an input that is exactly one cd, export, unset
// or exit, from the analysis the rules decide on (shellparse's Carry),
// its words expanded with this shell's environment; otherwise note says
// why its effect cannot carry over.
func (sh *shell) stateBuiltin(src string) (b *builtinCall, note string) {
	s, err := sh.s.Loaded.Engine.Analyse(src)
	if err != nil {
		return nil, ""
	}
	cfg := &expand.Config{Env: expand.ListEnviron(sh.environ...)}
	c, note := s.Carry(shellparse.Expander{
		Fields:  func(w *syntax.Word) ([]string, error) { return expand.Fields(cfg, w) },
		Literal: func(w *syntax.Word) (string, error) { return expand.Literal(cfg, w) },
	})
	if c == nil {
		return nil, note
	}
	return &builtinCall{Carried: c}, ""
}

// apply makes a builtin that succeeded in the sandbox take effect here,
// and returns the status, as bash would report it.
func (sh *shell) apply(b *builtinCall) int {
	if b.Builtin == "cd" {
		return sh.cd(b.Args, b.show)
	}
	for _, ch := range b.EnvChanges() {
		if ch.Unset {
			sh.environ = unsetenv(sh.environ, ch.Name)
			continue
		}
		v := ch.Value
		if ch.Append {
			old, _ := getenvFrom(sh.environ, ch.Name)
			v = old + v
		}
		sh.environ = setenv(sh.environ, ch.Name, v)
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
