package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/config"
)

// world is a private HOME (with XDG dirs) and a project directory that is
// the working directory, so config discovery sees only what a test puts
// there.
type world struct {
	root, home, proj, cfgHome string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{root: root, home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj")}
	w.cfgHome = filepath.Join(w.home, ".config")
	for _, d := range []string{w.proj, w.cfgHome} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", w.home)
	t.Setenv("XDG_CONFIG_HOME", w.cfgHome)
	t.Setenv("XDG_STATE_HOME", filepath.Join(w.home, ".local", "state"))
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("GUARDRUN_CONFIG", "")
	t.Setenv("GUARDRUN_SESSION", "")
	t.Setenv("NO_COLOR", "1")
	t.Chdir(w.proj)
	return w
}

func (w *world) write(t *testing.T, path, content string) string {
	t.Helper()
	if !filepath.IsAbs(path) {
		path = filepath.Join(w.proj, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// guardrun runs Main with no terminal anywhere.
func guardrun(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb strings.Builder
	code = Main("guardrun", args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// check runs `guardrun check --json` and decodes its report.
func check(t *testing.T, args ...string) checkReport {
	t.Helper()
	out, errs, code := guardrun(t, append(args, "check", "--json")...)
	if code != 0 && code != 1 {
		t.Fatalf("check: exit %d\n%s%s", code, out, errs)
	}
	var rep checkReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("check --json: %v\n%s", err, out)
	}
	return rep
}

// verdict is what `guardrun explain -c script` decides.
func verdict(t *testing.T, script string, flags ...string) (decision, stderr string) {
	t.Helper()
	out, errs, code := guardrun(t, append([]string{"explain", "--json", "-c", script}, flags...)...)
	if code != 0 {
		t.Fatalf("explain %q: exit %d\n%s", script, code, errs)
	}
	var d struct{ Decision string }
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("explain --json: %v\n%s", err, out)
	}
	return d.Decision, errs
}

const strictRule = "shell:\n  rules:\n    - {pattern: \"frob *\", allowed: false}\n"

func TestMainUsage(t *testing.T) {
	newWorld(t)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // a line the output must hold
		stderr string
	}{
		{"help", []string{"--help"}, 0, "Usage:", ""},
		{"help verb", []string{"help"}, 0, "guardrun explain", ""},
		{"nothing to run", nil, 2, "", "guardrun: nothing to run"},
		{"unknown verb", []string{"frobnicate"}, 2, "", `unknown command "frobnicate" (to run a program, put -- before it: guardrun -- frobnicate)`},
		{"unknown flag", []string{"--frob"}, 2, "", "guardrun: unknown flag --frob"},
		{"bad mode", []string{"--mode", "yolo", "check"}, 2, "", `--mode wants interactive, approve-all or strict, got "yolo"`},
		{"script file", []string{"script.sh"}, 2, "", `unknown command "script.sh"`},
		{"sh -c without a script", []string{"-c"}, 2, "", "-c needs a script"},
		{"a script file after sh flags", []string{"-l", "x.sh"}, 2, "", "a script file (x.sh) cannot be checked"},
		{"no stdin scripts", []string{"-l"}, 2, "", "guardrun does not read commands from stdin"},
		{"login shell without a terminal", nil, 2, "", "a login shell without a terminal needs -c SCRIPT"},
		{"version", []string{"version"}, 0, "guardrun ", ""},
		{"version takes no arguments", []string{"version", "x"}, 2, "", "version takes no arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			argv0 := "guardrun"
			if tc.name == "login shell without a terminal" {
				argv0 = "-guardrun"
			}
			var out, errb strings.Builder
			code := Main(argv0, tc.args, strings.NewReader(""), &out, &errb)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout %s\nstderr %s", code, tc.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), tc.stdout) {
				t.Errorf("stdout does not hold %q:\n%s", tc.stdout, out.String())
			}
			if !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("stderr does not hold %q:\n%s", tc.stderr, errb.String())
			}
		})
	}
}

// Every verb takes -h/--help (printing its usage, exit 0, nothing else
// done), refuses unknown flags, and takes the common flags after the verb
// as well as before it.
func TestVerbPreamble(t *testing.T) {
	w := newWorld(t)
	for _, verb := range []string{"explain", "check", "profile", "log", "session", "supervise", "fs", "trust", "shell"} {
		t.Run(verb, func(t *testing.T) {
			for _, h := range []string{"-h", "--help"} {
				out, errs, code := guardrun(t, verb, h)
				if code != 0 || !strings.Contains(out, "Usage: guardrun "+verb) && !strings.Contains(out, "guardrun "+verb) {
					t.Errorf("%s %s: exit %d, stdout %q, stderr %q", verb, h, code, out, errs)
				}
			}
			// Help comes before the config: a broken config does not stop it.
			broken := w.write(t, filepath.Join(w.root, "broken.yaml"), "mdoe: strict\n")
			if out, errs, code := guardrun(t, "--config", broken, verb, "--help"); code != 0 || out == "" {
				t.Errorf("%s --help with a broken config: exit %d, stderr %q", verb, code, errs)
			}
			if _, errs, code := guardrun(t, verb, "--no-such-flag"); code != 2 || !strings.Contains(errs, "unknown flag --no-such-flag") {
				t.Errorf("%s --no-such-flag: exit %d, stderr %q", verb, code, errs)
			}
		})
	}
	// The common flags work on either side of the verb.
	cfg := w.write(t, filepath.Join(w.root, "c.yaml"), strictRule)
	for _, args := range [][]string{
		{"--config", cfg, "explain", "--json", "-c", "frob x"},
		{"explain", "--config", cfg, "-c", "frob x", "--json"},
		{"explain", "-c", "frob x", "--json", "--config=" + cfg},
	} {
		out, errs, code := guardrun(t, args...)
		if code != 0 || !strings.Contains(out, `"decision": "block"`) {
			t.Errorf("%q: exit %d, want the config's block\n%s%s", args, code, out, errs)
		}
	}
	if _, errs, code := guardrun(t, "explain", "-c", "ls", "--", "ls"); code != 2 || !strings.Contains(errs, "not both") {
		t.Errorf("explain with -c and --: exit %d %q", code, errs)
	}
	if _, errs, code := guardrun(t, "explain"); code != 2 || !strings.Contains(errs, "explain needs -c SCRIPT or -- CMD") {
		t.Errorf("explain with nothing: exit %d %q", code, errs)
	}
	if _, errs, code := guardrun(t, "check", "extra"); code != 2 || !strings.Contains(errs, "check takes no arguments") {
		t.Errorf("check with an argument: exit %d %q", code, errs)
	}
}

// Config discovery: --config, then $GUARDRUN_CONFIG, then the nearest
// .guardrun.yaml upwards, then the user config, then the embedded default.
func TestConfigDiscovery(t *testing.T) {
	w := newWorld(t)

	rep := check(t)
	if rep.Source != "embedded default" || !rep.Trusted {
		t.Errorf("nothing configured: %+v", rep)
	}

	user := w.write(t, filepath.Join(w.cfgHome, "guardrun", "config.yaml"), strictRule)
	if rep := check(t); !strings.HasPrefix(rep.Source, "user config") || !rep.Trusted || rep.Config != user {
		t.Errorf("with a user config: source %q config %q", rep.Source, rep.Config)
	}
	if d, _ := verdict(t, "frob x"); d != "block" {
		t.Errorf("the user config's rule: %s, want block", d)
	}

	// A project file in a parent directory is found from a subdirectory.
	proj := w.write(t, ".guardrun.yaml", "shell:\n  rules:\n    - {pattern: \"zap *\", allowed: false}\n")
	sub := filepath.Join(w.proj, "a", "b")
	os.MkdirAll(sub, 0o755)
	t.Chdir(sub)
	rep = check(t)
	if rep.Config != proj || rep.Trusted || !strings.HasPrefix(rep.Source, "project (untrusted") {
		t.Errorf("from a subdirectory of an untrusted project: %+v", rep)
	}
	// Untrusted, the project only adds its block to the user config.
	for script, want := range map[string]string{"frob x": "block", "zap x": "block"} {
		if d, _ := verdict(t, script); d != want {
			t.Errorf("%s under user config + untrusted project: %s, want %s", script, d, want)
		}
	}

	env := w.write(t, filepath.Join(w.root, "env.yaml"), "mode: strict\n")
	t.Setenv("GUARDRUN_CONFIG", env)
	if rep := check(t); rep.Source != "$GUARDRUN_CONFIG" || rep.Config != env {
		t.Errorf("with $GUARDRUN_CONFIG: source %q config %q", rep.Source, rep.Config)
	}
	flag := w.write(t, filepath.Join(w.root, "flag.yaml"), "mode: strict\n")
	if rep := check(t, "--config", flag); rep.Source != "--config" || rep.Config != flag {
		t.Errorf("with --config: source %q config %q", rep.Source, rep.Config)
	}

	// A config that does not load is an error naming the file and place,
	// never a silent fallback.
	t.Setenv("GUARDRUN_CONFIG", "")
	w.write(t, user, "mode: yolo\n")
	if _, errs, code := guardrun(t, "explain", "-c", "ls"); code != 125 || !strings.Contains(errs, user+":1:7:") {
		t.Errorf("broken user config: exit %d, stderr %q", code, errs)
	}
	if _, errs, code := guardrun(t, "--config", filepath.Join(w.root, "missing.yaml"), "check"); code != 125 || !strings.Contains(errs, "missing.yaml") {
		t.Errorf("missing --config file: exit %d, stderr %q", code, errs)
	}
}

// An untrusted project file only tightens: what it loosens is ignored
// and named; trusted (by content) it applies in full; edited, it is
// untrusted again.
func TestProjectTrust(t *testing.T) {
	w := newWorld(t)
	content := `mode: approve-all
shell:
  default: {allowed: true, approval: false}
  rules:
    - {pattern: "make deploy", allowed: false}
sandbox:
  network: true
`
	proj := w.write(t, ".guardrun.yaml", content)

	rep := check(t)
	if rep.Trusted || rep.Config != proj {
		t.Fatalf("a new project file is trusted: %+v", rep)
	}
	for _, want := range []string{"mode: approve-all", "shell.default.approval: false", "sandbox.network: true"} {
		if !strings.Contains(strings.Join(ignoredOf(rep), "\n"), want) {
			t.Errorf("ignored %q does not name %q", ignoredOf(rep), want)
		}
	}
	d, errs := verdict(t, "make deploy")
	if d != "block" {
		t.Errorf("the untrusted project's block rule: %s, want block", d)
	}
	if !strings.Contains(errs, proj+" is not trusted") || !strings.Contains(errs, "guardrun trust "+proj) {
		t.Errorf("no warning naming the file and how to trust it:\n%s", errs)
	}
	if d, _ := verdict(t, "curl https://example.com"); d != "ask" {
		t.Errorf("curl under the untrusted project: %s, want ask (its approval: false is ignored)", d)
	}

	store := config.OpenTrustStore(approval.DefaultStateDir())
	if err := store.Trust(proj, []byte(content)); err != nil {
		t.Fatal(err)
	}
	rep = check(t)
	if !rep.Trusted || rep.Source != "project (trusted)" || len(ignoredOf(rep)) != 0 {
		t.Errorf("trusted project: %+v", rep)
	}
	if d, errs := verdict(t, "curl https://example.com"); d != "allow" || errs != "" {
		t.Errorf("curl under the trusted project: %s, want allow; stderr %q", d, errs)
	}
	if d, _ := verdict(t, "make deploy"); d != "block" {
		t.Errorf("the trusted project's block rule: %s, want block", d)
	}

	// One byte changed: untrusted again.
	w.write(t, proj, content+"# edited\n")
	if rep := check(t); rep.Trusted {
		t.Errorf("an edited project file is still trusted: %+v", rep)
	}
	if d, _ := verdict(t, "curl https://example.com"); d != "ask" {
		t.Errorf("curl under the edited project: %s, want ask", d)
	}

	// Trust is per path: the same content elsewhere is not trusted.
	other := filepath.Join(w.root, "other")
	w.write(t, filepath.Join(other, ".guardrun.yaml"), content)
	t.Chdir(other)
	if rep := check(t); rep.Trusted {
		t.Errorf("a copy of a trusted file at another path is trusted: %+v", rep)
	}
}

// --mode and its short forms override the config's mode.
func TestModeFlags(t *testing.T) {
	w := newWorld(t)
	cfg := w.write(t, filepath.Join(w.root, "c.yaml"), "mode: approve-all\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", cfg, "check"}, "mode: approve-all"},
		{[]string{"--config", cfg, "--strict", "check"}, "mode: strict"},
		{[]string{"--config", cfg, "check", "--interactive"}, "mode: interactive"},
		{[]string{"--config", cfg, "--mode=strict", "check"}, "mode: strict"},
	} {
		out, errs, code := guardrun(t, tc.args...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%q: exit %d, want %q in\n%s%s", tc.args, code, tc.want, out, errs)
		}
	}
}

// ignoredOf is what check reports as ignored, over every file of the
// config in force.
func ignoredOf(rep checkReport) []string {
	var out []string
	for _, f := range rep.Files {
		out = append(out, f.Ignored...)
	}
	return out
}

// TestDefaultConfigAtRoot: with no config, the workspace zone is the
// working directory; run from / (where an agent can cd) that zone is
// invalid, and guardrun says so and refuses (125) instead of crashing.
func TestDefaultConfigAtRoot(t *testing.T) {
	newWorld(t)
	t.Chdir("/")
	for _, args := range [][]string{{"-c", "true"}, {"explain", "-c", "true"}} {
		_, stderr, code := guardrun(t, args...)
		if code != 125 || !strings.Contains(stderr, "working directory /") || !strings.Contains(stderr, "whole machine writable") {
			t.Errorf("%q from /: exit %d, stderr %q; want 125 naming the working directory", args, code, stderr)
		}
	}
}
