package rules

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var testEnv = Env{Cwd: "/work/proj", Home: "/home/u", StateDir: "/home/u/.local/state/guardrun"}

func TestBadConfigMessages(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"unknown top-level key", "mdoe: strict\n",
			`cfg.yaml:1:1: mdoe: unknown key (known: audit, checkpoints, mode, sandbox, session, shell)`},
		{"unknown nested key", "shell:\n  rules:\n    - pattern: ls\n      aproval: false\n",
			`cfg.yaml:4:7: shell.rules[0].aproval: unknown key (known: allowed, approval, checkpoint, code_in, description, network, pattern, sandbox_paths)`},
		{"wrong type for a boolean", "sandbox:\n  network: yes please\n",
			`cfg.yaml:2:12: sandbox.network: want true, false or proxy, got the string "yes please"`},
		{"wrong type for a list", "sandbox:\n  deny: ~/.ssh\n",
			`cfg.yaml:2:9: sandbox.deny: want a list, got the string "~/.ssh"`},
		{"bad mode value", "mode: yolo\n",
			`cfg.yaml:1:7: mode: want one of interactive, approve-all, strict, got "yolo"`},
		{"bad fallback value", "sandbox:\n  os_sandbox_fallback: ignore\n",
			`cfg.yaml:2:24: sandbox.os_sandbox_fallback: want one of fail_fast, refuse_tools, got "ignore"`},
		{"bad backend", "sandbox:\n  backend: docker\n",
			`cfg.yaml:2:12: sandbox.backend: want one of auto, bwrap, landlock, got "docker"`},
		{"bad landlock loss", "sandbox:\n  landlock_accept: [deny_create, signals]\n",
			`cfg.yaml:2:34: sandbox.landlock_accept[1]: want one of deny_create, truncate, scope, tcp_ports, unix_sockets, got "signals"`},
		{"landlock losses not a list", "sandbox:\n  landlock_accept: deny_create\n",
			`cfg.yaml:2:20: sandbox.landlock_accept: want a list, got the string "deny_create"`},
		{"bad zone mode", "sandbox:\n  paths:\n    w:\n      root: .\n      mode: rwx\n",
			`cfg.yaml:5:13: sandbox.paths.w.mode: want one of ro, rw, got "rwx"`},
		{"duplicate zone name", "sandbox:\n  paths:\n    w: {root: ., mode: rw}\n    w: {root: ./b, mode: ro}\n",
			`cfg.yaml:4:5: sandbox.paths.w: zone "w" defined twice`},
		{"duplicate key", "mode: strict\nmode: interactive\n",
			`cfg.yaml:2:1: mode: key given twice`},
		{"empty pattern", "shell:\n  rules:\n    - pattern: \"  \"\n",
			`cfg.yaml:3:16: shell.rules[0].pattern: empty pattern`},
		{"rule without pattern", "shell:\n  rules:\n    - approval: false\n",
			`cfg.yaml:3:7: shell.rules[0]: rule has no pattern`},
		{"sandbox_paths naming no zone", "shell:\n  rules:\n    - pattern: pytest\n      sandbox_paths: [output]\n",
			`cfg.yaml:3:7: shell.rules[0].sandbox_paths[0]: no zone named "output" in sandbox.paths`},
		{"zone without root", "sandbox:\n  paths:\n    w: {mode: rw}\n",
			`cfg.yaml:3:5: sandbox.paths.w: zone has no root`},
		{"write approval on a read-only zone", "sandbox:\n  paths:\n    w: {root: ., mode: ro, write_approval: true}\n",
			`cfg.yaml:3:44: sandbox.paths.w.write_approval: has no effect on a read-only zone (mode: ro)`},
		{"bad suffix", "sandbox:\n  paths:\n    w: {root: ., mode: rw, suffixes: [txt]}\n",
			`cfg.yaml:3:39: sandbox.paths.w.suffixes[0]: want a file suffix such as .txt, got "txt"`},
		{"rw zone at root", "sandbox:\n  paths:\n    all: {root: /, mode: rw}\n",
			`cfg.yaml:3:17: sandbox.paths.all.root: a read-write zone at / would make the whole machine writable`},
		{"protect name with ..", "sandbox:\n  protect: [.git/../x]\n",
			`cfg.yaml:2:13: sandbox.protect[0]: want a relative name such as .git/hooks (matched at any depth inside rw zones) or an absolute path, got ".git/../x"`},
		{"protect name with an empty component", "sandbox:\n  protect: [\".git//hooks\"]\n",
			`cfg.yaml:2:13: sandbox.protect[0]: want a relative name such as .git/hooks (matched at any depth inside rw zones) or an absolute path, got ".git//hooks"`},
		{"protect /", "sandbox:\n  protect: [/]\n",
			`cfg.yaml:2:13: sandbox.protect[0]: protecting / would leave nothing writable; list the paths to protect`},
		{"protect not a list", "sandbox:\n  protect: .git\n",
			`cfg.yaml:2:12: sandbox.protect: want a list, got the string ".git"`},
		{"unix socket with a variable", "sandbox:\n  unix_sockets: [$XDG_RUNTIME_DIR/s]\n",
			`cfg.yaml:2:18: sandbox.unix_sockets[0]: "$XDG_RUNTIME_DIR/s": only $HOME and $PWD at the start of a path are expanded`},
		{"bad ttl", "session:\n  ttl: forever\n",
			`cfg.yaml:2:8: session.ttl: want a positive duration such as 8h or 30m, got "forever"`},
		{"contradictory rule", "shell:\n  rules:\n    - {pattern: rm, allowed: false, approval: false}\n",
			`cfg.yaml:3:47: shell.rules[0].approval: approval: false has no effect when allowed is false (the command is blocked); remove one of them`},
		{"pattern with a substitution", "shell:\n  rules:\n    - pattern: \"git $(x)\"\n",
			`cfg.yaml:3:16: shell.rules[0].pattern: `},
		{"unknown variable in a root", "sandbox:\n  paths:\n    w: {root: $TMP/x, mode: rw}\n",
			`cfg.yaml:3:15: sandbox.paths.w.root: "$TMP/x": only $HOME and $PWD at the start of a path are expanded`},
		{"yaml syntax error", "shell:\n  rules: [\n",
			`cfg.yaml:2:1: did not find expected node content`},
		{"top level is a list", "- a\n- b\n",
			`cfg.yaml:1:1: want a mapping, got a list`},
		{"system_read bad value", "sandbox:\n  system_read: all\n",
			`cfg.yaml:2:16: sandbox.system_read: want one of default, none, got "all"`},
		{"two documents", "mode: strict\n---\nmode: interactive\n",
			`cfg.yaml:2:1: a config file holds one YAML document; found another`},
		{"bad checkpoint value", "shell:\n  rules:\n    - {pattern: make, approval: false, checkpoint: always}\n",
			`cfg.yaml:3:52: shell.rules[0].checkpoint: want one of required, best_effort, none, got "always"`},
		{"checkpoint required on a rule that asks", "shell:\n  rules:\n    - {pattern: make, checkpoint: required}\n",
			`cfg.yaml:3:35: shell.rules[0].checkpoint: checkpoint: required says the pre-approval relies on undo, but approval: true asks a person; set approval: false, or remove checkpoint`},
		{"checkpoint on a blocked rule", "shell:\n  rules:\n    - {pattern: rm, allowed: false, checkpoint: none}\n",
			`cfg.yaml:3:49: shell.rules[0].checkpoint: checkpoint: none has no effect when allowed is false (the command is blocked); remove one of them`},
		{"unknown checkpoints key", "checkpoints:\n  max_file: 10\n",
			`cfg.yaml:2:3: checkpoints.max_file: unknown key (known: enabled, keep, max_bytes, max_file_bytes, max_files, max_store_bytes)`},
		{"size without a number", "checkpoints:\n  max_bytes: lots\n",
			`cfg.yaml:2:14: checkpoints.max_bytes: want a size such as 100MiB, 2GiB or a number of bytes, got the string "lots"`},
		{"negative size", "checkpoints:\n  max_store_bytes: -5\n",
			`cfg.yaml:2:20: checkpoints.max_store_bytes: want a size such as 100MiB, 2GiB or a number of bytes, got a number`},
		{"zero files", "checkpoints:\n  max_files: 0\n",
			`cfg.yaml:2:14: checkpoints.max_files: want a positive whole number up to 1000000000, got 0`},
		{"keep as a string", "checkpoints:\n  keep: many\n",
			`cfg.yaml:2:9: checkpoints.keep: want a positive whole number, got the string "many"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("cfg.yaml", []byte(tt.yaml), "/work/proj", testEnv)
			if err == nil {
				t.Fatalf("config loaded; want error %q", tt.want)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *ConfigError: %v", err, err)
			}
			got := strings.SplitN(err.Error(), "\n", 2)[0]
			if strings.HasSuffix(tt.want, ": ") {
				if !strings.HasPrefix(got, tt.want) {
					t.Errorf("error = %q, want prefix %q", got, tt.want)
				}
				return
			}
			if got != tt.want {
				t.Errorf("error mismatch (-got +want):\n%s", cmp.Diff(got, tt.want))
			}
		})
	}
}

func TestAllErrorsReported(t *testing.T) {
	_, err := Parse("c.yaml", []byte("mode: x\nsandbox:\n  network: 1\n"), "/", testEnv)
	var es ConfigErrors
	if !errors.As(err, &es) || len(es) != 2 {
		t.Fatalf("want 2 errors, got %v", err)
	}
}

func TestPathsResolve(t *testing.T) {
	c, err := Parse("/etc/x/cfg.yaml", []byte(`
sandbox:
  paths:
    rel:  {root: ./out/../build, mode: rw}
    home: {root: ~/notes, mode: ro}
    pwd:  {root: $PWD/src, mode: rw}
    abs:  {root: /srv//data/, mode: ro}
  deny: [~/.ssh, .env, secrets/key]
audit:
  path: ~/audit.jsonl
`), "/etc/x", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, z := range c.Sandbox.Zones {
		roots = append(roots, z.Name+"="+z.Root)
	}
	want := []string{"rel=/etc/x/build", "home=/home/u/notes", "pwd=/work/proj/src", "abs=/srv/data"}
	if d := cmp.Diff(roots, want); d != "" {
		t.Errorf("zone roots (-got +want):\n%s", d)
	}
	if d := cmp.Diff(c.Sandbox.Deny, []string{"/home/u/.ssh", ".env", "/etc/x/secrets/key"}); d != "" {
		t.Errorf("deny (-got +want):\n%s", d)
	}
	if c.Audit.Path != "/home/u/audit.jsonl" {
		t.Errorf("audit path = %q", c.Audit.Path)
	}
}

func TestDefaults(t *testing.T) {
	c, err := Parse("e.yaml", []byte(""), "/x", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != ModeInteractive || !c.Shell.Default.Allowed || !c.Shell.Default.Approval ||
		c.Sandbox.Network || !c.Sandbox.RequireOSSandbox || c.Sandbox.Fallback != FailFast ||
		c.Session.TTL != 8*time.Hour || c.Shell.Program != "/bin/bash" ||
		c.Audit.Path != "/home/u/.local/state/guardrun/audit.jsonl" {
		t.Errorf("empty config defaults are not the secure ones: %+v", c)
	}
}

func TestEmbeddedDefault(t *testing.T) {
	c := Default(testEnv)
	if len(c.Sandbox.Zones) != 1 || c.Sandbox.Zones[0].Root != "/work/proj" || c.Sandbox.Zones[0].Mode != ReadWrite {
		t.Errorf("default zone is not the working directory: %+v", c.Sandbox.Zones)
	}
	if c.Sandbox.Network {
		t.Error("default config enables the network")
	}
	for _, d := range []string{"/home/u/.ssh", "/home/u/.aws", "/home/u/.gnupg", ".env"} {
		if !contains(c.Sandbox.Deny, d) {
			t.Errorf("default config does not deny %s", d)
		}
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "g.yaml")
	os.WriteFile(p, []byte("sandbox:\n  paths:\n    w: {root: sub, mode: rw}\n"), 0o644)
	c, err := Load(p, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Sandbox.Zones[0].Root != filepath.Join(dir, "sub") {
		t.Errorf("relative root not against the config's directory: %s", c.Sandbox.Zones[0].Root)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml"), testEnv); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(DefaultYAML()))
	f.Add([]byte("mode: strict\nshell:\n  rules:\n    - pattern: \"git *\"\n      approval: false\n"))
	f.Add([]byte("sandbox:\n  paths:\n    a: {root: ., mode: rw, suffixes: [.txt]}\n  deny: [.env]\n"))
	f.Add([]byte("a: &x [1]\nb: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("f.yaml", data, "/base", testEnv)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error without a location: %v", err)
			}
			return
		}
		if _, err := New(c, "/home/u"); err != nil {
			t.Fatalf("a valid config did not compile: %v", err)
		}
		for _, z := range c.Sandbox.Zones {
			if !filepath.IsAbs(z.Root) || filepath.Clean(z.Root) != z.Root {
				t.Fatalf("zone root not absolute and clean: %q", z.Root)
			}
		}
	})
}

func TestProtectAndUnixSockets(t *testing.T) {
	c, err := Parse("/etc/x/cfg.yaml", []byte(`
sandbox:
  protect: [.git/info, Justfile, ~/notes/keep, /srv//data/x/]
  unix_sockets: [~/run/docker.sock, /run/a.sock]
`), "/etc/x", testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(c.Sandbox.Protect, []string{".git/info", "Justfile", "/home/u/notes/keep", "/srv/data/x"}); d != "" {
		t.Errorf("protect (-got +want):\n%s", d)
	}
	if d := cmp.Diff(c.Sandbox.UnixSockets, []string{"/home/u/run/docker.sock", "/run/a.sock"}); d != "" {
		t.Errorf("unix_sockets (-got +want):\n%s", d)
	}
	spec := c.SandboxSpec("/work/proj", "/home/u", false, nil)
	if !slices.Contains(spec.ProtectNames, ".git/hooks") || !slices.Contains(spec.ProtectNames, "Justfile") {
		t.Errorf("ProtectNames %q: want the built-in list and the config's names", spec.ProtectNames)
	}
	if d := cmp.Diff(spec.ProtectPaths, []string{"/home/u/notes/keep", "/srv/data/x"}); d != "" {
		t.Errorf("ProtectPaths (-got +want):\n%s", d)
	}
}

// TestLoadDefaultAtHome: the default's workspace zone is the working
// directory, which an agent steers with cd; at the home directory or above
// it, ~/.gitconfig and ~/.config would be writable, and inside a dot
// directory of it (~/.config/git, ~/.local/bin) the person's settings and
// programs on PATH would, so there is no default.
func TestLoadDefaultAtHome(t *testing.T) {
	home := t.TempDir()
	for _, cwd := range []string{home, filepath.Dir(home), "/", filepath.Join(home, ".config"), filepath.Join(home, ".config", "git"),
		filepath.Join(home, ".local", "bin"), filepath.Join(home, ".dotfiles")} {
		_, err := LoadDefault(Env{Cwd: cwd, Home: home, StateDir: "/s"})
		if err == nil || !strings.Contains(err.Error(), "working directory "+cwd) {
			t.Errorf("LoadDefault from %s: %v; want an error naming it", cwd, err)
		}
	}
	for _, cwd := range []string{filepath.Join(home, "proj"), filepath.Join(home, "src", ".hidden")} {
		if _, err := LoadDefault(Env{Cwd: cwd, Home: home, StateDir: "/s"}); err != nil {
			t.Errorf("LoadDefault from a project under home (%s): %v", cwd, err)
		}
	}
}

// TestCheckpointsSection: the checkpoints section's values, units and
// defaults.
func TestCheckpointsSection(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want Checkpoints
	}{
		{name: "none given", yaml: "mode: interactive\n", want: DefaultCheckpoints()},
		{name: "every key", yaml: "checkpoints:\n  enabled: false\n  max_files: 1_000\n  max_bytes: 512MiB\n  max_file_bytes: 10 M\n  max_store_bytes: 4096\n  keep: 7\n",
			want: Checkpoints{Enabled: false, MaxFiles: 1000, MaxBytes: 512 << 20, MaxFileBytes: 10 << 20, MaxStoreBytes: 4096, Keep: 7, given: true}},
		{name: "units", yaml: "checkpoints:\n  max_bytes: 2GiB\n  max_file_bytes: 3KB\n  max_store_bytes: 1T\n",
			want: func() Checkpoints {
				c := DefaultCheckpoints()
				c.MaxBytes, c.MaxFileBytes, c.MaxStoreBytes, c.given = 2<<30, 3<<10, 1<<40, true
				return c
			}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("cfg.yaml", []byte(tt.yaml), "/work/proj", testEnv)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.Checkpoints, tt.want, cmp.AllowUnexported(Checkpoints{})); diff != "" {
				t.Errorf("checkpoints (-got +want):\n%s", diff)
			}
		})
	}
}
