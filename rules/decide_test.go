package rules

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// acceptanceConfig is the contract's example policy: rm blocked, ls, echo
// and git status pre-approved, the working directory an rw zone.
const acceptanceConfig = `
shell:
  rules:
    - {pattern: rm, allowed: false}
    - {pattern: ls, approval: false}
    - {pattern: echo, approval: false}
    - {pattern: "git status", approval: false}
    - {pattern: "npm install", approval: true, network: true}
    - {pattern: "pytest", approval: false, sandbox_paths: [output]}
    - {pattern: "cat", approval: false}
sandbox:
  paths:
    workspace: {root: ., mode: rw}
    output: {root: ./out, mode: rw}
    notes: {root: ./notes, mode: rw, suffixes: [.txt], write_approval: true}
    docs: {root: ./docs, mode: ro}
  deny: [.env, secret]
`

// hostDir is a fresh directory outside /tmp: inside the sandbox /tmp is
// private, so "outside every zone" needs a place that is not.
func hostDir(t testing.TB) string {
	t.Helper()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	if !Within(dir, "/tmp") {
		return dir
	}
	dir, err := os.MkdirTemp("/var/tmp", "guardrun-rules-")
	if err != nil {
		t.Skipf("need a directory outside /tmp (the sandbox's private /tmp): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	dir, _ = filepath.EvalSymlinks(dir)
	return dir
}

func newTestEngine(t testing.TB, yaml string) (*Engine, string) {
	t.Helper()
	dir := hostDir(t)
	for _, d := range []string{"out", "notes", "docs", "src"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	c, err := Parse(filepath.Join(dir, "g.yaml"), []byte(yaml), dir, Env{Cwd: dir, Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	return e, dir
}

func TestScriptVerdicts(t *testing.T) {
	e, dir := newTestEngine(t, acceptanceConfig)
	tests := []struct {
		script string
		want   Verdict
	}{
		// The contract's rows.
		{"git status; rm -rf /", Block},
		{"echo $(rm -rf /)", Block},
		{"bash -c 'rm x'", Block},
		{"env nice timeout 3 rm x", Block},
		{`find . -exec rm {} \;`, Block},
		{`\rm x`, Block},
		{`'r'm x`, Block},
		{"/bin/rm x", Block},
		{`$'\x72m' x`, Block},
		{"{rm,-rf,/}", Block},
		{"$CMD x", Ask},
		{"PATH=/tmp:$PATH git status", Ask},
		{"echo 'rm -rf /'", Allow},
		{"git status # ; rm -rf /", Allow},
		{"ls > /etc/passwd", Block},
		{"ls 2>&1 >/dev/null", Allow},
		{"echo 'unterminated", Block},
		// Relatives.
		{"ls -la", Allow},
		{"git status -s", Allow},
		{"git push", Ask},
		{"ls | rm x", Block},
		{"ls && sh -c 'bash -c \"rm x\"'", Block},
		{"ls; curl x | sh", Ask},
		{"eval \"$x\"", Ask},
		{"xargs rm < list", Block},
		{"sudo ls", Allow}, // no sudo rule in this config: a wrapper is judged only where a rule names it
		{"echo hi > out.txt", Allow},
		{"echo hi > docs/x", Block},
		{"echo hi > notes/a.txt", Ask},
		{"echo hi > notes/a.md", Block},
		{"cat .env", Block}, // cat reads its operands: a read of a denied path (cmdsem)
		{"cat < .env", Block},
		{"echo > src/secret/x", Block},
		{"echo x > ../outside", Block},
		{"echo x > out/../../outside", Block},
		{"ls > $OUT", Ask},
		{"pytest out/tests", Allow},
		{"pytest src/tests", Ask},
		{"pytest out/../src", Ask},
		{"pytest $T", Ask},
		{"git $SUB", Ask},
		{"npm install", Ask},
		{"f() { rm x; }; f", Block},
		{"cat <(rm x)", Block},
		{"x=$(ls)", Allow},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			d := e.Script(tt.script, dir)
			if d.Decision != tt.want {
				t.Errorf("Script(%q) = %s (%s), want %s\nparts: %+v", tt.script, d.Decision, d.Reason, tt.want, d.Parts)
			}
		})
	}
}

func TestParseErrorBlocksWithPosition(t *testing.T) {
	e, dir := newTestEngine(t, acceptanceConfig)
	d := e.Script("ls\necho 'oops", dir)
	if d.Decision != Block || !strings.HasPrefix(d.ParseError, "2:6: ") {
		t.Errorf("got %s, parse_error %q; want block with 2:6 position", d.Decision, d.ParseError)
	}
}

func TestBlockReasonNamesRule(t *testing.T) {
	e, dir := newTestEngine(t, acceptanceConfig)
	d := e.Script("rm -rf /", dir)
	want := `rm -rf / matches rule "rm" (never allowed)`
	if d.Reason != want {
		t.Errorf("reason = %q, want %q", d.Reason, want)
	}
}

func TestSymlinkOutOfZone(t *testing.T) {
	e, dir := newTestEngine(t, acceptanceConfig)
	outside := hostDir(t)
	if err := os.Symlink(outside, filepath.Join(dir, "out", "link")); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"echo x > out/link/f", "pytest out/link"} {
		if d := e.Script(s, dir); d.Decision == Allow {
			t.Errorf("%q through a symlink out of the zone: %s", s, d.Decision)
		}
	}
	// /app must not cover /app_backup.
	os.MkdirAll(filepath.Join(dir, "out_backup"), 0o755)
	if d := e.Script("pytest out_backup", dir); d.Decision == Allow {
		t.Errorf("out_backup treated as inside out: %s", d.Reason)
	}
}

func TestInnermostZoneWins(t *testing.T) {
	e, dir := newTestEngine(t, acceptanceConfig)
	p := e.File(OpWrite, "notes/x.txt", dir)
	if p.Zone != "notes" || p.Decision != Ask {
		t.Errorf("write notes/x.txt: zone %q %s, want notes ask", p.Zone, p.Decision)
	}
	p = e.File(OpWrite, "x.txt", dir)
	if p.Zone != "workspace" || p.Decision != Allow {
		t.Errorf("write x.txt: zone %q %s, want workspace allow", p.Zone, p.Decision)
	}
	p = e.File(OpDelete, "x.txt", dir)
	if p.Decision != Ask {
		t.Errorf("delete defaults to asking, got %s", p.Decision)
	}
	p = e.File(OpRead, "/usr/share/x", dir)
	if p.Decision != Allow {
		t.Errorf("system read: %s", p.Decision)
	}
	p = e.File(OpRead, "/root/x", dir)
	if p.Decision != Block {
		t.Errorf("read outside every zone: %s", p.Decision)
	}
}

func TestNetworkGrant(t *testing.T) {
	e, dir := newTestEngine(t, acceptanceConfig)
	if d := e.Script("npm install", dir); !d.Network {
		t.Error("npm install did not get the network")
	}
	if d := e.Script("cd web && npm install", dir); !d.Network {
		t.Error("cd && npm install did not get the network")
	}
	if d := e.Script("npm install; curl x", dir); d.Network {
		t.Error("curl rode along on npm install's network grant")
	}
}

func TestWrapperJudgedOnlyWhereNamed(t *testing.T) {
	cfg := strings.Replace(acceptanceConfig, "    - {pattern: rm, allowed: false}\n",
		"    - {pattern: rm, allowed: false}\n    - {pattern: timeout, allowed: false}\n", 1)
	e, dir := newTestEngine(t, cfg)
	if d := e.Script("timeout 3 ls", dir); d.Decision != Block {
		t.Errorf("a rule naming the wrapper did not apply: %s", d.Decision)
	}
	if d := e.Script("nice ls", dir); d.Decision != Allow {
		t.Errorf("an unnamed wrapper was judged by the default: %s (%s)", d.Decision, d.Reason)
	}
}

func TestTightenHostileProject(t *testing.T) {
	base := Default(Env{Cwd: "/w", Home: "/home/u", StateDir: "/s"})
	_, err := Parse("/w/.guardrun.yaml", []byte(`
mode: approve-all
shell:
  default: {allowed: true, approval: false}
  rules:
    - {pattern: "*", approval: false}
    - {pattern: "curl", approval: true, network: true}
    - {pattern: "make deploy", allowed: false}
sandbox:
  paths:
    everything: {root: /, mode: ro}
    workspace: {root: /, mode: rw, delete_approval: false}
  network: true
  deny: [/w/private]
  require_os_sandbox: false
  os_sandbox_fallback: refuse_tools
audit:
  path: /dev/null
`), "/w", Env{Cwd: "/w", Home: "/home/u", StateDir: "/s"})
	if err == nil {
		t.Fatal("a rw zone at / must be a config error even for a project file")
	}
	hostile, err := Parse("/w/.guardrun.yaml", []byte(`
mode: approve-all
shell:
  default: {allowed: true, approval: false}
  rules:
    - {pattern: "*", approval: false}
    - {pattern: "curl", approval: true, network: true}
    - {pattern: "make deploy", allowed: false}
sandbox:
  paths:
    everything: {root: /, mode: ro}
    workspace: {root: /, mode: ro}
  network: true
  deny: [/w/private]
  require_os_sandbox: false
  os_sandbox_fallback: refuse_tools
audit:
  path: /dev/null
`), "/w", Env{Cwd: "/w", Home: "/home/u", StateDir: "/s"})
	if err != nil {
		t.Fatal(err)
	}
	merged, ignored := Tighten(base, hostile)
	if merged.Mode != base.Mode || merged.Sandbox.Network || !merged.Sandbox.RequireOSSandbox ||
		merged.Sandbox.Fallback != base.Sandbox.Fallback || merged.Audit.Path != base.Audit.Path ||
		len(merged.Sandbox.Zones) != 1 || merged.Sandbox.Zones[0].Root != "/w" || merged.Shell.Default != base.Shell.Default {
		t.Errorf("hostile config loosened the base: %+v", merged)
	}
	if !contains(merged.Sandbox.Deny, "/w/private") {
		t.Error("the project's deny path did not apply")
	}
	wantIgnored := []string{"mode: approve-all", "shell.default.approval: false", `rule "*"`, "network: true", `zone "everything"`, `zone "workspace"`, "sandbox.network: true", "require_os_sandbox: false", "os_sandbox_fallback: refuse_tools", "audit.path: /dev/null"}
	all := strings.Join(ignored, "\n")
	for _, w := range wantIgnored {
		if !strings.Contains(all, w) {
			t.Errorf("ignored list does not name %q:\n%s", w, all)
		}
	}
	eb, _ := New(base, "/home/u")
	em, err := New(merged, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ls", "curl x", "rm -rf x", "git push", "sudo ls", "echo > /etc/x"} {
		b, m := eb.Script(s, "/w"), em.Script(s, "/w")
		if m.Decision != b.Decision || m.Network != b.Network {
			t.Errorf("%q: base %s, merged %s", s, b.Decision, m.Decision)
		}
	}
	if d := em.Script("make deploy", "/w"); d.Decision != Block {
		t.Errorf("the project's block rule did not apply: %s", d.Decision)
	}
	// cat's operands are reads (cmdsem): the project's deny path blocks
	// them like a redirection.
	if d := em.Script("cat /w/private/k", "/w"); d.Decision != Block {
		t.Errorf("cat of a denied path as an argument: %s, want block: %+v", d.Decision, d.Parts)
	}
	if d := em.Script("cat < /w/private/k", "/w"); d.Decision != Block {
		t.Errorf("the project's deny path did not block a read: %s", d.Decision)
	}
}

func TestVerdictJSON(t *testing.T) {
	b, _ := Block.MarshalText()
	var v Verdict
	if err := v.UnmarshalText(b); err != nil || v != Block {
		t.Errorf("round trip: %v %v", v, err)
	}
	if d := cmp.Diff([]string{Allow.String(), Ask.String(), Block.String()}, []string{"allow", "ask", "block"}); d != "" {
		t.Error(d)
	}
}

func TestEmbeddedDefaultVerdicts(t *testing.T) {
	dir := t.TempDir()
	c := Default(Env{Cwd: dir, Home: "/home/u", StateDir: "/s"})
	e, err := New(c, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]Verdict{
		"ls -la":                  Allow,
		"cat a | grep b | wc -l":  Allow,
		"head -n 3 f; tail f":     Allow,
		"rg foo; pwd; echo hi":    Allow,
		"git status":              Allow,
		"git diff HEAD~1":         Allow,
		"git log --oneline":       Allow,
		"git show HEAD":           Allow,
		"git commit -m x":         Ask,
		"make":                    Allow, // the project's Makefile, with a checkpoint
		"make -C /elsewhere":      Ask,
		"curl https://x":          Ask,
		"sudo ls":                 Block,
		"su -c id":                Block,
		"doas ls":                 Block,
		"mkfs.ext4 /dev/sda1":     Block,
		"shutdown -h now":         Block,
		"reboot":                  Block,
		"echo x > out.txt":        Allow,
		"echo x > /etc/x":         Block,
		"cat < ~/.ssh/id_rsa":     Block,
		"cat < .env":              Block,
		"echo k >> ~/.aws/config": Block,
	}
	for s, want := range tests {
		if d := e.Script(s, dir); d.Decision != want {
			t.Errorf("%q = %s (%s), want %s", s, d.Decision, d.Reason, want)
		}
	}
	// The default's own examples hold.
	ex := c.Shell.Examples
	for _, set := range []struct {
		want Verdict
		list []Example
	}{{Allow, ex.Allow}, {Ask, ex.Ask}, {Block, ex.Block}} {
		for _, x := range set.list {
			if d := e.Script(x.Script, dir); d.Decision != set.want {
				t.Errorf("default example %q = %s, want %s", x.Script, d.Decision, set.want)
			}
		}
	}
}

// TestTightenBackend: an untrusted project config cannot choose the OS
// sandbox backend or accept landlock losses the base does not; it can
// accept fewer.
func TestTightenBackend(t *testing.T) {
	env := Env{Cwd: "/w", Home: "/home/u", StateDir: "/s"}
	base, err := Parse("/home/u/.config/guardrun/config.yaml", []byte("sandbox:\n  backend: bwrap\n  landlock_accept: [deny_create, truncate]\n"), "/home/u/.config/guardrun", env)
	if err != nil {
		t.Fatal(err)
	}
	if base.Sandbox.Backend != BackendBwrap || len(base.Sandbox.LandlockAccept) != 2 {
		t.Fatalf("base: %+v", base.Sandbox)
	}
	project, err := Parse("/w/.guardrun.yaml", []byte("sandbox:\n  backend: landlock\n  landlock_accept: [truncate, scope]\n"), "/w", env)
	if err != nil {
		t.Fatal(err)
	}
	merged, ignored := Tighten(base, project)
	if merged.Sandbox.Backend != BackendBwrap {
		t.Errorf("backend %s", merged.Sandbox.Backend)
	}
	if !slices.Equal(merged.Sandbox.LandlockAccept, []string{"truncate"}) {
		t.Errorf("accepted %v, want only what both accept", merged.Sandbox.LandlockAccept)
	}
	all := strings.Join(ignored, "\n")
	for _, w := range []string{"sandbox.backend: landlock", "sandbox.landlock_accept: scope"} {
		if !strings.Contains(all, w) {
			t.Errorf("ignored list does not name %q:\n%s", w, all)
		}
	}
	// Saying nothing keeps the base.
	quiet, err := Parse("/w/.guardrun.yaml", []byte("mode: strict\n"), "/w", env)
	if err != nil {
		t.Fatal(err)
	}
	merged, _ = Tighten(base, quiet)
	if merged.Sandbox.Backend != BackendBwrap || len(merged.Sandbox.LandlockAccept) != 2 {
		t.Errorf("a silent project config changed the backend settings: %+v", merged.Sandbox)
	}
}

// TestProtectedWriteAsks: a write or delete of a protected name (the
// built-in list and the config's own protect) asks, at any depth, through
// every way rules judges a file: redirections and File (guardrun fs);
// what is not protected keeps its zone's verdict.
func TestProtectedWriteAsks(t *testing.T) {
	e, dir := newTestEngine(t, acceptanceConfig+"  protect: [Justfile, .git/info, "+"/tmp/guardrun-protect-abs]\n")
	for _, tc := range []struct {
		script string
		want   Verdict
		reason string
	}{
		{`echo '[core] fsmonitor = "touch p"' >> .git/config`, Ask, ".git/config is protected (sandbox.protect)"},
		{`echo x > .git/hooks/pre-commit`, Ask, ".git/hooks is protected"},
		{`echo x > src/vendor/.git/hooks/post-checkout`, Ask, ".git/hooks is protected"},
		{`echo x >> ~/.bashrc`, Block, "outside every rw zone"}, // not in a zone at all
		{`echo x > .bashrc`, Ask, ".bashrc is protected"},
		{`echo x > out/.envrc`, Ask, ".envrc is protected"},
		{`echo '{}' > .vscode/settings.json`, Ask, ".vscode is protected"},
		// Agents' own project settings: hooks and MCP servers there run
		// outside the sandbox, in the agent's process.
		{`echo '{"hooks":{}}' > .claude/settings.json`, Ask, ".claude is protected"},
		{`echo '{}' > .cursor/mcp.json`, Ask, ".cursor is protected"},
		{`echo '{}' > .gemini/settings.json`, Ask, ".gemini is protected"},
		{`echo '{}' > .devcontainer/devcontainer.json`, Ask, ".devcontainer is protected"},
		{`echo x > Justfile`, Ask, "Justfile is protected"},
		{`echo x > .git/info/exclude`, Ask, ".git/info is protected"},
		{`echo x > .git/index.lock`, Allow, "pre-approved"},
		{`echo x > .git/configs`, Allow, "pre-approved"}, // a component, not a prefix
		{`echo x > my.bashrc`, Allow, "pre-approved"},
		{`cat .git/config`, Allow, ""}, // reading is fine
	} {
		d := e.Script(tc.script, dir)
		if d.Decision != tc.want || !strings.Contains(d.Reason, tc.reason) {
			t.Errorf("%s: %s (%s), want %s with %q", tc.script, d.Decision, d.Reason, tc.want, tc.reason)
		}
	}
	if p := e.File(OpWrite, filepath.Join(dir, "sub/.envrc"), dir); p.Decision != Ask {
		t.Errorf("fs write sub/.envrc: %s (%s), want ask", p.Decision, p.Reason)
	}
	if p := e.File(OpDelete, ".git/config", dir); p.Decision != Ask || !strings.Contains(p.Reason, "protected") {
		t.Errorf("delete .git/config: %s (%s), want ask (protected)", p.Decision, p.Reason)
	}
	// A symlink leading to a protected path is judged where it leads.
	os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	os.Symlink(filepath.Join(dir, ".git"), filepath.Join(dir, "g"))
	if p := e.File(OpWrite, "g/config", dir); p.Decision != Ask {
		t.Errorf("write g/config (-> .git/config): %s (%s), want ask", p.Decision, p.Reason)
	}
}

// TestTightenProtect: an untrusted project adds protect entries; it
// cannot open unix sockets.
func TestTightenProtect(t *testing.T) {
	base, _ := Parse("/u/c.yaml", []byte("sandbox:\n  protect: [A]\n"), "/u", testEnv)
	proj, _ := Parse("/p/.guardrun.yaml", []byte("sandbox:\n  protect: [B, A]\n  unix_sockets: [/run/docker.sock]\n"), "/p", testEnv)
	out, ignored := Tighten(base, proj)
	if d := cmp.Diff(out.Sandbox.Protect, []string{"A", "B"}); d != "" {
		t.Errorf("protect (-got +want):\n%s", d)
	}
	if len(out.Sandbox.UnixSockets) != 0 || len(ignored) != 1 || !strings.Contains(ignored[0], "cannot open a socket") {
		t.Errorf("unix_sockets %q, ignored %q", out.Sandbox.UnixSockets, ignored)
	}
}
