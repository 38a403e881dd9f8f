//go:build linux

package integration

// guardrun mcp against MCP clients written by others, at the versions
// scripts/mcp-tools-install.sh pins: the conformance suite
// (@modelcontextprotocol/conformance) and the inspector's CLI
// (@modelcontextprotocol/inspector-cli), on Node.js 22. They are
// installed with npm into a cache outside the repository, so these tests
// run only when asked: GUARDRUN_E2E_MCP=1 (make conformance) or
// GUARDRUN_REQUIRE_AGENTS=1 (CI, where a registry that cannot be reached
// fails them instead of skipping).

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// mcpTools are the installed clients: node, the conformance CLI's
// script and the inspector CLI's script.
type mcpTools struct{ node, conformance, inspector string }

var installMCPTools = sync.OnceValues(func() (mcpTools, error) {
	cmd := exec.Command("../scripts/mcp-tools-install.sh")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var tools mcpTools
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		name, path, _ := strings.Cut(sc.Text(), "\t")
		switch name {
		case "node":
			tools.node = path
		case "conformance":
			tools.conformance = path
		case "inspector":
			tools.inspector = path
		}
	}
	return tools, err
})

// needMCPTools installs the clients, or skips (fails under
// GUARDRUN_REQUIRE_AGENTS=1) when they are not asked for or the npm
// registry cannot be reached.
func needMCPTools(t *testing.T) mcpTools {
	t.Helper()
	required := os.Getenv("GUARDRUN_REQUIRE_AGENTS") == "1"
	if !required && os.Getenv("GUARDRUN_E2E_MCP") != "1" {
		t.Skip("drives MCP clients installed from npm; set GUARDRUN_E2E_MCP=1 or run make conformance")
	}
	tools, err := installMCPTools()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return tools
	case errors.As(err, &ee) && ee.ExitCode() == 3 && !required:
		t.Skipf("the npm registry cannot be reached: %v (skipped; GUARDRUN_REQUIRE_AGENTS=1 makes this a failure)", err)
	}
	t.Fatalf("scripts/mcp-tools-install.sh: %v", err)
	return mcpTools{}
}

// TestMCPConformance runs the conformance suite's server scenarios (all
// of them) against guardrun mcp --listen: the real server with its real
// tools, where only the scenarios listed in
// testdata/mcp-conformance/product.yml may fail and all of those must;
// and a build with the suite's fixture tools on the same server stack,
// where only those listed in fixtures.yml (completions, resources,
// prompts) may and must fail.
func TestMCPConformance(t *testing.T) {
	requireSandbox(t)
	tools := needMCPTools(t)
	fixtures := filepath.Join(t.TempDir(), "guardrun-mcpfixtures")
	build := exec.Command("go", "build", "-tags", "guardrun_mcpfixtures", "-o", fixtures, "github.com/guardrun/guardrun/cmd/guardrun")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building guardrun with the fixtures: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		name, bin, baseline string
	}{
		{"guardrun's tools", guardrunBin, "product.yml"},
		{"with the suite's fixture tools", fixtures, "fixtures.yml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := mcpWorld(t, mcpConfig, mcpFiles)
			s := listenWith(t, w, tc.bin)
			baseline, _ := filepath.Abs(filepath.Join("testdata", "mcp-conformance", tc.baseline))
			results := t.TempDir()
			// The suite is given only a URL, so the token goes in it.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, tools.node, tools.conformance, "server",
				"--url", s.url+"?token="+s.token, "--suite", "all", "--expected-failures", baseline, "-o", results)
			cmd.Dir = results
			out, err := cmd.CombinedOutput()
			summary := string(out)
			if i := strings.Index(summary, "=== SUMMARY ==="); i >= 0 {
				summary = summary[i:]
			}
			if err != nil {
				t.Errorf("conformance server --suite all against %s: %v\n%s\nstderr of guardrun mcp: %s", tc.name, err, summary, s.stderr)
				return
			}
			t.Logf("%s", summary)
		})
	}
}

// listenWith starts bin mcp --listen in w (the server the test closes).
func listenWith(t *testing.T, w *world, bin string) *mcpServer {
	t.Helper()
	saved := guardrunBin
	guardrunBin = bin
	defer func() { guardrunBin = saved }()
	s := &mcpServer{t: t, stderr: &lockedBuffer{}}
	s.listen(w)
	t.Cleanup(s.close)
	return s
}

// TestMCPInspector lists and calls guardrun's tools with the inspector's
// CLI (which declares no elicitation), over stdio and over HTTP with the
// token in a header or in the URL, and reads the JSON it prints.
func TestMCPInspector(t *testing.T) {
	requireSandbox(t)
	tools := needMCPTools(t)
	w := mcpWorld(t, mcpConfig, mcpFiles)
	hs := listenWith(t, w, guardrunBin)
	// inspector-cli 1.0.3 reads ../package.json from its working
	// directory: the install's prefix has one.
	dir := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(tools.inspector))))
	inspect := func(t *testing.T, target []string, args ...string) (map[string]any, string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, tools.node, append(append([]string{tools.inspector}, target...), args...)...)
		cmd.Dir, cmd.Env = dir, w.env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var res map[string]any
		if code == 0 {
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("inspector printed no JSON: %v\n%s\nstderr: %s", err, out, stderr.String())
			}
		}
		return res, stderr.String(), code
	}
	targets := map[string][]string{
		"stdio":                 {guardrunBin, "mcp", "--dir", w.work},
		"http, token in header": {hs.url, "--transport", "http", "--header", "Authorization: Bearer " + hs.token},
		"http, token in URL":    {hs.url + "?token=" + hs.token},
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			res, stderr, code := inspect(t, target, "--method", "tools/list")
			if code != 0 {
				t.Fatalf("tools/list: exit %d: %s", code, stderr)
			}
			var names []string
			for _, tool := range res["tools"].([]any) {
				names = append(names, tool.(map[string]any)["name"].(string))
			}
			if got, want := strings.Join(names, " "), "edit_file list_directory read_file run search_files write_file"; got != want {
				t.Errorf("tools %q, want %q", got, want)
			}
			for _, c := range []struct {
				args    []string
				isError bool
				text    string
			}{
				{[]string{"--tool-name", "run", "--tool-arg", "script=echo hi; exit 2"}, false, `^exit status 2\n--- stdout ---\nhi\n$`},
				{[]string{"--tool-name", "run", "--tool-arg", "script=touch made"}, true, `^guardrun: denied \(no terminal to ask; interactive mode acts as strict\): touch made needs approval`},
				{[]string{"--tool-name", "read_file", "--tool-arg", "path=a.txt", "start_line=2", "end_line=2"}, false, `^beta\n\[guardrun: lines 2-2 of `},
				{[]string{"--tool-name", "read_file", "--tool-arg", "path=.env"}, true, `^guardrun: blocked: read \.env: the path is denied`},
			} {
				res, stderr, code := inspect(t, target, append([]string{"--method", "tools/call"}, c.args...)...)
				if code != 0 {
					t.Errorf("tools/call %q: exit %d: %s", c.args, code, stderr)
					continue
				}
				isError, _ := res["isError"].(bool)
				var txt strings.Builder
				for _, block := range res["content"].([]any) {
					txt.WriteString(block.(map[string]any)["text"].(string))
				}
				if isError != c.isError || !regexp.MustCompile(c.text).MatchString(txt.String()) {
					t.Errorf("tools/call %q: isError %v text %q, want %v and a match for %q", c.args, isError, txt.String(), c.isError, c.text)
				}
			}
		})
	}
	t.Run("a wrong token", func(t *testing.T) {
		_, stderr, code := inspect(t, []string{hs.url, "--transport", "http", "--header", "Authorization: Bearer nope"}, "--method", "tools/list")
		if code == 0 || !strings.Contains(stderr, "missing or wrong token") {
			t.Errorf("exit %d, stderr %q: want a failure naming the token", code, stderr)
		}
	})
}
