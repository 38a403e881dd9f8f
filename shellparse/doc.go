// Package shellparse reads shell code with mvdan.cc/sh/v3/syntax and
// reports every simple command it could run, the files its redirections
// touch, and whatever cannot be known without running it.
//
// It never executes anything, never reads the file system and never looks
// at the environment: it does not expand variables, run substitutions,
// match globs or search PATH. What depends on those is marked in the
// result (Word.Dynamic, Word.Glob, Word.Split) or reported as a Finding,
// and the decision what to allow is left to the rules package. It errs on
// the side of reporting too much: a command that might run is reported,
// with the way it is reached in Command.Via.
//
// # What it reads
//
// Lists, pipelines, subshells and groups; if, while, until, for, select
// and case; function bodies; coproc and time; the operands of [[ ]], (( ))
// and let; command, process and arithmetic substitutions wherever they
// appear, including parameter-expansion operands, array indices,
// redirection targets, unquoted here-documents, case patterns and extended
// globs. The command name after quote removal, ANSI-C decoding and brace
// expansion: \rm, 'r'm, $'\x72m' and {rm,-rf,/} all run rm.
//
// Wrappers are looked through: env, nice, nohup, timeout, time, command,
// builtin, exec, stdbuf, setsid, xargs, find -exec/-execdir/-ok/-okdir,
// sudo and doas are reported with Wrapper set, followed by the command
// they run. Code handed to a shell is parsed in turn: sh/bash/dash/zsh/
// ksh/mksh -c strings, here-documents and here-strings fed to a shell,
// eval and trap arguments, alias values, mapfile -C and compgen -C
// callbacks, and the -c code of su, runuser, flock and watch (which stay
// commands of their own). The wrappers' and builtins' options are read
// with package cmdsem's getopt reader, in the notation of its option
// table (cmdsem.Options).
//
// Besides commands, files and findings, a Script holds what the script
// feeds its commands from its own text (Feeds: here-documents and
// here-strings, which a session grant must cover) and, for one cd,
// export, unset or exit, what a shell that keeps its state from one
// input to the next carries over (Carry). QuoteArgv shows an argv as the
// dialect's shell would read it back, wherever guardrun shows one.
// Command.Execs tells a command that execs a program from a builtin the
// shell runs itself (a program that runs a command, Command.ByProgram,
// always execs it), and GlobPattern a glob in path.Match notation, for
// the prediction of what a script runs.
//
// # One program
//
// What is analysed must be the program bash runs. Where the parser and
// bash read the same text differently, this package either reads it as
// bash does or reports a finding, so that nothing it misread is
// pre-approved:
//
//   - read as bash does: $(( and (( whose text is not arithmetic are a
//     substitution or subshell that starts with a subshell (the source is
//     re-parsed with a space after the first parenthesis, so positions
//     after it shift by one byte); empty words from brace expansion are
//     dropped ({,rm} -rf x runs rm).
//   - ask: a carriage return anywhere (bash reads it as part of a word,
//     the parser as a blank); a backslash-newline after $, < or > or
//     splitting an operator (bash removes it first: "$\<newline>(cmd)"
//     runs cmd); a comment that ends in a backslash (bash ends the
//     comment at the newline, the parser joins the next line to the
//     command: ls # \<newline>rm x); a here-document with a line that starts with its
//     delimiter and goes on with something else (bash ends a
//     here-document at EOF) inside $(...)).
//   - block: a NUL byte; bytes that are not UTF-8 (the parser refuses
//     them).
//   - sh: code read as POSIX sh (shell.program sh, dash, or a nested sh -c,
//     watch, flock -c) is read only that way: code that does not parse
//     as POSIX sh blocks and is never re-read as bash, which would see
//     another program. Because /bin/sh is bash on some systems, code
//     whose bash parse tree differs from its POSIX one asks.
//
// The bashoracle package checks this against real bash and dash.
//
// # Limits
//
// Every input has a bounded cost, and beyond a limit the script is
// blocked with a reason naming it: MaxScriptBytes of text, MaxNesting
// levels of nesting (measured on the bytes before parsing, so a
// 20,000-level $( $( ... ) ) costs one scan, and again on the tree),
// MaxParts commands, file operations and findings, and output text of
// OutputPerByte times the script's size plus OutputSlack (at most
// MaxOutputBytes), since a command's text holds every command nested in
// it. Analysis time is linear in the script's size.
//
// Findings are independent of any rule. Ask: a command name or code string
// built at run time, a shell reading code from standard input (a shell
// run on a script file names it as the command's Script instead, for
// policy to judge where it lies; named at run time, like an option, or
// under xargs or find -exec it asks), source and ., an assignment to one of DangerousVariables or
// StartupVariables (PATH, IFS,
// BASH_CMDS, BASH_ALIASES, POSIXLY_CORRECT, SHELLOPTS, HOME, XDG_*, GIT_*,
// TMPDIR, LD_*, LOCPATH, TEXTDOMAIN, SHLVL, SSH_CLIENT, GUARDRUN_* and more) in every form: NAME=, env, sudo, export and the
// other declaration builtins, read, printf -v (also when -v is a run-time
// word), mapfile, getopts, for and select, ${VAR:=...}, arithmetic
// assignment and ++/-- in $(( )), (( )) and let, coproc NAME, {NAME}>,
// unset, and namerefs; an assignment to a locale variable (LC_ALL,
// LC_CTYPE, LANG) unless its value is a static SafeLocale name (C,
// POSIX, a UTF-8, ASCII, ISO-8859, KOI8, CP125x or EUC codeset): in BIG5,
// GBK, GB18030 or Shift_JIS a backslash or backquote byte can end a
// character, and bash reads the rest of the script in that charset;
// a bash, or a shell that keeps no SHLVL (dash, mksh, posh, yash), started
// through env -i, env -, env -u SHLVL or exec -c, directly
// or through wrappers such as env, nice, xargs or find -exec (at shell
// level 1 it runs ~/.bashrc when its input is a socket); shell options that change how the rest is read or
// run (set -k, set -o keyword/posix/functrace/history, shopt -s
// expand_aliases/extdebug/compat*, enable, and nested shells started with
// -i, -l, --login, -k, --posix, --debugger, -o or -O of those, or through
// exec -a with a name starting with - or exec -l, a login shell); a value
// bash evaluates as arithmetic ($(( )), (( )), let, for (( )), [[ -eq ]],
// an indexed array's subscript, ${s:x}, a declare -i variable's
// assignments) or as a variable name (${!x}, zsh's ${(P)x}, and the names
// read, printf -v, declare, unset and test -v take) that is made at run
// time, comes from the environment or is text shaped like an array
// subscript, since a subscript in it runs its command substitutions
// (x=$(printf 'a[\x24(cmd)]'); echo $((x)) runs cmd: see arith.go);
// export -f, enable -f, hash -p,
// ${var@P}, input substituted into shell code by xargs -I or find -exec,
// and a wrapper whose options are not known statically. Block: nested
// code that does not parse, code nested deeper than Options.MaxDepth,
// absurdly long wrapper chains, the limits above, and shell syntax the
// parser added after this package was written.
//
// Each command and redirection carries the working directory it runs in
// (Command.Dir, FileOp.Dir: the cd, pushd and popd before it and env -C, scoped to
// subshells, pipelines and && chains; Unknown after a cd to a run-time
// value) and the descriptors the script bound for it (Command.Fds,
// FileOp.Bound for /dev/stdout, /dev/fd/N, /proc/self/fd/N). Both are
// computed in scope.go; policy resolves them against real directories.
//
// # Limitations
//
// It sees only the text it is given. Aliases defined before the script
// runs (in a startup file or an enclosing shell), functions inherited from
// the environment (BASH_FUNC_*), builtins enabled elsewhere, shell options
// such as extglob or expand_aliases set outside the script, and what PATH
// resolves a name to are all invisible; Command.Name is the name as
// written, not the program that will run.
//
// Run-time values are not followed. A variable set in the script to a
// literal and used later as a command argument is still dynamic. For the
// values bash evaluates as arithmetic or as names, the assignments of the
// whole script are gathered, in any order (a loop or a function may run
// them so): a variable whose every assignment is a number, an arithmetic
// result or a plain expression of such variables is safe; one assigned a
// run-time value anywhere, or not assigned at all, asks where it is
// evaluated. The keys of associative arrays are strings only when the
// script declares the array -A (or it is one of zsh's special hashes).
// Namerefs (declare -n) that point at a dangerous variable are only
// caught when declared with a literal target.
//
// Startup files of nested shells started with -i or -l ask; a plain
// bash -c still reads $BASH_ENV from the environment guardrun runs in,
// which this package does not see.
//
// Programs that interpret their arguments as code are judged as the
// programs they are, not by the code they run: python -c, perl -e, node
// -e, ruby -e, awk 'BEGIN{system("...")}', sed's e command, git -c
// core.pager=... or core.sshCommand, git aliases and hooks, make and its
// Makefile, npm run, ssh HOST CMD, docker run and exec, kubectl exec,
// parallel, script -c, busybox, chroot, unshare, nsenter, strace and
// other wrappers not listed above. Scripts a command runs from disk
// (bash script.sh, ./configure, source x) cannot be read and only ask.
//
// zsh, ksh and mksh are parsed with mvdan.cc/sh's support for them, which
// is less complete than for bash. In zsh code, glob qualifiers
// (*(e:...:), *(+func); any (...) the parser leaves at the end of a
// pattern, and in the word of ${x:-word}, which zsh globs), parameter
// flags with e (${(e)x}) and a value globbed
// (${~x}, whose qualifiers run) run code the analysis does not follow,
// and ask, as do zsh started with -o, +o or a long option (-o globsubst
// globs every value) and an assignment to options; assignments to
// functions, aliases, galiases, saliases or commands (zsh defines a
// function, an alias or a command's path through them) are listed in
// DangerousVariables.
// Brace expansion is always performed, also for POSIX sh, because sh is
// often bash; under dash this reports words that never run, which is
// harmless. The backslash-newline and here-document checks look at the
// text, not at quoting, so they also ask for such text inside single
// quotes.
package shellparse
