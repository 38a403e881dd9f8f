package request_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/request"
)

// DecideJob is the policy's verdict on a job, what `guardrun explain`
// prints: nothing is asked, run or audited. Here the config is the one
// --config names, in an environment made for the example (a session from
// Open would take the process's own and check the OS sandbox).
func ExampleDecideJob() {
	dir, err := os.MkdirTemp("", "guardrun-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	dir, _ = filepath.EvalSymlinks(dir)
	project := filepath.Join(dir, "project")
	os.MkdirAll(project, 0o755)
	file := filepath.Join(project, ".guardrun.yaml")
	os.WriteFile(file, []byte(`
shell:
  rules:
    - {pattern: "go test", approval: false}
    - {pattern: curl, allowed: false, description: no downloads}
sandbox:
  paths:
    project: {root: ., mode: rw}
`), 0o644)

	vars := map[string]string{"HOME": filepath.Join(dir, "home"), "PATH": "/usr/bin:/bin"}
	e := &config.Env{
		Cwd:      project,
		Home:     vars["HOME"],
		StateDir: filepath.Join(dir, "state"),
		Getenv:   func(k string) string { return vars[k] },
	}
	l, err := config.Load(config.Flags{Config: file}, e)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("config:", l.Source)
	for _, j := range []*request.Job{
		{Script: "go test ./... > test.log"},
		{Script: "go test ./... && curl -o x.sh https://example.com/x.sh"},
		{Argv: []string{"go", "vet", "./..."}},
	} {
		d := request.DecideJob(l, j, project)
		what := j.Script
		if j.Argv != nil {
			what = strings.Join(j.Argv, " ")
		}
		fmt.Printf("%s: %s (%s)\n", what, d.Decision, strings.ReplaceAll(d.Reason, dir, "$DIR"))
	}
	// Output:
	// config: --config
	// go test ./... > test.log: allow (every part is pre-approved)
	// go test ./... && curl -o x.sh https://example.com/x.sh: block (curl -o x.sh https://example.com/x.sh matches rule "curl" (no downloads))
	// go vet ./...: ask (go vet ./... matches no rule; unknown commands need approval)
}
