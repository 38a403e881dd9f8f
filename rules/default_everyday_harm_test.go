package rules

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/sandbox"
)

// harmRow is a script made of the default's everyday pre-approvals that
// would run a program of its own choosing, write where the analysis does
// not say, or plant something git or a later command runs: it must ask
// (or block), or be allowed with a prediction that holds what it does.
type harmRow struct {
	name, script string
	want         Verdict
	// writes, for an allowed row, are paths (relative to the project)
	// the prediction must list.
	writes []string
	// unverified, for an allowed row: the analysis must not claim to
	// bound it.
	unverified bool
}

var everydayHarmRows = []harmRow{
	// awk's redirection takes the whole expression after >: a
	// concatenation names another file than its first string.
	{name: "awk prints into a concatenation, which names another file than its first string",
		script: `mkdir -p a && awk 'BEGIN{print "../evil" > "a" "/../.git/commondir"}'`, want: Ask},
	{name: "awk prints into a string followed by a number",
		script: `awk 'BEGIN{printf "x" > "o" 3}'`, want: Ask},
	{name: "awk prints into a string followed by a field",
		script: `awk '{print > "o" $1}' README.md`, want: Ask},
	{name: "awk prints into one string",
		script: `awk 'BEGIN{print "x" > "out.txt"}'`, want: Allow, writes: []string{"out.txt"}},
	{name: "awk's print goes on after a newline that follows a comma",
		script: "awk 'BEGIN{print 1,\n2 > \"o4\"}'", want: Allow, writes: []string{"o4"}},
	{name: "awk's print goes on after a newline that follows &&",
		script: "awk 'BEGIN{print 1 &&\n2 > \".git/commondir\"}'", want: Ask},
	{name: "awk's print to - is a file named - (mawk)",
		script: `awk 'BEGIN{print "x" > "-"}'`, want: Allow, writes: []string{"-"}},
	{name: "mawk reads -W options joined by commas, exec among them",
		script: `echo 'BEGIN{system("touch M")}' > p; awk -Wrandom=1,exec p`, want: Ask},
	{name: "mawk -W sprintf=N,e is -W exec",
		script: `awk -W sprintf=2000,e p`, want: Ask},
	{name: "--sandbox is gawk's: the one true awk ignores it and runs the program",
		script: `awk --sandbox 'BEGIN{system("touch M")}'`, want: Ask},
	{name: "gawk --sandbox turns system() off",
		script: `gawk --sandbox 'BEGIN{system("touch M")}'`, want: Allow},
	// sed keeps the blanks at the end of a w file's name.
	{name: "sed w keeps a trailing blank in the file's name",
		script: "sed -n 'w out ' README.md", want: Allow, writes: []string{"out "}},
	// cp and mv: -S implies a backup, under a name the prediction
	// does not know (VERSION_CONTROL=numbered makes it a.~1~).
	{name: "cp -S keeps a backup as --backup does",
		script: "cp -S .bak README.md a.json", want: Allow, unverified: true},
	{name: "mv --suffix keeps a backup as --backup does",
		script: "mv --suffix=.y README.md a.json", want: Allow, unverified: true},
	// cp -l and -s make names that alias the files copied: a later
	// write through them changes README.md, which no prediction lists.
	{name: "cp -l makes a hard link a later write goes through",
		script: "cp -l README.md x && echo y > x", want: Allow, unverified: true},
	{name: "cp --symbolic-link makes a symlink a later write goes through",
		script: "cp --symbolic-link \"$PWD/README.md\" x", want: Ask},
	{name: "cp -s with a static path",
		script: "cp -s /w/README.md x; echo y > x", want: Allow, unverified: true},
	// file -C writes NAME.mgc beside the working directory's files.
	{name: "file -C compiles the magic file into the working directory",
		script: "file -C -m mymagic", want: Allow, writes: []string{"*.mgc"}},
	// git branch -v NAME creates NAME: -v only lists when nothing
	// else is asked for.
	{name: "git branch -v with a name creates the branch",
		script: "git branch -v newbranch", want: Ask},
	{name: "git branch --verbose with a name creates the branch",
		script: "git branch --verbose newbranch HEAD", want: Ask},
	{name: "git branch -v lists",
		script: "git branch -v", want: Allow},
	// exec -a: a program may act on its name.
	{name: "git started as git-difftool runs git difftool, whose -x runs a program",
		script: "echo x > f; git add f; echo y > f; exec -a git-difftool git rev-parse -x 'touch M' -y f", want: Ask},
	{name: "pgrep started as pkill signals what it finds",
		script: "exec -a pkill pgrep -f sleep", want: Ask},
	{name: "exec -a with a name known only at run time",
		script: `n=git-difftool; exec -a "$n" git rev-parse HEAD`, want: Ask},
	// tar: every -f is an archive, and TAPE names one.
	{name: "tar -M reads each -f in turn, a remote one first",
		script: "tar -tM -f localhost:/x -f README.md", want: Ask},
	{name: "tar reads TAPE when no -f names the archive",
		script: "TAPE=localhost:/x tar -t", want: Ask},
	{name: "an exported TAPE reaches a later tar",
		script: "export TAPE=localhost:/x; tar -t", want: Ask},
	// A directory on PATH inside the project (an activated
	// virtualenv): a program written there runs in place of ls.
	{name: "a program written into a PATH directory in the project",
		script: "echo 'touch M' > .venv/bin/ls && chmod +x .venv/bin/ls && ls", want: Ask},
	{name: "a program copied into a PATH directory in the project",
		script: "cp /bin/true .venv/bin/ls", want: Ask},
	{name: "a directory copied onto a PATH directory in the project",
		script: "mkdir -p stage/bin && cp -r stage/bin .venv", want: Ask},
	{name: "a tree copied over the directory that holds a PATH directory",
		script: "mkdir -p stage/bin && cp -rT stage .venv", want: Ask},
	{name: "a tree copied into a directory beside the PATH directory",
		script: "mkdir -p stage/bin && cp -r stage .venv", want: Allow, writes: []string{".venv/stage"}},
	{name: "ls found after a PATH directory the request can write is not bounded",
		script: "ls", want: Allow, unverified: true},
	// xargs sets its --process-slot-var for the command it runs and
	// for its own lookup of it: PATH=0 runs ./0/cat.
	{name: "xargs --process-slot-var=PATH runs the command from ./0",
		script: "mkdir 0 && echo '/usr/bin/touch M' > 0/cat && chmod +x 0/cat && echo x | xargs --process-slot-var=PATH cat", want: Ask},
	{name: "xargs --process-slot-var=LD_LIBRARY_PATH loads libraries from ./0",
		script: "echo x | xargs --process-slot-var=LD_LIBRARY_PATH cat", want: Ask},
	{name: "xargs --process-slot-var with a name of its own",
		script: "echo x | xargs -P2 --process-slot-var=SLOT cat", want: Allow},
	// A character sequence from a letter to another makes the
	// characters between: bash reads the backslash {a..Z..5} makes as
	// quoting the next character, so \.git/commondir is .git/commondir.
	{name: "a brace sequence's backslash turns a harmless path into .git/commondir",
		script: "mkdir a.git && echo ../evil > a.git/commondir && cp {a..Z..5}.git/commondir", want: Ask},
	{name: "a brace sequence's backquote starts a command substitution",
		script: "echo {Z..a}", want: Ask},
	// What stays allowed, and bounded.
	{name: "a file written beside the PATH directory",
		script: "echo x > .venv/notes", want: Allow, writes: []string{".venv/notes"}},
}

// TestDefaultEverydayHarm runs the rows against the embedded default in a
// git project whose PATH starts with its own .venv/bin.
func TestDefaultEverydayHarm(t *testing.T) {
	home := "/home/u"
	ws := filepath.Join(hostDir(t), "proj")
	for _, d := range []string{".git/objects", ".git/refs/heads", ".venv/bin", "a"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n", "README.md": "hi\n", "a.json": "{}\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := LoadDefault(Env{Cwd: ws, Home: home, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, home)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws, ".venv", "bin") + ":/usr/bin:/bin"
	e.SetCommandEnv(func(k string) string {
		if k == "PATH" {
			return path
		}
		return ""
	})
	for _, r := range everydayHarmRows {
		t.Run(r.name, func(t *testing.T) {
			d := e.Script(r.script, ws)
			if d.Decision != r.want {
				t.Fatalf("%q: %s (%s), want %s", r.script, d.Decision, d.Reason, r.want)
			}
			if d.Decision != Allow {
				return
			}
			if r.unverified && d.Verified {
				t.Errorf("%q: verified, want the analysis not to bound it", r.script)
			}
			for _, w := range r.writes {
				want := filepath.Join(ws, w)
				if !slices.ContainsFunc(d.MayWrite, func(p sandbox.PathPattern) bool { return p.Path == want }) {
					var got []string
					for _, p := range d.MayWrite {
						got = append(got, strings.TrimPrefix(p.Path, ws+"/"))
					}
					t.Errorf("%q: may_write %q, want it to hold %q", r.script, got, w)
				}
			}
		})
	}
}
