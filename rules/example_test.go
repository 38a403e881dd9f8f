package rules_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/guardrun/guardrun/rules"
)

// A config's rules judge each command of a script and its zones each file
// the script writes; the script's verdict is the strictest of its parts.
func ExampleEngine_Script() {
	const config = `
shell:
  rules:
    - {pattern: ls, approval: false}
    - {pattern: echo, approval: false}
    - {pattern: rm, allowed: false, description: deleting is done by hand}
sandbox:
  paths:
    work: {root: ., mode: rw}
    docs: {root: ./docs, mode: ro}
`
	dir, err := os.MkdirTemp("", "guardrun-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	dir, _ = filepath.EvalSymlinks(dir)
	os.Mkdir(filepath.Join(dir, "docs"), 0o755)

	env := rules.Env{Cwd: dir, Home: "/home/dev"}
	cfg, err := rules.Parse(filepath.Join(dir, ".guardrun.yaml"), []byte(config), dir, env)
	if err != nil {
		fmt.Println(err)
		return
	}
	eng, err := rules.New(cfg, env.Home)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, script := range []string{
		"ls -l",
		"echo done > out.txt",
		"echo done > docs/notes.txt",
		"make test",
		"ls; rm -rf build",
	} {
		d := eng.Script(script, dir)
		fmt.Printf("%s: %s (%s)\n", script, d.Decision, strings.ReplaceAll(d.Reason, dir, "$DIR"))
		for _, p := range d.Parts {
			switch p.Kind {
			case "command":
				fmt.Printf("  command %q: %s (rule %q)\n", p.Text, p.Decision, p.Rule)
			case "file":
				rel, _ := filepath.Rel(dir, p.Path)
				fmt.Printf("  %s %s: %s", p.Op, rel, p.Decision)
				if p.Zone != "" {
					fmt.Printf(" (zone %q)", p.Zone)
				}
				fmt.Println()
			default:
				fmt.Printf("  %s %q: %s\n", p.Kind, p.Text, p.Decision)
			}
		}
	}
	// Output:
	// ls -l: allow (every part is pre-approved)
	//   command "ls -l": allow (rule "ls")
	//   read .: allow
	// echo done > out.txt: allow (every part is pre-approved)
	//   command "echo done > out.txt": allow (rule "echo")
	//   write out.txt: allow (zone "work")
	// echo done > docs/notes.txt: block (write docs/notes.txt: zone "docs" is read-only)
	//   command "echo done > docs/notes.txt": allow (rule "echo")
	//   write docs/notes.txt: block (zone "docs")
	// make test: ask (make test matches no rule; unknown commands need approval)
	//   command "make test": ask (rule "")
	// ls; rm -rf build: block (rm -rf build matches rule "rm" (deleting is done by hand))
	//   command "ls": allow (rule "ls")
	//   read .: allow
	//   command "rm -rf build": block (rule "rm")
}
