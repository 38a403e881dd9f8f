package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/sandbox"
)

// predictEngine is the embedded default config with the working
// directory a git repository, and commands found in a PATH of stand-ins
// laid out as a system's (bin/ and lib/git-core/), so that what a name
// resolves to is the same on every machine.
func predictEngine(t *testing.T) (e *Engine, work, bin string) {
	t.Helper()
	work, root := hostDir(t), hostDir(t)
	for _, d := range []string{".git", "sub", "a"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin = filepath.Join(root, "usr", "bin")
	for _, d := range []string{bin, filepath.Join(root, "usr", "lib", "git-core")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"git", "grep", "head", "find", "xargs", "sed", "sort", "tar", "gzip", "bzip2",
		"make", "cat", "tee", "cp", "mv", "mkdir", "touch", "rm", "less", "ls", "echo", "env", "python3", "rg", "../lib/git-core/git"} {
		if err := os.WriteFile(filepath.Join(bin, p), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := Default(Env{Cwd: work, Home: "/home/u", StateDir: "/s"})
	e, err := New(c, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"PATH": bin, "PAGER": "less"}
	e.SetCommandEnv(func(k string) string { return vars[k] })
	return e, work, bin
}

// renderExec shows an exec as its program (a name for one in the
// stand-ins' bin/, lib/... beside it), its arguments (<any> one word known at run time, <many>
// any number, <many:PATTERN> any number of names a glob matches), "..."
// for any arguments, and, when another part is shown for it, that part.
func renderExec(x sandbox.Exec, bin string) string {
	prog := strings.TrimPrefix(x.Program, bin+"/")
	prog = strings.Replace(prog, filepath.Dir(bin)+"/", "", 1)
	words := []string{prog}
	for _, a := range x.Args {
		switch {
		case a.Any && a.Many:
			words = append(words, "<many>")
		case a.Any:
			words = append(words, "<any>")
		case a.Many:
			words = append(words, "<many:"+a.Text+">")
		default:
			words = append(words, a.Text)
		}
	}
	if x.AnyArgs {
		words = append(words, "...")
	}
	return strings.Join(words, " ")
}

// renderWrite shows a write as its path ($W the working directory),
// with (glob) or (tree).
func renderWrite(w sandbox.PathPattern, work string) string {
	s := strings.Replace(w.Path, work, "$W", 1)
	if w.Glob {
		s += " (glob)"
	}
	if w.Tree {
		s += " (tree)"
	}
	return s
}

func TestPrediction(t *testing.T) {
	e, work, bin := predictEngine(t)
	if err := os.WriteFile(filepath.Join(work, "sub", "tool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, script string
		execs        []string
		writes       []string
		// unbounded is the start of the reason, "" when bounded.
		unbounded string
		verified  bool
	}{
		{name: "a pipeline of readers runs each program; git may page (and less keep its history) and run itself",
			script:   "git log -p | grep x | head",
			execs:    []string{"git log -p", "less", "lib/git-core/git ...", "grep x", "head"},
			writes:   []string{"/home/u/.lesshst", "/home/u/.lesshs* (glob)", "/home/u/.local/state/lesshst", "/home/u/.local/state/lesshs* (glob)"},
			verified: true},
		{name: "git without its pager writes nothing",
			script: "git --no-pager log -p | grep x",
			execs:  []string{"git --no-pager log -p", "lib/git-core/git ...", "grep x"},
			writes: []string{}},
		{name: "xargs runs its command with the words it reads added",
			script: "find . -name '*.go' | xargs grep -l x",
			execs:  []string{"find . -name *.go", "xargs grep -l x", "grep -l x <many>"},
			writes: []string{}, verified: true},
		{name: "find -exec replaces {} with a name, {} + with as many as fit",
			script: `find . -type f -exec grep -l x {} + ; find . -exec cp {} {}.bak \;`,
			execs:  []string{"find . -type f -exec grep -l x {} +", "grep -l x <many>", "find . -exec cp {} {}.bak ;", "cp <any> <any>"},
			writes: []string{}, unbounded: "cp '{}' '{}.bak': cp: a word known only at run time may be an option"},
		{name: "xargs adds run-time operands: rm may delete anywhere in the zone",
			script: "find . -name '*.o' | xargs rm -f",
			execs:  []string{"find . -name *.o", "xargs rm -f", "rm -f <many>"},
			writes: []string{"$W (tree)"}},
		{name: "sed without -i writes nothing",
			script: "sed -n p f", execs: []string{"sed -n p f"}, writes: []string{}, verified: true},
		{name: "sed -i writes a temporary file beside the file and renames it over the file",
			script: "sed -i s/a/b/ f", execs: []string{"sed -i s/a/b/ f"},
			writes: []string{"$W/f", "$W/sed* (glob)"}, verified: true},
		{name: "sed -i in a subdirectory writes the temporary file there",
			script: "sed -i.bak s/a/b/ sub/f", execs: []string{"sed -i.bak s/a/b/ sub/f"},
			writes: []string{"$W/sub/f", "$W/sub/sed* (glob)", "$W/sub/f.bak"}, verified: true},
		{name: "sort -o writes its output file",
			script: "sort -o out in", execs: []string{"sort -o out in"}, writes: []string{"$W/out"}, verified: true},
		{name: "tar -z runs gzip to read the archive",
			script: "tar -tzf x.tgz", execs: []string{"tar -tzf x.tgz", "gzip -d"}, writes: []string{}, verified: true},
		{name: "tar without a compression option may decompress what it recognises",
			script: "tar -tf x.tar", execs: []string{"tar -tf x.tar", "gzip -d", "bzip2 -d"}, writes: []string{}, verified: true},
		{name: "tar -czf writes the archive and compresses through the shell",
			script: "tar -czf out.tgz src", execs: []string{"tar -czf out.tgz src", "/bin/sh -c gzip", "gzip"},
			writes: []string{"$W/out.tgz"}},
		{name: "tar -x writes anything below the directory it extracts into",
			script: "tar -xzf x.tgz -C sub", execs: []string{"tar -xzf x.tgz -C sub", "gzip -d"},
			writes: []string{"$W/sub (tree)"}},
		{name: "make runs the project's code: not bounded",
			script: "cd sub && make", execs: []string{"make"}, writes: []string{},
			unbounded: "make: make runs the Makefile's recipes"},
		{name: "a redirection is the shell's write; echo is a builtin",
			script: "echo hi > out.txt", execs: []string{}, writes: []string{"$W/out.txt"}, verified: true},
		{name: "tee writes each file it is given",
			script: "cat a | tee b c", execs: []string{"cat a", "tee b c"}, writes: []string{"$W/b", "$W/c"}},
		{name: "git status refreshes the index under the lock file",
			script:   "git status",
			execs:    []string{"git status", "lib/git-core/git ..."},
			writes:   []string{"$W/.git/index.lock", "$W/.git/index", "$W/.git/modules (tree)"},
			verified: true},
		{name: "git status after cd refreshes the index of the repository it is in",
			script:   "cd sub && git status -s",
			execs:    []string{"git status -s", "lib/git-core/git ..."},
			writes:   []string{"$W/.git/index.lock", "$W/.git/index", "$W/.git/modules (tree)"},
			verified: true,
		},
		{name: "cp -r writes the tree it copies to",
			script: "cp -r a b", execs: []string{"cp -r a b"},
			writes: []string{"$W/b (tree)", "$W/b/a (tree)"}, verified: true},
		{name: "mv removes the source and writes the destination",
			script: "mv a b", execs: []string{"mv a b"},
			writes: []string{"$W/b (tree)", "$W/b/a (tree)", "$W/a (tree)"}, verified: true},
		{name: "mkdir -p creates each directory on the way",
			script: "mkdir -p x/y", execs: []string{"mkdir -p x/y"}, writes: []string{"$W/x/y", "$W/x"}, verified: true},
		{name: "touch creates the file and sets its times",
			script: "touch f", execs: []string{"touch f"}, writes: []string{"$W/f"}},
		{name: "rm deletes the file",
			script: "rm f", execs: []string{"rm f"}, writes: []string{"$W/f"}},
		{name: "rm -r deletes a tree",
			script: "rm -rf sub", execs: []string{"rm -rf sub"}, writes: []string{"$W/sub (tree)"}},
		{name: "run-time words are wildcards: a glob and \"$@\" any number of words, $x one word",
			script: `grep -l "$x" *.go "$@" "pre$y" pre$z`, execs: []string{"grep -l <any> <many:*.go> <many> <any> <many>"}, writes: []string{},
			verified: true},
		{name: "a redirection to a run-time path may write anywhere in the zone",
			script: `echo hi > "$out"`, execs: []string{}, writes: []string{"$W (tree)"}},
		{name: "a redirection to a run-time name in a directory stays in that directory",
			script: `echo hi > sub/"$out"`, execs: []string{}, writes: []string{"$W/sub (tree)"}},
		{name: "a redirection to a name that starts with static text stays with that text",
			script: `echo hi > out"$x"`, execs: []string{}, writes: []string{"$W/out* (glob) (tree)"}},
		{name: "a run-time name outside every writable zone: the prediction stays within the zones (the sandbox refuses the rest)",
			script: `echo hi > /etc/"$x"`, execs: []string{}, writes: []string{"$W (tree)"}},
		{name: "a command name known only at run time is not bounded",
			script: `$CMD x`, execs: []string{}, writes: []string{}, unbounded: "command name is not known until run time"},
		{name: "an interpreter runs the project's code: not bounded",
			script: "python3 x.py", execs: []string{"python3 x.py"}, writes: []string{}, unbounded: "python3 x.py: python3 python runs the script"},
		{name: "a program in the working directory is the project's code",
			script: "cp /bin/true ./ls && ./ls", execs: []string{"cp /bin/true ./ls", "./ls"}, writes: []string{"$W/ls", "$W/ls/true"},
			unbounded: "./ls: ./ls is not an executable file"},
		{name: "a program that lies in the zone is the project's code",
			script: "sub/tool", execs: []string{"$W/sub/tool"}, writes: []string{}, unbounded: "sub/tool: sub/tool runs "},
		{name: "an option that runs a program is not bounded",
			script: "sort --compress-program=gzip f", execs: []string{"sort --compress-program=gzip f"}, writes: []string{},
			unbounded: "sort --compress-program=gzip f: sort --compress-program runs the program"},
		{name: "a variable that sends the program elsewhere is not bounded",
			script: "PAGER=cat git log", execs: []string{"git log"}, writes: []string{}, unbounded: "assignment to PAGER can change what runs"},
		{name: "the table's reason when the shell has none",
			script: "RIPGREP_CONFIG_PATH=x rg f", execs: []string{"rg f"}, writes: []string{}, unbounded: "rg f: RIPGREP_CONFIG_PATH is set for it"},
		{name: "eval of run-time text is not bounded",
			script: `eval "$x"`, execs: []string{}, writes: []string{}, unbounded: "eval runs code that is not known until run time"},
		{name: "source is not bounded",
			script: "source env.sh", execs: []string{}, writes: []string{}, unbounded: "source runs the code in env.sh"},
		{name: "exec runs a program in place of the shell, even one named like a builtin",
			script: "exec echo hi", execs: []string{"echo hi"}, writes: []string{}, verified: true},
		{name: "a program started by env runs a builtin's name as a program",
			script: "env echo hi", execs: []string{"env echo hi", "echo hi"}, writes: []string{}, verified: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := e.Script(tt.script, work)
			if len(d.MayExec) == 0 || d.MayExec[0].Program != "/bin/bash" || d.MayExec[0].Part != theScript {
				t.Fatalf("the first exec is not the script's shell: %v", d.MayExec)
			}
			execs, writes := []string{}, []string{}
			for _, x := range d.MayExec[1:] {
				execs = append(execs, strings.Replace(renderExec(x, bin), work, "$W", 1))
			}
			for _, w := range d.MayWrite {
				writes = append(writes, renderWrite(w, work))
			}
			if diff := cmp.Diff(execs, tt.execs); diff != "" {
				t.Errorf("may_exec (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(writes, tt.writes); diff != "" {
				t.Errorf("may_write (-got +want):\n%s", diff)
			}
			if tt.unbounded == "" && !d.Bounded {
				t.Errorf("not bounded: %s", d.Unbounded)
			}
			if tt.unbounded != "" && (d.Bounded || !strings.HasPrefix(d.Unbounded, tt.unbounded)) {
				t.Errorf("bounded %v, unbounded %q; want not bounded, because %q...", d.Bounded, d.Unbounded, tt.unbounded)
			}
			if d.Verified != tt.verified {
				t.Errorf("verified %v, want %v (decision %s, bounded %v)", d.Verified, tt.verified, d.Decision, d.Bounded)
			}
		})
	}
}

func TestPredictionFirstExec(t *testing.T) {
	e, work, bin := predictEngine(t)
	d := e.Script("ls -la", work)
	p := d.Prediction([]string{"/bin/bash", "-e", "-c", "ls -la"})
	tests := []struct {
		name       string
		path, real string
		argv       []string
		want       bool
	}{
		{"the shell with the argv guardrun runs", "/bin/bash", "/usr/bin/bash", []string{"bash", "-e", "-c", "ls -la"}, true},
		{"the shell with another script", "/bin/bash", "/usr/bin/bash", []string{"bash", "-e", "-c", "rm -rf ~"}, false},
		{"the shell reading a startup file first", "/bin/bash", "/usr/bin/bash", []string{"bash", "--rcfile", "x", "-e", "-c", "ls -la"}, false},
		{"the command the script runs", bin + "/ls", bin + "/ls", []string{"ls", "-la"}, true},
		{"the command with other arguments", bin + "/ls", bin + "/ls", []string{"ls", "-R", "/"}, false},
		{"another file of the command's name", "/usr/local/bin/ls", "/usr/local/bin/ls", []string{"ls", "-la"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := p.MatchExec(tt.path, tt.real, tt.argv); got != tt.want {
				t.Errorf("MatchExec(%q, %q) = %v, want %v; prediction %s", tt.path, tt.argv, got, tt.want, describe(p))
			}
		})
	}

	argv := e.Argv([]string{"ls", "-la"}, work).Prediction([]string{"ls", "-la"})
	if _, ok := argv.MatchExec(bin+"/ls", bin+"/ls", []string{"ls", "-la"}); !ok {
		t.Errorf("an argv request's own command is not predicted: %s", describe(argv))
	}
	if _, ok := argv.MatchExec("/bin/bash", "/usr/bin/bash", []string{"bash", "-c", "ls -la"}); ok {
		t.Errorf("an argv request, which runs no shell, predicts one: %s", describe(argv))
	}
}

// describe shows a prediction in a test's log.
func describe(p *sandbox.Prediction) string {
	var b strings.Builder
	for _, x := range p.Exec {
		fmt.Fprintf(&b, "\n  exec %s %v any=%v", x.Program, x.Args, x.AnyArgs)
	}
	for _, w := range p.Write {
		fmt.Fprintf(&b, "\n  write %s glob=%v tree=%v", w.Path, w.Glob, w.Tree)
	}
	return b.String()
}

// TestPredictionPathThroughAZone: a PATH directory inside a writable zone
// (an activated virtualenv's .venv/bin, node_modules/.bin, ".") that is
// searched before the program a name runs is a place the request itself
// can put a program of that name (cp, a redirection, then chmod +x), which
// would run instead of the one the analysis found. Such a name, and a
// helper looked up so (tar's gzip, git's pager), is not bounded; one found
// before that directory is.
func TestPredictionPathThroughAZone(t *testing.T) {
	e, work, bin := predictEngine(t)
	venv := filepath.Join(work, ".venv", "bin")
	if err := os.MkdirAll(venv, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, script string
		// unbounded is the start of the reason, "" when bounded.
		unbounded string
	}{
		{"a program found after a writable directory", venv + ":" + bin, "ls -la",
			"ls -la: ls is looked up in PATH, which holds " + venv + ", a directory the request can write"},
		{"the same after the script plants one there", venv + ":" + bin, "cp " + bin + "/echo .venv/bin/ls; chmod +x .venv/bin/ls; ls",
			"cp " + bin + "/echo .venv/bin/ls: cp is looked up in PATH"},
		{"a helper found after a writable directory", venv + ":" + bin, "/bin/tar -tf x.tar",
			"/bin/tar -tf x.tar: it may start gzip: gzip is looked up in PATH, which holds " + venv},
		{"a helper that is nowhere yet may be put there", bin + ":" + venv, "tar -tf x.tar",
			"tar -tf x.tar: it may start xz: xz is looked up in PATH, which holds " + venv},
		{"git's pager", venv + ":" + bin, "/bin/git log",
			"/bin/git log: its pager may start less: less is looked up in PATH"},
		{"a relative PATH entry is the working directory's", ".:" + bin, "ls", "ls: ls is looked up in PATH, which holds " + work},
		{"a program found before the writable directory", bin + ":" + venv, "ls -la", ""},
		{"PATH without a writable directory", bin, "tar -tf x.tar", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{"PATH": tt.path, "PAGER": "less"}
			e.SetCommandEnv(func(k string) string { return vars[k] })
			d := e.Script(tt.script, work)
			switch {
			case tt.unbounded == "" && !d.Bounded:
				t.Errorf("not bounded: %s", d.Unbounded)
			case tt.unbounded != "" && (d.Bounded || !strings.HasPrefix(d.Unbounded, tt.unbounded)):
				t.Errorf("bounded %v, unbounded %q; want not bounded, because %q...", d.Bounded, d.Unbounded, tt.unbounded)
			}
		})
	}
}
