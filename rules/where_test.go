package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// issueConfig is the attacker's view of the contract: rw zone ws, a
// notes zone that only takes .txt, ro zone ro, a denied ws/secret, and
// pre-approved read-only commands.
const issueConfig = `
shell:
  rules:
    - {pattern: echo, approval: false}
    - {pattern: cat, approval: false}
    - {pattern: head, approval: false}
    - {pattern: grep, approval: false}
    - {pattern: "go test", approval: false}
    - {pattern: cd, approval: false}
    - {pattern: pushd, approval: false}
    - {pattern: popd, approval: false}
    - {pattern: rm, allowed: false}
    - {pattern: f, approval: false}
    - {pattern: pytest, approval: false, sandbox_paths: [ws]}
    - {pattern: exec, approval: false}
sandbox:
  paths:
    ws: {root: ./ws, mode: rw}
    notes: {root: ./ws/notes, mode: rw, suffixes: [.txt]}
    ro: {root: ./ro, mode: ro}
  deny: [ws/secret]
`

// issueEngine returns an engine for issueConfig and the ws directory
// (the working directory), with ws/rolink -> ../ro/sub and ws/fdlink ->
// /proc/self/fd/0.
func issueEngine(t testing.TB) (*Engine, string) {
	t.Helper()
	dir := hostDir(t)
	for _, d := range []string{"ws/notes", "ws/secret", "ws/sub", "ro/sub"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "ro/target.txt"), []byte("keep\n"), 0o644)
	for link, target := range map[string]string{"ws/rolink": "../ro/sub", "ws/fdlink": "/proc/self/fd/0", "ws/tmplink": "/tmp"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Parse(filepath.Join(dir, "g.yaml"), []byte(issueConfig), dir, Env{Cwd: filepath.Join(dir, "ws"), Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	return e, filepath.Join(dir, "ws")
}

// pathRow is one script with the verdict it must get, a piece of the
// reason, and (for a judged file) the path judged, relative to the
// directory holding ws and ro ("" when no file part is checked).
type pathRow struct {
	name, script string
	want         Verdict
	reason       string
	path         string
}

func checkRows(t *testing.T, e *Engine, cwd string, rows []pathRow) {
	t.Helper()
	base := filepath.Dir(cwd)
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			d := e.Script(tc.script, cwd)
			if d.Decision != tc.want {
				t.Fatalf("Script(%q) = %s (%s), want %s\nparts: %+v", tc.script, d.Decision, d.Reason, tc.want, d.Parts)
			}
			if !reasonSays(d, tc.reason) {
				t.Errorf("reason %q (nor any part's with that verdict) does not say %q; parts: %+v", d.Reason, tc.reason, d.Parts)
			}
			if tc.path == "" {
				return
			}
			want := tc.path
			if !filepath.IsAbs(want) {
				want = filepath.Join(base, want)
			}
			for _, p := range d.Parts {
				if p.Kind == "file" && p.Decision == d.Decision && p.Path == want {
					return
				}
			}
			t.Errorf("no file part judged %s with verdict %s; parts: %+v", want, d.Decision, d.Parts)
		})
	}
}

// reasonSays reports whether the decision's reason, or the reason of a
// part that has the decision's verdict, says s.
func reasonSays(d *Decision, s string) bool {
	if strings.Contains(d.Reason, s) {
		return true
	}
	for _, p := range d.Parts {
		if p.Decision == d.Decision && strings.Contains(p.Reason, s) {
			return true
		}
	}
	return false
}

func TestWorkingDirectory(t *testing.T) {
	e, ws := issueEngine(t)
	checkRows(t, e, ws, []pathRow{
		{"write in ws", "echo x > a.md", Allow, "inside zone", "ws/a.md"},
		{"cd then suffix", "cd notes && echo x > a.md", Block, `only takes files ending in .txt`, "ws/notes/a.md"},
		{"cd may fail: both judged", "cd notes; echo x > a.md", Block, "only takes", "ws/notes/a.md"},
		{"cd then the right suffix", "cd notes && echo x > a.txt", Allow, "", "ws/notes/a.txt"},
		{"cd / then relative", "cd / && echo x > etc/passwd", Block, "outside every rw zone", "/etc/passwd"},
		{"cd into ro", "cd ../ro && echo x > f", Block, `zone "ro" is read-only`, "ro/f"},
		{"cd to home", "cd && echo x > f", Block, "outside every rw zone", "/home/u/f"},
		{"pushd", "pushd notes && echo x > a.md", Block, "only takes", "ws/notes/a.md"},
		{"pushd popd", "pushd notes && popd && echo x > a.md", Allow, "", "ws/a.md"},
		{"popd with an empty stack", "popd; echo x > a.md", Ask, "working directory is not known", ""},
		{"subshell cd", "(cd notes; echo x > a.md)", Block, "only takes", "ws/notes/a.md"},
		{"subshell scope ends", "(cd notes); echo x > a.md", Allow, "", "ws/a.md"},
		{"pipeline side is a subshell", "cd notes | cat; echo x > a.md", Allow, "", "ws/a.md"},
		{"braces keep the cd", "{ cd notes; }; echo x > a.md", Block, "only takes", "ws/notes/a.md"},
		{"cd chain", "cd sub && cd ../notes && echo x > a.md", Block, "only takes", "ws/notes/a.md"},
		{"cd -P through a link then ..", "cd -P rolink && echo x > ../pwn", Block, "read-only", "ro/pwn"},
		{"logical cd through a link then ..", "cd rolink/.. && echo x > a.md", Block, "read-only", "ro/a.md"},
		{"cd to a run-time value", `cd "$D" && echo x > a.md`, Ask, "working directory is not known", ""},
		{"cd to a run-time value, absolute path", `cd "$D" && echo x > /dev/null`, Allow, "", ""},
		{"cd -", "cd notes; cd -; echo x > a.md", Ask, "cd -", ""},
		{"cd in a loop", "for d in a b; do cd notes; echo x > a.md; done", Ask, "inside a loop", ""},
		{"function body after a cd", "f() { echo x > a.md; }; cd notes; f", Ask, "runs in the directory it is called from", ""},
		{"function that changes directory", "f() { cd notes; }; f; echo x > a.md", Ask, "changes directory", ""},
		{"function without any cd", "f() { echo x > a.md; }; f", Allow, "", "ws/a.md"},
		{"function with builtin cd", "f() { builtin cd notes; }; f; echo x > a.md", Ask, "changes directory", ""},
		{"function with eval", "f() { eval \"$1\"; }; f 'cd notes'; echo x > a.md", Ask, "", ""},
		{"command cd", "command cd notes && echo x > a.md", Block, "only takes", "ws/notes/a.md"},
		{"dynamic command name may be cd", "c=cd; $c notes; echo x > a.md", Ask, "may change directory", ""},
		{"eval changes directory", "eval 'cd notes'; echo x > a.md", Ask, "eval changes directory", ""},
		{"bash -c cd stays in its process", "bash -c 'cd notes'; echo x > a.md", Allow, "", "ws/a.md"},
		{"nested code follows its own cd", "bash -c 'cd notes && echo x > a.md'", Block, "only takes", "ws/notes/a.md"},
		{"CDPATH search", "CDPATH=/etc; cd notes && echo x > a.md", Ask, "CDPATH", ""},
		{"redirection of the cd itself", "cd notes > log.txt", Allow, "", "ws/log.txt"},
		{"read after cd judged by deny", "cd secret && cat < k", Block, "denied", "ws/secret/k"},
		{"sandbox_paths after cd", "cd ../ro && pytest x", Ask, "matches no rule", ""},
		{"sandbox_paths in the zone", "pytest x", Allow, "", ""},
		{"sandbox_paths after a run-time cd", `cd "$D"; pytest x`, Ask, "", ""},
	})
}

func TestKernelOrderPaths(t *testing.T) {
	e, ws := issueEngine(t)
	checkRows(t, e, ws, []pathRow{
		{"symlink then ..", "echo x > rolink/../pwn", Block, `zone "ro" is read-only`, "ro/pwn"},
		{"symlink then .. then back", "echo x > rolink/../../ws/ok", Allow, "", "ws/ok"},
		{"symlink into ro", "echo x > rolink/f", Block, "read-only", "ro/sub/f"},
		{"symlink to a process's descriptor", "echo x > fdlink", Ask, "depends on the process", ""},
		{"symlink to /tmp", "echo x > tmplink/f", Allow, "private /tmp", "/tmp/f"},
	})
}

func TestDescriptorPaths(t *testing.T) {
	e, ws := issueEngine(t)
	checkRows(t, e, ws, []pathRow{
		{"write through stdin bound to ro", "{ echo pwned > /dev/stdin; } < ../ro/target.txt", Block, "read-only", "ro/target.txt"},
		{"write through fd 0 via /proc", "{ echo pwned > /proc/self/fd/0; } < ../ro/target.txt", Block, "read-only", "ro/target.txt"},
		{"exec binds for the rest", "exec 3< ../ro/target.txt; echo pwned > /dev/fd/3", Block, "read-only", "ro/target.txt"},
		{"bound in the same statement", "echo x 3> out.txt > /dev/fd/3", Allow, "bound to out.txt", "ws/out.txt"},
		{"bound before a cd", "exec 3< a.txt; cd notes; echo x > /dev/fd/3", Allow, "bound to a.txt", "ws/a.txt"},
		{"dup keeps the file", "{ echo x 4>&0 > /dev/fd/4; } < ../ro/target.txt", Block, "read-only", "ro/target.txt"},
		{"unbound fd 3", "echo x > /dev/fd/3", Ask, "not bound by the script", ""},
		{"unbound /proc/self/fd/5", "echo x > /proc/self/fd/5", Ask, "not bound", ""},
		{"unbound stdin write", "echo x > /dev/stdin", Ask, "not bound", ""},
		{"unbound stdout", "echo x > /dev/stdout", Allow, "own output", ""},
		{"unbound stderr", "echo err > /dev/stderr", Allow, "own error output", ""},
		{"here-document bound after the write", "cat /dev/null > /dev/stdin <<EOF\nx\nEOF", Ask, "not bound", ""},
		{"stdout is a pipe", "echo x > /dev/stdout | cat", Allow, "pipe", ""},
		{"stdin from a here-document", "cat <<EOF > /dev/stdin\nx\nEOF", Allow, "pipe", ""},
		{"stdout redirected to ro, then /dev/stdout", "{ echo x > /dev/stdout; } > ../ro/f", Block, "read-only", "ro/f"},
		{"read stdin", "cat < /dev/stdin", Allow, "own input", ""},
		{"closed descriptor", "echo x 3>&- > /dev/fd/3", Allow, "closed", ""},
		{"run-time target", `exec 3> "$F"; echo x > /dev/fd/3`, Ask, "", ""},
		{"&> binds stderr too", "{ echo x > /dev/stderr; } &> ../ro/f", Block, "read-only", "ro/f"},
	})
}

func TestPrivateTmpAndDevices(t *testing.T) {
	e, ws := issueEngine(t)
	checkRows(t, e, ws, []pathRow{
		{"go test log in /tmp", "go test ./... > /tmp/t.log 2>&1", Allow, "", "/tmp/t.log"},
		{"echo to /tmp", "echo hi > /tmp/x", Allow, "private /tmp", "/tmp/x"},
		{"heredoc to /tmp", "cat > /tmp/p.diff <<'EOF'\n--- a\n+++ b\nEOF", Allow, "", "/tmp/p.diff"},
		{"urandom", "head -c 16 < /dev/urandom", Allow, "", ""},
		{"random", "head -c 16 < /dev/random", Allow, "", ""},
		{"zero", "head -c 16 < /dev/zero", Allow, "", ""},
		{"non-UTF-8 grep argument", "grep $'\\xff' a.txt", Allow, "", ""},
		{"raw non-UTF-8 byte in a grep argument", "grep '\xff' a.txt", Allow, "", ""},
		{"raw non-UTF-8 byte unquoted", "grep x\x80y a.txt", Allow, "", ""},
		{"out of /tmp by ..", "echo x > /tmp/../etc/x", Block, "outside every rw zone", "/etc/x"},
		{"urandom is not writable by name", "echo x > /dev/urandom", Block, "", ""},
		{"other devices", "head -c 1 < /dev/sda", Block, "outside every zone", ""},
	})
	// guardrun fs runs on the host, where /tmp is not private.
	if p := e.File(OpWrite, "/tmp/x", ws); p.Decision != Block {
		t.Errorf("guardrun fs write /tmp/x = %s (%s), want block: the host's /tmp is shared", p.Decision, p.Reason)
	}
}
