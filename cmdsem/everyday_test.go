package cmdsem

import (
	"strings"
	"testing"
)

// TestEverydayPrograms: the inspection programs read what they are
// given and print; only the options that write, run something or set
// the clock have effects beyond reads, in every spelling.
func TestEverydayPrograms(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want string
	}{
		{"cut -d: -f1 /etc/passwd", "read /etc/passwd"},
		{"cut --delim=, -f2 a b", "read a; read b"},
		{"nl -ba f", "read f"},
		{"nl --number-width=3 -s: f", "read f"},
		{"tr -d x", ""},
		{"tr a-z A-Z", ""},
		{"cmp a b 10 20", "read a; read b"},
		{"stat -c %Y f", "read f"},
		{"du -sh", "read ."},
		{"du -sh src --exclude-from=pats", "read --exclude-from pats; read src"},
		{"df -h .", ""},
		{"date +%s", ""},
		{"date -u -d yesterday", ""},
		{"date -s 2020-01-01", "unknown -s"},
		{"date --set=2020-01-01", "unknown --set"},
		{"date 010112002024", "unknown"},
		{"date -f dates", "read -f dates"},
		{"basename -s .go a/b.go", ""},
		{"dirname a/b", ""},
		{"realpath --relative-to=. x", ""},
		{"readlink -f x", ""},
		{"which -a ls", ""},
		{"type -t ls", ""},
		{"ps aux", ""},
		{"ps -eo pid,cmd --forest", ""},
		{"pgrep -af extract", ""},
		{"pgrep -F pidfile", "read -F pidfile"},
		{"pgrep --sig=9 x", "unknown --sig"},
		{"sleep 5", ""},
		{"echo --- -n -e", ""},
		{"true --frob", ""},
		{"ls", "read ."},
		{"ls -la src", "read src"},
		{"ls ~/.ssh", "read ~/.ssh"},
		{"tree -L 2", "read ."},
		{"tree -o out src", "write -o out; read src"},
		{"tree -R -H . src", "unknown -R; read src"},
		{"grep -rn foo", "read ."},
		{"grep -n foo", ""},
		{"cd src", "read src"},
		{"cd -P -- ~/.ssh", "read ~/.ssh"},
		{"cd", ""},
		{"cd -", ""},
		{"pushd +1", ""},
		{"popd -n", ""},
		// jq: reads only.
		{"jq . f.json", "read f.json"},
		{"jq -r .name", ""},
		{"jq -nr --arg a b $a", ""},
		{"jq -n --rawfile x .env $x", "read --rawfile .env"},
		{"jq -n --slurpfile x a.json $x", "read --slurpfile a.json"},
		{"jq -f prog.jq in.json", "read -f prog.jq; read in.json"},
		{"jq -L mods . in.json", "read -L mods; read in.json"},
		{"jq --args . a b", ""},
		// find: starting points are read, -delete removes, an unknown
		// primary or action may do anything.
		{"find . -name *.go", "read ."},
		{"find -type f", "read ."},
		{"find src docs -maxdepth 2 -print", "read src; read docs"},
		{"find . -name -delete", "read ."},
		{"find . -exec rm {} ;", "read ."},
		{"find . -files0-from list", "read -files0-from list; read ."},
		{"find . -newermt 2024-01-01", "read ."},
		{"find . -frobnicate", "unknown -frobnicate; read ."},
		// xxd: one option a word, long spellings, no options after the
		// input file, the second operand written.
		{"xxd f", "read f"},
		{"xxd f out", "read f; write out"},
		{"xxd f -n", "read f; write -n"},
		{"xxd -cols 4 f out", "read f; write out"},
		{"xxd -c4 f out", "read f; write out"},
		{"xxd -c 4 f out", "read f; write out"},
		{"xxd -name x f out", "read f; write out"},
		{"xxd -nname f out", "read f; write out"},
		{"xxd --cols 4 f", "read f"},
		{"xxd -r -p in.hex out.bin", "read in.hex; write out.bin"},
		{"xxd -autoskip -capitalize f", "read f"},
		{"xxd -- -x out", "read -x; write out"},
		{"xxd - out", "write out"},
		{"xxd f -", "read f"},
		{"xxd -h f out", ""},
		// uniq: the second operand is its output.
		{"uniq a b", "read a; write b"},
		{"uniq -c a", "read a"},
		{"uniq a -c b", "read a; write b"},
		// file -C compiles the magic file into the working directory.
		{"file -C -m m.txt", "write -C .; read -m m.txt"},
	} {
		got := summary(Analyze(argv(strings.Fields(tc.cmd)...), nil))
		if got != tc.want {
			t.Errorf("Analyze(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

// TestOperandsKnownAtRunTime: where the count or shape of the operands
// is only known at run time, a program whose second operand writes
// cannot be told which word that is.
func TestOperandsKnownAtRunTime(t *testing.T) {
	glob := func(v string) Arg { return Arg{Value: v, Glob: true} }
	split := Arg{Value: "", Glob: true} // "$@", ${arr[@]}
	lit := func(v string) Arg { return Arg{Value: v, Static: true} }
	for _, tc := range []struct {
		args []Arg
		want string
	}{
		{[]Arg{lit("uniq"), glob("")}, "unknown; write (run-time value)"},
		{[]Arg{lit("uniq"), glob("src/")}, "write (run-time value)"},
		{[]Arg{lit("uniq"), split}, "unknown; write (run-time value)"},
		{[]Arg{lit("uniq"), lit("a"), glob("b")}, "read a; write b"},
		{[]Arg{lit("xxd"), glob("")}, "write (run-time value)"},
		{[]Arg{lit("xxd"), lit("f"), split}, "read f; write (run-time value)"},
		{[]Arg{lit("xxd"), lit("-c"), split, lit("f")}, "write (run-time value)"},
		{[]Arg{lit("file"), glob("")}, "unknown"},
	} {
		got := summary(Analyze(tc.args, nil))
		if got != tc.want {
			t.Errorf("Analyze(%v) = %q, want %q", tc.args, got, tc.want)
		}
	}
	for _, name := range []string{"uniq", "xxd", "cp", "mv", "touch", "mkdir", "chmod", "tee", "ln", "install", "split", "patch", "file", "find", "sed", "awk"} {
		if !Risky(name) {
			t.Errorf("%s is not Risky: operands added at run time would not ask", name)
		}
	}
	for _, name := range []string{"echo", "true", "jq", "cd", "cut", "nl", "tr", "stat", "ps", "pgrep", "basename", "ls", "cat", "wc"} {
		if Risky(name) {
			t.Errorf("%s is Risky, but nothing it can be told writes or runs", name)
		}
	}
}

// TestGitLocal: git branch lists, git add stages what it is given, git
// remote lists; what changes refs or .git/config has an effect.
func TestGitLocal(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want string
	}{
		{"git branch", ""},
		{"git branch -a -vv", ""},
		{"git branch --list feat/*", ""},
		{"git branch --show-current", ""},
		{"git branch --contains HEAD~3", ""},
		{"git branch --sort=-committerdate --format=%(refname)", ""},
		{"git branch new", "unknown"},
		{"git branch x/objects/a", "unknown"},
		{"git branch -v new", "unknown"},
		{"git branch --verbose new", "unknown"},
		{"git branch -vv new HEAD~1", "unknown"},
		{"git branch -v --list new", ""},
		{"git branch -v --merged main", ""},
		{"git branch -D old", "unknown -D"},
		{"git branch -d old", "unknown -d"},
		{"git branch --delete old", "unknown --delete"},
		{"git branch -m a b", "unknown -m"},
		{"git branch -M b", "unknown -M"},
		{"git branch -c a b", "unknown -c"},
		{"git branch -C b", "unknown -C"},
		{"git branch --edit-description", "exec --edit-description"},
		{"git branch -u origin/main", "unknown -u"},
		{"git branch --set-up=origin/main", "unknown --set-upstream-to"},
		{"git branch --frob", "unknown --frob"},
		{"git add .", "read ."},
		{"git add -A", ""},
		{"git add -u src", "read src"},
		{"git add .env", "read .env"},
		{"git add :/", ""},
		{"git add -p", "exec -p"},
		{"git add --edit", "exec --edit"},
		{"git add --pathspec-from-file=list", "read --pathspec-from-file list"},
		{"git remote", ""},
		{"git remote -v", ""},
		{"git remote get-url origin", ""},
		{"git remote show -n origin", ""},
		{"git remote show origin", "unknown"},
		{"git remote -v add x https://x", "unknown add"},
		{"git remote set-url origin x", "unknown set-url"},
		{"git remote frob", "unknown frob"},
	} {
		got := summary(Analyze(argv(strings.Fields(tc.cmd)...), nil))
		if got != tc.want {
			t.Errorf("Analyze(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

// TestSedAsGNUSedReadsIt: GNU sed 4.9 ends a label at a blank, ;, }, #
// or a newline and reads on (:a;e cmd runs cmd), reads a delimiter
// inside brackets as a character (s/[/]/x/;e cmd runs cmd), joins its
// -e scripts with newlines, keeps -i's backup at FILE+SUFFIX or at
// SUFFIX with * replaced by FILE, and takes a w or r file name to the
// end of its line, trailing blanks included.
func TestSedAsGNUSedReadsIt(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sed", "-n", ":a;e touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "-n", ":a e touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "-n", ":a\ne touch M", "f"}, "exec e; read f"},
		{[]string{"sed", ":a;w out", "f"}, "write w out; read f"},
		{[]string{"sed", ":a#x;e touch M", "f"}, "read f"}, // # starts a comment
		{[]string{"sed", "{:a};e touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "ba;:a;e touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "t x;e touch M\n:x", "f"}, "exec e; read f"},
		{[]string{"sed", "v 4.2;e touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "s/[/]/x/;e touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "s/[]/]/x/;e touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "s/[[:alpha:]/]/x/;e touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "s/[\\]/x/;e touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "/[/]/e touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "\\,[,],e touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "s/[/;e touch M;s/]/x/", "f"}, "read f"}, // one s command
		{[]string{"sed", "y/[/]/;e touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "s/x/\\//p;e touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "s/a/b/w /dev/stdout\ne touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "a foo;e touch M", "f"}, "read f"}, // the text runs to the end of the line
		{[]string{"sed", "-e", "a\\", "-e", "e touch M", "f"}, "read f"},
		{[]string{"sed", "-e", "p", "-e", "e touch M", "f"}, "exec e; read f"},
		{[]string{"sed", "-e", "s/a/b/w", "-e", "out", "f"}, "unknown s///w; read f"},
		{[]string{"sed", "s/[[:]/]/x/", "f"}, "unknown s; read f"},
		{[]string{"sed", "-n", "1,220p", "f"}, "read f"},
		{[]string{"sed", "-n", "$!N;/^$/d;P;D", "f"}, "read f"},
		{[]string{"sed", "-E", "s/([a-z]+)/\\1/g", "f"}, "read f"},
		{[]string{"sed", "-z", "--posix", "-s", "s/a/b/", "f", "g"}, "read f; read g"},
		{[]string{"sed", "-i", "s/a/b/", "f"}, "write -i f"},
		{[]string{"sed", "-i~", "s/a/b/", "f"}, "write -i f; write -i~ f~"},
		{[]string{"sed", "-ibk/*", "s/a/b/", "sub/f"}, "write -i sub/f; write -ibk/* bk/sub/f"},
		{[]string{"sed", "--in-place=../*.orig", "s/a/b/", "f"}, "write -i f; write -i../*.orig ../f.orig"},
		{[]string{"sed", "-i", "--follow-symlinks", "s/a/b/", "link"}, "write -i link"},
		{[]string{"sed", "-Ei", "s/a/b/", "f"}, "write -i f"},
		{[]string{"sed", "-iE", "s/a/b/", "f"}, "write -i f; write -iE fE"},
		// A file name keeps its trailing blanks: w out␣ writes "out ".
		{[]string{"sed", "-n", "w out ", "f"}, "write w out ; read f"},
		{[]string{"sed", "-n", "s/a/b/w  out\t", "f"}, "write s///w out\t; read f"},
		{[]string{"sed", "r in ", "f"}, "read r in ; read f"},
		{[]string{"sed", "w /dev/stdout ", "f"}, "write w /dev/stdout ; read f"},
	} {
		got := summary(Analyze(argv(tc.args...), nil))
		if got != tc.want {
			t.Errorf("Analyze(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
