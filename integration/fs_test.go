package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fsTree is a directory tree with every kind of zone, the config that
// names them, and a private HOME and state for one guardrun fs test.
type fsTree struct {
	root, work, outside, stateDir string
	env                           []string
}

const fsConfig = `mode: interactive
sandbox:
  paths:
    work: {root: ./, mode: rw, delete_approval: false}
    notes: {root: ./notes, mode: rw, suffixes: [.txt, .log], write_approval: true}
    docs: {root: ./docs, mode: ro}
    guarded: {root: ./guarded, mode: rw, read_approval: true, write_approval: true, delete_approval: true}
    home: {root: ../home, mode: ro}
  deny: [.env, %s/secret]
  system_read: none
  require_os_sandbox: false
`

// newFSTree builds:
//
//	root/outside/secret.txt     outside every zone
//	root/home/.local/state/     zone home (ro); the default state under HOME: audit log,
//	                            trust (a HOME other than the account's
//	                            inside an rw zone is refused, as XDG_* are)
//	root/work/                  zone work (rw, no approvals), the cwd
//	  .guardrun-config.yaml     the config in force (guardrun's own file),
//	                            named with --config (inside an rw zone,
//	                            $GUARDRUN_CONFIG would not be trusted)
//	  a.txt twice.txt .env secret/s.txt full/f empty/
//	  in-link -> a.txt, out-link -> ../outside/secret.txt, outdir -> ../outside
//	  notes/n.txt               zone notes (rw, .txt/.log, write_approval)
//	  docs/readme.md            zone docs (ro)
//	  guarded/g.txt             zone guarded (rw, every approval)
func newFSTree(t *testing.T) *fsTree {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := &fsTree{root: root, work: filepath.Join(root, "work"), outside: filepath.Join(root, "outside")}
	tr.stateDir = filepath.Join(root, "home", ".local", "state")
	files := map[string]string{
		"outside/secret.txt":         "OUTSIDE\n",
		"work/a.txt":                 "alpha\nbeta\n",
		"work/twice.txt":             "x and x\n",
		"work/.env":                  "TOKEN=1\n",
		"work/secret/s.txt":          "S\n",
		"work/full/f":                "f\n",
		"work/notes/n.txt":           "note\n",
		"work/docs/readme.md":        "# docs\n",
		"work/guarded/g.txt":         "guarded\n",
		"work/.guardrun-config.yaml": fmt.Sprintf(fsConfig, filepath.Join(root, "work")),
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"work/empty", "home", "run"} {
		os.MkdirAll(filepath.Join(root, d), 0o700)
	}
	for link, target := range map[string]string{"in-link": "a.txt", "out-link": "../outside/secret.txt", "outdir": "../outside"} {
		if err := os.Symlink(target, filepath.Join(tr.work, link)); err != nil {
			t.Fatal(err)
		}
	}
	tr.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(root, "home"),
		"XDG_CONFIG_HOME=" + filepath.Join(root, "home", ".config"),
		"XDG_RUNTIME_DIR=" + filepath.Join(root, "run"),
		"LANG=C.UTF-8",
	}
	return tr
}

// run runs guardrun fs without a controlling terminal (so a prompt
// cannot open /dev/tty), with stdin as given.
// withConfig names the tree's config with --config, unless args do.
func (tr *fsTree) withConfig(args []string) []string {
	if slices.Contains(args, "--config") {
		return args
	}
	return append([]string{"--config", filepath.Join(tr.work, ".guardrun-config.yaml")}, args...)
}

func (tr *fsTree) run(t *testing.T, stdin string, extraEnv []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	env := append(append([]string{"NO_COLOR=1"}, tr.env...), extraEnv...)
	r := proc{dir: tr.work, env: env, stdin: strings.NewReader(stdin)}.run(append([]string{guardrunBin}, tr.withConfig(args)...)...)
	if r.err != nil {
		t.Fatalf("running guardrun: %v", r.err)
	}
	return r.stdout, r.stderr, r.code
}

const (
	absent = "<absent>"
	isLink = "<symlink>"
)

// state reads the files a test row checks: content, absent or symlink.
func (tr *fsTree) state(names []string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		p := filepath.Join(tr.root, n)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out[n] = absent
		case err != nil:
			out[n] = "<" + err.Error() + ">"
		case fi.Mode()&fs.ModeSymlink != 0:
			out[n] = isLink
		case fi.IsDir():
			out[n] = "<dir>"
		default:
			b, _ := os.ReadFile(p)
			out[n] = string(b)
		}
	}
	return out
}

// TestFSZones runs every operation against every kind of zone setting
// and trap, each on a fresh tree, without a terminal.
func TestFSZones(t *testing.T) {
	const strictMsg = `^guardrun: denied \(strict mode\): `
	const noTTY = `^guardrun: denied \(no terminal to ask; interactive mode acts as strict\): `
	tests := []struct {
		name   string
		args   []string
		stdin  string
		env    []string
		code   int
		stdout string // regexp
		stderr string // regexp; "" means empty
		// after is each named file's content (or absent, isLink, "<dir>")
		// once guardrun is done.
		after map[string]string
	}{
		// read
		{name: "read in a zone", args: []string{"fs", "read", "a.txt"}, stdout: `^alpha\nbeta\n$`},
		{name: "read through a link inside the zone", args: []string{"fs", "read", "in-link"}, stdout: `^alpha\nbeta\n$`},
		{name: "read in a ro zone", args: []string{"fs", "read", "docs/readme.md"}, stdout: `^# docs\n$`},
		{name: "read a denied name inside a zone", args: []string{"fs", "read", ".env"}, code: 77,
			stderr: `^guardrun: blocked: read \.env: the path is denied \(sandbox\.deny\)\n$`},
		{name: "read under a denied directory inside a zone", args: []string{"fs", "read", "secret/s.txt"}, code: 77,
			stderr: `^guardrun: blocked: read secret/s\.txt: the path is denied`},
		{name: "read a symlink pointing out", args: []string{"fs", "read", "out-link"}, code: 77,
			stderr: `^guardrun: blocked: read out-link: the path is outside every zone \(resolves to .*/outside/secret\.txt\)\n$`},
		{name: "read through a directory link pointing out", args: []string{"fs", "read", "outdir/secret.txt"}, code: 77,
			stderr: `outside every zone \(resolves to .*/outside/secret\.txt\)`},
		{name: "read with .. escaping the zone", args: []string{"fs", "read", "../outside/secret.txt"}, code: 77,
			stderr: `^guardrun: blocked: read \.\./outside/secret\.txt: the path is outside every zone`},
		{name: "read with .. inside the zone", args: []string{"fs", "read", "notes/../a.txt"}, stdout: `^alpha\n`},
		{name: "read with doubled slashes", args: []string{"fs", "read", "notes//n.txt"}, stdout: `^note\n$`},
		{name: "read_approval without a terminal acts as strict", args: []string{"fs", "read", "guarded/g.txt"}, code: 77,
			stderr: noTTY + `read guarded/g\.txt needs approval`},
		{name: "read_approval, approve-all", args: []string{"--approve-all", "fs", "read", "guarded/g.txt"}, stdout: `^guarded\n$`},
		{name: "read_approval, strict", args: []string{"fs", "read", "--strict", "guarded/g.txt"}, code: 77,
			stderr: strictMsg + `read guarded/g\.txt needs approval\n$`},
		{name: "read a directory", args: []string{"fs", "read", "notes"}, code: 125, stderr: `^guardrun: fs read: .*/notes is a directory\n$`},
		{name: "read a missing file", args: []string{"fs", "read", "nope.txt"}, code: 125, stderr: `no such file or directory`},
		{name: "read guardrun's own state", args: []string{"fs", "read", "../home/.local/state/guardrun/audit.jsonl"}, code: 77,
			stderr: `^guardrun: blocked: read \.\./home/\.local/state/guardrun/audit\.jsonl: guardrun's own state \(.*\) is not readable through guardrun fs\n$`},

		// write
		{name: "write a new file", args: []string{"fs", "write", "new.txt"}, stdin: "fresh\n",
			stdout: `^created .*/work/new\.txt \(6 bytes\)\n$`, after: map[string]string{"work/new.txt": "fresh\n"}},
		{name: "write over a file", args: []string{"fs", "write", "a.txt"}, stdin: "replaced\n",
			stdout: `^wrote .*/work/a\.txt \(9 bytes\)\n$`, after: map[string]string{"work/a.txt": "replaced\n"}},
		{name: "write an empty file", args: []string{"fs", "write", "a.txt"}, stdin: "",
			after: map[string]string{"work/a.txt": ""}, stdout: `\(0 bytes\)`},
		{name: "write through a link inside the zone writes its target", args: []string{"fs", "write", "in-link"}, stdin: "via link\n",
			stdout: `^wrote .*/work/a\.txt`, after: map[string]string{"work/a.txt": "via link\n", "work/in-link": isLink}},
		{name: "write a symlink pointing out", args: []string{"fs", "write", "out-link"}, stdin: "pwned\n", code: 77,
			stderr: `^guardrun: blocked: write out-link: the path is outside every rw zone \(resolves to .*/outside/secret\.txt\)\n$`,
			after:  map[string]string{"outside/secret.txt": "OUTSIDE\n", "work/out-link": isLink}},
		{name: "write through a directory link pointing out", args: []string{"fs", "write", "outdir/new.txt"}, stdin: "pwned\n", code: 77,
			stderr: `outside every rw zone`, after: map[string]string{"outside/new.txt": absent}},
		{name: "write with .. escaping the zone", args: []string{"fs", "write", "../outside/secret.txt"}, stdin: "pwned\n", code: 77,
			stderr: `^guardrun: blocked: write \.\./outside/secret\.txt: the path is outside every rw zone\n$`,
			after:  map[string]string{"outside/secret.txt": "OUTSIDE\n"}},
		{name: "write outside every zone by absolute path", args: []string{"fs", "write", "/tmp/guardrun-fs-test-never"}, stdin: "x", code: 77,
			stderr: `outside every rw zone`},
		{name: "write a denied name inside a zone", args: []string{"fs", "write", ".env"}, stdin: "TOKEN=2\n", code: 77,
			stderr: `^guardrun: blocked: write \.env: the path is denied`, after: map[string]string{"work/.env": "TOKEN=1\n"}},
		{name: "write under a denied directory", args: []string{"fs", "write", "secret/s.txt"}, stdin: "x", code: 77,
			stderr: `the path is denied`, after: map[string]string{"work/secret/s.txt": "S\n"}},
		{name: "write in a ro zone", args: []string{"fs", "write", "docs/readme.md"}, stdin: "x", code: 77,
			stderr: `^guardrun: blocked: write docs/readme\.md: zone "docs" is read-only\n$`, after: map[string]string{"work/docs/readme.md": "# docs\n"}},
		{name: "write against the zone's suffixes", args: []string{"fs", "write", "notes/n.md"}, stdin: "x", code: 77,
			stderr: `^guardrun: blocked: write notes/n\.md: zone "notes" only takes files ending in \.txt, \.log\n$`,
			after:  map[string]string{"work/notes/n.md": absent}},
		{name: "write_approval without a terminal acts as strict", args: []string{"fs", "write", "notes/n.txt"}, stdin: "new\n", code: 77,
			stderr: noTTY + `write notes/n\.txt needs approval;`, after: map[string]string{"work/notes/n.txt": "note\n"}},
		{name: "write_approval, approve-all", args: []string{"fs", "write", "--approve-all", "notes/n.txt"}, stdin: "new\n",
			after: map[string]string{"work/notes/n.txt": "new\n"}, stdout: `^wrote`},
		{name: "write_approval, --mode approve-all", args: []string{"--mode", "approve-all", "fs", "write", "notes/new.log"}, stdin: "log\n",
			after: map[string]string{"work/notes/new.log": "log\n"}, stdout: `^created`},
		{name: "write_approval, strict", args: []string{"fs", "write", "--strict", "notes/n.txt"}, stdin: "new\n", code: 77,
			stderr: strictMsg + `write notes/n\.txt needs approval\n$`, after: map[string]string{"work/notes/n.txt": "note\n"}},
		{name: "write into missing directories of a rw zone creates them", args: []string{"fs", "write", "nodir/sub/x.txt"}, stdin: "x",
			stdout: `^created .*/work/nodir/sub/x\.txt`, after: map[string]string{"work/nodir/sub/x.txt": "x"}},
		{name: "missing directories ask like the write (no terminal: strict)", args: []string{"fs", "write", "guarded/new/x.txt"}, stdin: "x", code: 77,
			stderr: noTTY + `write guarded/new/x\.txt needs approval;`, after: map[string]string{"work/guarded/new": absent}},
		{name: "missing directories, approve-all", args: []string{"fs", "write", "--approve-all", "notes/sub/n.txt"}, stdin: "n",
			stdout: `^created`, after: map[string]string{"work/notes/sub/n.txt": "n"}},
		{name: "missing directories in a read-only zone", args: []string{"fs", "write", "--approve-all", "docs/new/x.md"}, stdin: "x", code: 77,
			stderr: `zone "docs" is read-only`, after: map[string]string{"work/docs/new": absent}},
		{name: "a missing directory under a file", args: []string{"fs", "write", "a.txt/x"}, stdin: "x", code: 125,
			stderr: `a\.txt`, after: map[string]string{"work/a.txt": "alpha\nbeta\n"}},
		{name: "write over a directory", args: []string{"fs", "write", "full"}, stdin: "x", code: 125,
			stderr: `is a directory`, after: map[string]string{"work/full/f": "f\n"}},
		{name: "write guardrun's own config", args: []string{"fs", "write", ".guardrun-config.yaml"}, stdin: "mode: approve-all\n", code: 77,
			stderr: `^guardrun: blocked: write \.guardrun-config\.yaml: guardrun's own config and state \(.*\) cannot be changed through guardrun fs\n$`},
		{name: "write guardrun's own config named relatively", args: []string{"--config", ".guardrun-config.yaml", "fs", "write", ".guardrun-config.yaml"}, stdin: "mode: approve-all\n", code: 77,
			stderr: `guardrun's own config and state`},
		{name: "write a project config", args: []string{"fs", "write", ".guardrun.yaml"}, stdin: "mode: approve-all\n", code: 77,
			stderr: `guardrun's own config and state`, after: map[string]string{"work/.guardrun.yaml": absent}},

		// edit
		{name: "edit once", args: []string{"fs", "edit", "a.txt", "--old", "beta", "--new", "gamma"},
			stdout: `^edited .*/work/a\.txt \(12 bytes\)\n$`, after: map[string]string{"work/a.txt": "alpha\ngamma\n"}},
		{name: "edit with multi-line text", args: []string{"fs", "edit", "--old=alpha\nbeta", "--new=one", "a.txt"},
			after: map[string]string{"work/a.txt": "one\n"}, stdout: `^edited`},
		{name: "edit text not found", args: []string{"fs", "edit", "a.txt", "--old", "delta", "--new", "x"}, code: 125,
			stderr: `^guardrun: fs edit: --old was not found in .*/work/a\.txt; it must occur exactly once\n$`,
			after:  map[string]string{"work/a.txt": "alpha\nbeta\n"}},
		{name: "edit text found twice", args: []string{"fs", "edit", "twice.txt", "--old", "x", "--new", "y"}, code: 125,
			stderr: `^guardrun: fs edit: --old was found 2 times in .*/work/twice\.txt; it must occur exactly once`,
			after:  map[string]string{"work/twice.txt": "x and x\n"}},
		{name: "edit a missing file", args: []string{"fs", "edit", "nope.txt", "--old", "x", "--new", "y"}, code: 125,
			stderr: `does not exist`},
		{name: "edit in a ro zone", args: []string{"fs", "edit", "docs/readme.md", "--old", "docs", "--new", "x"}, code: 77,
			stderr: `zone "docs" is read-only`, after: map[string]string{"work/docs/readme.md": "# docs\n"}},
		{name: "edit a denied file", args: []string{"fs", "edit", ".env", "--old", "1", "--new", "2"}, code: 77,
			stderr: `the path is denied`, after: map[string]string{"work/.env": "TOKEN=1\n"}},
		{name: "edit asks for both read and write, strict", args: []string{"fs", "edit", "--strict", "guarded/g.txt", "--old", "g", "--new", "G"}, code: 77,
			stderr: strictMsg + `read guarded/g\.txt; write guarded/g\.txt needs approval\n$`, after: map[string]string{"work/guarded/g.txt": "guarded\n"}},
		{name: "edit with write_approval, approve-all", args: []string{"fs", "edit", "--approve-all", "notes/n.txt", "--old", "note", "--new", "memo"},
			after: map[string]string{"work/notes/n.txt": "memo\n"}, stdout: `^edited`},

		// ls
		{name: "ls the working directory", args: []string{"fs", "ls"},
			stdout: `(?m)^file +11 a\.txt\n(.*\n)*^symlink +5 in-link -> a\.txt\n(.*\n)*^dir +\d+ notes\n`},
		{name: "ls a file", args: []string{"fs", "ls", "a.txt"}, stdout: `^file +11 a\.txt\n$`},
		{name: "ls outside every zone", args: []string{"fs", "ls", "../outside"}, code: 77, stderr: `outside every zone`},
		{name: "ls a directory link pointing out", args: []string{"fs", "ls", "outdir"}, code: 77, stderr: `outside every zone`},
		{name: "ls a denied directory", args: []string{"fs", "ls", "secret"}, code: 77, stderr: `the path is denied`},
		{name: "ls with read_approval, strict", args: []string{"fs", "ls", "--strict", "guarded"}, code: 77, stderr: strictMsg},
		{name: "ls with read_approval, approve-all", args: []string{"fs", "ls", "--approve-all", "guarded"}, stdout: `^file +8 g\.txt\n$`},

		// rm
		{name: "rm a file", args: []string{"fs", "rm", "a.txt"}, stdout: `^removed regular file .*/work/a\.txt\n$`,
			after: map[string]string{"work/a.txt": absent, "work/in-link": isLink}},
		{name: "rm an empty directory", args: []string{"fs", "rm", "empty"}, stdout: `^removed directory`, after: map[string]string{"work/empty": absent}},
		{name: "rm a directory with files", args: []string{"fs", "rm", "full"}, code: 125,
			stderr: `^guardrun: fs rm: .*/work/full: directory not empty \(fs rm removes files and empty directories only\)\n$`,
			after:  map[string]string{"work/full/f": "f\n"}},
		{name: "rm a link inside the zone", args: []string{"fs", "rm", "in-link"}, code: 125,
			stderr: `^guardrun: fs rm: in-link is a symbolic link; fs rm removes files and empty directories, not links\n$`,
			after:  map[string]string{"work/in-link": isLink, "work/a.txt": "alpha\nbeta\n"}},
		{name: "rm a link pointing out", args: []string{"fs", "rm", "out-link"}, code: 77,
			stderr: `^guardrun: blocked: delete out-link: the path is outside every rw zone`,
			after:  map[string]string{"work/out-link": isLink, "outside/secret.txt": "OUTSIDE\n"}},
		{name: "rm with .. escaping the zone", args: []string{"fs", "rm", "../outside/secret.txt"}, code: 77,
			stderr: `outside every rw zone`, after: map[string]string{"outside/secret.txt": "OUTSIDE\n"}},
		{name: "rm in a ro zone", args: []string{"fs", "rm", "docs/readme.md"}, code: 77,
			stderr: `zone "docs" is read-only`, after: map[string]string{"work/docs/readme.md": "# docs\n"}},
		{name: "rm a denied file", args: []string{"fs", "rm", ".env"}, code: 77, stderr: `denied`, after: map[string]string{"work/.env": "TOKEN=1\n"}},
		{name: "rm a zone's root", args: []string{"fs", "rm", "--approve-all", "docs"}, code: 77, stderr: `read-only`},
		{name: "rm an rw zone's root", args: []string{"fs", "rm", "--approve-all", "notes"}, code: 77,
			stderr: `^guardrun: blocked: delete notes: it is the root of zone "notes"\n$`},
		{name: "rm with delete_approval without a terminal", args: []string{"fs", "rm", "guarded/g.txt"}, code: 77,
			stderr: noTTY + `delete guarded/g\.txt needs approval`, after: map[string]string{"work/guarded/g.txt": "guarded\n"}},
		{name: "rm with delete_approval, approve-all", args: []string{"fs", "rm", "--approve-all", "guarded/g.txt"},
			stdout: `^removed`, after: map[string]string{"work/guarded/g.txt": absent}},
		{name: "rm with delete_approval, strict", args: []string{"fs", "rm", "--strict", "guarded/g.txt"}, code: 77,
			stderr: strictMsg, after: map[string]string{"work/guarded/g.txt": "guarded\n"}},
		{name: "rm guardrun's own config", args: []string{"fs", "rm", ".guardrun-config.yaml"}, code: 77, stderr: `guardrun's own config`},

		// usage
		{name: "no operation", args: []string{"fs"}, code: 2, stderr: `fs needs an operation`},
		{name: "unknown operation", args: []string{"fs", "cat", "a.txt"}, code: 2, stderr: `unknown fs operation "cat"`},
		{name: "no path", args: []string{"fs", "read"}, code: 2, stderr: `fs read takes one PATH`},
		{name: "two paths", args: []string{"fs", "rm", "a.txt", "twice.txt"}, code: 2, stderr: `fs rm takes one PATH`},
		{name: "edit without --new", args: []string{"fs", "edit", "a.txt", "--old", "x"}, code: 2, stderr: `needs --old TEXT and --new TEXT`},
		{name: "edit with empty --old", args: []string{"fs", "edit", "a.txt", "--old", "", "--new", "x"}, code: 2, stderr: `--old must not be empty`},
		{name: "--old on write", args: []string{"fs", "write", "a.txt", "--old", "x"}, code: 2, stderr: `--old and --new are for fs edit`},
		{name: "rm ..", args: []string{"fs", "rm", "notes/.."}, code: 2, stderr: `does not name a file`},
		{name: "help", args: []string{"fs", "--help"}, stdout: `(?s)^Usage:\n  guardrun fs read PATH.*fs rm removes regular files and empty\ndirectories only`},
		{name: "a path after --", args: []string{"fs", "write", "--", "-dash.txt"}, stdin: "d", after: map[string]string{"work/-dash.txt": "d"}, stdout: `^created`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := newFSTree(t)
			watched := []string{"outside/secret.txt"}
			for n := range tt.after {
				watched = append(watched, n)
			}
			before := tr.state(watched)
			stdout, stderr, code := tr.run(t, tt.stdin, tt.env, tt.args...)
			if code != tt.code {
				t.Errorf("exit status %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			match(t, "stdout", stdout, tt.stdout)
			match(t, "stderr", stderr, tt.stderr)
			want := before
			for n, c := range tt.after {
				want[n] = c
			}
			if diff := cmp.Diff(tr.state(watched), want); diff != "" {
				t.Errorf("files afterwards (-got +want)\n%s", diff)
			}
		})
	}
}

func match(t *testing.T, what, got, pattern string) {
	t.Helper()
	if pattern == "" {
		if got != "" {
			t.Errorf("%s = %q, want nothing", what, got)
		}
		return
	}
	if !regexp.MustCompile(pattern).MatchString(got) {
		t.Errorf("%s = %q, want a match for %q", what, got, pattern)
	}
}

// TestFSJSON checks the one object --json prints for what was done and
// for why not, with the exit statuses.
func TestFSJSON(t *testing.T) {
	tr := newFSTree(t)
	w := tr.work
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		want  map[string]any
	}{{
		name: "write done", args: []string{"fs", "write", "--json", "new.txt"}, stdin: "12345",
		want: map[string]any{"ok": true, "op": "write", "path": w + "/new.txt", "bytes": 5.0, "created": true},
	}, {
		name: "edit done", args: []string{"fs", "--json", "edit", "new.txt", "--old", "345", "--new", "3"},
		want: map[string]any{"ok": true, "op": "edit", "path": w + "/new.txt", "bytes": 3.0},
	}, {
		name: "read done", args: []string{"fs", "read", "new.txt", "--json"},
		want: map[string]any{"ok": true, "op": "read", "path": w + "/new.txt", "bytes": 3.0, "content": "123"},
	}, {
		name: "rm done", args: []string{"fs", "rm", "new.txt", "--json"},
		want: map[string]any{"ok": true, "op": "rm", "path": w + "/new.txt", "bytes": 3.0, "type": "file"},
	}, {
		name: "ls done", args: []string{"fs", "ls", "guarded", "--json", "--approve-all"},
		want: map[string]any{"ok": true, "op": "ls", "path": w + "/guarded",
			"entries": []any{map[string]any{"name": "g.txt", "type": "file", "size": 8.0}}},
	}, {
		name: "blocked", args: []string{"fs", "write", "--json", "docs/x.md"}, code: 77,
		want: map[string]any{"ok": false, "op": "write", "path": w + "/docs/x.md", "decision": "block",
			"decided_by": "policy", "reason": `write docs/x.md: zone "docs" is read-only`},
	}, {
		name: "refused in strict mode", args: []string{"fs", "write", "--json", "--strict", "notes/n.txt"}, code: 77,
		want: map[string]any{"ok": false, "op": "write", "path": w + "/notes/n.txt", "decision": "ask",
			"decided_by": "mode", "reason": "denied (strict mode): write notes/n.txt needs approval"},
	}, {
		name: "failed", args: []string{"fs", "edit", "--json", "twice.txt", "--old", "x", "--new", "y"}, code: 125,
		want: map[string]any{"ok": false, "op": "edit", "path": w + "/twice.txt",
			"error": "fs edit: --old was found 2 times in " + w + "/twice.txt; it must occur exactly once (include more of the surrounding text)"},
	}, {
		name: "binary read", args: []string{"fs", "read", "--json", "bin"}, code: 0,
		want: map[string]any{"ok": true, "op": "read", "path": w + "/bin", "bytes": 3.0, "content_base64": "/wAB"},
	}}
	os.WriteFile(filepath.Join(w, "bin"), []byte{0xff, 0, 1}, 0o644)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := tr.run(t, tt.stdin, nil, tt.args...)
			if code != tt.code {
				t.Errorf("exit status %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if n := strings.Count(stdout, "\n"); n != 1 {
				t.Errorf("stdout has %d lines, want one object: %q", n, stdout)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want)\n%s", diff)
			}
		})
	}
}

// TestFSAudit checks that every decision lands in the audit log with
// the operation, the path and the bytes, and no script or argv.
func TestFSAudit(t *testing.T) {
	tr := newFSTree(t)
	tr.run(t, "hello", nil, "fs", "write", "new.txt")
	tr.run(t, "", nil, "fs", "read", "new.txt")
	tr.run(t, "x", nil, "fs", "write", "--strict", "notes/n.txt")
	tr.run(t, "", nil, "fs", "rm", "docs/readme.md")
	tr.run(t, "", nil, "fs", "edit", "twice.txt", "--old", "x", "--new", "y")
	data, err := os.ReadFile(filepath.Join(tr.stateDir, "guardrun", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	type rec struct {
		Op, Path, Verdict, Outcome, DecidedBy string
		Bytes                                 int64
	}
	var got []rec
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		for _, k := range []string{"script", "argv"} {
			if _, ok := m[k]; ok {
				t.Errorf("record has %q: %s", k, sc.Text())
			}
		}
		if m["session"] == nil || m["cwd"] != tr.work || m["time"] == nil {
			t.Errorf("record lacks session, cwd or time: %s", sc.Text())
		}
		n, _ := m["bytes"].(float64)
		got = append(got, rec{m["op"].(string), m["path"].(string), m["verdict"].(string), m["outcome"].(string), m["decided_by"].(string), int64(n)})
	}
	w := tr.work
	want := []rec{
		{"write", w + "/new.txt", "allow", "ran", "rule", 5},
		{"read", w + "/new.txt", "allow", "ran", "rule", 5},
		{"write", w + "/notes/n.txt", "ask", "refused", "mode", 0},
		{"rm", w + "/docs/readme.md", "block", "refused", "policy", 0},
		{"edit", w + "/twice.txt", "allow", "failed", "rule", 0},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want)\n%s", diff)
	}
}

func (tr *fsTree) startPTY(t *testing.T, stdin string, extraEnv []string, args ...string) *ptyRun {
	t.Helper()
	return startOnPTY(t, tr.work, append(append([]string{}, tr.env...), extraEnv...), strings.NewReader(stdin), tr.withConfig(args)...)
}

const keyLine = "[y] approve once"

// TestFSPromptDiff asks about a write over an existing file: the diff is
// shown with - and + lines and truncated with a line count, v opens the
// pager with all of it, and y writes.
func TestFSPromptDiff(t *testing.T) {
	tr := newFSTree(t)
	var old, new strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&old, "line %d\n", i)
		fmt.Fprintf(&new, "line %d changed\n", i)
	}
	os.WriteFile(filepath.Join(tr.work, "notes", "long.txt"), []byte(old.String()), 0o644)
	viewed := filepath.Join(tr.root, "viewed.txt")
	pager := filepath.Join(tr.root, "pager.sh")
	os.WriteFile(pager, []byte("#!/bin/sh\ncp \"$1\" "+viewed+"\n"), 0o755)

	r := tr.startPTY(t, new.String(), []string{"TERM=xterm-256color", "PAGER=" + pager},
		"fs", "write", "notes/long.txt")
	r.waitFor(keyLine, 1)
	screen := r.screen()
	for _, want := range []string{
		`write notes/long.txt: zone "notes" needs approval to write`,
		"\x1b[36m@@ -1,40 +1,40 @@\x1b[0m",
		"\x1b[31m-line 1\x1b[0m",
		"\x1b[31m-line 2\x1b[0m",
		"more lines ([v] to view all)",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, screen)
		}
	}
	if !regexp.MustCompile(`\$ (\x1b\[0m)?guardrun fs write notes/long\.txt\r`).MatchString(screen) {
		t.Errorf("the prompt does not show the operation:\n%s", screen)
	}
	if strings.Contains(screen, "+line 40 changed") {
		t.Errorf("the prompt was not truncated:\n%s", screen)
	}
	if !regexp.MustCompile(`… \d+ more lines \(\[v\] to view all\)`).MatchString(screen) {
		t.Errorf("no line count in the truncation:\n%s", screen)
	}

	r.send("v")
	r.waitFor(keyLine, 2)
	full, err := os.ReadFile(viewed)
	if err != nil {
		t.Fatalf("the pager did not run: %v", err)
	}
	for _, want := range []string{"-line 40\n", "+line 40 changed\n", "--- " + tr.work + "/notes/long.txt"} {
		if !strings.Contains(string(full), want) {
			t.Errorf("the pager got no %q:\n%s", want, full)
		}
	}
	if bytes.ContainsRune(full, 0x1b) {
		t.Error("the pager got escape sequences")
	}

	r.send("y")
	if code := r.wait(); code != 0 {
		t.Fatalf("exit status %d; stderr: %s", code, r.stderr.String())
	}
	if got, _ := os.ReadFile(filepath.Join(tr.work, "notes", "long.txt")); string(got) != new.String() {
		t.Errorf("the file is %q", got)
	}
}

// TestFSPromptNewFile asks about a new file: its content is highlighted
// by type, escape sequences in it are shown and not sent, and n with a
// note refuses with the note on stderr.
func TestFSPromptNewFile(t *testing.T) {
	tr := newFSTree(t)
	content := "package main\n\n// \x1b[2J\x1b]0;title\x07 hidden\nfunc main() {}\n"
	r := tr.startPTY(t, content, []string{"TERM=xterm-256color"}, "fs", "write", "guarded/main.go")
	r.waitFor(keyLine, 1)
	screen := r.screen()
	for _, want := range []string{
		"new file",
		"4 lines",
		", Go",
		"\x1b[34;1mpackage\x1b[0m",
		`\x1b[2J\x1b]0;title\x07 hidden`,
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the prompt lacks %q:\n%q", want, screen)
		}
	}
	for _, bad := range []string{"// \x1b[2J", "\x1b]0;title"} {
		if strings.Contains(screen, bad) {
			t.Errorf("the file's escape %q reached the terminal", bad)
		}
	}
	r.send("n")
	r.waitFor("note for the agent", 1)
	r.send("use notes/ instead\r")
	if code := r.wait(); code != 77 {
		t.Errorf("exit status %d, want 77", code)
	}
	if got, want := r.stderr.String(), "guardrun: denied by user: use notes/ instead\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
	if _, err := os.Lstat(filepath.Join(tr.work, "guarded", "main.go")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the file was created (%v)", err)
	}
}

// TestFSPromptMkdir: a write into missing directories shows them in the
// prompt; approved, they are created with the file.
func TestFSPromptMkdir(t *testing.T) {
	tr := newFSTree(t)
	r := tr.startPTY(t, "hi\n", []string{"TERM=xterm-256color", "NO_COLOR=1"}, "fs", "write", "guarded/a/b/x.txt")
	r.waitFor(keyLine, 1)
	want := "create directories " + filepath.Join(tr.work, "guarded/a") + ", " + filepath.Join(tr.work, "guarded/a/b")
	if screen := r.screen(); !strings.Contains(screen, want) {
		t.Errorf("the prompt lacks %q:\n%s", want, screen)
	}
	r.send("y")
	if code := r.wait(); code != 0 {
		t.Fatalf("exit status %d, want 0; stderr: %s", code, r.stderr.String())
	}
	if b, err := os.ReadFile(filepath.Join(tr.work, "guarded/a/b/x.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("the file is %q (%v), want hi", b, err)
	}
}

// TestFSRefuseTools: with os_sandbox_fallback: refuse_tools and no
// working OS sandbox, fs refuses every operation, as every command is.
func TestFSRefuseTools(t *testing.T) {
	tr := newFSTree(t)
	cfg := filepath.Join(tr.work, ".guardrun-config.yaml")
	data, _ := os.ReadFile(cfg)
	data = bytes.Replace(data, []byte("require_os_sandbox: false"), []byte("require_os_sandbox: true\n  os_sandbox_fallback: refuse_tools"), 1)
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// A bwrap that cannot start a sandbox, first on PATH.
	bin := filepath.Join(tr.root, "bin")
	os.Mkdir(bin, 0o755)
	if err := os.WriteFile(filepath.Join(bin, "bwrap"), []byte("#!/bin/sh\necho 'bwrap: no namespaces here' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// --backend bwrap: under auto, landlock would stand in for it.
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH")}
	for _, args := range [][]string{
		{"--backend", "bwrap", "fs", "write", "new.txt"},
		{"--backend", "bwrap", "fs", "write", "nodir/x.txt"},
		{"--backend", "bwrap", "fs", "read", "a.txt"},
		{"--backend", "bwrap", "fs", "rm", "a.txt"},
	} {
		stdout, stderr, code := tr.run(t, "x", env, args...)
		if code != 77 || !strings.Contains(stderr, "refused: no OS sandbox is available (os_sandbox_fallback: refuse_tools)") || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 77 and the refuse_tools refusal", args, code, stdout, stderr)
		}
	}
	got := tr.state([]string{"work/new.txt", "work/nodir", "work/a.txt"})
	if diff := cmp.Diff(got, map[string]string{"work/new.txt": absent, "work/nodir": absent, "work/a.txt": "alpha\nbeta\n"}); diff != "" {
		t.Errorf("files changed (-got +want):\n%s", diff)
	}
	// The same command is refused the same way.
	_, stderr, code := tr.run(t, "", env, "--backend", "bwrap", "-c", "true")
	if code != 77 || !strings.Contains(stderr, "os_sandbox_fallback: refuse_tools") {
		t.Errorf("guardrun -c true: exit %d, stderr %q; want 77", code, stderr)
	}
}

// TestFSPromptNoColor checks NO_COLOR: the same prompt, no escapes.
func TestFSPromptNoColor(t *testing.T) {
	tr := newFSTree(t)
	r := tr.startPTY(t, "package main\n", []string{"TERM=xterm-256color", "NO_COLOR=1"}, "fs", "write", "guarded/x.go")
	r.waitFor(keyLine, 1)
	r.send("n")
	r.waitFor("note for the agent", 1)
	r.send("\r")
	if code := r.wait(); code != 77 {
		t.Errorf("exit status %d, want 77", code)
	}
	// The prompt still resets the terminal and draws with control
	// sequences; NO_COLOR means no colours or attributes.
	if screen := r.screen(); regexp.MustCompile(`\x1b\[[0-9;]*[1-9][0-9;]*m`).MatchString(screen) || !strings.Contains(screen, "1 │ package main") {
		t.Errorf("NO_COLOR prompt:\n%q", screen)
	}
	if got := r.stderr.String(); !strings.HasPrefix(got, "guardrun: denied by user: ") {
		t.Errorf("stderr = %q", got)
	}
}

// TestFSPromptSession approves a write for the session: the next write
// to the same path does not ask, whatever its content; a delete of it,
// another path or another session still asks.
func TestFSPromptSession(t *testing.T) {
	tr := newFSTree(t)
	session := []string{"GUARDRUN_SESSION=fs-test", "TERM=dumb"}
	r := tr.startPTY(t, "one\n", session, "fs", "write", "notes/s.txt")
	r.waitFor("[s] approve for session", 1)
	r.send("s")
	if code := r.wait(); code != 0 {
		t.Fatalf("exit status %d; stderr: %s", code, r.stderr.String())
	}
	// Without a terminal now: only the grant can let these through.
	if _, stderr, code := tr.run(t, "two, different\n", session, "fs", "write", "notes/s.txt"); code != 0 {
		t.Errorf("second write: exit %d: %s", code, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(tr.work, "notes", "s.txt")); string(got) != "two, different\n" {
		t.Errorf("file is %q", got)
	}
	for _, tt := range []struct {
		name  string
		env   []string
		args  []string
		stdin string
	}{
		{"another path", session, []string{"fs", "write", "notes/other.txt"}, "x"},
		{"another session", []string{"GUARDRUN_SESSION=fs-other"}, []string{"fs", "write", "notes/s.txt"}, "x"},
		{"a delete of the same path", session, []string{"fs", "rm", "notes/s.txt"}, ""},
	} {
		if _, stderr, code := tr.run(t, tt.stdin, tt.env, tt.args...); code != 77 || !strings.Contains(stderr, "needs approval") {
			t.Errorf("%s: exit %d, stderr %q; want a refusal", tt.name, code, stderr)
		}
	}
	// The grant is keyed on zone, operation and path, never content.
	data, _ := os.ReadFile(filepath.Join(tr.stateDir, "guardrun", "audit.jsonl"))
	if !strings.Contains(string(data), `"decided_by":"session"`) {
		t.Errorf("no session decision in the audit log:\n%s", data)
	}
	store, _ := filepath.Glob(filepath.Join(tr.root, "run", "guardrun", "sessions", "*.json"))
	for _, f := range store {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte("two, different")) || bytes.Contains(b, []byte("one\n")) {
			t.Errorf("the session store holds file content: %s", b)
		}
	}
}

// TestFSWriteFailsMidway makes write(2) fail partway with a file size
// limit (ulimit -f): guardrun reports it, the old file is untouched, and
// no temporary file is left behind.
func TestFSWriteFailsMidway(t *testing.T) {
	tr := newFSTree(t)
	big := strings.Repeat("0123456789abcdef", (64<<10)/16)
	// 16 blocks: 8 KiB in dash's 512-byte blocks, 16 KiB in bash's.
	cmd := exec.Command("/bin/sh", append([]string{"-c", `ulimit -f 16 && exec "$0" "$@"`, guardrunBin}, tr.withConfig([]string{"fs", "write", "a.txt"})...)...)
	cmd.Dir = tr.work
	cmd.Env = append([]string{"NO_COLOR=1"}, tr.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stdin = strings.NewReader(big)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 125 {
		t.Fatalf("exit %v, want status 125; output:\n%s", err, out)
	}
	if want := "guardrun: fs write: " + tr.work + "/a.txt: file too large"; !strings.HasPrefix(string(out), want) {
		t.Errorf("output %q, want it to start with %q", out, want)
	}
	if got, _ := os.ReadFile(filepath.Join(tr.work, "a.txt")); string(got) != "alpha\nbeta\n" {
		t.Errorf("a.txt is now %d bytes", len(got))
	}
	names, _ := filepath.Glob(filepath.Join(tr.work, ".a.txt.guardrun-*"))
	if len(names) > 0 {
		t.Errorf("temporary files left behind: %v", names)
	}
}
