package cli

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/rules"
)

func TestParseGlobal(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want global
		rest []string
		err  string
	}{
		{"nothing", nil, global{}, nil, ""},
		{"verb first", []string{"explain", "--strict"}, global{}, []string{"explain", "--strict"}, ""},
		{"config with a space", []string{"--config", "c.yaml", "check"}, global{Options: request.Options{Config: "c.yaml"}}, []string{"check"}, ""},
		{"config with =", []string{"--config=c.yaml", "check"}, global{Options: request.Options{Config: "c.yaml"}}, []string{"check"}, ""},
		{"mode", []string{"--mode", "strict", "--", "ls"}, global{Options: request.Options{Mode: rules.ModeStrict}}, []string{"--", "ls"}, ""},
		{"mode with =", []string{"--mode=approve-all", "-c", "ls"}, global{Options: request.Options{Mode: rules.ModeApproveAll}}, []string{"-c", "ls"}, ""},
		{"the last mode wins", []string{"--approve-all", "--strict", "--interactive"}, global{Options: request.Options{Mode: rules.ModeInteractive}}, nil, ""},
		{"session", []string{"--session", "s1", "log"}, global{Options: request.Options{Session: "s1"}}, []string{"log"}, ""},
		{"a value that looks like a flag", []string{"--config", "--strict"}, global{Options: request.Options{Config: "--strict"}}, nil, ""},
		{"stops at --", []string{"--strict", "--", "--approve-all"}, global{Options: request.Options{Mode: rules.ModeStrict}}, []string{"--", "--approve-all"}, ""},
		{"boolean flag with a value is not a common flag", []string{"--strict=yes"}, global{}, []string{"--strict=yes"}, ""},
		{"config without a value", []string{"--config"}, global{}, nil, "--config needs a value"},
		{"empty config", []string{"--config="}, global{}, nil, "--config needs a file"},
		{"bad mode", []string{"--mode", "yolo"}, global{}, nil, `--mode wants interactive, approve-all or strict, got "yolo"`},
		{"mode without a value", []string{"--mode"}, global{}, nil, "--mode needs a value"},
		{"empty session", []string{"--session", ""}, global{}, nil, "--session needs an id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, rest, err := parseGlobal(tc.args)
			if tc.err != "" {
				var ue *usageError
				if !errors.As(err, &ue) || err.Error() != tc.err {
					t.Fatalf("err = %v, want the usage error %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *g != tc.want {
				t.Errorf("flags %+v, want %+v", *g, tc.want)
			}
			if d := cmp.Diff(rest, tc.rest, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("rest (-got +want):\n%s", d)
			}
		})
	}
}

func TestParseVerb(t *testing.T) {
	withValue, boolean := []string{"-c", "-n"}, []string{"--list"}
	for _, tc := range []struct {
		name   string
		args   []string
		g      global
		values map[string]string
		bools  map[string]bool
		pos    []string
		rest   []string
		dashes bool
		err    string
	}{
		{name: "empty"},
		{name: "common flags after the verb", args: []string{"--strict", "--session=s", "--json"},
			g: global{Options: request.Options{Mode: rules.ModeStrict, Session: "s"}, json: true}},
		{name: "values both ways", args: []string{"-c", "ls -l", "-n=5"}, values: map[string]string{"-c": "ls -l", "-n": "5"}},
		{name: "a value may start with a dash", args: []string{"-c", "--strict"}, values: map[string]string{"-c": "--strict"}},
		{name: "booleans and words", args: []string{"a", "--list", "-", "b"}, bools: map[string]bool{"--list": true}, pos: []string{"a", "-", "b"}},
		{name: "help", args: []string{"-h"}, bools: map[string]bool{"help": true}},
		{name: "long help", args: []string{"x", "--help"}, bools: map[string]bool{"help": true}, pos: []string{"x"}},
		{name: "-- ends flags", args: []string{"--approve-all", "--", "rm", "--strict", "-c"},
			g: global{Options: request.Options{Mode: rules.ModeApproveAll}}, rest: []string{"rm", "--strict", "-c"}, dashes: true},
		{name: "-- with nothing after", args: []string{"--"}, dashes: true},
		{name: "unknown flag", args: []string{"--frob"}, err: "unknown flag --frob"},
		{name: "unknown short flag", args: []string{"-x"}, err: "unknown flag -x"},
		{name: "missing value", args: []string{"-c"}, err: "-c needs a value"},
		{name: "bad common flag after the verb", args: []string{"--mode", "x"}, err: `--mode wants interactive, approve-all or strict, got "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &global{}
			vf, err := parseVerb(g, tc.args, withValue, boolean)
			if tc.err != "" {
				var ue *usageError
				if !errors.As(err, &ue) || err.Error() != tc.err {
					t.Fatalf("err = %v, want the usage error %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *g != tc.g {
				t.Errorf("common flags %+v, want %+v", *g, tc.g)
			}
			eq := cmpopts.EquateEmpty()
			if d := cmp.Diff(vf.values, tc.values, eq); d != "" {
				t.Errorf("values (-got +want):\n%s", d)
			}
			if d := cmp.Diff(vf.bools, tc.bools, eq); d != "" {
				t.Errorf("booleans (-got +want):\n%s", d)
			}
			if d := cmp.Diff(vf.args, tc.pos, eq); d != "" {
				t.Errorf("words (-got +want):\n%s", d)
			}
			if d := cmp.Diff(vf.rest, tc.rest, eq); d != "" {
				t.Errorf("after -- (-got +want):\n%s", d)
			}
			if vf.dashes != tc.dashes {
				t.Errorf("dashes %v, want %v", vf.dashes, tc.dashes)
			}
		})
	}
}

func TestIsShFlags(t *testing.T) {
	for arg, want := range map[string]bool{
		"-c": true, "-lc": true, "-ec": true, "-l": true, "-i": true, "+e": true, "-xe": true,
		"--login": true, "--norc": true, "--noprofile": true, "-o": true, "+o": true, "-O": true, "+O": true,
		"-login": true, "--rcfile": true, "--posix": true, "-s": true, "+c": true, "-h": true,
		"-": false, "--": false, "-cz": false, "--strict": false, "c": false, "": false, "--rcfile=x": false, "--c": false,
	} {
		if got := isShFlags(arg); got != want {
			t.Errorf("isShFlags(%q) = %v, want %v", arg, got, want)
		}
	}
}

// The exit status and message a person sees for each kind of error.
func TestReport(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"ok", nil, 0, ""},
		{"the command's own status", &exitStatus{Code: 3}, 3, ""},
		{"wrapped status", errors.Join(errors.New("x"), &exitStatus{Code: 130}), 130, ""},
		{"refused", &refusal{Line: "guardrun: blocked: rm -rf /"}, 77, "guardrun: blocked: rm -rf /\n"},
		{"usage", usagef("unknown flag --x"), 2, "guardrun: unknown flag --x\nRun 'guardrun --help' for usage.\n"},
		{"help shown", errHelpShown, 0, ""},
		{"internal", errors.New("config: boom"), 125, "guardrun: config: boom\n"},
		{"internal, already prefixed", errors.New("guardrun: boom"), 125, "guardrun: boom\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if code := report(tc.err, &b); code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if b.String() != tc.stderr {
				t.Errorf("stderr %q, want %q", b.String(), tc.stderr)
			}
		})
	}
}

// TestBackendFromEnv: $GUARDRUN_BACKEND (what `guardrun supervise
// --backend` gives the agent) chooses the backend unless --backend was
// given, with the same validation, its value shortened in the message.
func TestBackendFromEnv(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "GUARDRUN_BACKEND" {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name, flag, env string
		want            rules.Backend
		err             string
	}{
		{name: "unset", want: ""},
		{name: "from the environment", env: "landlock", want: rules.BackendLandlock},
		{name: "the flag wins", flag: "bwrap", env: "landlock", want: rules.BackendBwrap},
		{name: "bad value", env: "chroot", err: `$GUARDRUN_BACKEND wants auto, bwrap or landlock, got "chroot"`},
		{name: "long bad value", env: strings.Repeat("x", 5000), err: `$GUARDRUN_BACKEND wants auto, bwrap or landlock, got "` + strings.Repeat("x", 40) + `…"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &global{}
			g.Backend = rules.Backend(tc.flag)
			err := g.backendFromEnv(env(tc.env))
			if tc.err != "" {
				var ue *usageError
				if !errors.As(err, &ue) || err.Error() != tc.err {
					t.Fatalf("err = %v, want the usage error %q", err, tc.err)
				}
				return
			}
			if err != nil || g.Backend != tc.want {
				t.Errorf("backend %q, err %v; want %q", g.Backend, err, tc.want)
			}
		})
	}
}

// TestParseRun: the run forms guardrun serve takes, parsed as Main
// parses them; everything else is left to the client.
func TestParseRun(t *testing.T) {
	env := func(k string) string {
		if k == "GUARDRUN_BACKEND" {
			return "landlock"
		}
		return ""
	}
	for _, tc := range []struct {
		args []string
		ok   bool
		opts request.Options
		job  request.Job
	}{
		{args: []string{"-c", "echo hi"}, ok: true, job: request.Job{Script: "echo hi", PosArgs: []string{}}},
		{args: []string{"--strict", "-ec", "x", "a0", "a1"}, ok: true, opts: request.Options{Mode: rules.ModeStrict},
			job: request.Job{Script: "x", ShellOpts: []string{"-o", "errexit"}, PosArgs: []string{"a0", "a1"}}},
		{args: []string{"--config", "c.yaml", "--", "ls", "-l"}, ok: true, opts: request.Options{Config: "c.yaml"}, job: request.Job{Argv: []string{"ls", "-l"}}},
		{args: []string{"--backend", "bwrap", "-c", "true"}, ok: true, opts: request.Options{Backend: rules.BackendBwrap}, job: request.Job{Script: "true", PosArgs: []string{}}},
		{args: []string{"-lc", "true"}, ok: true, job: request.Job{Script: "true", PosArgs: []string{}}},
		{args: []string{"--"}},
		{args: []string{"-c"}},
		{args: []string{"-l"}},
		{args: []string{"explain", "-c", "true"}},
		{args: []string{"--approve-all", "log"}},
		{args: []string{"--mode", "bogus", "-c", "true"}},
		{args: []string{"-c", "true", "--", "x"}, ok: true, job: request.Job{Script: "true", PosArgs: []string{"--", "x"}}},
		{args: []string{"-c", "-l", "true"}, ok: true, job: request.Job{Script: "true", PosArgs: []string{}}},
		{args: []string{"script.sh"}},
		{args: []string{"--help"}},
	} {
		opts, j, ok := ParseRun(tc.args, env)
		if ok != tc.ok {
			t.Errorf("%q: ok %v, want %v", tc.args, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if tc.opts.Backend == "" {
			tc.opts.Backend = "landlock" // from the environment
		}
		if opts != tc.opts {
			t.Errorf("%q: options %+v, want %+v", tc.args, opts, tc.opts)
		}
		if !reflect.DeepEqual(*j, tc.job) {
			t.Errorf("%q: job %+v, want %+v", tc.args, *j, tc.job)
		}
	}
}
