package shellparse

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// stubNames are the programs the corpus may run. Each is a stand-in that
// only records its own name, so nothing the corpus does can touch the
// host. The list is fixed on purpose: it must not come from what the
// parser finds, or a command the parser misses would have no stub and the
// miss would go unnoticed. A corpus script that runs anything else fails
// the test with "command not found".
var stubNames = []string{
	"awk", "cat", "chmod", "cp", "curl", "date", "diff", "docker", "echo", "git", "go",
	"grep", "gzip", "head", "hostname", "id", "ls", "make", "mkdir", "mktemp", "mv",
	"npm", "nproc", "printf", "python3", "rm", "sed", "sleep", "sort", "ssh", "tail",
	"tar", "tee", "touch", "tr", "uname", "wc", "wget", "whoami",
}

// realWrappers run their command through PATH, which holds only stubs,
// so letting the real programs run exercises the wrapper look-through.
var realWrappers = []string{"env", "nice", "timeout", "nohup", "stdbuf", "setsid", "xargs", "find"}

// corpusForbidden keeps corpus scripts from reaching a real program:
// absolute paths, a default PATH (command -p), or a changed PATH. Relative
// paths are harmless: the stand-ins create no files, so the scratch
// directory holds nothing to run.
var corpusForbidden = []string{"/bin", "/usr", "/sbin", "/lib", "/opt", "command -p", "PATH", "hash ", "getconf", "sudo", "doas"}

func TestBashDifferential(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		requireOrSkip(t, "bash is not installed: the differential test needs a real bash")
	}
	scripts, err := filepath.Glob("testdata/corpus/*.sh")
	if err != nil || len(scripts) < 25 {
		t.Fatalf("want at least 25 corpus scripts in testdata/corpus, found %d (%v)", len(scripts), err)
	}

	root := t.TempDir()
	stubs := filepath.Join(root, "stubs")
	if err := os.Mkdir(stubs, 0o755); err != nil {
		t.Fatal(err)
	}
	execLog := filepath.Join(root, "exec.log")
	writeStubs(t, stubs, bash, execLog)

	strace, tracing := straceUsable(t, root)
	if !tracing {
		if testenv.Required() {
			t.Fatal("no usable strace (missing, or ptrace not permitted); without it the stand-ins' log does not see the real wrappers (GUARDRUN_REQUIRE_SANDBOX=1)")
		}
		t.Log("strace cannot trace here (missing, or ptrace not permitted): comparing with the stand-ins' own log, which does not see the real wrappers")
	}
	// The harness must see what runs, or every comparison passes.
	if ran := runTraced(t, bash, strace, tracing, stubs, execLog, "rm x; env touch y; bash -c 'git z'"); !slices.Equal(ran, []string{"git", "rm", "touch"}) && !slices.Equal(ran, []string{"bash", "env", "git", "rm", "touch"}) {
		t.Fatalf("tracing harness saw %v; want rm, touch and git (plus bash and env under strace)", ran)
	}

	for _, path := range scripts {
		name := filepath.Base(path)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range corpusForbidden {
			if strings.Contains(string(src), bad) {
				t.Fatalf("%s contains %q, which could run a real program; corpus scripts must stay on the stand-ins", name, bad)
			}
		}
		t.Run(name, func(t *testing.T) {
			work := t.TempDir()
			s, err := Parse(string(src), Options{Home: work})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			found := map[string]bool{}
			for _, c := range s.Commands {
				found[c.Name()] = true
			}

			run := runIn(t, bash, strace, tracing, stubs, execLog, work, string(src))
			ran := run.names
			// Every argv a stand-in was run with is one the parser
			// reported for that command, word for word.
			for _, argv := range run.argvs {
				if !slices.ContainsFunc(s.Commands, func(c Command) bool { return argvMatches(c, argv) }) {
					t.Errorf("bash ran %q, which the parser did not report; it reported %s", argv, reported(s, filepath.Base(argv[0])))
				}
			}
			// Every file bash opened for a redirection is one the parser
			// reported, for the same operation.
			for _, o := range run.opens {
				if !slices.ContainsFunc(s.Files, func(f FileOp) bool { return fileMatches(f, o, work) }) {
					t.Errorf("bash opened %s for %s, which the parser did not report; it reported %s", o.path, o.op, reportedFiles(s))
				}
			}
			var missed []string
			for _, n := range ran {
				if !found[n] {
					missed = append(missed, n)
				}
			}
			if len(missed) > 0 {
				var names []string
				for n := range found {
					names = append(names, n)
				}
				sort.Strings(names)
				t.Errorf("bash ran %v, which the parser did not report (it found %v)", missed, names)
			}
		})
	}
}

func requireOrSkip(t *testing.T, msg string) {
	t.Helper()
	testenv.Missing(t, "%s", msg)
}

func writeStubs(t *testing.T, dir, bash, execLog string) {
	t.Helper()
	// Each stand-in logs its name, and its whole argv (NUL-separated) in
	// a file of its own, so stand-ins running at once do not mix.
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"${0##*/}\" >>%s\nprintf '%%s\\0' \"${0##*/}\" \"$@\" >%s/$$\nexit 0\n",
		shellQuote(execLog), shellQuote(execLog+".argv"))
	for _, n := range stubNames {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Shells are real, so nested code really runs, still on the stubs.
	if err := os.Symlink(bash, filepath.Join(dir, "bash")); err != nil {
		t.Fatal(err)
	}
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		sh = bash
	}
	if err := os.Symlink(sh, filepath.Join(dir, "sh")); err != nil {
		t.Fatal(err)
	}
	for _, n := range realWrappers {
		target, err := exec.LookPath(n)
		if err != nil {
			// Without the real program its command never runs; a stub
			// keeps the script going.
			if err := os.WriteFile(filepath.Join(dir, n), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.Symlink(target, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func straceUsable(t *testing.T, dir string) (string, bool) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		return "", false
	}
	out := filepath.Join(dir, "probe.trace")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, strace, "-f", "-qq", "-e", "trace=execve", "-o", out, "true")
	if err := cmd.Run(); err != nil {
		return "", false
	}
	b, err := os.ReadFile(out)
	return strace, err == nil && strings.Contains(string(b), "execve(")
}

var execveRe = regexp.MustCompile(`execve\("([^"]*)"`)

// runTraced runs a script with bash in a fresh directory, with only the
// stand-ins on PATH, and returns the base names of the programs it ran
// (bash itself, the first execve, excluded).
func runTraced(t *testing.T, bash, strace string, tracing bool, stubs, execLog, src string) []string {
	t.Helper()
	return runIn(t, bash, strace, tracing, stubs, execLog, t.TempDir(), src).names
}

// ran is what a script did: the programs it ran (base names), the argv
// of every stand-in run, and, under strace, the files bash opened by a
// path relative to its working directory or under it.
type ran struct {
	names []string
	argvs [][]string
	opens []opened
}

type opened struct {
	path string
	op   Op
}

// runIn runs a script with bash in work, with only the stand-ins on PATH.
func runIn(t *testing.T, bash, strace string, tracing bool, stubs, execLog, work, src string) ran {
	t.Helper()
	if err := os.WriteFile(execLog, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	argvDir := execLog + ".argv"
	if err := os.RemoveAll(argvDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(argvDir, 0o755); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(work, ".trace")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var cmd *exec.Cmd
	if tracing {
		cmd = exec.CommandContext(ctx, strace, "-f", "-qq", "-s", "4096", "-e", "trace=execve,open,openat,creat", "-o", trace, bash, "-c", src)
	} else {
		cmd = exec.CommandContext(ctx, bash, "-c", src)
	}
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + stubs, "HOME=" + work, "LC_ALL=C"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	_ = cmd.Run() // scripts may fail; only what they ran matters
	if ctx.Err() != nil {
		t.Fatalf("script timed out")
	}
	if strings.Contains(stderr.String(), "command not found") {
		t.Fatalf("the script runs a program without a stand-in; add it to stubNames:\n%s", stderr.String())
	}

	var r ran
	if tracing {
		b, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		// Lines are "pid syscall(...)". Files opened by a process after
		// it executed something other than a shell are that program's,
		// not a redirection's.
		notShell := map[string]bool{}
		first := true
		for _, line := range strings.Split(string(b), "\n") {
			pid, call, _ := strings.Cut(line, " ")
			call = strings.TrimLeft(call, " ")
			if m := execveRe.FindStringSubmatch(call); m != nil && strings.HasPrefix(call, "execve(") {
				if first {
					first = false // the bash under test
					continue
				}
				prog := filepath.Base(m[1])
				r.names = append(r.names, prog)
				notShell[pid] = prog != "bash" && prog != "sh" && filepath.Base(m[1]) != filepath.Base(bash)
				continue
			}
			m := openRe.FindStringSubmatch(call)
			if m == nil || notShell[pid] {
				continue
			}
			quoted, flags := m[1], m[2]
			if quoted == "" {
				quoted, flags = m[3], "O_WRONLY|O_CREAT"
			}
			path, err := strconv.Unquote(quoted) // strace quotes as C does
			if err != nil {
				path = quoted[1 : len(quoted)-1] // an escape Go does not know: compare as printed
			}
			if strings.Contains(flags, "O_DIRECTORY") {
				continue
			}
			if strings.HasPrefix(path, "/") && !strings.HasPrefix(path, work+"/") {
				continue // the loader, locales, the stand-ins' logs
			}
			op := OpRead
			if strings.Contains(flags, "O_WRONLY") || strings.Contains(flags, "O_RDWR") || strings.Contains(flags, "O_CREAT") {
				op = OpWrite
			}
			r.opens = append(r.opens, opened{path, op})
		}
	}
	b, err := os.ReadFile(execLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			r.names = append(r.names, l)
		}
	}
	slices.Sort(r.names)
	r.names = slices.Compact(r.names)
	recs, err := os.ReadDir(argvDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range recs {
		b, err := os.ReadFile(filepath.Join(argvDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		r.argvs = append(r.argvs, strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"))
	}
	return r
}

var openRe = regexp.MustCompile(`^(?:open|openat)\((?:AT_FDCWD, )?("(?:[^"\\]|\\.)*"), ([A-Z_|]+)|^creat\(("(?:[^"\\]|\\.)*")`)

// argvMatches reports whether bash running argv is what c says: the same
// command name and, word for word, the same arguments. A word whose value
// depends on run time matches what starts with its static prefix; past a
// word that may split or expand to file names positions are unknown; a
// command that takes more arguments at run time (xargs, find -exec)
// may have more; there, and in code it runs, {} stands for any input
// (the parser asks about such code).
func argvMatches(c Command, argv []string) bool {
	if len(c.Argv) == 0 || c.Name() != filepath.Base(argv[0]) {
		return false
	}
	replaced := c.ArgsFromInput || slices.ContainsFunc(c.Via, func(v string) bool {
		return v == "xargs" || strings.HasPrefix(v, "find -exec")
	})
	words, args := c.Argv[1:], argv[1:]
	for i, w := range words {
		switch {
		case w.Split || w.Glob:
			return true
		case i >= len(args):
			return false
		case replaced && strings.Contains(w.Value, "{}"):
			re := "^" + strings.ReplaceAll(regexp.QuoteMeta(w.Value), regexp.QuoteMeta("{}"), ".*") + "$"
			if !regexp.MustCompile(re).MatchString(args[i]) {
				return false
			}
		case w.Dynamic:
			if !strings.HasPrefix(args[i], w.Value) {
				return false
			}
		case args[i] != w.Value:
			return false
		}
	}
	return len(args) == len(words) || c.ArgsFromInput
}

// fileMatches reports whether f is the redirection bash made to o.
func fileMatches(f FileOp, o opened, work string) bool {
	if f.Op != o.op {
		return false
	}
	want := filepath.Clean(o.path)
	got := f.Path.Value
	if f.Path.Dynamic || f.Path.Glob || f.Path.Split {
		return strings.HasPrefix(want, got) || strings.HasPrefix(filepath.Join(work, want), got)
	}
	return filepath.Clean(got) == want || filepath.Join(work, filepath.Clean(got)) == want
}

func reported(s *Script, name string) string {
	var out []string
	for _, c := range s.Commands {
		if c.Name() == name {
			var argv []string
			for _, w := range c.Argv {
				argv = append(argv, w.Value)
			}
			out = append(out, fmt.Sprintf("%q", argv))
		}
	}
	if len(out) == 0 {
		return "no " + name
	}
	return strings.Join(out, ", ")
}

func reportedFiles(s *Script) string {
	var out []string
	for _, f := range s.Files {
		out = append(out, fmt.Sprintf("%s %q", f.Op, f.Path.Value))
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// TestANSICMatchesBash decodes $'...' strings both ways: a command name
// spelled with escapes must come out as the name bash runs.
func TestANSICMatchesBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		requireOrSkip(t, "bash is not installed")
	}
	inputs := []string{
		`\x72m`, `\162\155`, `\u0072m`, `\U00000072m`, `a\tb\nc`, `\e[0m`, `\E`, `\a\b\f\v\r`,
		`\'\"\\\?`, `\x`, `\xg`, `\x4`, `\x414`, `\0`, `a\0b`, `\1234`, `\8`, `\q`, `\cA\ca\c[`,
		`\u00e9`, `\u20ac`, `\U0001F600`, `\x7f\x80\xff`,
	}
	for _, in := range inputs {
		// Every input is valid $'...' text as it stands.
		cmd := exec.Command(bash, "-c", `printf '%s' $'`+in+`'`)
		cmd.Env = []string{"LC_ALL=C.UTF-8"}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bash: %v", err)
		}
		if got := ansiC(in); got != string(out) {
			t.Errorf("ansiC(%q) = %q, bash gives %q", in, got, out)
		}
	}
}
