// Package cmdsem says what the options and operands of well-known
// commands do beyond reading their input and printing: which write a file
// (sort -o, git diff --output, tee FILE, cp SRC DEST, sed -i), which read
// a file guardrun must judge (grep -f, sort --files0-from), which run a
// program or code (sort --compress-program, rg --pre, git -c, sed's e
// command, find -delete's cousins), which environment variables send a
// program elsewhere (GIT_*, TMPDIR, PAGER, EDITOR, LESSOPEN), and which it
// reads options from (TAR_OPTIONS, LESS, XZ_OPT).
//
// It is one data table and a getopt_long-compatible reader of argv: short
// options alone or clustered (-o F, -oF, -no F), long options with = or a
// separate argument (--output=F, --output F), unambiguous prefixes of long
// options where the program accepts them (--out=F), and -- ending options;
// GNU programs take options after operands too. Options and Scan are that
// reader and its notation; package shellparse reads the options of the
// wrappers it looks through (nice, timeout, env, xargs, sudo, the shells)
// with them too. It never runs anything and knows nothing of zones or
// rules: policy (package rules) turns each Effect into a file operation or
// a question.
//
// Predict is the table's prediction column: what a command starts and
// writes by itself (git's pager, tar -z's gzip, sed -i's temporary file,
// git status's index.lock) and how it acts on the files its arguments
// name (mkdir -p, rm -r, cp -r). Each row was checked against the real
// program under strace; a command without a row is not bounded.
//
// # Limitations
//
// The table describes GNU coreutils, git 2.x, ripgrep, curl, wget, GNU make,
// go, npm, pnpm, yarn, pip, CPython, Node.js 20 to 22, Ruby 3, Deno 2, Bun,
// cargo, pytest and mypy as documented; a version with different options
// can differ. Where a program finds the code it runs (Effect.Code) is said
// as a lookup (the nearest package.json, node_modules/.bin, a package of
// node_modules, a module in the working directory) for policy to make in
// the file system; what a
// program's configuration adds (a Makefile's include, package.json's
// pre- and post-scripts, a pytest plugin) is the project's or is read
// only. An option the table does not list asks (for long options, and
// for short options of commands whose short options are all listed), so a
// newer option fails closed. What a program does because of its
// configuration files (a git alias or core.pager in .git/config, a
// .curlrc, a Makefile's recipes, a package's install scripts) is not
// visible in argv; the table marks the arguments that select such files,
// and the OS sandbox bounds the rest. sed programs are read as GNU sed
// 4.9 reads them, awk programs by a lexer that reads as mawk 1.3.4 and
// gawk 5.2 do (where they disagree, the program asks), for the commands
// that write, read or run programs; a program the scanner cannot read
// asks. The variables programs read options from (OptionVariable) are
// judged by the options they hold, split on blanks; a value with quotes
// or backslashes, which the program splits as a shell would, asks.
package cmdsem
