//go:build linux

package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// corpusScript is one script of the repository's corpora, as run in the
// test's project.
type corpusScript struct {
	from   string // file and line, or file
	script string
	cwd    string // relative to the project; "" is its root
}

// TestMCPRunDecidesAsExplain: for every script of the repository's
// policy corpora — the parser's corpus (shellparse/testdata/corpus), the
// workload of commands agents ran (rules/testdata/workload), the
// embedded default config's examples — the run tool of a strict guardrun
// mcp does what guardrun explain --json decides: allow runs, ask is
// refused by strict mode, block is refused as blocked. Nothing that asks
// or is blocked runs; what is allowed runs in the OS sandbox, in a
// throwaway project under the embedded default config. (The rules
// package's own test tables are Go values inside its tests, out of
// reach here.)
func TestMCPRunDecidesAsExplain(t *testing.T) {
	requireSandbox(t)
	w, home := corpusProject(t)
	scripts := corpusScripts(t, w.work, home)
	s := startMCP(t, w, "stdio", nil, "--strict")
	counts := map[string]int{}
	for _, c := range scripts {
		dir := filepath.Join(w.work, c.cwd)
		stdout, stderr, code := runPlain(t, w, dir, nil, "explain", "--json", "-c", c.script)
		if code != 0 {
			t.Errorf("%s: explain exited %d: %s", c.from, code, stderr)
			continue
		}
		var d struct{ Decision, Reason string }
		if err := json.Unmarshal([]byte(stdout), &d); err != nil {
			t.Fatalf("%s: explain --json: %v\n%s", c.from, err, stdout)
		}
		args := map[string]any{"script": c.script, "timeout_seconds": 10, "max_output_bytes": 1024}
		if c.cwd != "" {
			args["cwd"] = dir
		}
		r := s.call(t, "run", args)
		got := "ran"
		switch out := toolText(r); {
		case !r.IsError:
		case strings.HasPrefix(out, "guardrun: denied (strict mode): "):
			got = "refused in strict mode"
		case strings.HasPrefix(out, "guardrun: blocked: "):
			got = "blocked"
		default:
			got = "failed: " + out
		}
		want := map[string]string{"allow": "ran", "ask": "refused in strict mode", "block": "blocked"}[d.Decision]
		counts[d.Decision]++
		if got != want {
			t.Errorf("%s: explain says %s (%s), the run tool %s\nscript: %s", c.from, d.Decision, d.Reason, got, clipText(c.script, 300))
		}
	}
	t.Logf("%d scripts: %d allowed and ran, %d asked, %d blocked", len(scripts), counts["allow"], counts["ask"], counts["block"])
	if counts["allow"] == 0 || counts["ask"] == 0 || counts["block"] == 0 {
		t.Errorf("the corpus should hold scripts of every verdict, got %v", counts)
	}
}

// corpusProject is a project as the workload's measurement has one (a
// git repository with sources, tests, docs and a .env, under a home
// that holds ~/.ssh), outside /tmp (the sandbox's own), under the
// embedded default config.
func corpusProject(t *testing.T) (*world, string) {
	t.Helper()
	base := t.TempDir()
	if rel, err := filepath.Rel("/tmp", base); err == nil && !strings.HasPrefix(rel, "..") {
		d, err := os.MkdirTemp("/var/tmp", "guardrun-mcp-corpus-")
		if err != nil {
			t.Skipf("need a directory outside /tmp (the sandbox's private /tmp): %v", err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		base = d
	}
	base, _ = filepath.EvalSymlinks(base)
	home := filepath.Join(base, "home", "u")
	work := filepath.Join(home, "src", "proj")
	files := map[string]string{
		".git/HEAD":              "ref: refs/heads/main\n",
		".git/config":            "[core]\n\trepositoryformatversion = 0\n",
		".git/hooks/README":      "",
		".git/objects/info/keep": "",
		".git/refs/heads/keep":   "",
		".gitignore":             "node_modules/\n.venv/\n",
		".env":                   "API_KEY=not-a-real-key\n",
		"README.md":              "# proj\n",
		"Makefile":               "test:\n\tgo test ./...\n",
		"go.mod":                 "module example.com/proj\n",
		"main.go":                "package main\n\nfunc main() {}\n",
		"package.json":           "{\"name\": \"proj\"}\n",
		"src/app.py":             "print('hello')\n",
		"tests/test_app.py":      "def test_app():\n    pass\n",
		"docs/index.md":          "# docs\n",
		"scripts/check.sh":       "#!/bin/sh\necho ok\n",
		"../../.ssh/id_ed25519":  "x\n",
		"../../.bashrc":          "x\n",
	}
	for name, text := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := &world{work: work, env: []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_STATE_HOME=" + filepath.Join(base, "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(base, "config"),
		"XDG_RUNTIME_DIR=",
		"NO_COLOR=1",
		"LANG=C.UTF-8",
	}}
	return w, home
}

// corpusScripts reads the corpora, each script in the test's project:
// the workload's original project and home replaced by the test's, its
// directory made where it names one.
func corpusScripts(t *testing.T, work, home string) []corpusScript {
	t.Helper()
	var out []corpusScript
	corpus, err := filepath.Glob("../shellparse/testdata/corpus/*.sh")
	if err != nil || len(corpus) == 0 {
		t.Fatalf("shellparse corpus: %v (%d files)", err, len(corpus))
	}
	sort.Strings(corpus)
	for _, f := range corpus {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, corpusScript{from: strings.TrimPrefix(f, "../"), script: string(b)})
	}

	f, err := os.Open("../rules/testdata/workload/commands.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var c struct{ Cmd, Root, Home, Cwd string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("workload line %d: %v", n, err)
		}
		src := c.Cmd
		if c.Root != "" {
			src = strings.ReplaceAll(src, c.Root, work)
		}
		if c.Home != "" {
			src = strings.ReplaceAll(src, c.Home, home)
		}
		if c.Cwd != "" {
			os.MkdirAll(filepath.Join(work, c.Cwd), 0o755)
		}
		out = append(out, corpusScript{from: fmt.Sprintf("rules/testdata/workload/commands.jsonl:%d", n), script: src, cwd: c.Cwd})
	}

	b, err := os.ReadFile("../rules/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		Shell struct {
			Examples map[string][]string `yaml:"examples"`
		} `yaml:"shell"`
	}
	if err := yaml.Unmarshal(b, &def); err != nil {
		t.Fatal(err)
	}
	for _, verdict := range []string{"allow", "ask", "block"} {
		for i, ex := range def.Shell.Examples[verdict] {
			out = append(out, corpusScript{from: fmt.Sprintf("rules/default.yaml: examples.%s[%d]", verdict, i), script: ex})
		}
	}
	return out
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
