package cmdsem

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// codeSummary renders effects as "kind[lookup] option path" for
// comparison; the lookup only where the effect names code.
func codeSummary(es []Effect) string {
	var lines []string
	for _, e := range es {
		s := string(e.Kind)
		if e.Code != "" {
			s += "[" + string(e.Code) + "]"
		}
		if e.Option != "" {
			s += " " + e.Option
		}
		if e.Path != "" {
			p := e.Path
			if e.Dir != "" {
				p = e.Dir + ":" + p
			}
			s += " " + p
		}
		lines = append(lines, s)
	}
	return strings.Join(lines, "; ")
}

// TestProjectCode: where each program that runs a project's code finds
// that code, and which of its options install, download, run something
// else or write.
func TestProjectCode(t *testing.T) {
	tests := []struct {
		name, cmd, want string
	}{
		// python: the script, the module, the code given.
		{"python script", "python3 x.py a b", "exec[file] x.py"},
		{"python script after options", "python3 -u -W ignore -X dev x.py", "exec[file] x.py"},
		{"python script after --", "python3 -- -x.py", "exec[file] -x.py"},
		{"python module", "python3 -m mypkg.cli run", "exec[module] -m mypkg.cli"},
		{"python module attached", "python3 -mmypkg", "exec[module] -m mypkg"},
		{"python isolated module is not the project's", "python3 -I -m mypkg", "exec -m"},
		{"python -P module is not the project's", "python3 -P -m mypkg", "exec -m"},
		{"python -c", "python3 -c 'print(1)'", "exec[inline] -c 'print(1)'"},
		{"python -c clustered", "python3 -Bc x", "exec[inline] -c x"},
		{"python stdin", "python3 -", "exec"},
		{"python interactive", "python3 -i x.py", "exec -i; exec[file] x.py"},
		{"python -m pytest reads pytest's options", "python3 -m pytest tests -p no:cacheprovider", "exec[module] -m pytest; code[file] tests"},
		{"python -m pytest basetemp", "python3 -m pytest --basetemp=src", "exec[module] -m pytest; delete --basetemp src; code[file] ."},
		{"python -m pip install", "python3 -m pip install x", "exec[module] -m pip; exec"},
		// node.
		{"node script", "node x.js --port 3000", "exec[file] x.js"},
		{"node script after options", "node --max-old-space-size=4096 --enable-source-maps x.ts", "exec[file] x.ts"},
		{"node require a package", "node -r ts-node/register x.ts", "exec[nodemodule] -r ts-node; exec[file] x.ts"},
		{"node require a scoped package", "node --require=@babel/register/x x.js", "exec[nodemodule] --require @babel/register; exec[file] x.js"},
		{"node require elsewhere", "node --require /opt/hook.js x.js", "exec[file] --require /opt/hook.js; exec[file] x.js"},
		{"node import a file", "node --import ./setup.mjs x.js", "exec[file] --import ./setup.mjs; exec[file] x.js"},
		{"node import a file URL", "node --import=file:///opt/x.mjs x.js", "exec[file] --import /opt/x.mjs; exec[file] x.js"},
		{"node import a data URL", "node --import=data:text/javascript,1 x.js", "exec[inline] --import data:text/javascript,1; exec[file] x.js"},
		{"node import a URL", "node --import=https://example.com/x.mjs x.js", "exec --import; exec[file] x.js"},
		{"node import a percent-encoded file URL", "node --import=file:///opt/%78.mjs x.js", "exec --import; exec[file] x.js"},
		{"node require its own module", "node -r node:fs x.js", "exec[file] x.js"},
		{"node loader", "node --loader ../l.mjs x.js", "exec[file] --loader ../l.mjs; exec[file] x.js"},
		{"node test reporter of its own", "node --test --test-reporter=spec", "exec[file] --test ."},
		{"node test reporter module", "node --test --test-reporter=/opt/r.mjs", "exec[file] --test-reporter /opt/r.mjs; exec[file] --test ."},
		{"node snapshot blob", "node --snapshot-blob /opt/s.blob x.js", "exec[file] --snapshot-blob /opt/s.blob; exec[file] x.js"},
		{"node config file", "node --experimental-config-file=/opt/c.json x.js", "read --experimental-config-file /opt/c.json; code[file] --experimental-config-file /opt/c.json; exec[file] x.js"},
		{"node eval", "node -e 'console.log(1)' a", "exec[inline] -e 'console.log(1)'"},
		{"node print", "node -pe 1+1", "exec[inline] -pe 1+1"},
		{"node --eval=", "node --eval=x", "exec[inline] --eval x"},
		{"node stdin", "node", "exec"},
		{"node dash", "node -", "exec"},
		{"node inspect", "node --inspect=0.0.0.0:9229 x.js", "unknown --inspect; exec[file] x.js"},
		{"node env file", "node --env-file=.env x.js", "read --env-file .env; code[file] --env-file .env; exec[file] x.js"},
		{"node env file as next word", "node --env-file .env x.js", "read --env-file .env; code[file] --env-file .env; exec[file] x.js"},
		{"node writes warnings", "node --redirect-warnings=/tmp/w x.js", "write --redirect-warnings /tmp/w; exec[file] x.js"},
		{"node --run", "node --run build", "exec[up] --run package.json"},
		{"node --test files", "node --test a.test.js b.test.js", "exec[file] a.test.js; exec[file] b.test.js"},
		{"node --test alone", "node --test", "exec[file] --test ."},
		{"node unknown option", "node --frob x.js", "unknown --frob"},
		{"node version", "node --version", ""},
		// ruby.
		{"ruby script", "ruby -w x.rb", "exec[file] x.rb"},
		{"ruby -e", "ruby -ne 'puts $_' f", "exec[inline] -e 'puts $_'"},
		{"ruby -i edits", "ruby -pi.bak -e 'gsub(/a/,\"b\")' f g", "exec[inline] -e 'gsub(/a/,\"b\")'; write -i f; write -i g"},
		{"ruby -S", "ruby -S rake", "exec -S"},
		{"ruby -C", "ruby -C sub x.rb", "exec[file] sub:x.rb"},
		{"ruby stdin", "ruby", "exec"},
		// deno and bun.
		{"deno run", "deno run -A --watch main.ts arg", "exec[file] main.ts"},
		{"deno run a URL", "deno run https://example.com/x.ts", "exec"},
		{"deno run a package", "deno run npm:cowsay", "exec"},
		{"deno run config", "deno run --config deno.json main.ts", "exec[file] main.ts"},
		{"deno inspect", "deno run --inspect main.ts", "unknown --inspect; exec[file] main.ts"},
		{"deno test", "deno test", "code[file] ."},
		{"deno install", "deno install x", "unknown install"},
		{"bun run file", "bun run src/cli.ts tasks list", "exec[file] src/cli.ts"},
		{"bun run script", "bun run build", "exec[up] package.json"},
		{"bun file", "bun src/cli.ts", "exec[file] src/cli.ts"},
		{"bun test", "bun test src/x.test.ts", "code[file] ."},
		{"bun eval", "bun run -e 'x'", "exec[inline] -e 'x'"},
		{"bun add", "bun add commander", "unknown add"},
		{"bun x", "bun x cowsay", "unknown x"},
		// npm, npx, pnpm, yarn.
		{"npm test", "npm test", "exec[up] package.json"},
		{"npm run with prefix", "npm run build --prefix /elsewhere", "exec[up] /elsewhere:package.json"},
		{"npm run script shell", "npm run build --script-shell=/tmp/sh", "exec[up] package.json; exec --script-shell"},
		{"npm install", "npm install", "exec"},
		{"npm exec", "npm exec -- eslint .", "exec[bin] eslint"},
		{"npx tool", "npx eslint src", "exec[bin] eslint"},
		{"npx yes tool", "npx --yes tsc --noEmit", "exec[bin] tsc"},
		{"npx version", "npx eslint@9 src", "exec"},
		{"npx scoped", "npx @biomejs/biome check", "exec"},
		{"npx package", "npx -p cowsay cowsay hi", "exec -p"},
		{"npx call", "npx -c 'eslint .'", "exec -c"},
		{"pnpm test", "pnpm test", "exec[up] package.json"},
		{"pnpm -C", "pnpm -C web run build", "exec[up] web:package.json"},
		{"pnpm exec", "pnpm exec vitest run", "exec[bin] vitest"},
		{"pnpm dlx", "pnpm dlx cowsay", "unknown dlx"},
		{"yarn run", "yarn run build", "exec[up] package.json"},
		{"yarn add", "yarn add x", "unknown add"},
		// make, go, cargo.
		{"make", "make test", "code[first] GNUmakefile makefile Makefile"},
		{"make -C", "make -C /elsewhere", "code[first] /elsewhere:GNUmakefile makefile Makefile"},
		{"make -f", "make -f /elsewhere/mk all", "read -f /elsewhere/mk; code[file] -f /elsewhere/mk"},
		{"make variable", "make test V=1", "exec[inline] V V=1; code[first] GNUmakefile makefile Makefile"},
		{"make include directory", "make -I /opt/mk --include-dir=inc", "read -I /opt/mk; read --include-dir inc; code[file] -I /opt/mk; code[file] -I inc; code[first] GNUmakefile makefile Makefile"},
		{"go test modfile", "go test -modfile=/opt/go.mod ./...", "read -modfile /opt/go.mod; code[file] .; code[file] -modfile /opt/go.mod; code[up] go.mod"},
		{"go build overlay", "go build -overlay o.json .", "read -overlay o.json; code[file] .; code[file] -overlay o.json; code[up] go.mod"},
		{"go test", "go test ./...", "code[file] .; code[up] go.mod"},
		{"go -C", "go test -C sub ./...", "code[file] sub:.; code[up] sub:go.mod"},
		{"go run a version", "go run example.com/tool@latest", "exec; code[up] go.mod"},
		{"go run program args", "go run . x@y", "code[file] .; code[up] go.mod"},
		{"go run a file elsewhere", "go run ../other/main.go", "code[file] ../other/main.go; code[up] go.mod"},
		{"go test packages", "go test ./... ../lib/... example.com/x", "code[file] .; code[file] ../lib; code[up] go.mod"},
		{"make SHELL", "make SHELL=/bin/evil", "exec SHELL; code[first] GNUmakefile makefile Makefile"},
		{"go vet tool", "go vet -vettool=/tmp/x ./...", "exec -vettool; code[file] .; code[up] go.mod"},
		{"cargo test", "cargo test --release -- --nocapture", "code[up] Cargo.toml"},
		{"cargo manifest", "cargo build --manifest-path /elsewhere/Cargo.toml", "exec[file] --manifest-path /elsewhere/Cargo.toml"},
		{"cargo config", "cargo --config build.rustc-wrapper=/tmp/x build", "exec --config; code[up] Cargo.toml"},
		{"cargo target dir", "cargo build --target-dir /tmp/t", "write --target-dir /tmp/t; code[up] Cargo.toml"},
		{"cargo unstable", "cargo build -Z build-std", "unknown -Z; code[up] Cargo.toml"},
		{"cargo install", "cargo install ripgrep", "unknown install"},
		{"cargo add", "cargo add serde", "unknown add"},
		{"cargo toolchain", "cargo +nightly build", "unknown +nightly"},
		// pytest and mypy.
		{"pytest", "pytest -v", "code[file] ."},
		{"pytest paths", "pytest tests/test_a.py::test_x -k 'a or b'", "code[file] tests/test_a.py"},
		{"pytest plugin option", "pytest --cov=src --cov-report=html:/tmp/cov tests", "write --cov-report /tmp/cov; code[file] tests"},
		{"pytest junit", "pytest --junitxml=/tmp/r.xml", "write --junitxml /tmp/r.xml; code[file] ."},
		{"pytest pastebin", "pytest --pastebin=all", "unknown --pastebin; code[file] ."},
		{"pytest config elsewhere", "pytest -c /elsewhere/pytest.ini", "read -c /elsewhere/pytest.ini; code[file] ."},
		{"mypy install types", "mypy --install-types src", "exec --install-types"},
		{"mypy", "mypy --strict src", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := codeSummary(Analyze(argv(splitQuoted(tt.cmd)...), nil))
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("%s (-got +want):\n%s", tt.cmd, diff)
			}
		})
	}
}

// splitQuoted splits a command at spaces outside single quotes, keeping
// the quotes (they are part of what the tests expect to see).
func splitQuoted(s string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted = !quoted
			cur.WriteRune(r)
		case r == ' ' && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
