package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The workload is a sample of shell commands that coding agents really
// ran, each labelled silent (a careful engineer lets it run without a
// word) or ask (risky); docs/workload.md says where the commands come
// from, how they were sampled and by which rules they were labelled.
const workloadFile = "testdata/workload/commands.jsonl"

// recordedSilentStopped is how many silent commands the embedded default
// config asks for or blocks today. TestWorkload fails when a change makes
// more of them stop (a rule that pre-approves less, a check that asks
// more): that is a cost every user pays on every such command, so it
// should be a decision, made by lowering the friction elsewhere or by
// raising this figure in the same change, never a side effect. When the
// count falls, the test says so: lower the figure with the change that
// earned it, so that the gain is kept.
//
// The target below (at most a tenth of the silent commands stopped) is
// far from today's figure; a test that always failed would only be
// skipped, so it is checked only when GUARDRUN_WORKLOAD_TARGET is set,
// for whoever works on reaching it.
const recordedSilentStopped = 117

// silentStoppedTarget is the share of silent commands the default config
// may ask for or block once the workload runs as an engineer would have
// it (checked with GUARDRUN_WORKLOAD_TARGET=1).
const silentStoppedTarget = 0.10

// workloadCommand is one line of the workload file.
type workloadCommand struct {
	Cmd   string `json:"cmd"`
	Label string `json:"label"`
	Kind  string `json:"kind"`
	Why   string `json:"why,omitempty"`
	Tool  string `json:"tool"`
	// Source is the public file (repository, commit and path) the
	// command was copied from.
	Source string `json:"source"`
	// Root and Home are the project directory and home directory of the
	// machine the command ran on, where the transcript shows them; the
	// measurement puts the test project and home in their place, so a
	// write to the original project is judged as one inside the project.
	Root string `json:"root,omitempty"`
	Home string `json:"home,omitempty"`
	// Cwd is the directory the command ran in, relative to Root, when it
	// was not the project root.
	Cwd string `json:"cwd,omitempty"`
}

// repository names the repository a command was taken from, the unit of
// the per-source cap.
func (w workloadCommand) repository() string {
	u, err := url.Parse(w.Source)
	if err != nil {
		return w.Source
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 {
		return w.Source
	}
	return parts[0] + "/" + parts[1]
}

// script is the command as run in the test project: the original project
// and home directories replaced by the test's, and the directory it runs
// in.
func (w workloadCommand) script(dir, home string) (src, cwd string) {
	src = w.Cmd
	if w.Root != "" {
		src = strings.ReplaceAll(src, w.Root, dir)
	}
	if w.Home != "" {
		src = strings.ReplaceAll(src, w.Home, home)
	}
	cwd = dir
	if w.Cwd != "" {
		cwd = filepath.Join(dir, w.Cwd)
	}
	return src, cwd
}

// loadWorkload reads the workload file, refusing unknown fields, missing
// fields and labels other than silent and ask, with the line they are on.
func loadWorkload(t testing.TB) []workloadCommand {
	t.Helper()
	data, err := os.ReadFile(workloadFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []workloadCommand
	for i, line := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var w workloadCommand
		if err := dec.Decode(&w); err != nil {
			t.Fatalf("%s:%d: %v", workloadFile, i+1, err)
		}
		switch {
		case w.Cmd == "" || w.Kind == "" || w.Tool == "" || w.Source == "":
			t.Fatalf("%s:%d: cmd, kind, tool and source are required", workloadFile, i+1)
		case w.Label != "silent" && w.Label != "ask":
			t.Fatalf("%s:%d: label %q, want silent or ask", workloadFile, i+1, w.Label)
		case w.Cwd != "" && (filepath.IsAbs(w.Cwd) || !filepath.IsLocal(w.Cwd)):
			t.Fatalf("%s:%d: cwd %q is not a path inside the project", workloadFile, i+1, w.Cwd)
		}
		out = append(out, w)
	}
	return out
}

// newWorkloadProject is a project as a user has one: a git repository
// with sources, tests, docs and a .env, under a home directory that holds
// ~/.ssh, outside /tmp (the sandbox's own), with the embedded default
// config loaded from inside it.
func newWorkloadProject(t testing.TB, cmds []workloadCommand) (e *Engine, dir, home string) {
	t.Helper()
	base := hostDir(t)
	home = filepath.Join(base, "home", "u")
	dir = filepath.Join(home, "src", "proj")
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
		"pyproject.toml":         "[project]\nname = \"proj\"\n",
		"src/app.py":             "print('hello')\n",
		"tests/test_app.py":      "def test_app():\n    pass\n",
		"docs/index.md":          "# docs\n",
		"scripts/check.sh":       "#!/bin/sh\necho ok\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(home, ".ssh", "id_ed25519"), filepath.Join(home, ".bashrc")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range cmds {
		if w.Cwd != "" {
			if err := os.MkdirAll(filepath.Join(dir, w.Cwd), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	c, err := LoadDefault(Env{Cwd: dir, Home: home, StateDir: filepath.Join(base, "state")})
	if err != nil {
		t.Fatal(err)
	}
	e, err = New(c, home)
	if err != nil {
		t.Fatal(err)
	}
	return e, dir, home
}

// workloadResult is how the default config treated the workload.
type workloadResult struct {
	silent, silentStopped int
	risky                 int
	riskyAllowed          []string
	// stoppedKinds counts the silent commands that ask or block by kind,
	// example holds the first of each with the decision's reason.
	stoppedKinds map[string]int
	example      map[string]string
	// byTool counts silent commands and the stopped ones per agent.
	byTool map[string][2]int
}

func measureWorkload(e *Engine, dir, home string, cmds []workloadCommand) workloadResult {
	r := workloadResult{stoppedKinds: map[string]int{}, example: map[string]string{}, byTool: map[string][2]int{}}
	for _, w := range cmds {
		src, cwd := w.script(dir, home)
		d := e.Script(src, cwd)
		if w.Label == "ask" {
			r.risky++
			if d.Decision == Allow {
				r.riskyAllowed = append(r.riskyAllowed, fmt.Sprintf("%q (%s, from %s) was allowed: %s", w.Cmd, w.Kind, w.Source, d.Reason))
			}
			continue
		}
		r.silent++
		n := r.byTool[w.Tool]
		n[0]++
		if d.Decision != Allow {
			r.silentStopped++
			n[1]++
			r.stoppedKinds[w.Kind]++
			if _, ok := r.example[w.Kind]; !ok {
				r.example[w.Kind] = fmt.Sprintf("%s %q: %s", d.Decision, clip(w.Cmd, 100), oneLine(clip(d.Reason, 200)))
			}
		}
		r.byTool[w.Tool] = n
	}
	return r
}

// oneLine keeps a reason that quotes a multi-line command on one line of
// the test's log.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (r workloadResult) silentShare() float64 { return share(r.silentStopped, r.silent) }
func (r workloadResult) riskyShare() float64  { return share(len(r.riskyAllowed), r.risky) }

func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// topStoppedKinds returns the n kinds with the most stopped silent
// commands, most first, ties by name.
func (r workloadResult) topStoppedKinds(n int) []string {
	kinds := make([]string, 0, len(r.stoppedKinds))
	for k := range r.stoppedKinds {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b string) int {
		if c := r.stoppedKinds[b] - r.stoppedKinds[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return kinds[:min(n, len(kinds))]
}

// TestWorkloadData keeps the sample a sample: enough commands from enough
// repositories, none dominating, each command once per repository.
func TestWorkloadData(t *testing.T) {
	cmds := loadWorkload(t)
	if len(cmds) < 350 {
		t.Errorf("%d commands, want at least 350", len(cmds))
	}
	perRepo := map[string]int{}
	seen := map[[2]string]bool{}
	for _, w := range cmds {
		repo := w.repository()
		perRepo[repo]++
		key := [2]string{repo, w.Cmd}
		if seen[key] {
			t.Errorf("%q appears twice from %s", w.Cmd, repo)
		}
		seen[key] = true
	}
	if len(perRepo) < 8 {
		t.Errorf("commands from %d repositories, want at least 8", len(perRepo))
	}
	for repo, n := range perRepo {
		if n > 40 {
			t.Errorf("%d commands from %s, want at most 40 from one source", n, repo)
		}
	}
}

// TestWorkload decides every workload command with the embedded default
// config from inside a project and reports the share of silent commands
// that ask or block and the share of risky ones allowed (go test -v shows
// the figures, the kinds that stop most and the share per agent). A risky
// command allowed fails the test: that is the one thing the default must
// never do.
func TestWorkload(t *testing.T) {
	cmds := loadWorkload(t)
	e, dir, home := newWorkloadProject(t, cmds)
	r := measureWorkload(e, dir, home, cmds)

	t.Logf("silent commands that ask or block: %d of %d (%.1f%%)", r.silentStopped, r.silent, 100*r.silentShare())
	t.Logf("risky commands allowed: %d of %d (%.1f%%)", len(r.riskyAllowed), r.risky, 100*r.riskyShare())
	t.Logf("kinds of silent commands that stop most:")
	for _, k := range r.topStoppedKinds(10) {
		t.Logf("  %4d %-18s e.g. %s", r.stoppedKinds[k], k, r.example[k])
	}
	tools := make([]string, 0, len(r.byTool))
	for tool := range r.byTool {
		tools = append(tools, tool)
	}
	slices.Sort(tools)
	for _, tool := range tools {
		n := r.byTool[tool]
		t.Logf("  %-15s %3d of %3d silent commands stop (%.0f%%)", tool, n[1], n[0], 100*share(n[1], n[0]))
	}

	for _, a := range r.riskyAllowed {
		t.Errorf("risky command allowed: %s", a)
	}
	switch {
	case r.silentStopped > recordedSilentStopped:
		t.Errorf("%d silent commands ask or block, more than the %d recorded in recordedSilentStopped: "+
			"make the new asks cheaper, or raise the figure in the change that accepts them", r.silentStopped, recordedSilentStopped)
	case r.silentStopped < recordedSilentStopped:
		t.Logf("only %d silent commands stop now, fewer than the recorded %d: lower recordedSilentStopped to keep the gain", r.silentStopped, recordedSilentStopped)
	}
	if os.Getenv("GUARDRUN_WORKLOAD_TARGET") != "" && r.silentShare() > silentStoppedTarget {
		t.Errorf("%.1f%% of silent commands ask or block, the target is at most %.0f%%", 100*r.silentShare(), 100*silentStoppedTarget)
	}
}

// BenchmarkWorkload decides the whole workload per iteration and reports
// the two figures TestWorkload checks, so that `make bench` prints them
// beside the time.
func BenchmarkWorkload(b *testing.B) {
	cmds := loadWorkload(b)
	e, dir, home := newWorkloadProject(b, cmds)
	var r workloadResult
	b.ReportAllocs()
	for b.Loop() {
		r = measureWorkload(e, dir, home, cmds)
	}
	b.ReportMetric(100*r.silentShare(), "silent-stopped-%")
	b.ReportMetric(100*r.riskyShare(), "risky-allowed-%")
	b.ReportMetric(float64(len(cmds)), "commands")
}
