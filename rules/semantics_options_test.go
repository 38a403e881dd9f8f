package rules

import (
	"path/filepath"
	"testing"
)

// trampolineConfig pre-approves every "harmless" program an attacker would
// use as a trampoline.
const trampolineConfig = semConfig + `
`

// TestHarmlessProgramOptions keeps every attack tried against the semantics table as a
// row: options of "harmless" programs that run code or write (GTFOBins
// style), spellings of options (clusters, attached values, abbreviations,
// quoting, brace expansion), run-time words, wrappers, descriptor paths,
// directories and public allowlist bypasses (sort --compress-program,
// rg --pre, git --config-env, git grep -O, tar's dashless clusters,
// uniq IN OUT, ./cat).
func TestHarmlessProgramOptions(t *testing.T) {
	e, ws := trampolineEngine(t)
	checkRows(t, e, ws, []pathRow{
		// Spellings of sort -o.
		{"-o attached absolute", "sort -o/etc/passwd a", Block, "outside every rw zone", "/etc/passwd"},
		{"cluster", "sort -mo ../ro/x a", Block, "read-only", "ro/x"},
		{"cluster attached", "sort -muo../ro/x a", Block, "read-only", "ro/x"},
		{"long separate", "sort --output ../ro/x a", Block, "read-only", "ro/x"},
		{"long abbreviated", "sort --ou=../ro/x a", Block, "read-only", "ro/x"},
		{"after the operand", "sort a -o ../ro/x", Block, "read-only", "ro/x"},
		{"after --, an operand", "sort -- -o ../ro/x", Allow, "", ""},
		{"quoted", "sort '-o../ro/x' a", Block, "read-only", "ro/x"},
		{"ANSI-C quoted", "sort $'-o' ../ro/x a", Block, "read-only", "ro/x"},
		{"brace expansion", "sort -o{../ro/x,y} a", Block, "read-only", "ro/x"},
		{"from a variable", "s=-o; sort $s ../ro/x a", Ask, "may be an option", ""},
		{"from a substitution", "sort $(echo -o) ../ro/x a", Ask, "may be an option", ""},
		{"temporary directory", "sort -T ../ro a", Block, "read-only", "ro"},
		{"temporary directory by env", "TMPDIR=../ro sort a", Ask, "TMPDIR", ""},
		{"benign TMPDIR still asks", "TMPDIR=/tmp sort a", Ask, "TMPDIR", ""},
		{"home of another user", "sort -o ~root/.bashrc a", Ask, "~root", ""},
		{"through /dev/..", "sort -o /dev/../etc/x a", Block, "outside every rw zone", "/etc/x"},
		{"to its own stdout", "sort -o /dev/fd/1 a", Allow, "", ""},
		{"to an unbound descriptor", "sort -o /proc/self/fd/3 a", Ask, "not bound", ""},
		{"after cd", "cd ../ro; sort -o x a", Block, "read-only", "ro/x"},
		{"after pushd", "pushd ../ro && tee x", Block, "read-only", "ro/x"},
		{"in a subshell after cd", "(cd ..; git diff --output=ro/x)", Block, "read-only", "ro/x"},
		// Programs that run programs.
		{"sort compress short", "sort -S1 --compress-prog=./evil a", Ask, "compress", ""},
		{"rg --pre separate", "rg --pre ./evil.sh x y", Ask, "every file searched", ""},
		{"rg takes no abbreviations", "rg --pr sh x", Ask, "not an option", ""},
		{"rg --hostname-bin", "rg --hostname-bin=sh --hyperlink-format=x x", Ask, "host name", ""},
		{"rg config from the environment", "RIPGREP_CONFIG_PATH=cfg rg x", Ask, "RIPGREP_CONFIG_PATH", ""},
		{"rg -z is its own decompressors", "rg -z x", Allow, "", ""},
		{"git -c attached", "git -ccore.pager=sh diff", Ask, "sets configuration", ""},
		{"git --config-env joined", "git --config-env=core.pager=X diff", Ask, "sets configuration", ""},
		{"git --exec-path", "git --exec-path=. status", Ask, "subcommands from another directory", ""},
		{"git -C then --output", "git -C .. diff --output=ro/x", Block, "read-only", "ro/x"},
		{"git fsmonitor through the environment", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=sh git status", Ask, "GIT_CONFIG", ""},
		{"GIT_EXTERNAL_DIFF", "GIT_EXTERNAL_DIFF=sh git diff", Ask, "GIT_EXTERNAL_DIFF", ""},
		{"git diff -O reads a denied file", "git diff -Osecret/key", Block, "denied", "ws/secret/key"},
		{"git log --output separate", "git log --output ../ro/x", Block, "read-only", "ro/x"},
		{"git show --output in the zone", "git show --output=x HEAD", Allow, "", "ws/x"},
		{"git status porcelain", "git status --porcelain=v2 -b", Allow, "", ""},
		{"git diff with a substituted option", "git diff $(echo --output=../ro/x)", Ask, "may be an option", ""},
		{"git blame --contents", "git blame --contents secret/key a", Block, "denied", "ws/secret/key"},
		{"git grep -O bundled", "git grep -iOsh foo", Ask, "pager program", ""},
		{"git alias through -c", "git -c alias.status='!sh' status", Ask, "sets configuration", ""},
		// sed, awk.
		{"sed -i with -e", "sed -i -e s/a/b/ ../ro/target.txt", Block, "read-only", "ro/target.txt"},
		{"sed -i suffix attached", "sed -ibak s/a/b/ ../ro/target.txt", Block, "read-only", "ro/target.txt"},
		{"sed -ni cluster", "sed -n -i p ../ro/target.txt", Block, "read-only", "ro/target.txt"},
		{"sed --in-place=", "sed --in-place=.b s/a/b/ ../ro/target.txt", Block, "read-only", "ro/target.txt"},
		{"sed w", "sed 'w ../ro/x' a", Block, "read-only", "ro/x"},
		{"sed W after address", "sed -n '/x/W ../ro/y' a", Block, "read-only", "ro/y"},
		{"sed e after N", "sed '$!N;e id' a", Ask, "runs a shell command", ""},
		{"sed R of a denied file", "sed 'R secret/key' a", Block, "denied", "ws/secret/key"},
		{"sed --expression abbreviated", "sed --expr='1e id' a", Ask, "runs a shell command", ""},
		{"sed -f program", "sed -f prog a", Ask, "cannot see it", ""},
		{"awk getline from a command", `awk 'BEGIN{while(("id"|getline l)>0)print l}'`, Ask, "pipes", ""},
		{"awk print to a file", `awk 'BEGIN{print "x" > "/etc/x"}'`, Block, "prints into the file", "/etc/x"},
		{"awk print to a file named at run time", `awk '{print > $1}'`, Ask, "prints into a file", ""},
		{"awk program from a file", "awk -f prog a", Ask, "cannot see it", ""},
		{"awk system hidden in a string is still code", `awk 'BEGIN{s="x"; system(s)}'`, Ask, "system()", ""},
		{"awk string mentioning system is not", `awk 'BEGIN{print "system"}'`, Allow, "", ""},
		// find, xargs.
		{"find -fprint", "find . -fprint ../ro/x", Block, "read-only", "ro/x"},
		{"find -delete in ro", "find ../ro -delete", Block, "read-only", "ro"},
		{"find -exec a shell", `find . -exec sh -c id \;`, Ask, "", ""},
		{"xargs -a a denied file", "xargs -a secret/key echo", Block, "denied", ""},
		{"xargs supplies options", "ls | xargs rg foo", Ask, "supplied at run time", ""},
		{"xargs -I into an output path", "ls | xargs -I{} sort -o {} a", Ask, "not known until run time", ""},
		{"find -exec into an output path", `find . -exec sort -o {} a \;`, Ask, "not known until run time", ""},
		// tar.
		{"tar -C separate", "tar xf a.tar -C ../ro", Block, "read-only", "ro"},
		{"tar --directory=", "tar -xvf a.tar --directory=../ro", Block, "read-only", "ro"},
		{"tar dashless f then C", "tar xfC a.tar ../ro", Block, "read-only", "ro"},
		{"tar through a pipe", "tar cf - src | tar xf - -C ../ro", Block, "read-only", "ro"},
		{"tar -I", "tar -cf a.tar -I 'sh -c id' src", Ask, "compress", ""},
		{"tar abbreviated compress program", "tar -cf a.tar --use-compress-prog=sh src", Ask, "compress", ""},
		{"tar absolute names", "tar -xPf a.tar", Ask, "absolute paths", ""},
		// cp, mv, ln, install, touch, mkdir, chmod.
		{"cp -rt cluster", "cp -rt ../ro a", Block, "read-only", "ro/a"},
		{"cp --target-directory separate", "cp --target-directory ../ro a", Block, "read-only", "ro/a"},
		{"cp into an existing directory", "cp a ../ro", Block, "read-only", "ro/a"},
		{"mv out of ro", "mv ../ro/target.txt .", Block, "read-only", "ro/target.txt"},
		{"ln into ro", "ln -s /etc/passwd ../ro/l", Block, "read-only", "ro/l"},
		{"install -D", "install -D a ../ro/x/y", Block, "read-only", "ro/x/y"},
		{"touch -r a denied file", "touch -r secret/key a", Block, "denied", "ws/secret/key"},
		{"mkdir -m", "mkdir -m 777 ../ro/d", Block, "read-only", "ro/d"},
		{"chmod in ro", "chmod +x ../ro/target.txt", Block, "read-only", "ro/target.txt"},
		{"chmod --reference denied", "chmod --reference=secret/key a", Block, "denied", "ws/secret/key"},
		// Other trampolines.
		{"uniq IN OUT", "uniq a ../ro/x", Block, "read-only", "ro/x"},
		{"xxd IN OUT", "xxd a ../ro/x", Block, "read-only", "ro/x"},
		{"shuf -o", "shuf -o ../ro/x a", Block, "read-only", "ro/x"},
		{"split prefix", "split a ../ro/p", Block, "read-only", "ro/p"},
		{"split --filter", "split --filter=sh a", Ask, "shell command", ""},
		{"less +!", "less '+!id' a", Ask, "shell commands", ""},
		{"less -o", "less -o ../ro/x a", Block, "read-only", "ro/x"},
		{"man -P attached", "man -Psh ls", Ask, "pager", ""},
		{"man -H", "man -Hfirefox ls", Ask, "browser", ""},
		{"LESSOPEN for less", "LESSOPEN='|sh %s' less a", Ask, "LESSOPEN", ""},
		{"patch", "patch -p1 < x.diff", Ask, "patches the files the patch names", ""},
		{"dd reads a denied file", "dd if=secret/key of=out", Block, "denied", "ws/secret/key"},
		{"dd writes ro", "dd if=a of=../ro/x", Block, "read-only", "ro/x"},
		{"diff -l runs pr", "diff -l a b", Ask, "runs pr", ""},
		// Interpreters and build tools.
		{"python -c under a -m rule", "python -c 'import os'", Ask, "runs the code", ""},
		{"python -m other module", "python -m http.server", Ask, "not a module of the project", ""},
		{"go test -c -o", "go test -c -o ../ro/t.test", Block, "read-only", "ro/t.test"},
		{"go test binary flags after -args", "go test ./... -args -test.coverprofile=../ro/c", Block, "read-only", "ro/c"},
		{"go build -ldflags extld", "go build -ldflags='-linkmode=external -extld=sh' .", Ask, "external linker", ""},
		{"go test -json to /tmp", "go test -json ./... > /tmp/x", Allow, "", ""},
		{"make -E", "make -E 'x:;id'", Ask, "evaluates", ""},
		{"make CC=", "make CC=./evil", Ask, "overrides a variable", ""},
		{"npm test with a script shell", "npm test --script-shell=sh", Ask, "runs scripts with the program", ""},
		{"npm test with an unknown config", "npm test --git=./evil", Ask, "not an option", ""},
		{"npm test arguments after --", "npm test -- --script-shell=sh", Allow, "", ""},
		// Wrappers do not hide options.
		{"env -S", "env -S 'sort -o ../ro/x' a", Block, "read-only", "ro/x"},
		{"command", "command sort -o ../ro/x a", Block, "read-only", "ro/x"},
		{"nice", "nice -n5 sort --compress-program=sh a", Ask, "compress", ""},
		{"timeout", "timeout 5 rg --pre sh x y", Ask, "every file searched", ""},
		{"bash -c", "bash -c 'sort -o ../ro/x a'", Block, "read-only", "ro/x"},
		{"heredoc to a shell", "bash <<EOF\nsort -o ../ro/x a\nEOF", Block, "read-only", "ro/x"},
		// Globs where options stand.
		{"rg glob operand", "rg foo *", Ask, "may be an option", ""},
		{"rg glob after --", "rg foo -- *", Allow, "", ""},
		{"rg glob with a ./ prefix", "rg foo ./*", Allow, "", ""},
		{"cat glob is harmless", "cat *", Allow, "", ""},
		// Paths through links, suffixes and odd spellings.
		{"git --output through a link then ..", "git diff --output=rolink/../pwn", Block, "read-only", "ro/pwn"},
		{"tee through a link then ..", "echo x | tee rolink/../pwn", Block, "read-only", "ro/pwn"},
		{"sort -o into a suffix zone", "sort -o notes/a.md a", Block, "only takes", "ws/notes/a.md"},
		{"cp into a suffix zone keeps the suffix", "cp a.txt notes/", Allow, "", "ws/notes/a.txt"},
		{"cp into a suffix zone, wrong suffix", "cp a.md b.txt notes", Block, "only takes", "ws/notes/a.md"},
		{"a rule's words are an argv prefix", "git --no-pager diff --output=x", Ask, "matches no rule", ""},
		{"git diff flags before --output", "git diff --no-prefix -U5 --output=x", Allow, "", "ws/x"},
		{"two -C options join", "git -C ../ro -C .. diff --output=x", Block, "outside every rw zone", "x"},
		{"git --git-dir separate", "git --git-dir .git diff", Ask, "another repository", ""},
		{"git -c in a cluster", "git -pc core.pager=sh diff", Ask, "sets configuration", ""},
		{"env -i with GIT_DIR", "env -i GIT_DIR=x git status", Ask, "GIT_DIR", ""},
		{"/dev/tcp is a path for sort", "sort -o /dev/tcp/127.0.0.1/80 a", Block, "outside every rw zone", "/dev/tcp/127.0.0.1/80"},
		{"another process's descriptor", "echo x | tee /proc/1/fd/1", Ask, "depends on the process", ""},
		{"cd out and back in", "cd notes/../../ro && tee x", Block, "read-only", "ro/x"},
		{"stderr of the process", "echo x | tee /proc/self/fd/2", Allow, "", ""},
		// A program named by a path.
		{"./sort", "./sort a", Ask, "matches no rule", ""},
	})
}

func trampolineEngine(t *testing.T) (*Engine, string) {
	t.Helper()
	e, ws := issueEngine(t)
	extra := `
    - {pattern: diff, approval: false}
    - {pattern: uniq, approval: false}
    - {pattern: xxd, approval: false}
    - {pattern: shuf, approval: false}
    - {pattern: split, approval: false}
    - {pattern: less, approval: false}
    - {pattern: man, approval: false}
    - {pattern: dd, approval: false}
    - {pattern: patch, approval: false}
    - {pattern: chmod, approval: false}
    - {pattern: ln, approval: false}
    - {pattern: install, approval: false}
    - {pattern: xargs, approval: false}
    - {pattern: ls, approval: false}
    - {pattern: bash, approval: false}
    - {pattern: cd, approval: false}
    - {pattern: pushd, approval: false}
`
	cfg := []byte(trampolineConfig)
	marker := []byte("    - {pattern: rm, allowed: false}\n")
	i := indexOf(cfg, marker)
	cfg = append(append(append([]byte{}, cfg[:i]...), []byte(extra[1:])...), cfg[i:]...)
	c, err := Parse(filepath.Join(e.cfg.Dir, "rt.yaml"), cfg, e.cfg.Dir, Env{Cwd: ws, Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	e2, err := New(c, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	return e2, ws
}

func indexOf(b, sub []byte) int {
	for i := 0; i+len(sub) <= len(b); i++ {
		if string(b[i:i+len(sub)]) == string(sub) {
			return i
		}
	}
	return len(b)
}
