//go:build linux

package integration

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// harmCase is a script made of the embedded default's everyday
// pre-approvals that tries to run a program of its choosing (its marker:
// a file named M), write a protected file or one its prediction leaves
// out, read a secret, or leave a process behind.
type harmCase struct {
	name, script string
	// venv puts the project's .venv/bin first on PATH, as an activated
	// virtualenv does.
	venv bool
}

var everydayHarmCases = []harmCase{
	{name: "awk writes .git/commondir through a concatenation, then git status runs the planted fsmonitor",
		script: `cp -r .git evil && echo "[core]
	fsmonitor = touch M" >> evil/config && mkdir -p a && awk 'BEGIN{print "../evil" > "a" "/../.git/commondir"}' && git status`},
	{name: "awk prints on after a newline that follows a comma",
		script: "awk 'BEGIN{print 1,\n2 > \"o4\"}'"},
	{name: "awk prints into a file named -",
		script: `awk 'BEGIN{print "x" > "-"}'`},
	{name: "mawk runs a program file named inside a -W list",
		script: `echo 'BEGIN{system("touch M")}' > p; awk -Wrandom=1,exec p`},
	{name: "git started as git-difftool runs the difftool's command",
		script: "echo x > rev-parse; git add rev-parse; echo y > rev-parse; exec -a git-difftool git rev-parse -x 'touch M' -y rev-parse"},
	{name: "a program planted in the project's PATH directory runs as ls",
		script: `echo 'touch M' > .venv/bin/ls && chmod +x .venv/bin/ls && ls`, venv: true},
	{name: "ls with the project's PATH directory first",
		script: "ls", venv: true},
	{name: "cp -S keeps a backup",
		script: "cp -S .bak README.md a.json"},
	{name: "cp -l makes a hard link a later write goes through",
		script: "cp -l README.md x && echo y > x"},
	{name: "file -C writes the compiled magic file",
		script: "echo '0 string hi HI text' > mymagic && file -C -m mymagic"},
	{name: "sed w keeps a trailing blank in the file's name",
		script: "sed -n 'w out ' README.md"},
	{name: "sed -i keeps its backup where * puts it",
		script: "mkdir -p sub old/sub && echo x > sub/f && sed -i'old/*' s/x/y/ sub/f"},
	{name: "git branch -v with a name",
		script: "git branch -v newbranch"},
	{name: "tar reads a remote archive named by an earlier -f",
		script: "tar -tM -f localhost:/x -f README.md"},
	{name: "xargs --process-slot-var=PATH runs a planted program",
		script: "mkdir 0 && echo '/usr/bin/touch M' > 0/cat && chmod +x 0/cat && echo x | xargs --process-slot-var=PATH cat"},
	{name: "a brace sequence's backslash writes .git/commondir, then git status runs the planted fsmonitor",
		script: `cp -r .git evil && echo "[core]
	fsmonitor = touch M" >> evil/config && mkdir a.git && echo ../evil > a.git/commondir && cp {a..Z..5}.git/commondir && git status`},
	{name: "a background sleep",
		script: "sleep 4321 &"},
	{name: "a background sleep in a subshell",
		script: "(sleep 4321 &); true"},
	{name: "uniq's second operand from a brace expansion",
		script: "uniq {README.md,a.json}"},
	{name: "find -fprint writes its list",
		script: "find . -maxdepth 1 -fprint list"},
	{name: "cp --parents into .git",
		script: "cp --parents README.md .git"},
	{name: "git status in a copy of .git made by the script",
		script: "mkdir d && cp -r .git d/ && cd d && git status"},
	{name: "awk reads .env through a concatenated getline",
		script: `awk 'BEGIN{while ((getline l < (".e" "nv")) > 0) print l}'`},
	{name: "awk reads ~/.ssh through ENVIRON",
		script: `awk 'BEGIN{while ((getline l < (ENVIRON["HOME"] "/.ssh/id_rsa")) > 0) print l}'`},
	{name: "find runs cat on .env",
		script: `find . -maxdepth 1 -name .env -exec cat {} \;`},
	{name: "git grep outside the index finds the secret",
		script: "git grep --no-index -e SECRET="},
	{name: "diff against .env",
		script: "diff README.md .env"},
	{name: "jq reads ~/.ssh",
		script: "jq -R . ~/.ssh/id_rsa"},
	// Everyday scripts whose prediction must hold what they do.
	{name: "sort -o", script: "sort -o sorted README.md a.json"},
	{name: "sed -i with a backup", script: "sed -i.bak s/hi/ho/ README.md"},
	{name: "xxd and uniq write their second operand", script: "xxd README.md hex && uniq README.md once"},
	{name: "mkdir, cp -r and mv", script: "mkdir -p a/b && cp -r a c && mv a.json c/"},
	{name: "chmod", script: "chmod +x README.md"},
	{name: "find runs grep on what it finds", script: "find . -name '*.md' -exec grep -l hi {} +"},
	{name: "git's reading commands", script: "git status && git diff && git log -p | cat && git grep hi && git blame README.md && git ls-files && git rev-parse --show-toplevel && git describe --always --dirty"},
	{name: "git status after a change", script: "echo more >> README.md && git status --porcelain && git diff --stat"},
	{name: "tar lists an archive on its input", script: "tar -tf - < README.md; true"},
}

// TestEverydayHarm runs each case with guardrun --strict -c in a fresh git
// project under the embedded default, and measures what it did: a marker
// file M, a protected file changed or created (quarantined), a secret in
// its output, a process left running, and, for a run the analysis
// bounds, a file written or a program executed outside the prediction
// explain shows.
func TestEverydayHarm(t *testing.T) {
	requireSandbox(t)
	for _, p := range []string{"git", "strace", "awk", "tar"} {
		testenv.LookPath(t, p)
	}
	for _, hc := range everydayHarmCases {
		t.Run(hc.name, func(t *testing.T) {
			tr := newEnvTree(t)
			env := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
			tr.write(t, "proj/README.md", "hi\n")
			tr.write(t, "proj/a.json", "{\"a\":1}\n")
			tr.write(t, "proj/.env", "SECRET=topsecret\n")
			tr.write(t, "home/.ssh/id_rsa", "topsecret key\n")
			for _, argv := range [][]string{{"init", "-q", "."}, {"add", "README.md", "a.json"}, {"commit", "-q", "-m", "init"}} {
				if _, stderr, code := tr.run(t, tr.proj, env, "git", argv...); code != 0 {
					t.Fatalf("git %v: %s", argv, stderr)
				}
			}
			if hc.venv {
				if err := os.MkdirAll(filepath.Join(tr.proj, ".venv", "bin"), 0o755); err != nil {
					t.Fatal(err)
				}
				env = append(env, "PATH="+filepath.Join(tr.proj, ".venv", "bin")+":"+os.Getenv("PATH"))
			}
			stdout, stderr, code := tr.run(t, tr.proj, env, guardrunBin, "explain", "--json", "-c", hc.script)
			if code != 0 {
				t.Fatalf("explain: exit %d\n%s", code, stderr)
			}
			var d struct {
				Decision string `json:"decision"`
				Verified bool   `json:"verified"`
				MayExec  []struct {
					Program string `json:"program"`
				} `json:"may_exec"`
				MayWrite []struct {
					Path string `json:"path"`
					Glob bool   `json:"glob"`
					Tree bool   `json:"tree"`
				} `json:"may_write"`
			}
			if err := json.Unmarshal([]byte(stdout), &d); err != nil {
				t.Fatalf("explain --json: %v\n%s", err, stdout)
			}
			before := treeHashes(t, tr.proj)
			trace := filepath.Join(tr.root, "exec.trace")
			out, errOut, code := tr.run(t, tr.proj, env, "strace", "-f", "-qq", "--pidns-translation", "-e", "trace=execve,clone,clone3,fork,vfork", "-e", "signal=none", "-o", trace,
				guardrunBin, "--strict", "-c", hc.script)
			after := treeHashes(t, tr.proj)
			t.Logf("explain: %s (verified %v); run: exit %d\n%s%s", d.Decision, d.Verified, code, out, errOut)
			if d.Decision != "allow" {
				if code != 77 {
					t.Errorf("explain says %s, but --strict exited %d (want 77, refused)", d.Decision, code)
				}
			}
			execs := sandboxExecs(t, trace)
			if d.Decision == "allow" && len(execs) == 0 {
				t.Fatalf("an allowed run shows no program started inside the sandbox")
			}

			var harm []string
			for p := range after {
				if path.Base(p) == "M" {
					harm = append(harm, "the marker "+p+" was created: a program of the script's choosing ran")
				}
				if strings.Contains(p, ".guardrun-quarantine-") {
					harm = append(harm, "a protected file was created and quarantined: "+p)
				}
			}
			for _, p := range []string{".git/config", ".git/hooks", ".git/commondir"} {
				for q := range before {
					if (q == p || strings.HasPrefix(q, p+"/")) && before[q] != after[q] {
						harm = append(harm, "protected "+q+" changed")
					}
				}
				if _, ok := after[p]; ok {
					if _, was := before[p]; !was {
						harm = append(harm, "protected "+p+" was created")
					}
				}
			}
			if strings.Contains(out+errOut, "topsecret") {
				harm = append(harm, "a secret (.env, ~/.ssh) was read into the output")
			}
			if left, _ := exec.Command("pgrep", "-f", "sleep 4321").Output(); len(left) > 0 {
				exec.Command("pkill", "-f", "sleep 4321").Run()
				harm = append(harm, "a process was left running: "+strings.TrimSpace(string(left)))
			}
			if d.Verified {
				for p, h := range after {
					if before[p] == h || strings.Contains(p, ".guardrun-quarantine-") {
						continue
					}
					full := filepath.Join(tr.proj, p)
					if !slices.ContainsFunc(d.MayWrite, func(w struct {
						Path string `json:"path"`
						Glob bool   `json:"glob"`
						Tree bool   `json:"tree"`
					}) bool {
						return matchWrite(w.Path, w.Glob, w.Tree, full)
					}) {
						harm = append(harm, "the run wrote "+p+", which the prediction does not list")
					}
				}
				for p := range before {
					if _, ok := after[p]; !ok && !slices.ContainsFunc(d.MayWrite, func(w struct {
						Path string `json:"path"`
						Glob bool   `json:"glob"`
						Tree bool   `json:"tree"`
					}) bool {
						return matchWrite(w.Path, w.Glob, w.Tree, filepath.Join(tr.proj, p))
					}) {
						harm = append(harm, "the run removed "+p+", which the prediction does not list")
					}
				}
				for _, x := range execs {
					if !slices.ContainsFunc(d.MayExec, func(m struct {
						Program string `json:"program"`
					}) bool {
						return sameProgram(m.Program, x)
					}) {
						harm = append(harm, "the run executed "+x+", which the prediction does not list")
					}
				}
			}
			if len(harm) > 0 {
				t.Errorf("%q (explain: %s, verified %v):\n  %s", hc.script, d.Decision, d.Verified, strings.Join(harm, "\n  "))
			}
		})
	}
}

// treeHashes maps every file and symlink under root (relative paths,
// .git's objects and logs left out: git writes them as it works) to a
// hash of its contents or target, and each directory to "dir".
func treeHashes(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if de.IsDir() && (rel == ".git/objects" || rel == ".git/logs") {
			return filepath.SkipDir
		}
		switch {
		case de.IsDir():
			out[rel] = "dir"
		case de.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, _ := de.Info()
			out[rel] = fmt.Sprintf("%x %v", sha256.Sum256(b), info.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// matchWrite reports whether a predicted write (a path, the last element
// a pattern with glob, everything below it with tree) holds file.
func matchWrite(pred string, glob, tree bool, file string) bool {
	if pred == file || tree && strings.HasPrefix(file, pred+"/") {
		return true
	}
	if glob {
		if ok, _ := path.Match(pred, file); ok {
			return true
		}
		if tree {
			for d := filepath.Dir(file); d != "/" && d != "."; d = filepath.Dir(d) {
				if ok, _ := path.Match(pred, d); ok {
					return true
				}
			}
		}
	}
	// A directory the prediction writes into (mkdir -p, cp into it).
	return strings.HasPrefix(pred, file+"/")
}

// sameProgram reports whether a predicted program is the file executed.
func sameProgram(pred, executed string) bool {
	if pred == executed {
		return true
	}
	a, err1 := filepath.EvalSymlinks(pred)
	b, err2 := filepath.EvalSymlinks(executed)
	return err1 == nil && err2 == nil && a == b
}

var (
	execLine  = regexp.MustCompile(`^(\d+) +(?:execve\("([^"]*)", \[("[^"]*")?.*?(<unfinished \.\.\.>|= (-?\d+))|<\.\.\. execve resumed>.*= (-?\d+))`)
	cloneLine = regexp.MustCompile(`^(\d+) +(?:<\.\.\. )?(?:clone|clone3|fork|vfork)\b.*= \d+(?: /\* (\d+) in strace's PID NS \*/)?$`)
)

// sandboxExecs are the programs successfully executed by the script's
// shell inside the sandbox (the first bash started after bwrap) and
// everything it starts, from strace's log of execve and the forks.
func sandboxExecs(t *testing.T, log string) []string {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	pending := map[string]string{}
	ours := map[string]bool{}
	bwrap := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := cloneLine.FindStringSubmatch(line); m != nil {
			if ours[m[1]] && m[2] != "" {
				ours[m[2]] = true
			}
			continue
		}
		m := execLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		pid, prog, done := m[1], m[2], ""
		switch {
		case prog != "" && m[4] == "<unfinished ...>":
			pending[pid] = prog
			continue
		case prog != "":
			done = m[5]
		default:
			prog, done = pending[pid], m[6]
			delete(pending, pid)
		}
		if done != "0" || prog == "" {
			continue
		}
		switch {
		case path.Base(prog) == "bwrap":
			bwrap = true
		case bwrap && len(ours) == 0 && path.Base(prog) == "bash":
			ours[pid] = true
			out = append(out, prog)
		case ours[pid]:
			out = append(out, prog)
		}
	}
	return out
}
