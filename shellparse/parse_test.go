package shellparse

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"mvdan.cc/sh/v3/syntax"
)

// cmdView is the part of a Command the tables compare.
type cmdView struct {
	Argv    []string
	Wrapper bool
	Input   bool
	Via     string
}

func cmd(argv ...string) cmdView { return cmdView{Argv: argv} }

func (c cmdView) wrapper() cmdView { c.Wrapper = true; return c }
func (c cmdView) input() cmdView   { c.Input = true; return c }
func (c cmdView) via(v ...string) cmdView {
	c.Via = strings.Join(v, " > ")
	return c
}

type view struct {
	Cmds     []cmdView
	Files    []string
	Findings []string
}

func viewOf(s *Script) view {
	var v view
	for _, c := range s.Commands {
		cv := cmdView{Wrapper: c.Wrapper, Input: c.ArgsFromInput, Via: strings.Join(c.Via, " > ")}
		for _, w := range c.Argv {
			cv.Argv = append(cv.Argv, w.Value)
		}
		v.Cmds = append(v.Cmds, cv)
	}
	for _, f := range s.Files {
		v.Files = append(v.Files, fmt.Sprintf("%s %d %s", f.Op, f.Fd, f.Path.Value))
	}
	for _, f := range s.Findings {
		v.Findings = append(v.Findings, fmt.Sprintf("%s: %s", f.Severity, f.Reason))
	}
	return v
}

func ask(reason string) string   { return "ask: " + reason }
func block(reason string) string { return "block: " + reason }

type parseCase struct {
	name string
	src  string
	want view
}

var parseCases = []parseCase{
	// Lists and the basics.
	{"sequential list reports every command", "git status; rm -rf /",
		view{Cmds: []cmdView{cmd("git", "status"), cmd("rm", "-rf", "/")}}},
	{"and-or list and background", "make && rm x || curl y & ls",
		view{Cmds: []cmdView{cmd("make"), cmd("rm", "x"), cmd("curl", "y"), cmd("ls")}}},
	{"pipeline", "ls | grep x |& tail -n 1",
		view{Cmds: []cmdView{cmd("ls"), cmd("grep", "x"), cmd("tail", "-n", "1")}}},
	{"negated pipeline", "! rm x",
		view{Cmds: []cmdView{cmd("rm", "x")}}},
	{"subshell and group", "(rm a); { rm b; }",
		view{Cmds: []cmdView{cmd("rm", "a"), cmd("rm", "b")}}},
	{"comment hides nothing but itself", "git status # ; rm -rf /",
		view{Cmds: []cmdView{cmd("git", "status")}}},
	{"quoted text is an argument, not a command", "echo 'rm -rf /'",
		view{Cmds: []cmdView{cmd("echo", "rm -rf /")}}},

	// Compound commands.
	{"if elif else", "if a; then b; elif c; then d; else e; fi",
		view{Cmds: []cmdView{cmd("a"), cmd("b"), cmd("c"), cmd("d"), cmd("e")}}},
	{"while and until", "while a; do b; done; until c; do d; done",
		view{Cmds: []cmdView{cmd("a"), cmd("b"), cmd("c"), cmd("d")}}},
	{"for loop items are substituted", "for i in $(rm x); do :; done",
		view{Cmds: []cmdView{cmd("rm", "x").via("$(...)"), cmd(":")}}},
	{"c-style for", "for ((i=$(rm a); i<3; i++)); do rm b; done",
		view{Cmds: []cmdView{cmd("rm", "a").via("$(...)"), cmd("rm", "b")}, Findings: []string{ask("bash evaluates $(rm a) as arithmetic, and it holds the output of a command: a value such as a[$(cmd)] there would run cmd")}}},
	{"select", "select o in $(ls); do rm \"$o\"; done",
		view{Cmds: []cmdView{cmd("ls").via("$(...)"), cmd("rm", "")}}},
	{"case body", "case $x in *) rm x;; esac",
		view{Cmds: []cmdView{cmd("rm", "x")}}},
	{"case word and patterns are substituted", "case $(rm a) in $(rm b)|c) :;; esac",
		view{Cmds: []cmdView{cmd("rm", "a").via("$(...)"), cmd("rm", "b").via("$(...)"), cmd(":")}}},
	{"function body", "f() { rm x; }",
		view{Cmds: []cmdView{cmd("rm", "x").via("function f")}}},
	{"function keyword form", "function g { rm y; }",
		view{Cmds: []cmdView{cmd("rm", "y").via("function g")}}},
	{"coproc", "coproc rm x",
		view{Cmds: []cmdView{cmd("rm", "x").via("coproc")}}},
	{"named coproc", "coproc c { rm x; }",
		view{Cmds: []cmdView{cmd("rm", "x").via("coproc")}}},
	{"time keyword", "time rm x",
		view{Cmds: []cmdView{cmd("rm", "x").via("time")}}},
	{"time -p keyword", "time -p rm x",
		view{Cmds: []cmdView{cmd("rm", "x").via("time")}}},

	// Substitutions.
	{"command substitution in an argument", "echo $(rm -rf /)",
		view{Cmds: []cmdView{cmd("rm", "-rf", "/").via("$(...)"), cmd("echo", "")}}},
	{"backticks", "echo `rm x`",
		view{Cmds: []cmdView{cmd("rm", "x").via("`...`"), cmd("echo", "")}}},
	{"nested substitutions", "echo $(cat $(rm x))",
		view{Cmds: []cmdView{cmd("rm", "x").via("$(...)", "$(...)"), cmd("cat", "").via("$(...)"), cmd("echo", "")}}},
	{"assignment only", "a=$(rm x)",
		view{Cmds: []cmdView{cmd("rm", "x").via("$(...)")}}},
	{"[[ ]] operands", "[[ $(rm x) ]]",
		view{Cmds: []cmdView{cmd("rm", "x").via("$(...)")}}},
	{"(( )) operands", "(( $(rm x) ))",
		view{Cmds: []cmdView{cmd("rm", "x").via("$(...)")}, Findings: []string{ask("bash evaluates $(rm x) as arithmetic, and it holds the output of a command: a value such as a[$(cmd)] there would run cmd")}}},
	{"arithmetic expansion", "echo $(( $(rm x) + 1 ))",
		view{Cmds: []cmdView{cmd("rm", "x").via("$(...)"), cmd("echo", "")}, Findings: []string{ask("bash evaluates $(rm x) as arithmetic, and it holds the output of a command: a value such as a[$(cmd)] there would run cmd")}}},
	{"process substitution in", "cat <(rm x)",
		view{Cmds: []cmdView{cmd("rm", "x").via("<(...)"), cmd("cat", "")}}},
	{"process substitution out", "tee >(rm x)",
		view{Cmds: []cmdView{cmd("rm", "x").via(">(...)"), cmd("tee", "")}}},
	{"parameter default", "x=${y:-$(rm x)}",
		view{Cmds: []cmdView{cmd("rm", "x").via("$(...)")}}},
	{"parameter replacement operands", "echo ${x/$(rm a)/$(rm b)}",
		view{Cmds: []cmdView{cmd("rm", "a").via("$(...)"), cmd("rm", "b").via("$(...)"), cmd("echo", "")}}},
	{"array index", "echo ${a[$(rm x)]}",
		view{Cmds: []cmdView{cmd("rm", "x").via("$(...)"), cmd("echo", "")}, Findings: []string{ask("bash evaluates $(rm x) as arithmetic, and it holds the output of a command: a value such as a[$(cmd)] there would run cmd")}}},
	{"redirection target", "echo >$(rm x)",
		view{Cmds: []cmdView{cmd("rm", "x").via("$(...)"), cmd("echo")}, Files: []string{"write 1 "}}},
	{"unquoted heredoc body expands", "cat <<EOF\n$(rm x)\nEOF",
		view{Cmds: []cmdView{cmd("rm", "x").via("$(...)"), cmd("cat")}}},
	{"quoted heredoc body is text", "cat <<'EOF'\n$(rm x)\nEOF",
		view{Cmds: []cmdView{cmd("cat")}}},
	{"array assignment", "a=(1 $(rm x)); b[$(rm y)]=2",
		view{Cmds: []cmdView{cmd("rm", "x").via("$(...)"), cmd("rm", "y").via("$(...)")}, Findings: []string{ask("bash evaluates $(rm y) as arithmetic, and it holds the output of a command: a value such as a[$(cmd)] there would run cmd")}}},
	{"declaration values", "declare a=$(rm a); local b=`rm b`; readonly c=$(rm c)",
		view{Cmds: []cmdView{
			cmd("rm", "a").via("$(...)"), cmd("declare", "a="),
			cmd("rm", "b").via("`...`"), cmd("local", "b="),
			cmd("rm", "c").via("$(...)"), cmd("readonly", "c="),
		}}},
	{"extended glob with a substitution", "echo @($(rm x)|y)",
		view{Cmds: []cmdView{cmd("rm", "x").via("$(...)"), cmd("echo", "")}}},
	{"let expressions", "let x=$(rm a)+1",
		view{Cmds: []cmdView{cmd("rm", "a").via("$(...)"), cmd("let", "x=$(rm a)+1")}, Findings: []string{ask("bash evaluates $(rm a) as arithmetic, and it holds the output of a command: a value such as a[$(cmd)] there would run cmd")}}},

	// Command names.
	{"backslash", `\rm x`, view{Cmds: []cmdView{cmd("rm", "x")}}},
	{"partly quoted", `'r'm x`, view{Cmds: []cmdView{cmd("rm", "x")}}},
	{"double quoted", `"rm" x`, view{Cmds: []cmdView{cmd("rm", "x")}}},
	{"path", `/bin/rm x`, view{Cmds: []cmdView{cmd("/bin/rm", "x")}}},
	{"ansi-c hex", `$'\x72m' x`, view{Cmds: []cmdView{cmd("rm", "x")}}},
	{"ansi-c octal and unicode", `$'\162\155' a; $'\u0072m' b`, view{Cmds: []cmdView{cmd("rm", "a"), cmd("rm", "b")}}},
	{"locale string", `$"rm" x`, view{Cmds: []cmdView{cmd("rm", "x")}}},
	{"line continuation", "r\\\nm x", view{Cmds: []cmdView{cmd("rm", "x")}}},
	{"brace expansion as command", `{rm,-rf,/}`, view{Cmds: []cmdView{cmd("rm", "-rf", "/")}}},
	{"brace expansion with empty alternative", `r{m,} x`, view{Cmds: []cmdView{cmd("rm", "r", "x")}}},
	{"brace expansion in arguments", `touch f{1..3} {a,b}c`, view{Cmds: []cmdView{cmd("touch", "f1", "f2", "f3", "ac", "bc")}}},
	{"escaped brace is literal", `echo \{a,b}`, view{Cmds: []cmdView{cmd("echo", "{a,b}")}}},
	{"a character sequence between letters", `touch {X..Z} {c..a}`, view{Cmds: []cmdView{cmd("touch", "X", "Y", "Z", "c", "b", "a")}}},
	{"a character sequence that makes a backslash asks", `cp {a..Z..5}.git/commondir`,
		view{Cmds: []cmdView{cmd("cp", "{a..Z..5}.git/commondir")},
			Findings: []string{ask("brace expansion of {a..Z..5}.git/commondir makes a \\ or a ` that bash reads again as quoting or a command substitution")}}},
	{"a character sequence that makes a backquote asks", `echo {Z..a}`,
		view{Cmds: []cmdView{cmd("echo", "{Z..a}")},
			Findings: []string{ask("brace expansion of {Z..a} makes a \\ or a ` that bash reads again as quoting or a command substitution")}}},
	{"a character sequence that skips both", `touch {a..Z..2}`, view{Cmds: []cmdView{cmd("touch", "a", "_", "]", "[")}}},
	{"tilde expands with home", `~/bin/tool ~ x~`, view{Cmds: []cmdView{cmd("/home/u/bin/tool", "/home/u", "x~")}}},
	{"dynamic name asks", `$CMD x`,
		view{Cmds: []cmdView{cmd("", "x")}, Findings: []string{ask("command name is not known until run time: $CMD")}}},
	{"substituted name asks", `$(echo rm) x`,
		view{Cmds: []cmdView{cmd("echo", "rm").via("$(...)"), cmd("", "x")}, Findings: []string{ask("command name is not known until run time: $(echo rm)")}}},
	{"arithmetic name asks", `$((1)) x`,
		view{Cmds: []cmdView{cmd("", "x")}, Findings: []string{ask("command name is not known until run time: $((1))")}}},
	{"glob name asks", `/bin/r? x`,
		view{Cmds: []cmdView{cmd("/bin/r?", "x")}, Findings: []string{ask("command name is not known until run time: /bin/r?")}}},
	{"empty expansion before a name asks", `$EMPTY rm x`,
		view{Cmds: []cmdView{cmd("", "rm", "x")}, Findings: []string{ask("command name is not known until run time: $EMPTY")}}},

	// Dangerous assignments.
	{"PATH before a command", "PATH=/tmp:$PATH git status",
		view{Cmds: []cmdView{cmd("git", "status")}, Findings: []string{ask("assignment to PATH can change what runs")}}},
	{"LD_PRELOAD standalone", "LD_PRELOAD=/x.so",
		view{Findings: []string{ask("assignment to LD_PRELOAD can change what runs")}}},
	{"harmless assignment", "FOO=1 make",
		view{Cmds: []cmdView{cmd("make")}}},
	{"export", "export BASH_ENV=/x",
		view{Cmds: []cmdView{cmd("export", "BASH_ENV=/x")}, Findings: []string{ask("assignment to BASH_ENV can change what runs")}}},
	{"declare -x and typeset", "declare -x IFS=: ; typeset GIT_SSH_COMMAND=x",
		view{Cmds: []cmdView{cmd("declare", "-x", "IFS=:"), cmd("typeset", "GIT_SSH_COMMAND=x")}, Findings: []string{
			ask("assignment to IFS can change what runs"), ask("assignment to GIT_SSH_COMMAND can change what runs")}}},
	{"local and readonly", "f() { local PYTHONPATH=. ; readonly DYLD_INSERT_LIBRARIES=x; }",
		view{Cmds: []cmdView{cmd("local", "PYTHONPATH=.").via("function f"), cmd("readonly", "DYLD_INSERT_LIBRARIES=x").via("function f")}, Findings: []string{
			ask("assignment to PYTHONPATH can change what runs"), ask("assignment to DYLD_INSERT_LIBRARIES can change what runs")}}},
	{"export without a value is harmless", "export PATH",
		view{Cmds: []cmdView{cmd("export", "PATH")}}},
	{"export -f", "export -f f",
		view{Cmds: []cmdView{cmd("export", "-f", "f")}, Findings: []string{ask("export -f passes shell functions to every child shell, which changes what they run")}}},
	{"enable -f", "enable -f ./x.so x",
		view{Cmds: []cmdView{cmd("enable", "-f", "./x.so", "x")}, Findings: []string{ask("enable -f loads a builtin from a shared library")}}},
	{"env assignment", "env GIT_CONFIG_GLOBAL=/x git status",
		view{Cmds: []cmdView{cmd("env", "GIT_CONFIG_GLOBAL=/x", "git", "status").wrapper(), cmd("git", "status").via("env")},
			Findings: []string{ask("assignment to GIT_CONFIG_GLOBAL can change what runs")}}},
	{"for loop variable", "for IFS in x; do :; done",
		view{Cmds: []cmdView{cmd(":")}, Findings: []string{ask("assignment to IFS can change what runs")}}},
	{"read and printf -v", "read -r PATH; printf -v PS4 x",
		view{Cmds: []cmdView{cmd("read", "-r", "PATH"), cmd("printf", "-v", "PS4", "x")}, Findings: []string{
			ask("assignment to PATH can change what runs"), ask("assignment to PS4 can change what runs")}}},
	{"assigning default", ": ${PATH:=/tmp}",
		view{Cmds: []cmdView{cmd(":", "")}, Findings: []string{ask("assignment to PATH can change what runs")}}},
	{"prompt expansion", "echo ${x@P}",
		view{Cmds: []cmdView{cmd("echo", "")}, Findings: []string{ask("${var@P} expands the value as a prompt string, which can run commands: ${x@P}")}}},
	{"subscript injection text", `x='a[$(rm x)]'; echo $((x))`,
		view{Cmds: []cmdView{cmd("echo", "")}, Findings: []string{ask("bash evaluates x as arithmetic, and x holds text shaped like an array subscript (a[$(rm x)]), whose command substitutions bash runs")}}},
	{"hash -p", "hash -p /tmp/x ls",
		view{Cmds: []cmdView{cmd("hash", "-p", "/tmp/x", "ls")}, Findings: []string{ask("hash -p makes a command name run another program")}}},

	// Redirections.
	{"write redirection", "ls > /etc/passwd",
		view{Cmds: []cmdView{cmd("ls")}, Files: []string{"write 1 /etc/passwd"}}},
	{"fd duplication is not a file", "ls 2>&1 >/dev/null",
		view{Cmds: []cmdView{cmd("ls")}, Files: []string{"write 1 /dev/null"}}},
	{"every writing operator", "a >|b >>c &>d &>>e 2>f 3<>g",
		view{Cmds: []cmdView{cmd("a")}, Files: []string{"write 1 b", "write 1 c", "write 1 d", "write 1 e", "write 2 f", "write 3 g"}}},
	{"reads", "a <b 3<c",
		view{Cmds: []cmdView{cmd("a")}, Files: []string{"read 0 b", "read 3 c"}}},
	{"dup to a file name writes it", "a >&out <&in",
		view{Cmds: []cmdView{cmd("a")}, Files: []string{"write 1 out", "read 0 in"}}},
	{"dups and closes are not files", "a >&2 <&- 3>&- 4<&0 5>&3-",
		view{Cmds: []cmdView{cmd("a")}}},
	{"heredoc and here-string are not files", "cat <<EOF <<<x\nbody\nEOF",
		view{Cmds: []cmdView{cmd("cat")}}},
	{"redirection without command", "> out",
		view{Files: []string{"write 1 out"}}},
	{"redirection on a compound command", "{ a; } > out; while read l; do :; done < in",
		view{Cmds: []cmdView{cmd("a"), cmd("read", "l"), cmd(":")}, Files: []string{"write 1 out", "read 0 in"}}},
	{"brace expansion in a target", "echo > {a,}",
		view{Cmds: []cmdView{cmd("echo")}, Files: []string{"write 1 a", "write 1 "}}},
	{"tilde in a target", "echo > ~/x",
		view{Cmds: []cmdView{cmd("echo")}, Files: []string{"write 1 /home/u/x"}}},

	// Code in strings.
	{"bash -c", "bash -c 'rm x'",
		view{Cmds: []cmdView{cmd("bash", "-c", "rm x").wrapper(), cmd("rm", "x").via("bash -c")}}},
	{"bash -ec and -lc", "bash -ec 'rm a'; sh -lc 'rm b'",
		view{Cmds: []cmdView{
			cmd("bash", "-ec", "rm a").wrapper(), cmd("rm", "a").via("bash -c"),
			cmd("sh", "-lc", "rm b").wrapper(), cmd("rm", "b").via("sh -c"),
		}, Findings: []string{ask("sh -l runs startup files (~/.profile, $ENV) that guardrun cannot read")}}},
	{"options before -c", "bash -o pipefail -c 'rm x' name arg",
		view{Cmds: []cmdView{cmd("bash", "-o", "pipefail", "-c", "rm x", "name", "arg").wrapper(), cmd("rm", "x").via("bash -c")}}},
	{"every shell name", "dash -c a; zsh -c b; ksh -c c; mksh -c d; ash -c e",
		view{Cmds: []cmdView{
			cmd("dash", "-c", "a").wrapper(), cmd("a").via("dash -c"),
			cmd("zsh", "-c", "b").wrapper(), cmd("b").via("zsh -c"),
			cmd("ksh", "-c", "c").wrapper(), cmd("c").via("ksh -c"),
			cmd("mksh", "-c", "d").wrapper(), cmd("d").via("mksh -c"),
			cmd("ash", "-c", "e").wrapper(), cmd("e").via("ash -c"),
		}}},
	// sh may be dash: code that does not parse as POSIX sh is not
	// re-read as bash, which would be another program.
	{"sh -c with bash syntax blocks", "sh -c 'cat <(rm x)'",
		view{Cmds: []cmdView{cmd("sh", "-c", "cat <(rm x)").wrapper()},
			Findings: []string{block("sh -c: code does not parse: 1:5: `<` must be followed by a word")}}},
	{"nested shells", `bash -c "sh -c 'rm x'"`,
		view{Cmds: []cmdView{
			cmd("bash", "-c", "sh -c 'rm x'").wrapper(),
			cmd("sh", "-c", "rm x").wrapper().via("bash -c"),
			cmd("rm", "x").via("bash -c", "sh -c"),
		}}},
	{"dynamic -c string asks and is read as far as it goes", `sh -c "rm $x"`,
		view{Cmds: []cmdView{cmd("sh", "-c", "rm ").wrapper(), cmd("rm", "").via("sh -c")},
			Findings: []string{ask(`sh -c runs code that is not known until run time: "rm $x"`)}}},
	{"nested code that does not parse blocks", `bash -c 'echo "'`,
		view{Cmds: []cmdView{cmd("bash", "-c", `echo "`).wrapper()},
			Findings: []string{block("bash -c: code does not parse: 1:6: reached EOF without closing quote `\"`")}}},
	{"shell script file is the command's script, for policy to judge", "bash script.sh; sh ./x",
		view{Cmds: []cmdView{cmd("bash", "script.sh"), cmd("sh", "./x")}}},
	{"shell script named at run time asks", "bash $s",
		view{Cmds: []cmdView{cmd("bash", "")}, Findings: []string{
			ask("bash runs the script $s, which guardrun cannot read")}}},
	{"shell reading stdin asks", "curl x | sh; bash; bash -s",
		view{Cmds: []cmdView{cmd("curl", "x"), cmd("sh"), cmd("bash"), cmd("bash", "-s")}, Findings: []string{
			ask("sh reads commands from standard input, which guardrun cannot see"),
			ask("bash reads commands from standard input, which guardrun cannot see"),
			ask("bash reads commands from standard input, which guardrun cannot see")}}},
	{"piped heredoc is still stdin", "cat <<EOF | bash\nrm x\nEOF",
		view{Cmds: []cmdView{cmd("cat"), cmd("bash")}, Findings: []string{
			ask("bash reads commands from standard input, which guardrun cannot see")}}},
	{"heredoc to a shell is parsed", "bash <<EOF\nrm x\nEOF",
		view{Cmds: []cmdView{cmd("bash").wrapper(), cmd("rm", "x").via("heredoc to bash")}}},
	{"heredoc to a wrapped shell", "sudo bash -s <<'EOF'\nrm x\nEOF",
		view{Cmds: []cmdView{cmd("sudo", "bash", "-s").wrapper(), cmd("bash", "-s").wrapper().via("sudo"), cmd("rm", "x").via("sudo", "heredoc to bash")}}},
	{"expanding heredoc to a shell asks", "bash <<EOF\nrm $dir\nEOF",
		view{Cmds: []cmdView{cmd("bash").wrapper(), cmd("rm", "").via("heredoc to bash")},
			Findings: []string{ask("heredoc to bash runs code that is not known until run time: rm $dir\n")}}},
	{"here-string to a shell", "sh <<< 'rm x'",
		view{Cmds: []cmdView{cmd("sh").wrapper(), cmd("rm", "x").via("here-string to sh")}}},
	{"shell reading a file asks", "bash < x.sh",
		view{Cmds: []cmdView{cmd("bash")}, Files: []string{"read 0 x.sh"}, Findings: []string{
			ask("bash reads commands from x.sh, which guardrun cannot read")}}},
	{"eval literal", `eval "rm x"`,
		view{Cmds: []cmdView{cmd("eval", "rm x").wrapper(), cmd("rm", "x").via("eval")}}},
	{"eval joins its arguments", `eval rm '"a b"' c`,
		view{Cmds: []cmdView{cmd("eval", "rm", `"a b"`, "c").wrapper(), cmd("rm", "a b", "c").via("eval")}}},
	{"eval of a variable asks", `eval "$x"`,
		view{Cmds: []cmdView{cmd("eval", "").wrapper(), cmd("").via("eval")}, Findings: []string{
			ask(`eval runs code that is not known until run time: "$x"`),
			ask("command name is not known until run time: $x")}}},
	{"trap", "trap 'rm x' EXIT",
		view{Cmds: []cmdView{cmd("trap", "rm x", "EXIT").wrapper(), cmd("rm", "x").via("trap")}}},
	{"trap reset and listing run nothing", "trap - EXIT; trap -p; trap '' INT",
		view{Cmds: []cmdView{cmd("trap", "-", "EXIT"), cmd("trap", "-p"), cmd("trap", "", "INT")}}},
	{"alias", "alias ll='rm -rf'",
		view{Cmds: []cmdView{cmd("alias", "ll=rm -rf").wrapper(), cmd("rm", "-rf").via("alias")}}},
	{"source asks", "source x; . ./y",
		view{Cmds: []cmdView{cmd("source", "x"), cmd(".", "./y")}, Findings: []string{
			ask("source runs the code in x, which guardrun cannot read"),
			ask(". runs the code in ./y, which guardrun cannot read")}}},
	{"mapfile callback", `mapfile -C 'rm x' -c 1 arr`,
		view{Cmds: []cmdView{cmd("mapfile", "-C", "rm x", "-c", "1", "arr").wrapper(), cmd("rm", "x").via("mapfile -C")}}},
	{"su -c is read but su stays judged", "su root -c 'rm x'",
		view{Cmds: []cmdView{cmd("su", "root", "-c", "rm x"), cmd("rm", "x").via("su -c")}}},

	// Wrappers.
	{"wrapper chain", "env nice timeout 3 rm x",
		view{Cmds: []cmdView{
			cmd("env", "nice", "timeout", "3", "rm", "x").wrapper(),
			cmd("nice", "timeout", "3", "rm", "x").wrapper().via("env"),
			cmd("timeout", "3", "rm", "x").wrapper().via("env", "nice"),
			cmd("rm", "x").via("env", "nice", "timeout"),
		}}},
	{"env options", "env -i -u HOME -0 -C /tmp -- rm x",
		view{Cmds: []cmdView{cmd("env", "-i", "-u", "HOME", "-0", "-C", "/tmp", "--", "rm", "x").wrapper(), cmd("rm", "x").via("env")}}},
	{"env -S splits", "env -S 'rm -rf' /",
		view{Cmds: []cmdView{cmd("env", "-S", "rm -rf", "/").wrapper(), cmd("rm", "-rf", "/").via("env")}}},
	{"env alone runs nothing", "env",
		view{Cmds: []cmdView{cmd("env")}}},
	{"nice forms", "nice -n 5 rm a; nice -5 rm b; nice --adjustment=3 rm c",
		view{Cmds: []cmdView{
			cmd("nice", "-n", "5", "rm", "a").wrapper(), cmd("rm", "a").via("nice"),
			cmd("nice", "-5", "rm", "b").wrapper(), cmd("rm", "b").via("nice"),
			cmd("nice", "--adjustment=3", "rm", "c").wrapper(), cmd("rm", "c").via("nice"),
		}}},
	{"timeout options", "timeout -s KILL -k 5 --foreground --preserve-status 10 rm x",
		view{Cmds: []cmdView{cmd("timeout", "-s", "KILL", "-k", "5", "--foreground", "--preserve-status", "10", "rm", "x").wrapper(), cmd("rm", "x").via("timeout")}}},
	{"abbreviated long option takes its argument", "timeout --sig KILL 3 rm x",
		view{Cmds: []cmdView{cmd("timeout", "--sig", "KILL", "3", "rm", "x").wrapper(), cmd("rm", "x").via("timeout")}}},
	{"unknown option asks", "timeout --frobnicate 3 rm x",
		view{Cmds: []cmdView{cmd("timeout", "--frobnicate", "3", "rm", "x").wrapper(), cmd("rm", "x").via("timeout")},
			Findings: []string{ask("timeout: unknown option --frobnicate, so what it runs is uncertain")}}},
	{"nohup", "nohup rm x &",
		view{Cmds: []cmdView{cmd("nohup", "rm", "x").wrapper(), cmd("rm", "x").via("nohup")}}},
	{"command runs, command -v does not", "command rm a; command -v rm; command -V rm",
		view{Cmds: []cmdView{cmd("command", "rm", "a").wrapper(), cmd("rm", "a").via("command"), cmd("command", "-v", "rm"), cmd("command", "-V", "rm")}}},
	{"builtin", "builtin eval 'rm x'",
		view{Cmds: []cmdView{cmd("builtin", "eval", "rm x").wrapper(), cmd("eval", "rm x").wrapper().via("builtin"), cmd("rm", "x").via("builtin", "eval")}}},
	{"exec", "exec -a rm -cl rm x",
		view{Cmds: []cmdView{cmd("exec", "-a", "rm", "-cl", "rm", "x").wrapper(), cmd("rm", "x").via("exec")}}},
	{"exec -a under another name asks", "exec -a git-difftool git rev-parse -x id",
		view{Cmds: []cmdView{cmd("exec", "-a", "git-difftool", "git", "rev-parse", "-x", "id").wrapper(), cmd("git", "rev-parse", "-x", "id").via("exec")},
			Findings: []string{ask("exec -a git-difftool runs git under another name, and some programs act on the name they are started under (git-NAME runs git NAME, pgrep named pkill signals processes)")}}},
	{"exec -a with a run-time name asks", `exec -a "$n" pgrep x`,
		view{Cmds: []cmdView{cmd("exec", "-a", "", "pgrep", "x").wrapper(), cmd("pgrep", "x").via("exec")},
			Findings: []string{ask(`exec -a "$n" runs pgrep under another name, and some programs act on the name they are started under (git-NAME runs git NAME, pgrep named pkill signals processes)`)}}},
	{"exec -a with the program's own name", "exec -a ls /bin/ls -la",
		view{Cmds: []cmdView{cmd("exec", "-a", "ls", "/bin/ls", "-la").wrapper(), cmd("/bin/ls", "-la").via("exec")}}},
	{"exec with only redirections", "exec 3>log",
		view{Cmds: []cmdView{cmd("exec")}, Files: []string{"write 3 log"}}},
	{"stdbuf forms", "stdbuf -oL -e 0 --input=L rm x",
		view{Cmds: []cmdView{cmd("stdbuf", "-oL", "-e", "0", "--input=L", "rm", "x").wrapper(), cmd("rm", "x").via("stdbuf")}}},
	{"setsid", "setsid -w -f rm x",
		view{Cmds: []cmdView{cmd("setsid", "-w", "-f", "rm", "x").wrapper(), cmd("rm", "x").via("setsid")}}},
	{"xargs", "xargs rm",
		view{Cmds: []cmdView{cmd("xargs", "rm").wrapper(), cmd("rm").input().via("xargs")}}},
	{"xargs options with arguments", "xargs -L 1 -n 2 -P 4 -d , -E x -s 100 -0 -r --max-procs=3 rm",
		view{Cmds: []cmdView{cmd("xargs", "-L", "1", "-n", "2", "-P", "4", "-d", ",", "-E", "x", "-s", "100", "-0", "-r", "--max-procs=3", "rm").wrapper(), cmd("rm").input().via("xargs")}}},
	{"xargs -a reads a file", "xargs -a list rm",
		view{Cmds: []cmdView{cmd("xargs", "-a", "list", "rm").wrapper(), cmd("rm").input().via("xargs")}, Files: []string{"read 0 list"}}},
	{"xargs --process-slot-var sets a variable for its command", "xargs --process-slot-var=PATH cat; xargs -P2 --process-slot-var SLOT cat",
		view{Cmds: []cmdView{cmd("xargs", "--process-slot-var=PATH", "cat").wrapper(), cmd("cat").input().via("xargs"),
			cmd("xargs", "-P2", "--process-slot-var", "SLOT", "cat").wrapper(), cmd("cat").input().via("xargs")},
			Findings: []string{ask("assignment to PATH can change what runs")}}},
	{"xargs defaults to echo", "xargs",
		view{Cmds: []cmdView{cmd("xargs").wrapper(), cmd("echo").input().via("xargs")}}},
	{"xargs -I into shell code asks", "xargs -I{} sh -c 'rm {}'",
		view{Cmds: []cmdView{cmd("xargs", "-I{}", "sh", "-c", "rm {}").wrapper(), cmd("sh", "-c", "rm {}").wrapper().input().via("xargs"), cmd("rm", "{}").via("xargs", "sh -c")},
			Findings: []string{ask("sh -c code has {} replaced with input at run time, so the input becomes code")}}},
	{"xargs command from input asks", "xargs -I{} {} x; xargs env",
		view{Cmds: []cmdView{cmd("xargs", "-I{}", "{}", "x").wrapper(), cmd("{}", "x").input().via("xargs"), cmd("xargs", "env").wrapper(), cmd("env").input().via("xargs")},
			Findings: []string{ask("command name is substituted from input at run time: {}"), ask("env runs a command named by its input")}}},
	{"find -exec", `find . -exec rm {} \;`,
		view{Cmds: []cmdView{cmd("find", ".", "-exec", "rm", "{}", ";").wrapper(), cmd("rm", "{}").input().via("find -exec")}}},
	{"find with several actions", `find / -type f -exec grep -l x {} + -execdir mv {} y \; -ok rm {} \; -okdir rm {} ;`,
		view{Cmds: []cmdView{
			cmd("find", "/", "-type", "f", "-exec", "grep", "-l", "x", "{}", "+", "-execdir", "mv", "{}", "y", ";", "-ok", "rm", "{}", ";", "-okdir", "rm", "{}").wrapper(),
			cmd("grep", "-l", "x", "{}").input().via("find -exec"),
			cmd("mv", "{}", "y").input().via("find -execdir"),
			cmd("rm", "{}").input().via("find -ok"),
			cmd("rm", "{}").input().via("find -okdir"),
		}}},
	{"find that deletes is judged itself", `find . -name x -delete -exec rm {} +`,
		view{Cmds: []cmdView{cmd("find", ".", "-name", "x", "-delete", "-exec", "rm", "{}", "+"), cmd("rm", "{}").input().via("find -exec")}}},
	{"find -fprint writes", `find . -fprint out`,
		view{Cmds: []cmdView{cmd("find", ".", "-fprint", "out")}, Files: []string{"write 1 out"}}},
	{"find without actions runs nothing", `find . -name '*.go'`,
		view{Cmds: []cmdView{cmd("find", ".", "-name", "*.go")}}},
	{"find with a run-time action word asks", `find . $act rm {} \;`,
		view{Cmds: []cmdView{cmd("find", ".", "", "rm", "{}", ";")}, Findings: []string{ask("find: $act is not known until run time and could be an action such as -exec")}}},
	{"find -exec into shell code asks", `find . -exec sh -c 'rm {}' \;`,
		view{Cmds: []cmdView{cmd("find", ".", "-exec", "sh", "-c", "rm {}", ";").wrapper(), cmd("sh", "-c", "rm {}").wrapper().input().via("find -exec"), cmd("rm", "{}").via("find -exec", "sh -c")},
			Findings: []string{ask("sh -c code has {} replaced with input at run time, so the input becomes code")}}},
	{"sudo", "sudo rm x",
		view{Cmds: []cmdView{cmd("sudo", "rm", "x").wrapper(), cmd("rm", "x").via("sudo")}}},
	{"sudo options and assignments", "sudo -u bob -g g -E -H -n -- PATH=/x rm x",
		view{Cmds: []cmdView{cmd("sudo", "-u", "bob", "-g", "g", "-E", "-H", "-n", "--", "PATH=/x", "rm", "x").wrapper(), cmd("rm", "x").via("sudo")},
			Findings: []string{ask("assignment to PATH can change what runs")}}},
	{"sudo -s and -i start a shell", "sudo -s; sudo -i",
		view{Cmds: []cmdView{cmd("sudo", "-s"), cmd("sudo", "-i")}, Findings: []string{
			ask("sudo starts a shell that reads commands from the terminal"),
			ask("sudo starts a shell that reads commands from the terminal")}}},
	{"sudo -e edits", "sudo -e /etc/hosts",
		view{Cmds: []cmdView{cmd("sudo", "-e", "/etc/hosts")}}},
	{"doas", "doas -u root -n rm x; doas -s",
		view{Cmds: []cmdView{cmd("doas", "-u", "root", "-n", "rm", "x").wrapper(), cmd("rm", "x").via("doas"), cmd("doas", "-s")},
			Findings: []string{ask("doas -s starts a shell that reads commands from the terminal")}}},
	{"dynamic option in a wrapper asks", "env $OPTS rm x",
		view{Cmds: []cmdView{cmd("env", "", "rm", "x").wrapper(), cmd("", "rm", "x").via("env")},
			Findings: []string{ask("command name is not known until run time: $OPTS")}}},
	{"unquoted expansion among wrapper options asks", "nice -n $N rm x",
		view{Cmds: []cmdView{cmd("nice", "-n", "", "rm", "x").wrapper(), cmd("rm", "x").via("nice")},
			Findings: []string{ask("nice: $N may expand to any number of words, so which command it runs is uncertain")}}},
	{"named descriptor", "exec {fd}>log",
		view{Cmds: []cmdView{cmd("exec")}, Files: []string{"write -1 log"}}},
	{"wrapped dynamic name asks", "sudo $CMD",
		view{Cmds: []cmdView{cmd("sudo", "").wrapper(), cmd("").via("sudo")},
			Findings: []string{ask("command name is not known until run time: $CMD")}}},
}

func TestParse(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.src, Options{Home: "/home/u"})
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.src, err)
			}
			if diff := cmp.Diff(viewOf(s), tc.want, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Parse(%q) (-got +want):\n%s", tc.src, diff)
			}
		})
	}
}

// TestWalkerReachesEverything checks that the walker, not the safety
// sweep, finds every command: a sweep hit means a construct the walker
// does not handle yet.
func TestWalkerReachesEverything(t *testing.T) {
	srcs := []string{largeScript(20 << 10)}
	for _, tc := range parseCases {
		srcs = append(srcs, tc.src)
	}
	files, err := filepath.Glob("testdata/corpus/*.sh")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, string(b))
	}
	for _, src := range srcs {
		a, err := analyse(src, Options{})
		if err != nil {
			t.Fatalf("analyse(%q): %v", src, err)
		}
		if a.swept != 0 {
			t.Errorf("analyse(%q): the safety sweep found %d node(s) the walker missed", src, a.swept)
		}
	}
}

func TestParseError(t *testing.T) {
	tests := []struct {
		name, src string
		want      ParseError
	}{
		{"unterminated single quote", "echo 'abc", ParseError{Pos: Pos{Offset: 5, Line: 1, Col: 6}, Msg: "reached EOF without closing quote `'`"}},
		{"unterminated quote on a later line", "ls\necho \"x", ParseError{Pos: Pos{Offset: 8, Line: 2, Col: 6}, Msg: "reached EOF without closing quote `\"`"}},
		{"stray paren", "echo )", ParseError{Pos: Pos{Offset: 5, Line: 1, Col: 6}, Msg: "a command can only contain words and redirects; encountered `)`"}},
		{"unclosed if", "if true; then rm x", ParseError{Pos: Pos{Offset: 0, Line: 1, Col: 1}, Msg: "`if` statement must end with `fi`"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.src, Options{})
			if s != nil {
				t.Errorf("Parse(%q) returned a script with an error", tc.src)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error = %v (%T), want *ParseError", tc.src, err, err)
			}
			if diff := cmp.Diff(*pe, tc.want); diff != "" {
				t.Errorf("Parse(%q) error (-got +want):\n%s", tc.src, diff)
			}
			if want := tc.want.Pos.String() + ": " + tc.want.Msg; err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

func TestDialect(t *testing.T) {
	t.Run("posix time and coproc are commands", func(t *testing.T) {
		s, err := Parse("time -p rm x; coproc rm y", Options{Dialect: syntax.LangPOSIX})
		if err != nil {
			t.Fatal(err)
		}
		want := view{Cmds: []cmdView{
			cmd("time", "-p", "rm", "x").wrapper(), cmd("rm", "x").via("time"),
			cmd("coproc", "rm", "y").wrapper(), cmd("rm", "y").via("coproc"),
		}, Findings: []string{
			// bash reads both as keywords: sh may be bash.
			ask("sh may be dash or bash, and they read this code as different programs"),
		}}
		if diff := cmp.Diff(viewOf(s), want, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("(-got +want):\n%s", diff)
		}
	})
	t.Run("bash syntax does not parse as posix", func(t *testing.T) {
		_, err := Parse("cat <(ls)", Options{Dialect: syntax.LangPOSIX})
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Pos.Line != 1 {
			t.Fatalf("err = %v, want a *ParseError on line 1", err)
		}
	})
	t.Run("zsh =cmd names the command", func(t *testing.T) {
		s, err := Parse("=rm x", Options{Dialect: syntax.LangZsh})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Commands[0].Name(); got != "rm" {
			t.Errorf("Name() = %q, want rm", got)
		}
	})
	t.Run("unknown dialect reads as bash", func(t *testing.T) {
		if _, err := Parse("cat <(ls)", Options{Dialect: syntax.LangAuto}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestDialectFor(t *testing.T) {
	tests := map[string]syntax.LangVariant{
		"/bin/bash": syntax.LangBash, "bash": syntax.LangBash, "-bash": syntax.LangBash,
		"/bin/sh": syntax.LangPOSIX, "dash": syntax.LangPOSIX, "/usr/bin/ash": syntax.LangPOSIX, "posix": syntax.LangPOSIX,
		"mksh": syntax.LangMirBSDKorn, "/bin/ksh": syntax.LangMirBSDKorn,
		"/usr/bin/zsh": syntax.LangZsh,
		"fish":         syntax.LangBash, "": syntax.LangBash, "/opt/bash/": syntax.LangBash,
	}
	for prog, want := range tests {
		if got := DialectFor(prog); got != want {
			t.Errorf("DialectFor(%q) = %v, want %v", prog, got, want)
		}
	}
}

func TestIncomplete(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{"echo hi", false},
		{"echo 'abc", true},
		{"echo \"abc", true},
		{"if true; then", true},
		{"for i in a b; do", true},
		{"echo foo |", true},
		{"a &&", true},
		{"echo $(", true},
		{"cat <<EOF\nabc", true},
		{"cat <<EOF\nabc\nEOF", false},
		{"f() {", true},
		{"echo \\", true},
		{"echo \\\n", true},
		{"echo \\\\", false},
		{"# note \\", false},
		{"echo )", false}, // an error, not more input, ends this
	}
	for _, tc := range tests {
		if got := Incomplete(tc.src, syntax.LangBash); got != tc.want {
			t.Errorf("Incomplete(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		name, src string
		want      []Word
	}{
		{"static words keep their source", `rm 'a b' "c"d`, []Word{
			{Value: "rm", Source: "rm", Pos: Pos{0, 1, 1}},
			{Value: "a b", Source: "'a b'", Pos: Pos{3, 1, 4}},
			{Value: "cd", Source: `"c"d`, Pos: Pos{9, 1, 10}},
		}},
		{"expansions are dynamic, unquoted ones split", `x "$a" $b pre$(c)post`, []Word{
			{Value: "x", Source: "x", Pos: Pos{0, 1, 1}},
			{Value: "", Source: `"$a"`, Dynamic: true, Pos: Pos{2, 1, 3}},
			{Value: "", Source: "$b", Dynamic: true, Split: true, Pos: Pos{7, 1, 8}},
			{Value: "pre", Source: "pre$(c)post", Dynamic: true, Split: true, Pos: Pos{10, 1, 11}},
		}},
		{"quoted $@ still splits", `x "$@" "${a[@]}"`, []Word{
			{Value: "x", Source: "x", Pos: Pos{0, 1, 1}},
			{Value: "", Source: `"$@"`, Dynamic: true, Split: true, Pos: Pos{2, 1, 3}},
			{Value: "", Source: `"${a[@]}"`, Dynamic: true, Split: true, Pos: Pos{7, 1, 8}},
		}},
		{"globs only when unquoted", `x *.go '*' a\*b [ab] [ x]`, []Word{
			{Value: "x", Source: "x", Pos: Pos{0, 1, 1}},
			{Value: "*.go", Source: "*.go", Glob: true, Pos: Pos{2, 1, 3}},
			{Value: "*", Source: "'*'", Pos: Pos{7, 1, 8}},
			{Value: "a*b", Source: `a\*b`, Pos: Pos{11, 1, 12}},
			{Value: "[ab]", Source: "[ab]", Glob: true, Pos: Pos{16, 1, 17}},
			{Value: "[", Source: "[", Pos: Pos{21, 1, 22}},
			{Value: "x]", Source: "x]", Pos: Pos{23, 1, 24}},
		}},
		{"brace expansion shares the source", `x{1,2}`, []Word{
			{Value: "x1", Source: "x{1,2}", Pos: Pos{0, 1, 1}},
			{Value: "x2", Source: "x{1,2}", Pos: Pos{0, 1, 1}},
		}},
		{"tilde forms", `x ~ ~/a ~"/b" ~root/c`, []Word{
			{Value: "x", Source: "x", Pos: Pos{0, 1, 1}},
			{Value: "/h", Source: "~", Pos: Pos{2, 1, 3}},
			{Value: "/h/a", Source: "~/a", Pos: Pos{4, 1, 5}},
			{Value: "~/b", Source: `~"/b"`, Pos: Pos{8, 1, 9}},
			{Value: "", Source: "~root/c", Dynamic: true, Pos: Pos{14, 1, 15}},
		}},
		{"ansi-c escapes", `x $'a\tb\x41\101\cA\0zzz' $'\e'`, []Word{
			{Value: "x", Source: "x", Pos: Pos{0, 1, 1}},
			{Value: "a\tbAA\x01", Source: `$'a\tb\x41\101\cA\0zzz'`, Pos: Pos{2, 1, 3}},
			{Value: "\x1b", Source: `$'\e'`, Pos: Pos{26, 1, 27}},
		}},
		{"double-quote escapes", `x "a\$b\"c\d"`, []Word{
			{Value: "x", Source: "x", Pos: Pos{0, 1, 1}},
			{Value: `a$b"c\d`, Source: `"a\$b\"c\d"`, Pos: Pos{2, 1, 3}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.src, Options{Home: "/h"})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Commands) == 0 {
				t.Fatal("no commands")
			}
			// Substitutions come first; the command itself is last.
			if diff := cmp.Diff(s.Commands[len(s.Commands)-1].Argv, tc.want); diff != "" {
				t.Errorf("Parse(%q) argv (-got +want):\n%s", tc.src, diff)
			}
		})
	}
}

func TestTildeWithoutHomeIsDynamic(t *testing.T) {
	s, err := Parse("~/bin/tool", Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := s.Commands[0].Argv[0]
	if !w.Dynamic || w.Value != "" {
		t.Errorf("word = %+v, want dynamic with an empty static prefix", w)
	}
	if len(s.Findings) != 1 || s.Findings[0].Severity != Ask {
		t.Errorf("findings = %+v, want one Ask for the unknown name", s.Findings)
	}
}

func TestPositionsAndText(t *testing.T) {
	src := "ls -l\nFOO=1 rm x >out; bash -c 'cat a; rm b'\necho $(touch c)"
	s, err := Parse(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type pt struct {
		Text string
		Pos  Pos
		Name string
	}
	var got []pt
	for _, c := range s.Commands {
		got = append(got, pt{c.Text, c.Pos, c.Name()})
	}
	word := Pos{Offset: 31, Line: 2, Col: 26} // the 'cat a; rm b' word
	want := []pt{
		{"ls -l", Pos{0, 1, 1}, "ls"},
		{"FOO=1 rm x >out", Pos{6, 2, 1}, "rm"},
		{"bash -c 'cat a; rm b'", Pos{23, 2, 18}, "bash"},
		{"cat a", word, "cat"},
		{"rm b", word, "rm"},
		{"touch c", Pos{52, 3, 8}, "touch"},
		{"echo $(touch c)", Pos{45, 3, 1}, "echo"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(s.Files, []FileOp{{Op: OpWrite, Fd: 1, Text: ">out", Pos: Pos{17, 2, 12},
		Path: Word{Value: "out", Source: "out", Pos: Pos{18, 2, 13}}}}); diff != "" {
		t.Errorf("files (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(s.Commands[1].Assigns, []Assign{{Name: "FOO", Pos: Pos{6, 2, 1},
		Value: Word{Value: "1", Source: "1", Pos: Pos{10, 2, 5}}}}); diff != "" {
		t.Errorf("assigns (-got +want):\n%s", diff)
	}
}

func TestNestedPositionsPointAtTheOuterWord(t *testing.T) {
	src := "eval \"bash -c 'rm x'\""
	s, err := Parse(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	outer := Pos{Offset: 5, Line: 1, Col: 6}
	for _, c := range s.Commands[1:] {
		if c.Pos != outer {
			t.Errorf("%q at %v, want the eval argument's position %v", c.Text, c.Pos, outer)
		}
		for _, w := range c.Argv {
			if w.Pos != outer {
				t.Errorf("%q word %q at %v, want %v", c.Text, w.Source, w.Pos, outer)
			}
		}
	}
	if got := s.Commands[len(s.Commands)-1]; got.Text != "rm x" || got.Name() != "rm" {
		t.Errorf("last command = %q (%s), want rm x", got.Text, got.Name())
	}
}

func TestMaxDepth(t *testing.T) {
	src := "rm x"
	for range 5 {
		q, _ := syntax.Quote(src, syntax.LangBash)
		src = "bash -c " + q
	}
	t.Run("within the limit", func(t *testing.T) {
		s, err := Parse(src, Options{MaxDepth: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Findings) != 0 {
			t.Errorf("findings = %v, want none", s.Findings)
		}
		if last := s.Commands[len(s.Commands)-1]; last.Name() != "rm" || len(last.Via) != 5 {
			t.Errorf("innermost = %q via %v, want rm five levels down", last.Text, last.Via)
		}
	})
	t.Run("beyond the limit blocks", func(t *testing.T) {
		s, err := Parse(src, Options{MaxDepth: 4})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{block("code nested more than 4 levels deep")}
		if diff := cmp.Diff(viewOf(s).Findings, want); diff != "" {
			t.Errorf("findings (-got +want):\n%s", diff)
		}
		for _, c := range s.Commands {
			if c.Name() == "rm" {
				t.Errorf("rm reported beyond the depth limit")
			}
		}
	})
	t.Run("default is eight", func(t *testing.T) {
		src := "rm x"
		for range 9 {
			src = "eval " + strings.ReplaceAll(fmt.Sprintf("%q", src), "$", `\$`)
		}
		s, err := Parse(src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Findings) != 1 || s.Findings[0].Severity != Block {
			t.Errorf("findings = %+v, want one Block", s.Findings)
		}
	})
}

func TestParseArgv(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want view
	}{
		{"plain", []string{"rm", "-rf", "/"}, view{Cmds: []cmdView{cmd("rm", "-rf", "/")}}},
		{"no quote processing", []string{`\rm`, "$x", "*"}, view{Cmds: []cmdView{cmd(`\rm`, "$x", "*")}}},
		{"wrappers", []string{"env", "FOO=1", "nice", "rm", "x"}, view{Cmds: []cmdView{
			cmd("env", "FOO=1", "nice", "rm", "x").wrapper(), cmd("nice", "rm", "x").wrapper().via("env"), cmd("rm", "x").via("env", "nice")}}},
		{"shell code is parsed", []string{"sh", "-c", "rm x; echo $(ls)"}, view{Cmds: []cmdView{
			cmd("sh", "-c", "rm x; echo $(ls)").wrapper(), cmd("rm", "x").via("sh -c"), cmd("ls").via("sh -c", "$(...)"), cmd("echo", "").via("sh -c")}}},
		{"shell without code asks", []string{"bash"}, view{Cmds: []cmdView{cmd("bash")},
			Findings: []string{ask("bash reads commands from standard input, which guardrun cannot see")}}},
		{"empty", nil, view{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ParseArgv(tc.argv, Options{})
			if diff := cmp.Diff(viewOf(s), tc.want, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ParseArgv(%q) (-got +want):\n%s", tc.argv, diff)
			}
		})
	}
	t.Run("words are static with quoted sources and index positions", func(t *testing.T) {
		s := ParseArgv([]string{"rm", "a b", "$x"}, Options{})
		want := []Word{
			{Value: "rm", Source: "rm", Pos: Pos{0, 1, 1}},
			{Value: "a b", Source: "'a b'", Pos: Pos{3, 1, 2}},
			{Value: "$x", Source: "'$x'", Pos: Pos{9, 1, 3}},
		}
		if diff := cmp.Diff(s.Commands[0].Argv, want); diff != "" {
			t.Errorf("(-got +want):\n%s", diff)
		}
		if got := s.Commands[0].Text; got != "rm 'a b' '$x'" {
			t.Errorf("Text = %q", got)
		}
	})
}

func TestDangerousVariable(t *testing.T) {
	for _, n := range []string{"PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "BASH_FUNC_ls%%", "GIT_CONFIG_GLOBAL", "GIT_CONFIG", "IFS", "BASH_ENV", "ENV", "HOME", "BASH_CMDS", "BASH_ALIASES", "POSIXLY_CORRECT", "SHELLOPTS", "BASHOPTS", "XDG_CONFIG_HOME", "GIT_DIR", "GIT_CONFIG_COUNT", "TMPDIR"} {
		if !DangerousVariable(n) {
			t.Errorf("DangerousVariable(%q) = false", n)
		}
	}
	for _, n := range []string{"HOMEDIR", "PATHX", "MY_PATH", "LD", "FOO", "HISTFILE", "ENVIRONMENT"} {
		if DangerousVariable(n) {
			t.Errorf("DangerousVariable(%q) = true", n)
		}
	}
}

func TestPatternWordMatching(t *testing.T) {
	for _, tc := range []struct {
		pat     string
		match   []string
		nomatch []string
	}{
		{`'*'`, []string{"*"}, []string{"x", ""}},
		{`\*`, []string{"*"}, []string{"x"}},
		{`'a*b'`, []string{"a*b"}, []string{"axb", "ab"}},
		{`a*b`, []string{"ab", "axxb", "a*b"}, []string{"abc"}},
		{`"a?"`, []string{"a?"}, []string{"ab"}},
		{`a?`, []string{"ab", "a?"}, []string{"a"}},
		{`'[x]'`, []string{"[x]"}, []string{"x"}},
		{`[x]`, []string{"x"}, []string{"[x]"}},
		{`'@(a|b)'`, []string{"@(a|b)"}, []string{"a"}},
		{`@(a|b)`, []string{"a", "b"}, []string{"@(a|b)"}},
		{`+(a)`, []string{"a", "aa"}, []string{"+(a)"}},
		{`'+(a)'`, []string{"+(a)"}, []string{"a"}},
		{`"a b"`, []string{"a b"}, []string{"a"}},
		{`[`, []string{"["}, []string{"x"}},
		{`a\\b`, []string{`a\b`}, []string{"ab"}},
	} {
		words, err := SplitPattern(tc.pat, syntax.LangBash)
		if err != nil || len(words) != 1 {
			t.Fatalf("SplitPattern(%s) = %q, %v", tc.pat, words, err)
		}
		m, err := CompileWord(words[0])
		if err != nil {
			t.Fatalf("CompileWord(%q): %v", words[0], err)
		}
		for _, s := range tc.match {
			if !m.MatchString(s) {
				t.Errorf("pattern %s does not match %q", tc.pat, s)
			}
		}
		for _, s := range tc.nomatch {
			if m.MatchString(s) {
				t.Errorf("pattern %s matches %q", tc.pat, s)
			}
		}
	}
}

// TestArithmeticOnRunTimeValues: bash evaluates a value as arithmetic
// ($((x)), (( )), let, [[ -eq ]], an indexed array's subscript, ${s:x},
// a declare -i variable) or as a name (${!x}), and a subscript in that
// value runs its command substitutions. A value made at run time asks
// wherever it is evaluated so; numbers, static expressions and the keys
// of associative arrays do not.
func TestArithmeticOnRunTimeValues(t *testing.T) {
	asks := func(src string) bool {
		s, err := Parse(src, Options{})
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		for _, f := range s.Findings {
			if strings.Contains(f.Reason, "arithmetic") || strings.Contains(f.Reason, "names, and") {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{`x=$(printf 'a[\x24(cmd)]'); echo $((x))`, true},
		{`x=$(printf 'a[\x24(cmd)]'); (( x ))`, true},
		{`x=$(printf 'a[\x24(cmd)]'); [[ $x -eq 0 ]]`, true},
		{`x=$(printf 'a[\x24(cmd)]'); echo ${arr[x]}`, true},
		{`x=$(printf 'a[\x24(cmd)]'); echo ${!x}`, true},
		{`x=$(printf 'a[\x24(cmd)]'); for ((i=x;;)); do :; done`, true},
		{`x=$(printf 'a[\x24(cmd)]'); case $((x)) in *) ;; esac`, true},
		{`x=$(cmd); y=x; echo $((y))`, true},
		{`read x; echo $((x + 1))`, true},
		{`echo x | { read x; echo $((x)); }`, true},
		{`mapfile -t a < f; echo $((a))`, true},
		{`printf -v x %s "$1"; echo $((x))`, true},
		{`getopts ab x; echo $((OPTARG))`, true},
		{`for x in "$@"; do echo $((x)); done`, true},
		{`for x; do echo $((x)); done`, true},
		{`echo $(( $1 + 1 ))`, true},
		{`echo $(( $(cat f) ))`, true},
		{`echo $((x))`, true}, // x comes from the environment
		{`declare -i n; n=$1`, true},
		{`local -i n=$(cat f)`, true},
		{`x='a[$(cmd)]'; echo $((x))`, true},
		{`x='a[b[0]]'; echo $((x))`, true},
		{`x=5; echo $((x * 2))`, false},
		{`x=y; y=3; echo $((x))`, false},
		{`for i in 1 2 3; do echo $((i*2)); done`, false},
		{`n=0; while :; do n=$((n+1)); (( n > 3 )) && break; done`, false},
		{`for ((i=0; i<10; i++)); do echo $i; done`, false},
		{`echo $(( $# + $? + RANDOM + LINENO ))`, false},
		{`n=${#x}; echo $((n))`, false},
		{`declare -A m; k=$(cat f); m[$k]=1; echo ${m[$k]}`, false},
		{`declare -A m=([$k]=1); echo ${m[$k]}`, false},
		{`echo ${!a[@]}`, false},
		{`x=HOME; echo ${!x}`, false},
		{`python -c "print(labels(e1)[0] + a[b[0]])"`, false},
		{`echo 'a[$(cmd)]'`, false},
		{`printf '%d' 'a[$(cmd)]'`, false},
		{`test x -eq 'a[$(cmd)]'`, false},
	} {
		if got := asks(tc.src); got != tc.want {
			s, _ := Parse(tc.src, Options{})
			t.Errorf("%q: asks %v, want %v; findings %v", tc.src, got, tc.want, viewOf(s).Findings)
		}
	}
}

// TestLastpipeFollowsTheLastCommand: with shopt -s lastpipe, the last
// command of a pipeline runs in the shell itself, so its cd changes the
// directory of the commands after the pipeline.
func TestLastpipeFollowsTheLastCommand(t *testing.T) {
	for _, tc := range []struct {
		src     string
		unknown bool
	}{
		{"shopt -s lastpipe; echo | cd .git; git status", true},
		{"echo | cd .git; shopt -s lastpipe; git status", true},
		{"shopt -s lastpipe; ls | grep x | cd sub; git status", true},
		{"echo | cd .git; git status", false},
		{"shopt -s lastpipe; echo | grep x; git status", false},
	} {
		s, err := Parse(tc.src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		last := s.Commands[len(s.Commands)-1]
		if got := last.Dir.Unknown != ""; got != tc.unknown {
			t.Errorf("%q: git status runs in an unknown directory: %v, want %v (%+v)", tc.src, got, tc.unknown, last.Dir)
		}
	}
	s, err := Parse("shopt -s $'last\\x70ipe'; echo | cd .git; git status", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasFinding(s, Ask, "sets lastpipe") {
		t.Errorf("lastpipe spelled in ANSI-C quotes: no finding: %v", viewOf(s).Findings)
	}
}
