package request

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/guardrun/guardrun/internal/agents"
)

// Wrapper is an agent CLI's own script around the command it was asked
// to run, recognised by RecognizeWrapper: the command inside is what is
// judged, shown, audited and run.
//
// Recognition is exact. The script is parsed, its shape checked on the
// syntax tree, and its text compared byte for byte with the agent's
// template filled in with the words found (the command, the paths): a
// script with anything more or less, a different eval target, or a
// command that ends the wrapper's quoting or subshell early is no
// wrapper, and is judged as the ordinary script it is.
//
// The wrappers load the agent's shell snapshot (the person's aliases,
// functions, options and environment, taken from their startup files)
// before the command. guardrun runs the command without it: an alias or
// function there would change what a name in the command runs (Claude
// Code's snapshot defines grep, find and rg), which the analysis cannot
// follow, and the snapshot lies in the agent's state directory, which
// the sandbox does not show. The scripts that make a snapshot are not
// run either (Decline); each agent then goes on without one.
type Wrapper struct {
	// Agent is the agent whose wrapper it is.
	Agent *agents.Agent
	// Command is the agent's command inside the wrapper.
	Command string
	// NullStdin is set when the wrapper gives the command /dev/null
	// for its standard input (Claude Code's eval ... < /dev/null).
	NullStdin bool
	// CwdFile is where Claude Code's wrapper writes the working
	// directory after a command that succeeded (pwd -P >| FILE), from
	// which it starts the next one: guardrun writes it, after the run,
	// outside the sandbox.
	CwdFile string
	// Decline, when set, is why guardrun does not run the script at all:
	// it makes an agent's shell snapshot.
	Decline string
}

// RecognizeWrapper returns the agent's wrapper script is, or nil when it
// is none: Claude Code's per-command line (bash and zsh forms, with
// and without its snapshot), Gemini CLI's subshell, Codex's snapshot
// wrapper, or a script that makes Claude Code's or Codex's shell
// snapshot. getenv is the environment the script came with: the paths
// in a wrapper must lie where that agent keeps them.
func RecognizeWrapper(script string, getenv func(string) string) *Wrapper {
	for _, r := range []func(string, func(string) string) *Wrapper{claudeWrapper, geminiWrapper, codexWrapper, snapshotScript} {
		if a := r(script, getenv); a != nil {
			return a
		}
	}
	return nil
}

// declineSnapshot is why a snapshot script does not run.
const declineSnapshot = "guardrun does not make %s's shell snapshot: it runs each command without one, since the aliases, functions and options a snapshot carries would change what the command runs"

func parseWrapper(src string) *syntax.File {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil
	}
	return f
}

func span(src string, n syntax.Node) string {
	return src[n.Pos().Offset():n.End().Offset()]
}

// safeLit is unquoted text that is one word and itself in bash: no
// expansion, glob, brace, tilde, quote or escape.
var safeLit = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// staticWord is the value of a word written the way the agents quote:
// unquoted safe text, '...' and "..." holding only plain text, joined.
// Any other form (an expansion, an escape, $'...') is no match.
func staticWord(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if !safeLit.MatchString(p.Value) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar || len(p.Parts) > 1 {
				return "", false
			}
			if len(p.Parts) == 1 {
				l, ok := p.Parts[0].(*syntax.Lit)
				if !ok || strings.ContainsAny(l.Value, "\\$`!") {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// plainStmt is a statement with no negation, background or coprocess.
func plainStmt(st *syntax.Stmt) bool {
	return st != nil && !st.Negated && !st.Background && !st.Coprocess && len(st.Comments) == 0
}

// callArgs are the words of a statement that is a plain simple command
// with no assignment, or nil.
func callArgs(st *syntax.Stmt) []*syntax.Word {
	if !plainStmt(st) {
		return nil
	}
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Assigns) > 0 {
		return nil
	}
	return c.Args
}

// andOrLeaves are the statements an && / || list joins, in order.
func andOrLeaves(st *syntax.Stmt) []*syntax.Stmt {
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && plainStmt(st) && len(st.Redirs) == 0 && (b.Op == syntax.AndStmt || b.Op == syntax.OrStmt) {
		return append(andOrLeaves(b.X), andOrLeaves(b.Y)...)
	}
	return []*syntax.Stmt{st}
}

func litIs(w *syntax.Word, s string) bool { return w != nil && w.Lit() == s && len(w.Parts) == 1 }

// Claude Code 2.1's per-command line: [source SNAPSHOT 2>/dev/null ||
// true && ] EXTGLOB && [FORGET which && ] FORGET unsetenv && eval CMD
// [< /dev/null] && pwd -P >| CWDFILE, joined with " && ", where EXTGLOB
// is the form for bash, for zsh or for both (or none) and FORGET removes
// an alias and a function of that name.
const (
	claudeExtglobBash = `\builtin shopt -u extglob 2>/dev/null || true`
	claudeExtglobZsh  = `\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_EQUALS 2>/dev/null || true`
	claudeExtglobBoth = `{ \builtin shopt -u extglob || \builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_EQUALS; } >/dev/null 2>&1 || true`
)

func claudeForget(name string) string {
	return `{ \builtin unalias -- '` + name + `'; \builtin unset -f -- '` + name + `'; } >/dev/null 2>&1 || true`
}

func claudeWrapper(src string, getenv func(string) string) *Wrapper {
	if !strings.Contains(src, " && pwd -P >| ") || !strings.Contains(src, "eval ") {
		return nil
	}
	f := parseWrapper(src)
	if f == nil || len(f.Stmts) != 1 || len(f.Last) > 0 {
		return nil
	}
	leaves := andOrLeaves(f.Stmts[0])
	if len(leaves) < 3 {
		return nil
	}
	pwd, eval := leaves[len(leaves)-1], leaves[len(leaves)-2]
	pa := callArgs(pwd)
	if len(pa) != 2 || !litIs(pa[0], "pwd") || !litIs(pa[1], "-P") || len(pwd.Redirs) != 1 || pwd.Redirs[0].Op != syntax.RdrClob || pwd.Redirs[0].N != nil {
		return nil
	}
	ea := callArgs(eval)
	if len(ea) != 2 || !litIs(ea[0], "eval") {
		return nil
	}
	nullStdin := false
	switch len(eval.Redirs) {
	case 0:
	case 1:
		r := eval.Redirs[0]
		if r.Op != syntax.RdrIn || r.N != nil || !litIs(r.Word, "/dev/null") {
			return nil
		}
		nullStdin = true
	default:
		return nil
	}
	cmd, ok := staticWord(ea[1])
	if !ok || strings.TrimSpace(cmd) == "" {
		return nil
	}
	cwdWord := pwd.Redirs[0].Word
	cwdFile, ok := staticWord(cwdWord)
	if !ok || !claudeCwdFile(cwdFile, getenv) {
		return nil
	}
	source := ""
	if sa := callArgs(leaves[0]); len(sa) == 2 && litIs(sa[0], "source") {
		snap, ok := staticWord(sa[1])
		if !ok || !claudeSnapshot(snap, getenv) {
			return nil
		}
		source = "source " + span(src, sa[1]) + " 2>/dev/null || true"
	}
	tail := []string{claudeForget("unsetenv"), "eval " + span(src, ea[1])}
	if nullStdin {
		tail[1] += " < /dev/null"
	}
	tail = append(tail, "pwd -P >| "+span(src, cwdWord))
	for _, ext := range []string{"", claudeExtglobBash, claudeExtglobZsh, claudeExtglobBoth} {
		for _, which := range []bool{false, true} {
			var pieces []string
			if source != "" {
				pieces = append(pieces, source)
			}
			if ext != "" {
				pieces = append(pieces, ext)
			}
			if which {
				pieces = append(pieces, claudeForget("which"))
			}
			if strings.Join(append(pieces, tail...), " && ") == src {
				return &Wrapper{Agent: agents.Claude, Command: cmd, NullStdin: nullStdin, CwdFile: cwdFile}
			}
		}
	}
	return nil
}

var (
	claudeCwdName      = regexp.MustCompile(`^claude-[0-9a-f]{1,32}-cwd$`)
	claudeSnapshotName = regexp.MustCompile(`^snapshot-[a-z]+-[0-9]+-[a-z0-9]+(-[A-Za-z0-9._-]+)?\.sh$`)
)

// tempDirs are the directories an agent keeps its temporary files in:
// $CLAUDE_CODE_TMPDIR, $TMPDIR and /tmp.
func tempDirs(getenv func(string) string) []string {
	out := []string{"/tmp"}
	for _, v := range []string{"CLAUDE_CODE_TMPDIR", "TMPDIR"} {
		if d := getenv(v); filepath.IsAbs(d) {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

// claudeCwdFile reports whether p is where Claude Code has the working
// directory written: claude-HEX-cwd in its temporary directory.
func claudeCwdFile(p string, getenv func(string) string) bool {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p || !claudeCwdName.MatchString(filepath.Base(p)) {
		return false
	}
	for _, d := range tempDirs(getenv) {
		if filepath.Dir(p) == d {
			return true
		}
	}
	return false
}

// claudeSnapshot reports whether p is one of Claude Code's shell
// snapshots: shell-snapshots/snapshot-SHELL-MS-RAND.sh in its config
// directory ($CLAUDE_CONFIG_DIR, else ~/.claude).
func claudeSnapshot(p string, getenv func(string) string) bool {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p || !claudeSnapshotName.MatchString(filepath.Base(p)) {
		return false
	}
	var dirs []string
	if d := getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(d) {
		dirs = append(dirs, filepath.Clean(d))
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		dirs = append(dirs, filepath.Join(h, ".claude"))
	}
	for _, d := range dirs {
		if filepath.Dir(p) == filepath.Join(d, "shell-snapshots") {
			return true
		}
	}
	return false
}

// Gemini CLI 0.61's wrapper: HEAD WORD TRAP CMD TAIL, where CMD is the
// command as the model wrote it (a space added after a final
// backslash), inside a subshell that records background jobs.
const (
	geminiHead = "shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file="
	geminiTrap = "\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n"
	geminiTail = "\n)\n__code=$?\nexit $__code"
)

var geminiPIDFile = regexp.MustCompile(`/gemini-shell-[A-Za-z0-9]{6}/bgpids\.tmp$`)

func geminiWrapper(src string, getenv func(string) string) *Wrapper {
	rest, ok := strings.CutPrefix(src, geminiHead)
	if !ok {
		return nil
	}
	word, body, ok := strings.Cut(rest, geminiTrap)
	if !ok {
		return nil
	}
	cmd, ok := strings.CutSuffix(body, geminiTail)
	if !ok || strings.TrimSpace(cmd) == "" {
		return nil
	}
	f := parseWrapper(src)
	if f == nil || len(f.Stmts) != 5 || len(f.Last) > 0 {
		return nil
	}
	if a := callArgs(f.Stmts[0]); len(a) != 7 || !litIs(a[0], "shopt") || len(f.Stmts[0].Redirs) > 0 {
		return nil
	}
	// _bgpids_file=WORD, alone.
	as, ok := f.Stmts[1].Cmd.(*syntax.CallExpr)
	if !ok || !plainStmt(f.Stmts[1]) || len(f.Stmts[1].Redirs) > 0 || len(as.Args) > 0 || len(as.Assigns) != 1 {
		return nil
	}
	if a := as.Assigns[0]; a.Name == nil || a.Name.Value != "_bgpids_file" || a.Append || a.Array != nil || a.Index != nil || span(src, a.Value) != word {
		return nil
	} else if p, ok := staticWord(a.Value); !ok || !filepath.IsAbs(p) || !geminiPIDFile.MatchString(p) {
		return nil
	}
	// The subshell opens and closes where the template has its
	// parentheses, its first statement the trap, the rest the command.
	sub, ok := f.Stmts[2].Cmd.(*syntax.Subshell)
	cmdStart := len(geminiHead) + len(word) + len(geminiTrap)
	if !ok || !plainStmt(f.Stmts[2]) || len(f.Stmts[2].Redirs) > 0 || len(sub.Stmts) < 2 ||
		int(sub.Lparen.Offset()) != len(geminiHead)+len(word)+1 ||
		int(sub.Rparen.Offset()) != len(src)-len(geminiTail)+1 {
		return nil
	}
	if t := callArgs(sub.Stmts[0]); len(t) != 3 || !litIs(t[0], "trap") || int(sub.Stmts[0].End().Offset()) > cmdStart {
		return nil
	}
	if int(sub.Stmts[1].Pos().Offset()) < cmdStart {
		return nil
	}
	return &Wrapper{Agent: agents.Gemini, Command: cmd}
}

// Codex 0.169's wrapper (login shell, with a snapshot): it saves
// variables Codex sets, sources the snapshot, restores them, puts its
// helper directory first in PATH, and execs the shell with -c CMD.
var (
	codexSave   = regexp.MustCompile(`^__CODEX_SNAPSHOT_(PROXY_)?OVERRIDE_SET_([0-9]+)="\$\{([A-Za-z_][A-Za-z0-9_]*)\+x\}"\n`)
	codexSource = regexp.MustCompile(`^__CODEX_SNAPSHOT_PROXY_ENV_SET="\$\{CODEX_NETWORK_PROXY_ACTIVE\+x\}"\n\nif \. ('/[^']*') >/dev/null 2>&1; then :; fi\n\n`)
	codexExec   = regexp.MustCompile(`^if \[ -n "\$\{PATH:-\}" \]; then export PATH=('/[^']*'):"\$PATH"; else export PATH=('/[^']*'); fi\n\nexec ('/[^']*') -c `)
)

func codexWrapper(src string, getenv func(string) string) *Wrapper {
	if !strings.HasPrefix(src, "__CODEX_SNAPSHOT_") {
		return nil
	}
	var over, proxy []string
	rest := src
	for {
		m := codexSave.FindStringSubmatch(rest)
		if m == nil {
			break
		}
		list := &over
		if m[1] != "" {
			list = &proxy
		} else if len(proxy) > 0 {
			return nil
		}
		if m[2] != fmt.Sprint(len(*list)) {
			return nil
		}
		*list = append(*list, m[3])
		rest = rest[len(m[0]):]
		want := fmt.Sprintf("__CODEX_SNAPSHOT_%sOVERRIDE_%s=\"${%s-}\"\n", m[1], m[2], m[3])
		if !strings.HasPrefix(rest, want) {
			return nil
		}
		rest = rest[len(want):]
	}
	m := codexSource.FindStringSubmatch(rest)
	if m == nil {
		return nil
	}
	head := codexHead(over, proxy, m[1])
	tail, ok := strings.CutPrefix(src, head)
	if !ok {
		return nil
	}
	e := codexExec.FindStringSubmatch(tail)
	if e == nil || e[1] != e[2] {
		return nil
	}
	cmdWord := tail[len(e[0]):]
	f := parseWrapper(src)
	if f == nil || len(f.Last) > 0 || len(f.Stmts) == 0 {
		return nil
	}
	last := f.Stmts[len(f.Stmts)-1]
	a := callArgs(last)
	if len(a) != 4 || !litIs(a[0], "exec") || !litIs(a[2], "-c") || len(last.Redirs) > 0 ||
		int(a[3].Pos().Offset()) != len(src)-len(cmdWord) || int(a[3].End().Offset()) != len(src) {
		return nil
	}
	cmd, ok := staticWord(a[3])
	if !ok || strings.TrimSpace(cmd) == "" {
		return nil
	}
	return &Wrapper{Agent: agents.Codex, Command: cmd}
}

// codexHead is Codex's wrapper up to its PATH line, for the variables it
// saves (over, and the proxy ones) and the snapshot (a quoted word).
func codexHead(over, proxy []string, snapshot string) string {
	var b strings.Builder
	save := func(kind string, names []string) {
		for i, n := range names {
			fmt.Fprintf(&b, "__CODEX_SNAPSHOT_%sOVERRIDE_SET_%d=\"${%s+x}\"\n__CODEX_SNAPSHOT_%sOVERRIDE_%d=\"${%s-}\"\n", kind, i, n, kind, i, n)
		}
	}
	restore := func(kind string, names []string) {
		for i, n := range names {
			set, val := fmt.Sprintf("__CODEX_SNAPSHOT_%sOVERRIDE_SET_%d", kind, i), fmt.Sprintf("__CODEX_SNAPSHOT_%sOVERRIDE_%d", kind, i)
			fmt.Fprintf(&b, "if [ -n \"${%s}\" ]; then\n", set)
			fmt.Fprintf(&b, "  if [ -z \"${%s+x}\" ] || [ \"${%s-}\" != \"${%s}\" ]; then export %s=\"${%s}\"; else export %s; fi\n", n, n, val, n, val, n)
			fmt.Fprintf(&b, "else builtin unset %s 2>/dev/null || command unset %s; fi\n", n, n)
			fmt.Fprintf(&b, "builtin unset %s %s 2>/dev/null || command unset %s %s\n", set, val, set, val)
		}
	}
	save("", over)
	save("PROXY_", proxy)
	fmt.Fprintf(&b, "__CODEX_SNAPSHOT_PROXY_ENV_SET=\"${CODEX_NETWORK_PROXY_ACTIVE+x}\"\n\nif . %s >/dev/null 2>&1; then :; fi\n\n", snapshot)
	restore("", over)
	b.WriteString("if [ -n \"$__CODEX_SNAPSHOT_PROXY_ENV_SET\" ] || [ -n \"${CODEX_NETWORK_PROXY_ACTIVE+x}\" ]; then\n")
	restore("PROXY_", proxy)
	b.WriteString("fi\n")
	return b.String()
}

// The scripts that make a snapshot: Claude Code's starts by naming the
// file (SNAPSHOT_FILE=...shell-snapshots/snapshot-...sh), Codex's by
// sourcing ~/.bashrc before it prints the snapshot, which Codex then
// checks with `set -e; . "FILE"`.
const codexSnapshotHead = "if [ -z \"${BASH_ENV-}\" ] && [ -n \"${HOME-}\" ] && [ -r \"$HOME/.bashrc\" ]; then\n  . \"$HOME/.bashrc\"\nfi\necho '# Snapshot file'\n"

func snapshotScript(src string, getenv func(string) string) *Wrapper {
	if rest, ok := strings.CutPrefix(src, "SNAPSHOT_FILE="); ok {
		line, _, _ := strings.Cut(rest, "\n")
		f := parseWrapper("x=" + line)
		if f == nil || len(f.Stmts) != 1 {
			return nil
		}
		c, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
		if !ok || len(c.Assigns) != 1 || len(c.Args) > 0 {
			return nil
		}
		if p, ok := staticWord(c.Assigns[0].Value); ok && claudeSnapshot(p, getenv) {
			return &Wrapper{Agent: agents.Claude, Decline: fmt.Sprintf(declineSnapshot, agents.Claude.Title)}
		}
		return nil
	}
	if strings.HasPrefix(src, codexSnapshotHead) {
		return &Wrapper{Agent: agents.Codex, Decline: fmt.Sprintf(declineSnapshot, agents.Codex.Title)}
	}
	if p, ok := strings.CutPrefix(src, `set -e; . "`); ok {
		p, ok = strings.CutSuffix(p, `"`)
		if ok && filepath.IsAbs(p) && !strings.ContainsAny(p, "\"$`\\\n") && filepath.Base(filepath.Dir(p)) == "shell_snapshots" {
			return &Wrapper{Agent: agents.Codex, Decline: fmt.Sprintf(declineSnapshot, agents.Codex.Title)}
		}
	}
	return nil
}
