package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// codeInConfig pre-approves interpreters on the code of zone ws
// (code_in), python on the paths of ws (sandbox_paths, which covers a
// script it names there too), a bare bash and a script named by the
// rule itself.
const codeInConfig = `shell:
  program: /bin/bash
  default: {allowed: true, approval: true}
  rules:
    - {pattern: "node", approval: false, code_in: [ws]}
    - {pattern: "python3", approval: false, sandbox_paths: [ws]}
    - {pattern: "bash named.sh", approval: false}
    - {pattern: "bash", approval: false}
    - {pattern: "make", approval: false, code_in: [ws, lib]}
    - {pattern: "*/*", approval: false, code_in: [ws]}
sandbox:
  paths:
    ws: {root: ./ws, mode: rw}
    lib: {root: ./lib, mode: ro}
`

func TestCodeIn(t *testing.T) {
	base := hostDir(t)
	for _, f := range []string{"ws/x.js", "ws/x.py", "ws/named.sh", "ws/other.sh", "ws/tool", "lib/Makefile", "out/x.js", "out/x.py"} {
		p := filepath.Join(base, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o755)
	}
	cfgPath := filepath.Join(base, "g.yaml")
	os.WriteFile(cfgPath, []byte(codeInConfig), 0o644)
	c, err := Load(cfgPath, Env{Cwd: base, Home: "/home/u", StateDir: filepath.Join(base, "state")})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	out := filepath.Join(base, "out")
	rows := []struct {
		name, script string
		want         Verdict
		why          string
	}{
		{"code_in: the script in the zone", "node x.js", Allow, ""},
		{"code_in: code on the command line", "node -e 'x'", Allow, ""},
		{"code_in: the script outside", "node " + out + "/x.js", Ask, "matches no rule"},
		{"code_in: no code at all", "node --version", Ask, "matches no rule"},
		{"code_in: after cd outside", "cd " + out + " && node x.js", Ask, "matches no rule"},
		{"sandbox_paths covers the script it names there", "python3 x.py", Allow, ""},
		{"sandbox_paths: not code on the command line", "python3 -c 'x'", Ask, "runs the code"},
		{"sandbox_paths: the script outside", "python3 " + out + "/x.py", Ask, "matches no rule"},
		{"a rule naming the script", "bash named.sh", Allow, ""},
		{"a bare shell rule does not cover a script", "bash other.sh", Ask, "bash runs the script other.sh"},
		{"a bare shell rule, -c is read", "bash -c 'node x.js'", Allow, ""},
		{"code_in: a read-only zone listed", "make -C ../lib", Allow, ""},
		{"code_in: the zone's program by its path", "./tool", Allow, ""},
		{"code_in: a program outside by its path", out + "/x.js", Ask, "matches no rule"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			d := e.Script(r.script, ws)
			if d.Decision != r.want {
				t.Fatalf("%q: %s (%s), want %s", r.script, d.Decision, d.Reason, r.want)
			}
			if r.why != "" && !reasonSays(d, r.why) {
				t.Errorf("%q: the reason does not say %q: %s", r.script, r.why, d.Reason)
			}
		})
	}
}

// TestCodeInConfigErrors: code_in names zones, like sandbox_paths.
func TestCodeInConfigErrors(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"shell:\n  rules:\n    - {pattern: node, approval: false, code_in: [nowhere]}\nsandbox:\n  paths:\n    ws: {root: ., mode: rw}\n",
			`g.yaml:3:7: shell.rules[0].code_in[0]: no zone named "nowhere" in sandbox.paths`},
		{"shell:\n  rules:\n    - {pattern: node, approval: false, code_in: []}\n",
			"g.yaml:3:49: shell.rules[0].code_in: empty list: the rule could never match; remove the key or name a zone"},
		{"shell:\n  rules:\n    - {pattern: node, approval: false, code_in: ws}\n",
			`g.yaml:3:49: shell.rules[0].code_in: want a list, got the string "ws"`},
	} {
		dir := t.TempDir()
		_, err := Parse(filepath.Join(dir, "g.yaml"), []byte(tt.yaml), dir, Env{Cwd: dir, Home: dir})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.yaml, err, tt.want)
		}
	}
}
