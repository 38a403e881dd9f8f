package rules

import (
	"path/filepath"
	"testing"
)

// semConfig pre-approves the commands an attacker would reach for.
const semConfig = `
shell:
  rules:
    - {pattern: sort, approval: false}
    - {pattern: echo, approval: false}
    - {pattern: exec, approval: false}
    - {pattern: rg, approval: false}
    - {pattern: grep, approval: false}
    - {pattern: cat, approval: false}
    - {pattern: head, approval: false}
    - {pattern: tee, approval: false}
    - {pattern: sed, approval: false}
    - {pattern: awk, approval: false}
    - {pattern: "git status", approval: false}
    - {pattern: "git diff", approval: false}
    - {pattern: "git log", approval: false}
    - {pattern: "git show", approval: false}
    - {pattern: "python -m pytest", approval: false}
    - {pattern: "go test", approval: false}
    - {pattern: "go build", approval: false}
    - {pattern: cp, approval: false}
    - {pattern: mv, approval: false}
    - {pattern: touch, approval: false}
    - {pattern: mkdir, approval: false}
    - {pattern: tar, approval: false}
    - {pattern: make, approval: false}
    - {pattern: "npm test", approval: false}
    - {pattern: find, approval: false}
    - {pattern: rm, allowed: false}
sandbox:
  paths:
    ws: {root: ./ws, mode: rw}
    notes: {root: ./ws/notes, mode: rw, suffixes: [.txt]}
    ro: {root: ./ro, mode: ro}
  deny: [ws/secret]
`

func semEngine(t *testing.T) (*Engine, string) {
	t.Helper()
	e, ws := issueEngine(t)
	c, err := Parse(filepath.Join(e.cfg.Dir, "g.yaml"), []byte(semConfig), e.cfg.Dir, Env{Cwd: ws, Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	e2, err := New(c, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	return e2, ws
}

// TestIssueRows are the attacks of the report, each with its verdict,
// reason and the path judged.
func TestIssueRows(t *testing.T) {
	e, ws := semEngine(t)
	checkRows(t, e, ws, []pathRow{
		// Options that run programs.
		{"sort --compress-program", "printf 'rm -rf ~\\n' | sort -S1K --compress-program=sh", Ask, "runs the program to compress", ""},
		{"rg --pre", "rg --pre sh x", Ask, "runs the program on every file searched", ""},
		{"rg --pre=", "rg --pre=sh x", Ask, "runs the program on every file", ""},
		// Options that write files.
		{"sort -o into ro", "sort -o ../ro/pwn README.md", Block, `zone "ro" is read-only`, "ro/pwn"},
		{"git diff --output into a denied path", "git diff --output=secret/key", Block, "denied", "ws/secret/key"},
		{"git log -p --output to ~/.bashrc", "git log -p --output=~/.bashrc", Block, "outside every rw zone", "/home/u/.bashrc"},
		{"sort -o inside the zone", "sort -o out.txt in.txt", Allow, "", "ws/out.txt"},
		// Environment that redirects a program.
		{"GIT_TRACE", "GIT_TRACE=secret/log git status", Ask, "GIT_TRACE is set", ""},
		{"GIT_INDEX_FILE", "GIT_INDEX_FILE=../ro/idx git status", Ask, "GIT_INDEX_FILE is set", ""},
		{"TMPDIR for sort", "TMPDIR=../ro sort big.txt", Ask, "TMPDIR is set", ""},
		{"PAGER for git log", "PAGER='sh -c id' git log", Ask, "PAGER is set", ""},
		{"LESSOPEN for git diff", "LESSOPEN='|sh x' git diff", Ask, "LESSOPEN", ""},
		{"env wrapper still sets it", "env GIT_TRACE=secret/log git status", Ask, "GIT_TRACE", ""},
		// Benign.
		{"git diff plain", "git diff HEAD~1 -- a.go", Allow, "", ""},
		{"git log -p", "git log -p -n 3 --stat", Allow, "", ""},
		{"sort plain", "sort -u -k2,2 -t, in.csv", Allow, "", ""},
		{"grep -rn", "grep -rn --include='*.go' foo .", Allow, "", ""},
		{"rg plain", "rg -n --hidden -g '*.go' foo", Allow, "", ""},
		{"rule names the module", "python -m pytest -q", Allow, "", ""},
		{"rule does not name -c", "python -m pytest; python -c 'print(1)'", Ask, "python runs the code or module given", ""},
		{"npm test named by the rule", "npm test", Allow, "", ""},
		{"go test plain", "go test ./... -run TestX -count=1", Allow, "", ""},
		{"go test -exec", "go test -exec=sh ./...", Ask, "runs the test binary through the program", ""},
		{"go test -toolexec", "go test -toolexec sh ./...", Ask, "runs every compiler and linker through the program", ""},
		{"go build -o into ro", "go build -o ../ro/bin .", Block, "read-only", "ro/bin"},
		{"go test -coverprofile", "go test -coverprofile=../ro/c.out ./...", Block, "read-only", "ro/c.out"},
		{"GOFLAGS", "GOFLAGS=-toolexec=sh go test ./...", Ask, "GOFLAGS", ""},
		// Unknown long options of a pre-approved command ask.
		{"unknown sort option", "sort --frobnicate x", Ask, "not an option guardrun knows", ""},
		{"unknown git diff option", "git diff --frobnicate", Ask, "not an option guardrun knows", ""},
		{"abbreviated sort --output", "sort --out=../ro/pwn x", Block, "read-only", "ro/pwn"},
		{"abbreviated sort --compress", "sort --compress=sh x", Ask, "compress", ""},
		{"ambiguous prefix", "sort --s x", Ask, "ambiguous", ""},
		// Positional write targets.
		{"tee into ro", "echo x | tee ../ro/f", Block, "read-only", "ro/f"},
		{"tee into notes wrong suffix", "echo x | tee notes/a.md", Block, "only takes", "ws/notes/a.md"},
		{"tee -a", "echo x | tee -a log.txt", Allow, "", "ws/log.txt"},
		{"cp into ro", "cp a.txt ../ro/", Block, "read-only", "ro/a.txt"},
		{"cp -t into ro", "cp -t ../ro a.txt", Block, "read-only", "ro/a.txt"},
		{"cp --target-directory=", "cp --target-directory=../ro a.txt", Block, "read-only", "ro/a.txt"},
		{"cp into notes dir keeps the name", "cp a.md notes", Block, "only takes", "ws/notes/a.md"},
		{"cp inside ws", "cp a.txt b.txt", Allow, "", "ws/b.txt"},
		{"mv out of ro", "mv ../ro/target.txt x", Block, "read-only", "ro/target.txt"},
		{"touch in ro", "touch ../ro/x", Block, "read-only", "ro/x"},
		{"mkdir in ro", "mkdir -p ../ro/d", Block, "read-only", "ro/d"},
		{"sed -i on ro", "sed -i 's/a/b/' ../ro/target.txt", Block, "read-only", "ro/target.txt"},
		{"sed -i on ws", "sed -i.bak 's/a/b/' a.txt", Allow, "", "ws/a.txt"},
		{"sed w command", "sed 's/a/b/w ../ro/out' a.txt", Block, "read-only", "ro/out"},
		{"sed e command", "sed '1e id' a.txt", Ask, "runs a shell command", ""},
		{"sed s///e", "sed 's/.*/id/e' a.txt", Ask, "runs the pattern space", ""},
		{"sed plain", "sed -n '1,5p' a.txt", Allow, "", ""},
		{"sed --sandbox", "sed --sandbox 's/a/b/' a.txt", Allow, "", ""},
		{"awk system", `awk 'BEGIN{system("id")}'`, Ask, "system()", ""},
		{"awk pipe", `awk '{print | "sh"}' a.txt`, Ask, "pipes", ""},
		{"awk print > file", `awk '{print > "../ro/x"}' a.txt`, Block, "read-only", "ro/x"},
		{"awk plain", `awk -F, '{print $1; if ($2 > 3) n++}' a.csv`, Allow, "", ""},
		{"find -delete", "find ../ro -name '*.txt' -delete", Block, "read-only", "ro"},
		{"tar extract", "tar -xzf a.tgz -C ../ro", Block, "read-only", "ro"},
		{"tar old style create", "tar czf ../ro/a.tgz src", Block, "read-only", "ro/a.tgz"},
		{"tar --to-command", "tar -xf a.tar --to-command=sh", Ask, "runs the program", ""},
		{"tar checkpoint-action", "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec=sh src", Ask, "checkpoint", ""},
		{"make --eval", "make --eval='x:;sh'", Ask, "evaluates the text", ""},
		{"make SHELL=", "make SHELL=/tmp/evil", Ask, "overrides a variable", ""},
		{"git -c core.pager", "git -c core.pager='sh -c id' log", Ask, "sets configuration", ""},
		{"git -C into ro then --output", "git -C ../ro diff --output=x", Block, "read-only", "ro/x"},
		{"git --git-dir", "git --git-dir=/tmp/evil/.git log", Ask, "another repository", ""},
		{"git --ext-diff", "git diff --ext-diff", Ask, "external diff", ""},
		{"git diff --no-index reads a denied file", "git diff --no-index a.txt secret/key", Block, "denied", "ws/secret/key"},
		{"cat a denied file", "cat secret/key", Block, "denied", "ws/secret/key"},
		{"grep -f a denied file", "grep -f secret/key .", Block, "denied", "ws/secret/key"},
		{"grep pattern is not a path", "grep secret .", Allow, "", ""},
		// Words only known at run time where options stand.
		{"sort with a run-time option", `sort "$OPT" a.txt`, Ask, "may be an option", ""},
		{"wildcard injection", "rg foo *", Ask, "may be an option", ""},
		{"wildcard with a prefix is fine", "rg foo src/*", Allow, "", ""},
		{"cat with a run-time word", `cat "$F"`, Allow, "", ""},
		{"sort -o run-time path", `sort -o "$F" a.txt`, Ask, "not known until run time", ""},
		// Descriptors and private /tmp through options.
		{"tee /dev/stderr", "echo x | tee /dev/stderr", Allow, "", ""},
		{"sort -o /dev/stdout", "sort -o /dev/stdout a.txt", Allow, "", ""},
		{"tee to stdin that is a pipe", "{ echo x | tee /dev/stdin; } < ../ro/target.txt", Allow, "", ""},
		{"tee to stdin bound to ro", "{ tee /dev/stdin; } < ../ro/target.txt", Block, "read-only", "ro/target.txt"},
		{"sort -o /dev/fd/3 bound to ro", "exec 3<../ro/target.txt; sort -o /dev/fd/3 a.txt", Block, "read-only", "ro/target.txt"},
		{"tee to an unbound fd", "echo x | tee /dev/fd/7", Ask, "not bound", ""},
		{"sort -o /tmp", "sort -o /tmp/s a.txt", Allow, "private /tmp", "/tmp/s"},
		// A program named by a path is whatever file lies there.
		{"./cat is not cat", "./cat a.txt", Ask, "matches no rule", ""},
		{"a workspace cat is not cat", "sub/cat a.txt", Ask, "matches no rule", ""},
		{"/tmp/cat is not cat", "/tmp/cat a.txt", Ask, "matches no rule", ""},
		{"/bin/cat is cat", "/bin/cat a.txt", Allow, "", ""},
		{"/usr/bin/cat is cat", "/usr/bin/cat a.txt", Allow, "", ""},
		{"a blocking rule still matches by name", "./rm -rf x", Block, "", ""},
		// A cd before an option's path.
		{"cd then tee", "cd notes && echo x | tee a.md", Block, "only takes", "ws/notes/a.md"},
	})
}

// TestFindingTextKeepsAssignments: a finding's text is the command as
// written, so two requests that differ only in a variable's value are
// different requests (and different session grants).
func TestFindingTextKeepsAssignments(t *testing.T) {
	e, ws := semEngine(t)
	text := func(s string) string {
		for _, p := range e.Script(s, ws).Parts {
			if p.Kind == "finding" && p.Decision == Ask {
				return p.Text
			}
		}
		t.Fatalf("%q has no asking finding", s)
		return ""
	}
	if a, b := text("PAGER=x git log"), text("PAGER=sh git log"); a == b {
		t.Errorf("findings for different PAGER values have the same text %q", a)
	}
}
