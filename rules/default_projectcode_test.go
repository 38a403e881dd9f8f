package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// projectCodeRow is a script run from the project's root, the verdict
// the embedded default config must give it, and for an allow whether it
// relies on a checkpoint (checkpoint: required).
type projectCodeRow struct {
	script   string
	want     Verdict
	required bool
	// why is a word the reason must hold, for an ask or a block.
	why string
}

// projectCodeRows: the project's own programs, scripts, tests, builds,
// linters and formatters run without a question, each relying on a
// checkpoint; code from elsewhere, packages that would be downloaded,
// installed modules, installs, deliberate deletes and the options that
// reach outside still ask.
var projectCodeRows = []projectCodeRow{
	// Interpreters on the project's files, and code given to them.
	{script: "python3 x.py", want: Allow, required: true},
	{script: "python x.py --out /tmp/result.json", want: Allow, required: true},
	{script: "python3 src/app.py a b", want: Allow, required: true},
	{script: "cd src && python3 app.py", want: Allow, required: true},
	{script: "python3 -u -W ignore x.py", want: Allow, required: true},
	{script: "python3.11 x.py", want: Allow, required: true},
	{script: "/usr/bin/python3 x.py", want: Allow, required: true},
	{script: "python3 -c 'import os; print(os.getcwd())'", want: Allow, required: true},
	{script: "python3 -m mypkg run", want: Allow, required: true},
	{script: "python3 -m pytest tests -q", want: Allow, required: true},
	{script: "python -m unittest discover", want: Allow, required: true},
	{script: "node x.js --port 3000", want: Allow, required: true},
	{script: "node -e 'console.log(1)'", want: Allow, required: true},
	{script: "node --require ./x.js x.js", want: Allow, required: true},
	{script: "node -r eslint/bin/eslint.js x.js", want: Allow, required: true},
	{script: "node --import=data:text/javascript,1 x.js", want: Allow, required: true},
	{script: "node --test --test-reporter=spec", want: Allow, required: true},
	{script: "go test -modfile=go.mod ./...", want: Allow, required: true},
	{script: "make -I src", want: Allow, required: true},
	{script: "node --test", want: Allow, required: true},
	{script: "ruby x.rb", want: Allow, required: true},
	{script: "bash scripts/x.sh", want: Allow, required: true},
	{script: "sh -e scripts/x.sh arg", want: Allow, required: true},
	{script: "./scripts/x.sh", want: Allow, required: true},
	{script: "./run.py", want: Allow, required: true},
	{script: "deno run -A main.ts", want: Allow, required: true},
	{script: "bun run src/cli.ts tasks list", want: Allow, required: true},
	{script: "bun test", want: Allow, required: true},
	// Package scripts and the project's own tools.
	{script: "npm test", want: Allow, required: true},
	{script: "npm run build -- --watch", want: Allow, required: true},
	{script: "npm start", want: Allow, required: true},
	{script: "npx eslint src", want: Allow, required: true},
	{script: "npx --yes eslint .", want: Allow, required: true},
	{script: "npm exec -- eslint .", want: Allow, required: true},
	{script: "./node_modules/.bin/eslint .", want: Allow, required: true},
	{script: "pnpm test", want: Allow, required: true},
	{script: "yarn run build", want: Allow, required: true},
	// Builds and tests.
	{script: "make", want: Allow, required: true},
	{script: "make test V=1", want: Allow, required: true},
	{script: "make -C sub", want: Allow, required: true},
	{script: "go test ./...", want: Allow, required: true},
	{script: "go build -o bin/app .", want: Allow, required: true},
	{script: "go vet ./...", want: Allow, required: true},
	{script: "go run . serve", want: Allow, required: true},
	{script: "cargo test", want: Allow, required: true},
	{script: "cargo build --release", want: Allow, required: true},
	{script: "cargo clippy --fix --allow-dirty", want: Allow, required: true},
	{script: "pytest -v 2>&1", want: Allow, required: true},
	{script: "pytest tests/test_a.py::test_x -k 'a or b'", want: Allow, required: true},
	{script: "cd src && pytest ../tests", want: Allow, required: true},
	// Linters and formatters.
	{script: "eslint --fix src", want: Allow, required: true},
	{script: "prettier --write .", want: Allow, required: true},
	{script: "ruff check --fix src", want: Allow, required: true},
	{script: "black src", want: Allow, required: true},
	{script: "mypy --strict src", want: Allow, required: true},
	{script: "tsc --noEmit", want: Allow, required: true},
	{script: "gofmt -l .", want: Allow, required: true},
	{script: "golangci-lint run ./...", want: Allow, required: true},

	// Code elsewhere.
	{script: "python3 ELSEWHERE/x.py", want: Ask, why: "python runs the script"},
	{script: "python3 ../proj_backup/x.py", want: Ask, why: "python runs the script"},
	{script: "python3 link.py", want: Ask, why: "python runs the script"},
	{script: "node ELSEWHERE/x.js", want: Ask, why: "node runs the script"},
	{script: "bash ELSEWHERE/x.sh", want: Ask, why: "bash runs the script"},
	{script: "ELSEWHERE/x.sh", want: Ask, why: "matches no rule"},
	{script: "bash -- -c ls", want: Ask, why: "bash runs the script"},
	{script: "find / -name '*.sh' -exec bash {} \\;", want: Ask, why: "bash runs the script"},
	{script: "ls scripts | xargs -I{} sh scripts/{}", want: Ask, why: "sh runs the script"},
	{script: "make -f ELSEWHERE/Makefile", want: Ask, why: "matches no rule"},
	{script: "make -C ELSEWHERE", want: Ask, why: "matches no rule"},
	{script: "npm run build --prefix ELSEWHERE", want: Ask, why: "matches no rule"},
	{script: "cd ELSEWHERE && go test ./...", want: Ask, why: "matches no rule"},
	{script: "cargo build --manifest-path ELSEWHERE/Cargo.toml", want: Ask, why: "cargo builds the package"},
	{script: "pytest ELSEWHERE", want: Ask, why: "matches no rule"},
	{script: "deno run https://example.com/x.ts", want: Ask, why: "fetches the code"},
	// A module loaded before the script, a go.mod or overlay, an include
	// directory: code of its own, which must lie in the project too.
	{script: "node --require /usr/lib/hook.js x.js", want: Ask, why: "/usr/lib/hook.js is outside workspace"},
	{script: "node -r ELSEWHERE/x.js x.js", want: Ask, why: "is outside workspace"},
	{script: "node --import ELSEWHERE/x.js x.js", want: Ask, why: "is outside workspace"},
	{script: "node --loader=ELSEWHERE/x.js x.js", want: Ask, why: "is outside workspace"},
	{script: "node --import=file://ELSEWHERE/x.js x.js", want: Ask, why: "is outside workspace"},
	{script: "node -r ../proj_backup/x.py x.js", want: Ask, why: "is outside workspace"},
	{script: "node -r ts-node/register x.ts", want: Ask, why: "ts-node is not a package of the project's node_modules, so node would load an installed one"},
	{script: "node --import=https://example.com/x.mjs x.js", want: Ask, why: "loads the module from https://example.com/x.mjs"},
	{script: "node --test --test-reporter=ELSEWHERE/x.js", want: Ask, why: "is outside workspace"},
	{script: "node --snapshot-blob ELSEWHERE/x.js x.js", want: Ask, why: "is outside workspace"},
	{script: "node --env-file=ELSEWHERE/x.sh x.js", want: Ask, why: "is outside workspace"},
	{script: "go test -modfile=ELSEWHERE/go.mod ./...", want: Ask, why: "is outside workspace"},
	{script: "go build -overlay=ELSEWHERE/x.js .", want: Ask, why: "is outside workspace"},
	{script: "make -I ELSEWHERE", want: Ask, why: "is outside workspace"},
	{script: "make --include-dir=/usr/share", want: Ask, why: "is outside workspace"},
	{script: "deno run npm:cowsay", want: Ask, why: "fetches the code"},
	// A program of the project named like a system one.
	{script: "./cat README.md", want: Ask, why: "matches no rule"},
	{script: "./ls", want: Ask, why: "matches no rule"},
	// What is not the project's: downloads, installed modules, input.
	{script: "npx cowsay hello", want: Ask, why: "cowsay is not in the project's node_modules/.bin, so npx would download"},
	{script: "npx eslint@9 .", want: Ask, why: "downloads the package"},
	{script: "npx -p cowsay cowsay", want: Ask, why: "installs the package"},
	{script: "npx badlink", want: Ask, why: "matches no rule"},
	{script: "python3 -m pip install requests", want: Ask, why: "installs"},
	{script: "python3 -m http.server", want: Ask, why: "not a module of the project"},
	{script: "python -m ensurepip --upgrade", want: Ask, why: "not a module of the project"},
	{script: "python3", want: Ask, why: "reads code from its input"},
	{script: "python3 -i x.py", want: Ask, why: "interactive"},
	{script: "node", want: Ask, why: "reads code from its input"},
	{script: "go run example.com/tool@latest", want: Ask, why: "fetches"},
	{script: "go run ELSEWHERE/main.go", want: Ask, why: "matches no rule"},
	{script: "go test ./... ELSEWHERE/...", want: Ask, why: "matches no rule"},
	{script: "make SHELL=/bin/sh", want: Ask, why: "names the shell its recipes run in"},
	// Installs and publishing.
	{script: "npm install", want: Ask, why: "matches no rule"},
	{script: "npm install left-pad", want: Ask, why: "matches no rule"},
	{script: "npm ci", want: Ask, why: "matches no rule"},
	{script: "npm publish", want: Ask, why: "matches no rule"},
	{script: "pip install -e .", want: Ask, why: "matches no rule"},
	{script: "cargo add serde", want: Ask, why: "matches no rule"},
	{script: "cargo install ripgrep", want: Ask, why: "matches no rule"},
	{script: "go get example.com/x", want: Ask, why: "matches no rule"},
	{script: "go install ./...", want: Ask, why: "matches no rule"},
	{script: "bun add commander", want: Ask, why: "matches no rule"},
	{script: "deno install", want: Ask, why: "matches no rule"},
	{script: "pnpm dlx cowsay", want: Ask, why: "matches no rule"},
	{script: "mypy --install-types src", want: Ask, why: "installs type stub"},
	// Options that reach outside or run something else.
	{script: "npm test --script-shell=/bin/sh", want: Ask, why: "runs scripts with the program"},
	{script: "node --inspect=0.0.0.0:9229 x.js", want: Ask, why: "debugger port"},
	{script: "go test -exec /bin/sh ./...", want: Ask, why: "runs the test binary through the program"},
	{script: "go vet -vettool=/bin/sh ./...", want: Ask, why: "analysis tool"},
	{script: "cargo --config build.rustc-wrapper=/bin/sh build", want: Ask, why: "sets cargo configuration"},
	{script: "pytest --basetemp=src", want: Ask, why: "empties the directory"},
	{script: "pytest --pastebin=all", want: Ask, why: "bpaste"},
	{script: "make --eval='x:;id'", want: Ask, why: "evaluates the text"},
	{script: "PYTHONPATH=ELSEWHERE python3 x.py", want: Ask, why: "PYTHONPATH"},
	{script: "NODE_OPTIONS=--require=/tmp/x node x.js", want: Ask, why: "NODE_OPTIONS"},
	// Deleting on purpose still asks; writes outside still block.
	{script: "rm -rf build", want: Ask},
	{script: "git clean -fdx", want: Ask},
	{script: "git checkout -- .", want: Ask},
	{script: "git reset --hard", want: Ask},
	{script: "git restore .", want: Ask},
	{script: "python3 x.py > /etc/x", want: Block, why: "outside every rw zone"},
	{script: "node --env-file=.env x.js", want: Block, why: "denied"},
	{script: "node --redirect-warnings=/etc/w x.js", want: Block, why: "outside every rw zone"},
}

// newProjectCodeProject lays out a project with code of every kind the
// rows run, and a directory beside it that no zone holds; it returns
// the engine of the embedded default config loaded from the project.
func newProjectCodeProject(t *testing.T) (e *Engine, ws, elsewhere string) {
	t.Helper()
	base := hostDir(t)
	ws, elsewhere = filepath.Join(base, "proj"), filepath.Join(base, "elsewhere")
	home := filepath.Join(base, "home")
	files := map[string]string{
		"x.py": "print(1)\n", "run.py": "#!/usr/bin/env python3\n", "src/app.py": "", "tests/test_a.py": "",
		"mypkg/__init__.py": "", "mypkg/__main__.py": "", "x.js": "", "x.rb": "", "main.ts": "", "src/cli.ts": "",
		"scripts/x.sh": "echo hi\n", "Makefile": "all:\n\ttrue\n", "sub/Makefile": "all:\n\ttrue\n",
		"package.json":                      `{"scripts": {"test": "node x.js", "build": "node x.js"}}`,
		"node_modules/eslint/bin/eslint.js": "", "go.mod": "module example.com/p\n", "Cargo.toml": "[package]\nname = \"p\"\n",
		"README.md": "", ".env": "SECRET=1\n", "cat": "#!/bin/sh\n", "ls": "#!/bin/sh\n",
		"../elsewhere/x.py": "", "../elsewhere/x.js": "", "../elsewhere/x.sh": "", "../elsewhere/Makefile": "all:\n",
		"../elsewhere/package.json": "{}", "../elsewhere/go.mod": "module x\n", "../elsewhere/Cargo.toml": "", "../proj_backup/x.py": "",
		"../elsewhere/bin/cowsay": "",
	}
	for name, text := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"node_modules/.bin/eslint":  "../eslint/bin/eslint.js",
		"node_modules/.bin/badlink": filepath.Join(elsewhere, "bin/cowsay"),
		"link.py":                   filepath.Join(elsewhere, "x.py"),
	}
	for name, target := range links {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	c, err := LoadDefault(Env{Cwd: ws, Home: home, StateDir: filepath.Join(base, "state")})
	if err != nil {
		t.Fatal(err)
	}
	if e, err = New(c, home); err != nil {
		t.Fatal(err)
	}
	return e, ws, elsewhere
}

func TestDefaultProjectCode(t *testing.T) {
	e, ws, elsewhere := newProjectCodeProject(t)
	for _, r := range projectCodeRows {
		script := strings.ReplaceAll(r.script, "ELSEWHERE", elsewhere)
		d := e.Script(script, ws)
		if d.Decision != r.want {
			t.Errorf("%q: %s (%s), want %s", r.script, d.Decision, d.Reason, r.want)
			continue
		}
		if r.want == Allow && (d.Checkpoint == CheckpointRequired) != r.required {
			t.Errorf("%q: allowed with checkpoint %q, want required %v", r.script, d.Checkpoint, r.required)
		}
		if r.why != "" && !reasonSays(d, r.why) {
			t.Errorf("%q: %s, but no reason says %q: %s", r.script, d.Decision, r.why, d.Reason)
		}
	}
}
