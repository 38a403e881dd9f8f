package cli

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// probe stands for the script in shFrontRows: a harmless script that
// prints what bash made of its arguments.
const probe = "\x00probe"

// probeScript prints $0, the positional parameters, the flags in $-
// (without i, l, s, m and H, which only say what kind of shell reads
// the script: guardrun runs a plain -c), and the options the rows set.
const probeScript = `printf '[%s]' "$0" "$@"; echo; f=$-; f=${f//[ilsmH]/}; echo "$f"; shopt -p extglob nullglob globstar xpg_echo; set -o | grep -E '^(errexit|nounset|xtrace|noglob|pipefail|verbose|allexport|noclobber|errtrace|privileged) '`

// shFrontRows are argument lists as programs send them to $SHELL, each
// read by guardrun as bash reads it: what runs (the script, the options
// passed on, $0 and the rest), or the refusal.
var shFrontRows = []struct {
	name string
	args []string
	opts []string
	pos  []string
	// err, when set, is the usage error guardrun gives instead.
	err string
}{
	{name: "-c", args: []string{"-c", probe}},
	{name: "-c with $0 and arguments", args: []string{"-c", probe, "zero", "one", "two"}, pos: []string{"zero", "one", "two"}},
	{name: "-lc, a login shell's -c", args: []string{"-lc", probe}},
	{name: "-c before -l (Claude Code's order)", args: []string{"-c", "-l", probe}},
	{name: "-c before -l with $0", args: []string{"-c", "-l", probe, "zero"}, pos: []string{"zero"}},
	{name: "-l before -c", args: []string{"-l", "-c", probe}},
	{name: "--login before -c", args: []string{"--login", "-c", probe}},
	{name: "-login, a long option after one dash", args: []string{"-login", "-c", probe}},
	{name: "--norc --noprofile -lc", args: []string{"--norc", "--noprofile", "-lc", probe}},
	{name: "--rcfile FILE before -c", args: []string{"--rcfile", "/dev/null", "-c", probe}},
	{name: "--init-file FILE before -c", args: []string{"--init-file", "/dev/null", "-c", probe}},
	{name: "-i -c", args: []string{"-i", "-c", probe}},
	{name: "-ic", args: []string{"-ic", probe}},
	{name: "-c -i", args: []string{"-c", "-i", probe}},
	{name: "-ec", args: []string{"-ec", probe}, opts: []string{"-o", "errexit"}},
	{name: "-ce", args: []string{"-ce", probe}, opts: []string{"-o", "errexit"}},
	{name: "-c -e", args: []string{"-c", "-e", probe}, opts: []string{"-o", "errexit"}},
	{name: "-xc with $0", args: []string{"-xc", probe, "name"}, opts: []string{"-o", "xtrace"}, pos: []string{"name"}},
	{name: "-e then +e", args: []string{"-e", "+e", "-c", probe}},
	{name: "-k then +k: the last state counts", args: []string{"-k", "+k", "-c", probe}},
	{name: "+c is -c", args: []string{"+c", probe}},
	{name: "-c --: end of options", args: []string{"-c", "--", probe}},
	{name: "-c -: end of options", args: []string{"-c", "-", probe}},
	{name: "-c -s (the script still)", args: []string{"-c", "-s", probe, "zero"}, pos: []string{"zero"}},
	{name: "-o NAME after -c", args: []string{"-c", "-o", "errexit", probe}, opts: []string{"-o", "errexit"}},
	{name: "-co NAME: the name is the next word", args: []string{"-co", "nounset", probe}, opts: []string{"-o", "nounset"}},
	{name: "-oc NAME: the name is the next word", args: []string{"-oc", "pipefail", probe}, opts: []string{"-o", "pipefail"}},
	{name: "-oo NAME NAME: names in order", args: []string{"-oo", "errexit", "nounset", "-c", probe}, opts: []string{"-o", "errexit", "-o", "nounset"}},
	{name: "+o NAME", args: []string{"-e", "+o", "errexit", "-c", probe}},
	{name: "+o of an option on by default", args: []string{"+o", "hashall", "-c", probe}, opts: []string{"+o", "hashall"}},
	{name: "-O extglob", args: []string{"-O", "extglob", "-c", probe}, opts: []string{"-O", "extglob"}},
	{name: "-c -O globstar", args: []string{"-c", "-O", "globstar", probe}, opts: []string{"-O", "globstar"}},
	{name: "+O extglob: already off", args: []string{"+O", "extglob", "-c", probe}},
	{name: "-o braceexpand: already on", args: []string{"-o", "braceexpand", "-c", probe}},
	{name: "several letters", args: []string{"-c", "-a", "-f", "-u", "-C", "-E", probe}, opts: []string{"-o", "allexport", "-o", "noglob", "-o", "nounset", "-o", "noclobber", "-o", "errtrace"}},
	{name: "--verbose", args: []string{"--verbose", "-c", probe}, opts: []string{"-o", "verbose"}},
	{name: "--noediting", args: []string{"--noediting", "-c", probe}},
	{name: "-c twice: the second is $0", args: []string{"-c", probe, "-c", "x"}, pos: []string{"-c", "x"}},
	{name: "-- after the script is $0", args: []string{"-c", probe, "--", "x"}, pos: []string{"--", "x"}},
	{name: "an option after the script is $0", args: []string{"-c", probe, "-e", "x"}, pos: []string{"-e", "x"}},
	{name: "an empty $0", args: []string{"-c", probe, ""}, pos: []string{""}},

	{name: "-c without a script", args: []string{"-c"}, err: "-c needs a script"},
	{name: "-c -l without a script", args: []string{"-c", "-l"}, err: "-c needs a script"},
	{name: "a long option after a cluster", args: []string{"-c", "--login", probe}, err: "--: invalid option"},
	{name: "--rcfile=FILE", args: []string{"--rcfile=/dev/null", "-c", probe}, err: "--rcfile=/dev/null: invalid option"},
	{name: "--rcfile without its file", args: []string{"--rcfile"}, err: "--rcfile needs a file"},
	{name: "an unknown letter", args: []string{"-c", "-z", probe}, err: "-z: invalid option"},
	{name: "-o without a name", args: []string{"-c", "-o"}, err: "-o needs an option name"},
	{name: "-o takes -c as its name", args: []string{"-o", "-c", probe}, err: "-o -c: invalid option name"},
	{name: "an unknown option name", args: []string{"-o", "bogus", "-c", probe}, err: "-o bogus: invalid option name"},
	{name: "an unknown shopt name", args: []string{"-O", "bogus", "-c", probe}, err: "-O bogus: invalid shell option name"},
	{name: "-k", args: []string{"-kc", probe}, err: "-k (keyword) is not supported: it makes every NAME=value word an assignment"},
	{name: "-o keyword", args: []string{"-o", "keyword", "-c", probe}, err: "-o keyword is not supported"},
	{name: "--posix", args: []string{"--posix", "-c", probe}, err: "--posix is not supported: it changes how the script is read"},
	{name: "-o posix", args: []string{"-c", "-o", "posix", probe}, err: "-o posix is not supported"},
	{name: "+B: no brace expansion", args: []string{"+B", "-c", probe}, err: "+B (braceexpand) is not supported: it turns brace expansion off"},
	{name: "+o interactive-comments", args: []string{"+o", "interactive-comments", "-c", probe}, err: "+o interactive-comments is not supported"},
	{name: "-P: physical cd", args: []string{"-Pc", probe}, err: "-P (physical) is not supported"},
	{name: "-T: functrace", args: []string{"-c", "-T", probe}, err: "-T (functrace) is not supported"},
	{name: "-H: history expansion", args: []string{"-H", "-c", probe}, err: "-H (histexpand) is not supported"},
	{name: "-O expand_aliases", args: []string{"-O", "expand_aliases", "-c", probe}, err: "-O expand_aliases is not supported: aliases would change"},
	{name: "-O lastpipe", args: []string{"-c", "-O", "lastpipe", probe}, err: "-O lastpipe is not supported"},
	{name: "-O cdable_vars", args: []string{"-O", "cdable_vars", "-c", probe}, err: "-O cdable_vars is not supported"},
	{name: "-O compat42", args: []string{"-O", "compat42", "-c", probe}, err: "-O compat42 is not supported"},
	{name: "+O extquote", args: []string{"+O", "extquote", "-c", probe}, err: "+O extquote is not supported"},
	{name: "-O extdebug", args: []string{"-O", "extdebug", "-c", probe}, err: "-O extdebug is not supported"},
	{name: "--debugger", args: []string{"--debugger", "-c", probe}, err: "--debugger is not supported"},
	{name: "-r", args: []string{"-r", "-c", probe}, err: "-r is not supported"},
	{name: "--restricted", args: []string{"--restricted", "-c", probe}, err: "--restricted is not supported"},
	{name: "-D", args: []string{"-D", "-c", probe}, err: "-D is not supported"},
	{name: "--version", args: []string{"--version", "-c", probe}, err: "run guardrun version"},
	{name: "a script file", args: []string{"-l", "x.sh"}, err: "a script file (x.sh) cannot be checked"},
	{name: "-- then a script file", args: []string{"--", "-c", probe}, err: "a script file (-c) cannot be checked"},
	{name: "-s with arguments", args: []string{"-s", "a"}, err: "guardrun does not read commands from stdin"},
}

func subst(args []string, script string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == probe {
			a = script
		}
		out[i] = a
	}
	return out
}

func TestShFrontReadsArgumentsAsBash(t *testing.T) {
	for _, tc := range shFrontRows {
		t.Run(tc.name, func(t *testing.T) {
			j, err := parseShFront(tc.args, func(string) string { return "" })
			if tc.err != "" {
				var ue *usageError
				if !isUsage(err, &ue) || !strings.Contains(ue.msg, tc.err) {
					t.Fatalf("got job %+v, error %v; want the usage error %q", j, err, tc.err)
				}
				return
			}
			if err != nil || j == nil {
				t.Fatalf("error %v (job %v)", err, j)
			}
			eq := cmpopts.EquateEmpty()
			if j.Script != probe {
				t.Errorf("script %q, want the probe", j.Script)
			}
			if d := cmp.Diff(j.ShellOpts, tc.opts, eq); d != "" {
				t.Errorf("options passed on (-got +want):\n%s", d)
			}
			if d := cmp.Diff(j.PosArgs, tc.pos, eq); d != "" {
				t.Errorf("$0 and arguments (-got +want):\n%s", d)
			}
		})
	}
}

func isUsage(err error, ue **usageError) bool {
	u, ok := err.(*usageError)
	*ue = u
	return ok
}

// TestShFrontMatchesBash runs each accepted row's arguments with real
// bash and compares what the probe script prints with what it prints
// run as guardrun runs it (bash OPTS -c SCRIPT $0 ARGS).
func TestShFrontMatchesBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LC_ALL=C"}
	runBash := func(args []string) (string, int) {
		cmd := exec.Command(bash, args...)
		cmd.Env, cmd.Dir, cmd.Stdin = env, home, nil
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Run()
		return out.String(), cmd.ProcessState.ExitCode()
	}
	for _, tc := range shFrontRows {
		if tc.err != "" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			j, err := parseShFront(tc.args, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			want, wantCode := runBash(subst(tc.args, probeScript))
			ours := append(append(append([]string{}, j.ShellOpts...), "-c", probeScript), j.PosArgs...)
			got, code := runBash(ours)
			if got != want || code != wantCode {
				t.Errorf("bash %q printed (exit %d):\n%s\nguardrun's run, bash %q, printed (exit %d):\n%s", subst(tc.args, "SCRIPT"), wantCode, want, subst(ours, "SCRIPT"), code, got)
			}
		})
	}
}

// TestShFrontInvalidAsInBash: every argument list guardrun calls
// invalid (not one it refuses on purpose) is a usage error in bash too.
func TestShFrontInvalidAsInBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, tc := range shFrontRows {
		if !strings.Contains(tc.err, "invalid") && !strings.Contains(tc.err, "needs") {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bash, subst(tc.args, "true")...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Errorf("bash %q: exit %d, want 2 (a usage error, as guardrun's)", tc.args, code)
			}
		})
	}
}

// TestShOptionTablesMatchBash: the state each option table gives a new
// `bash -c` is real bash's, and every option bash has is in a table.
func TestShOptionTablesMatchBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	out, err := exec.Command(bash, "-c", "shopt -p; set +o").Output()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("unexpected line %q", line)
		}
		on := f[1] == "-s" || f[1] == "-o"
		table, kind := shopts, "shopt"
		if f[0] == "set" {
			table, kind = setOptions, "set -o"
		}
		seen[kind+" "+f[2]] = true
		o, ok := table[f[2]]
		switch {
		case !ok:
			t.Errorf("%s %s: not in guardrun's table", kind, f[2])
		case !o.ignore && o.on != on:
			t.Errorf("%s %s: on %v in guardrun's table, %v in bash", kind, f[2], o.on, on)
		}
	}
	for name := range shopts {
		if !seen["shopt "+name] {
			t.Errorf("shopt %s: in guardrun's table, not in this bash", name)
		}
	}
	for name := range setOptions {
		if !seen["set -o "+name] {
			t.Errorf("set -o %s: in guardrun's table, not in this bash", name)
		}
	}
}

// TestExplainTakesShForms: explain reads the script as a run does, in
// any order bash takes, and judges the script, not an option word.
func TestExplainTakesShForms(t *testing.T) {
	w := newWorld(t)
	cfg := w.write(t, w.root+"/c.yaml", "shell:\n  rules:\n    - {pattern: touch, allowed: false}\n    - {pattern: echo, approval: false}\n")
	for _, tc := range []struct {
		args     []string
		decision string
	}{
		{[]string{"-c", "-l", "touch x"}, "block"},
		{[]string{"-lc", "touch x"}, "block"},
		{[]string{"-l", "-c", "touch x"}, "block"},
		{[]string{"--login", "-c", "touch x", "zero"}, "block"},
		{[]string{"-c", "-l", "echo x"}, "allow"},
		{[]string{"-c", "-l", "echo x", "zero", "one"}, "allow"},
		{[]string{"-O", "extglob", "-c", "echo x"}, "allow"},
	} {
		args := append([]string{"--config", cfg, "explain", "--json"}, tc.args...)
		out, errs, code := guardrun(t, args...)
		if code != 0 || !strings.Contains(out, `"decision": "`+tc.decision+`"`) {
			t.Errorf("%q: exit %d, want decision %s\n%s%s", args, code, tc.decision, out, errs)
		}
	}
	if _, errs, code := guardrun(t, "--config", cfg, "explain", "-kc", "echo x"); code != 2 || !strings.Contains(errs, "-k (keyword) is not supported") {
		t.Errorf("explain -kc: exit %d, stderr %q", code, errs)
	}
}
