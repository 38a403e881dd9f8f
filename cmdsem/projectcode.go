package cmdsem

import (
	"fmt"
	"strings"
)

// The programs that run a project's own code: interpreters on a script
// (python, node, ruby, deno, bun), the runners of a package's scripts
// (npm run, pnpm, yarn), npx with the project's own tools, and the build
// and test tools that run what the project holds (make's recipes, go
// test, cargo's build scripts, pytest's conftest.py). Each says where
// the code it runs is (Effect.Code), so that policy can pre-approve
// running the project's code and nothing else: a rule with code_in
// applies only where that code lies in its zones. The options that make
// them install, download or reach elsewhere run, write or read as the
// table's other rows do.

// Lookup says how the code a program runs is found from Effect.Path.
type Lookup string

const (
	// CodeFile: Path is the file (a script), relative to the working
	// directory (or Dir); "." is the directory itself (a test runner
	// that collects the project's tests).
	CodeFile Lookup = "file"
	// CodeUp: Path is a file name the program looks for in the working
	// directory and then each parent (package.json, Cargo.toml, go.mod);
	// the nearest is the code.
	CodeUp Lookup = "up"
	// CodeFirst: Path lists, space-separated, the names the program
	// tries in the working directory, in order (make: GNUmakefile
	// makefile Makefile).
	CodeFirst Lookup = "first"
	// CodeModule: Path is a Python module name (a.b.c). python -m puts
	// the working directory first on its path, so a module found there
	// (a/b/c.py, or the package directory a/b/c) is the project's; one
	// found nowhere there is an installed one.
	CodeModule Lookup = "module"
	// CodeBin: Path is a program name that npx (npm exec, pnpm exec)
	// takes from the project's node_modules/.bin: the nearest directory
	// up with a package.json or a node_modules. npx downloads a package
	// that is not there.
	CodeBin Lookup = "bin"
	// CodeInline: the code is text on the command line (python -c,
	// node -e, a Makefile variable set on make's command line).
	CodeInline Lookup = "inline"
	// CodeNodeModule: Path is a package name (x, @scope/x) node loads
	// from the nearest node_modules holding it, from the working
	// directory up; one found nowhere there is an installed one.
	CodeNodeModule Lookup = "nodemodule"
)

// runCode records that the program runs code: an Exec at word idx (the
// option's word, or the script's), with where the code is.
func (r *result) runCode(idx int, option, why string, find Lookup, path string, static bool) {
	e := Effect{Kind: Exec, Word: idx, Option: option, Why: why, Code: find, Path: path, Dynamic: !static}
	if e.Dynamic && e.Path == "" {
		e.Path = "(run-time value)"
	}
	r.add(e)
}

// implies records the code the program runs without the command naming
// it (the Makefile, the package's scripts).
func (r *result) implies(idx int, find Lookup, path, why string) {
	r.add(Effect{Kind: Code, Word: idx, Code: find, Path: path, Why: why})
}

// valueOf returns the value of an option that takes one, attached to
// word i after skip bytes (-cCODE, --eval=CODE) or the next word, and
// the index of the word that holds it; ok is false when it is missing.
func (r *result) valueOf(i, skip int) (Arg, int, bool) {
	v := r.argv[i].Value
	if skip < len(v) {
		return Arg{Value: v[skip:], Static: true}, i, true
	}
	if i+1 < len(r.argv) {
		return r.argv[i+1], i + 1, true
	}
	return Arg{}, i, false
}

// projectEntries are the table's rows for the programs that run a
// project's code, sorted by name (findEntry searches them after
// entries). Keep in sync with docs/policy.md.
var projectEntries = [...]entry{
	{"bun", newBunSpec},
	{"cargo", newCargoSpec},
	{"deno", newDenoSpec},
	{"mypy", newMypySpec},
	{"node", newNodeSpec},
	{"nodejs", newNodeSpec},
	{"npx", newNpxSpec},
	{"pnpm", newPnpmSpec},
	{"py.test", newPytestSpec},
	{"pytest", newPytestSpec},
	{"ruby", newRubySpec},
	{"yarn", newYarnSpec},
}

// pythonModules are the modules python -m runs that the table reads as
// the program of the same name: python -m pytest takes pytest's
// options, python -m pip install installs. (Built on each use, not
// looked up, since the table's entries hold python itself.)
var pythonModules = map[string]func() *spec{"pytest": newPytestSpec, "pip": newPipSpec, "pip3": newPipSpec, "mypy": newMypySpec}

// pythonModule goes on reading python -m MOD's arguments from word i as
// MOD's own, where the table knows MOD.
func pythonModule(r *result, mod string, i int) {
	build, ok := pythonModules[mod]
	if !ok {
		return
	}
	r.name = "python -m " + mod
	build().run(r, i)
}

// nodeValued are node's options that take a value, attached with = or
// as the next word.
var nodeValued = setOf("require import loader experimental-loader eval print input-type env-file env-file-if-exists conditions title " +
	"redirect-warnings cpu-prof-dir cpu-prof-name heap-prof-dir heap-prof-name diagnostic-dir report-dir report-directory report-filename report-signal " +
	"test-reporter test-reporter-destination test-name-pattern test-skip-pattern test-concurrency test-timeout test-shard test-coverage-include test-coverage-exclude " +
	"watch-path experimental-default-type openssl-config tls-keylog icu-data-dir dns-result-order unhandled-rejections trace-event-categories " +
	"trace-event-file-pattern secure-heap secure-heap-min disable-warning localstorage-file run snapshot-blob experimental-policy policy-integrity " +
	"allow-fs-read allow-fs-write stack-trace-limit max-http-header-size heapsnapshot-signal heapsnapshot-near-heap-limit " +
	"experimental-sea-config build-snapshot-config network-family-autoselection-attempt-timeout experimental-config-file env-file-if-exists")

// nodeFlags are node's options without a value that only tune it.
var nodeFlags = setOf("check version help test watch watch-preserve-output enable-source-maps expose-gc preserve-symlinks preserve-symlinks-main " +
	"no-warnings no-deprecation throw-deprecation trace-deprecation trace-warnings trace-uncaught trace-exit trace-sigint trace-sync-io trace-tls pending-deprecation " +
	"abort-on-uncaught-exception cpu-prof heap-prof prof frozen-intrinsics zero-fill-buffers jitless permission allow-child-process allow-worker allow-wasi " +
	"allow-addons insecure-http-parser force-fips enable-fips use-openssl-ca use-bundled-ca report-on-fatalerror report-on-signal report-uncaught-exception " +
	"report-compact build-snapshot test-only test-force-exit force-context-aware no-global-search-paths no-addons node-memory-debug v8-options " +
	"track-heap-objects verify-base-objects no-force-async-hooks-checks deprecation no-extra-info-on-fatal-exception strip-types " +
	"expose-internals single-threaded no-experimental-fetch no-experimental-global-webcrypto no-experimental-require-module")

// nodeTuning are the prefixes of node's and V8's options that tune the
// engine and name no file or program (--max-old-space-size=4096,
// --experimental-vm-modules, --no-opt).
var nodeTuning = []string{"max-", "stack-size", "initial-", "experimental-", "no-", "harmony", "trace-", "gc-", "expose-", "disable-", "use-", "allow-", "test-", "watch"}

// nodeWrites are node's options whose value is a file or directory it
// writes.
var nodeWrites = map[string]string{
	"redirect-warnings": "writes warnings to the file", "tls-keylog": "writes TLS key material to the file",
	"cpu-prof-dir": "writes CPU profiles into the directory", "heap-prof-dir": "writes heap profiles into the directory",
	"diagnostic-dir": "writes diagnostics into the directory", "report-dir": "writes reports into the directory",
	"report-directory": "writes reports into the directory", "test-reporter-destination": "writes the test report to the file",
	"localstorage-file": "keeps localStorage in the file", "logfile": "writes V8's log to the file",
}

// nodeReads are node's options whose value is a file it reads (a
// denied one is refused).
var nodeReads = map[string]string{
	"env-file": "reads environment variables from the file", "env-file-if-exists": "reads environment variables from the file",
	"openssl-config": "reads OpenSSL's configuration", "icu-data-dir": "reads ICU data from the directory",
	"experimental-policy": "reads a policy manifest", "snapshot-blob": "reads a startup snapshot",
	"experimental-config-file": "reads node's configuration from the file",
}

func newNodeSpec() *spec {
	return &spec{custom: nodeCmd, env: []string{"NODE_OPTIONS", "NODE_PATH", "NODE_EXTRA_CA_CERTS", "NODE_REPL_EXTERNAL_MODULE", "NODE_V8_COVERAGE", "NODE_DEBUG_NATIVE"}}
}

// nodeCmd reads node [options] [script | -e code] [args]: the script
// (or the code given) is what runs; the words after it are its own.
func nodeCmd(s *spec, r *result, i int) {
	code, test, tests := false, false, 0
	for ; i < len(r.argv); i++ {
		a := r.argv[i]
		if !a.Static {
			if code || test {
				continue
			}
			r.runCode(i, "", "node runs code named only at run time", CodeFile, a.Value, false)
			return
		}
		v := a.Value
		switch {
		case v == "--":
			if i+1 < len(r.argv) && !code {
				r.runCode(i+1, "", "node runs the script", CodeFile, r.argv[i+1].Value, r.argv[i+1].Static)
			}
			return
		case v == "-" || !strings.HasPrefix(v, "-"):
			if code {
				return // the arguments of the code given
			}
			if test {
				r.runCode(i, "", "node --test runs the test file", CodeFile, v, true)
				tests++
				continue
			}
			if v == "-" {
				r.exec(i, "", "node runs code read from its input")
			} else {
				r.runCode(i, "", "node runs the script", CodeFile, v, true)
			}
			return
		case v == "-v" || v == "-h" || v == "--version" || v == "--help" || v == "--v8-options" || v == "--completion-bash":
			return
		case v == "-e" || v == "-p" || v == "-pe":
			if val, vi, ok := r.valueOf(i, len(v)); ok {
				r.runCode(i, v, "node runs the code given", CodeInline, val.Value, val.Static)
				i, code = vi, true
			}
			continue
		case v == "-r":
			if val, vi, ok := r.valueOf(i, len(v)); ok {
				nodeLoads(r, vi, v, val)
				i = vi
			}
			continue
		case v == "-C":
			i++
			continue
		case v == "-i":
			r.exec(i, "-i", "node starts an interactive interpreter")
			continue
		case v == "-c":
			continue
		case !strings.HasPrefix(v, "--"):
			r.unknown(i, v, "node "+v+" is not an option guardrun knows")
			return
		}
		name, val, hasVal := strings.Cut(v[2:], "=")
		vi := i
		if !hasVal && nodeValued[name] && i+1 < len(r.argv) {
			vi = i + 1
			val, hasVal = r.argv[vi].Value, true
		}
		o := opnd{Arg{Value: val, Static: vi == i || r.argv[vi].Static}, vi}
		switch {
		case name == "eval" || name == "print":
			if hasVal {
				r.runCode(i, "--"+name, "node runs the code given", CodeInline, val, o.Static)
				code = true
			}
		case name == "run":
			if hasVal {
				r.runCode(i, "--run", "node runs the package.json script", CodeUp, "package.json", true)
			}
			return
		case name == "interactive":
			r.exec(i, "--interactive", "node starts an interactive interpreter")
		case name == "test":
			test = true
		case nodeLoaded[name]:
			if hasVal && (name != "test-reporter" || !nodeReporters[val]) {
				nodeLoads(r, vi, "--"+name, o.Arg)
			}
		case nodeConfig[name]:
			if hasVal {
				r.file(Read, o, "--"+name, nodeReads[name])
				r.add(Effect{Kind: Code, Word: vi, Option: "--" + name, Code: CodeFile, Path: val, Dynamic: !o.Static,
					Why: "node takes options from the file, which can name code it loads (NODE_OPTIONS=--require ...)"})
			}
		case strings.HasPrefix(name, "inspect") || name == "debug-port":
			r.unknown(i, "--"+name, "opens a debugger port through which another program can run code in node")
		case nodeWrites[name] != "":
			if hasVal {
				r.file(Write, o, "--"+name, nodeWrites[name])
			}
		case nodeReads[name] != "":
			if hasVal {
				r.file(Read, o, "--"+name, nodeReads[name])
			}
		case nodeValued[name] || nodeFlags[name] || hasPrefixAny(name, nodeTuning):
		default:
			r.unknown(i, "--"+name, "node --"+name+" is not an option guardrun knows")
			return
		}
		i = vi
	}
	if !code && !test {
		r.exec(0, "", "node with no script reads code from its input")
	}
	if test && !code && tests == 0 {
		r.runCode(0, "--test", "node --test runs the tests it finds", CodeFile, ".", true)
	}
}

// nodeLoaded are node's options whose value is a module node loads and
// runs before the script (or, for --test-reporter, with the tests).
var nodeLoaded = setOf("require import loader experimental-loader test-reporter snapshot-blob")

// nodeReporters are node --test's own reporters, which are no code of
// the project's.
var nodeReporters = setOf("spec tap dot junit lcov")

// nodeConfig are node's options whose value is a file of settings that
// can themselves load code (an env file's NODE_OPTIONS).
var nodeConfig = setOf("env-file env-file-if-exists experimental-config-file")

// nodeLoads records the module an option makes node load (-r, --import,
// --loader): a file named by its path, code in a data: URL, or a
// package node looks up in node_modules; a URL of another scheme is
// code from elsewhere.
func nodeLoads(r *result, idx int, option string, a Arg) {
	const why = "node loads and runs the module before the script"
	v := a.Value
	switch {
	case !a.Static:
		r.runCode(idx, option, why, CodeFile, v, false)
	case strings.HasPrefix(v, "data:"):
		r.runCode(idx, option, why, CodeInline, v, true)
	case strings.HasPrefix(v, "node:"):
		// One of node's own modules.
	case strings.HasPrefix(v, "file://") && !strings.Contains(v, "%"):
		r.runCode(idx, option, why, CodeFile, strings.TrimPrefix(v, "file://"), true)
	case v == "" || strings.Contains(v, ":") || strings.Contains(v, "\\"):
		r.exec(idx, option, "node loads the module from "+v)
	case v == "." || v == ".." || strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~"):
		r.runCode(idx, option, why, CodeFile, v, true)
	default:
		// A package: its name is the first part (x of x/register), or the
		// first two of a scoped one (@scope/x/register).
		parts := strings.SplitN(v, "/", 3)
		name := parts[0]
		if strings.HasPrefix(name, "@") && len(parts) > 1 {
			name += "/" + parts[1]
		}
		r.runCode(idx, option, why, CodeNodeModule, name, true)
	}
}

func newRubySpec() *spec {
	return &spec{custom: rubyCmd, env: []string{"RUBYOPT", "RUBYLIB", "RUBYSHELL", "RUBY_*"}}
}

// rubyCmd reads ruby [switches] [script | -e code] [args]. Switches
// cluster (-ne, -pi.bak); -i edits the files named after the program in
// place; -S looks the script up in PATH.
func rubyCmd(s *spec, r *result, i int) {
	code, inPlace := false, false
	for ; i < len(r.argv); i++ {
		a := r.argv[i]
		if !a.Static {
			if code {
				break
			}
			r.runCode(i, "", "ruby runs code named only at run time", CodeFile, a.Value, false)
			return
		}
		v := a.Value
		if v == "--" {
			i++
			break
		}
		if v == "-" || !strings.HasPrefix(v, "-") {
			break
		}
		if strings.HasPrefix(v, "--") {
			name, _, _ := strings.Cut(v[2:], "=")
			switch name {
			case "version", "help", "verbose", "copyright", "yjit", "jit", "rjit", "disable-gems", "disable-did_you_mean", "disable-error_highlight", "disable-syntax_suggest":
			case "enable", "disable", "encoding", "external-encoding", "internal-encoding", "dump", "backtrace-limit", "crash-report", "parser":
				if !strings.Contains(v, "=") {
					i++
				}
			default:
				if !strings.HasPrefix(name, "yjit-") && !strings.HasPrefix(name, "jit-") && !strings.HasPrefix(name, "enable-") && !strings.HasPrefix(name, "disable-") {
					r.unknown(i, "--"+name, "ruby --"+name+" is not an option guardrun knows")
					return
				}
			}
			if name == "version" || name == "help" || name == "copyright" {
				return
			}
			continue
		}
	letters:
		for j := 1; j < len(v); j++ {
			switch c := v[j]; c {
			case 'e':
				if val, vi, ok := r.valueOf(i, j+1); ok {
					r.runCode(i, "-e", "ruby runs the code given", CodeInline, val.Value, val.Static)
					i, code = vi, true
				}
				break letters
			case 'r', 'I', 'E', 'F', 'K':
				if j+1 == len(v) {
					i++ // the library, directory or encoding: read, never written
				}
				break letters
			case 'C':
				val, vi, ok := r.valueOf(i, j+1)
				if !ok {
					return
				}
				if !val.Static {
					r.unknown(vi, "-C", "ruby -C: the directory is not known until run time")
					return
				}
				r.dir = val.Value
				i = vi
				break letters
			case 'x', '0', 'W', 'T':
				break letters // an optional attached value
			case 'i':
				inPlace = true
				break letters // the backup suffix, attached
			case 'S':
				r.exec(i, "-S", "ruby runs a script it looks up in PATH")
				return
			case 'v', 'h':
				if len(v) == 2 {
					return
				}
			case 'n', 'p', 'a', 'l', 'c', 'w', 'd', 's', 'y', 'U':
			default:
				r.unknown(i, "-"+string(c), fmt.Sprintf("ruby -%c is not an option guardrun knows", c))
				return
			}
		}
	}
	if !code {
		if i >= len(r.argv) || r.argv[i].Static && r.argv[i].Value == "-" {
			r.exec(min(i, len(r.argv)-1), "", "ruby with no script reads code from its input")
			return
		}
		r.runCode(i, "", "ruby runs the script", CodeFile, r.argv[i].Value, r.argv[i].Static)
		i++
	}
	if inPlace {
		for ; i < len(r.argv); i++ {
			r.file(Write, opnd{r.argv[i], i}, "-i", "edits the file in place")
		}
	}
}

// denoValued are deno's options that take a value as the next word
// when none is attached.
var denoValued = setOf("config c import-map lock cert location seed ext v8-flags env preload")

func newDenoSpec() *spec {
	run := &spec{custom: func(s *spec, r *result, i int) { denoCmd(r, i, "run") }}
	test := &spec{custom: func(s *spec, r *result, i int) { denoCmd(r, i, "test") }}
	task := &spec{custom: func(s *spec, r *result, i int) {
		r.implies(i-1, CodeFile, ".", "deno task runs the tasks of the project's configuration")
		denoOptions(r, i)
	}}
	return &spec{
		Options: Options{Long: "help h version V quiet q unstable", StrictLong: true},
		env:     []string{"DENO_*", "NPM_CONFIG_REGISTRY"},
		anySub:  true,
		sub:     map[string]*spec{"run": run, "test": test, "bench": test, "task": task, "check": {}, "lint": {}, "fmt": {}, "info": {}, "doc": {}, "types": {}, "help": {}},
	}
}

// denoCmd reads deno run [options] SCRIPT [args] and deno test [options]
// [files]: the script (a URL is code from elsewhere) or the project's
// tests.
func denoCmd(r *result, i int, verb string) {
	i = denoOptions(r, i)
	if verb == "test" {
		if i >= len(r.argv) {
			r.implies(0, CodeFile, ".", "deno test runs the project's tests")
		}
		for ; i < len(r.argv); i++ {
			if r.argv[i].Static && r.argv[i].Value == "--" {
				break
			}
			r.add(Effect{Kind: Code, Word: i, Code: CodeFile, Path: r.argv[i].Value, Dynamic: !r.argv[i].Static, Why: "deno test runs the test file"})
		}
		return
	}
	if i >= len(r.argv) {
		return
	}
	if r.argv[i].Static && r.argv[i].Value == "-" {
		r.exec(i, "", "deno runs code read from its input")
		return
	}
	if v := r.argv[i].Value; remoteSpecifier(v) {
		r.exec(i, "", "deno fetches the code from "+v+" and runs it")
		return
	}
	r.runCode(i, "", "deno runs the script", CodeFile, r.argv[i].Value, r.argv[i].Static)
}

// denoOptions reads deno's options from word i and returns the first
// operand: the permissions (--allow-*, -A) change what deno itself
// lets the code do, inside the sandbox either way; --inspect opens a
// debugger port.
func denoOptions(r *result, i int) int {
	for ; i < len(r.argv); i++ {
		a := r.argv[i]
		if !a.Static {
			if mayBeOption(a) {
				r.unknown(i, "", "deno: a word known only at run time may be an option")
			}
			return i
		}
		v := a.Value
		if v == "--" {
			return i + 1
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			return i
		}
		name, _, hasVal := strings.Cut(strings.TrimLeft(v, "-"), "=")
		switch {
		case v == "-A" || v == "-q" || v == "-r" || v == "-L":
		case strings.HasPrefix(name, "inspect"):
			r.unknown(i, "--"+name, "opens a debugger port through which another program can run code in deno")
		case name == "env-file" || name == "env":
			if hasVal {
				_, val, _ := strings.Cut(v, "=")
				r.file(Read, opnd{Arg{Value: val, Static: true}, i}, "--env-file", "reads environment variables from the file")
			} else {
				r.file(Read, opnd{Arg{Value: ".env", Static: true}, i}, "--env-file", "reads environment variables from .env")
			}
		case denoValued[name]:
			if !hasVal {
				i++
			}
		case strings.HasPrefix(name, "allow-") || strings.HasPrefix(name, "deny-") || strings.HasPrefix(name, "unstable") ||
			strings.HasPrefix(name, "no-") || strings.HasPrefix(name, "reload") || strings.HasPrefix(name, "watch") ||
			strings.HasPrefix(name, "check") || strings.HasPrefix(name, "node-modules-dir") || strings.HasPrefix(name, "vendor") ||
			strings.HasPrefix(name, "frozen") || strings.HasPrefix(name, "log-level") || strings.HasPrefix(name, "coverage") ||
			strings.HasPrefix(name, "filter") || strings.HasPrefix(name, "parallel") || strings.HasPrefix(name, "doc") ||
			name == "quiet" || name == "cached-only" || name == "fail-fast" || name == "hmr" || name == "trace-leaks" ||
			name == "permit-no-files" || name == "clean" || name == "shuffle" || name == "junit-path" || name == "reporter" ||
			name == "eval" || name == "cwd" || name == "recursive":
		default:
			r.unknown(i, v, "deno "+v+" is not an option guardrun knows")
			return len(r.argv)
		}
	}
	return i
}

// remoteSpecifier reports a module deno fetches rather than reads from
// a file: a URL, or a package of a registry (npm:, jsr:).
func remoteSpecifier(v string) bool {
	scheme, _, ok := strings.Cut(v, ":")
	return ok && scheme != "" && !strings.Contains(scheme, "/")
}

// bunScriptExts are the file types bun runs as a script.
var bunScriptExts = []string{".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts", ".sh"}

func newBunSpec() *spec {
	run := &spec{custom: func(s *spec, r *result, i int) { bunRun(r, i) }}
	test := &spec{custom: func(s *spec, r *result, i int) {
		bunOptions(r, i)
		r.implies(i-1, CodeFile, ".", "bun test runs the project's tests")
	}}
	subs := &spec{Options: Options{Long: "help h version v revision cwd= silent bun", StrictLong: true},
		do: acts("", "cwd", act{chdir, ""}), anySub: true,
		sub: map[string]*spec{"run": run, "test": test, "--version": {}, "--help": {}, "--revision": {}, "help": {}}}
	return &spec{
		env: []string{"BUN_*", "NODE_OPTIONS", "NPM_CONFIG_*", "npm_config_*"},
		custom: func(s *spec, r *result, i int) {
			// bun FILE runs the file, as bun run FILE does.
			if i < len(r.argv) && r.argv[i].Static && isBunScript(r.argv[i].Value) {
				bunRun(r, i)
				return
			}
			subs.run(r, i)
		},
	}
}

func isBunScript(v string) bool {
	return strings.Contains(v, "/") || hasSuffixAny(v, bunScriptExts)
}

// bunRun reads bun run [options] FILE|SCRIPT [args]: a file is the code;
// a name is a script of the project's package.json (or a program of its
// node_modules/.bin, which bun run looks up next).
func bunRun(r *result, i int) {
	i = bunOptions(r, i)
	if i >= len(r.argv) {
		return
	}
	w := r.argv[i]
	switch {
	case !w.Static:
		r.runCode(i, "", "bun runs code named only at run time", CodeFile, w.Value, false)
	case w.Value == "-":
		r.exec(i, "", "bun runs code read from its input")
	case isBunScript(w.Value):
		r.runCode(i, "", "bun runs the script", CodeFile, w.Value, true)
	default:
		r.runCode(i, "", "bun runs the package.json script", CodeUp, "package.json", true)
	}
}

// bunOptions reads bun run's and bun test's options from word i and
// returns the first operand.
func bunOptions(r *result, i int) int {
	for ; i < len(r.argv); i++ {
		a := r.argv[i]
		if !a.Static {
			if mayBeOption(a) {
				r.unknown(i, "", "bun: a word known only at run time may be an option")
			}
			return i
		}
		v := a.Value
		if v == "--" {
			return i + 1
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			return i
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(v, "-"), "=")
		switch name {
		case "e", "eval", "p", "print":
			if !hasVal && i+1 < len(r.argv) {
				i++
				val, hasVal = r.argv[i].Value, r.argv[i].Static
			}
			if hasVal {
				r.runCode(i, v, "bun runs the code given", CodeInline, val, true)
			}
			return len(r.argv)
		case "cwd":
			if !hasVal && i+1 < len(r.argv) {
				i++
				val = r.argv[i].Value
			}
			r.dir = val
		case "env-file":
			if !hasVal && i+1 < len(r.argv) {
				i++
				val = r.argv[i].Value
			}
			r.file(Read, opnd{Arg{Value: val, Static: true}, i}, "--env-file", "reads environment variables from the file")
		case "r", "preload", "t", "timeout", "config", "c", "filter", "F", "elide-lines", "test-name-pattern", "rerun-each", "coverage-dir", "coverage-reporter", "reporter", "bail", "max-concurrency":
			if !hasVal && i+1 < len(r.argv) {
				i++
			}
		case "inspect", "inspect-wait", "inspect-brk":
			r.unknown(i, v, "opens a debugger port through which another program can run code in bun")
		case "bun", "b", "watch", "hot", "smol", "silent", "if-present", "no-clear-screen", "only", "todo", "update-snapshots", "u", "coverage", "no-install", "prefer-offline", "shell", "no-env-file", "parallel", "sequential", "workspaces", "help", "h":
		default:
			r.unknown(i, v, "bun "+v+" is not an option guardrun knows")
			return len(r.argv)
		}
	}
	return i
}

func newNpxSpec() *spec {
	return &spec{custom: npxCmd, env: []string{"npm_config_*", "NPM_CONFIG_*", "NODE_OPTIONS", "NODE_PATH"}}
}

// npxCmd reads npx [options] COMMAND [args]: the command runs from the
// project's node_modules/.bin when it is there; otherwise npx downloads
// the package of that name. A version (eslint@9), a scope or a path
// names a package to fetch, and -p/--package and -c are other commands
// to install or run.
func npxCmd(s *spec, r *result, i int) {
	for ; i < len(r.argv); i++ {
		a := r.argv[i]
		if !a.Static {
			r.exec(i, "", "npx runs a package's program named only at run time, downloading it if needed")
			return
		}
		v := a.Value
		name, _, hasVal := strings.Cut(strings.TrimLeft(v, "-"), "=")
		switch {
		case v == "--":
			i++
		case !strings.HasPrefix(v, "-"):
		case v == "-y" || name == "yes" || name == "no" || v == "-q" || name == "quiet" || name == "silent" || name == "prefer-offline" || name == "offline":
			continue
		case v == "-p" || name == "package":
			r.exec(i, v, "npx installs the package named to run a program from it")
			return
		case v == "-c" || name == "call":
			r.exec(i, v, "npx runs the command given in a shell")
			return
		case name == "version" || v == "-v" || name == "help" || v == "-h":
			return
		case name == "prefix" || name == "C":
			if !hasVal {
				i++
			}
			if i < len(r.argv) {
				_, val, _ := strings.Cut(v, "=")
				if !hasVal {
					val = r.argv[i].Value
				}
				r.dir = val
			}
			continue
		default:
			r.unknown(i, v, "npx "+v+" is not an option guardrun knows")
			return
		}
		break
	}
	if i >= len(r.argv) {
		r.exec(0, "", "npx with no command reads one from its input")
		return
	}
	npxRuns(r, i, "npx")
}

// npxRuns records the program npx (npm exec, pnpm exec) runs from word
// i: one of the project's own, or a package to download.
func npxRuns(r *result, i int, who string) {
	w := r.argv[i]
	switch {
	case !w.Static:
		r.exec(i, "", who+" runs a package's program named only at run time, downloading it if needed")
	case strings.ContainsAny(w.Value, "/:") || strings.Contains(w.Value[1:], "@") || strings.HasPrefix(w.Value, "@"):
		r.exec(i, "", who+" downloads the package named ("+w.Value+") and runs its program")
	default:
		r.runCode(i, "", who+" runs the program "+w.Value+" of the project's node_modules/.bin", CodeBin, w.Value, true)
	}
}

// npmRunSpec is npm run, test and start (and their aliases): they run
// the project's package.json scripts. npm's options before -- are
// read as opts reads them; what follows -- goes to the script.
func npmRunSpec(opts *spec) *spec {
	return &spec{custom: func(s *spec, r *result, i int) {
		r.runCode(i-1, "", "runs the package's scripts, which are shell commands", CodeUp, "package.json", true)
		opts.init()
		opts.scan(r, i)
	}}
}

// npmExecSpec is npm exec (npm x): npx.
func npmExecSpec(opts *spec) *spec {
	return &spec{custom: func(s *spec, r *result, i int) {
		opts.init()
		ops, _ := opts.scanFrom(r, i, false)
		for _, t := range ops {
			if t.Static && t.Value == "--" {
				continue
			}
			npxRuns(r, t.idx, "npm exec")
			return
		}
		r.exec(i-1, "", "npm exec runs a package's program")
	}}
}

func newPnpmSpec() *spec {
	pnpmOpts := func() Options { return Options{Long: pnpmLong, StrictLong: true, Permute: true, Short: "C:F:rswhv"} }
	opts := &spec{Options: pnpmOpts(),
		do: acts("C", "dir", act{chdir, ""}, "", "script-shell", ex("runs scripts with the program"),
			"", "node-options", ex("passes options to node, which can load code"))}
	scripts := npmRunSpec(opts)
	exec := &spec{custom: func(s *spec, r *result, i int) {
		opts.init()
		ops, _ := opts.scanFrom(r, i, false)
		if len(ops) == 0 {
			return
		}
		r.runCode(ops[0].idx, "", "pnpm exec runs the program of the project's node_modules/.bin", CodeBin, ops[0].Value, ops[0].Static)
	}}
	return &spec{Options: pnpmOpts(), do: opts.do, anySub: true,
		env: []string{"npm_config_*", "NPM_CONFIG_*", "PNPM_*", "NODE_OPTIONS", "NODE_PATH"},
		sub: map[string]*spec{"run": scripts, "run-script": scripts, "test": scripts, "t": scripts, "tst": scripts, "start": scripts, "exec": exec,
			"--version": {}, "-v": {}, "help": {}, "ls": {}, "list": {}, "why": {}, "outdated": {}, "root": {}, "bin": {}}}
}

const pnpmLong = "dir= filter= recursive r silent s workspace-root w if-present parallel stream reporter= aggregate-output resume-from= report-summary sequential no-bail reverse shell-emulator script-shell= node-options= color no-color loglevel= help h version v"

func newYarnSpec() *spec {
	yarnOpts := func() Options {
		return Options{Long: "cwd= silent s verbose if-present top-level inspect inspect-brk require= binaries-only help h version v offline frozen-lockfile no-progress", StrictLong: true, Permute: true, Short: "shv"}
	}
	opts := &spec{Options: yarnOpts(),
		do: acts("", "cwd", act{chdir, ""}, "", "inspect", act{Unknown, "opens a debugger port through which another program can run code in node"},
			"", "inspect-brk", act{Unknown, "opens a debugger port through which another program can run code in node"})}
	scripts := npmRunSpec(opts)
	return &spec{Options: yarnOpts(), do: opts.do, anySub: true,
		env: []string{"npm_config_*", "NPM_CONFIG_*", "YARN_*", "NODE_OPTIONS", "NODE_PATH"},
		sub: map[string]*spec{"run": scripts, "test": scripts, "start": scripts, "--version": {}, "-v": {}, "help": {}, "list": {}, "why": {}, "info": {}, "bin": {}}}
}

// cargoLong are the options cargo's build, test, run, check and clippy
// take; cargoGlobal cargo's own, before the subcommand too.
const (
	cargoGlobal = "verbose v quiet q color= locked offline frozen config= Z= help h version V list explain= C="
	cargoLong   = cargoGlobal + " package= p= workspace all exclude= lib bin= bins example= examples test= tests bench= benches all-targets features= F= all-features no-default-features release r profile= target= target-dir= artifact-dir= out-dir= jobs= j= keep-going message-format= timings[=] ignore-rust-version manifest-path= lockfile-path= future-incompat-report unit-graph build-plan doc no-run no-fail-fast no-capture fix allow-dirty allow-staged allow-no-vcs broken-code no-deps"
)

func newCargoSpec() *spec {
	do := acts("", "config", ex("sets cargo configuration for this run, which can name programs cargo runs (build.rustc-wrapper, target runners)"),
		"Z", "", act{Unknown, "turns on an unstable cargo feature"},
		"", "target-dir", wr("writes the build into the directory"),
		"", "artifact-dir", wr("copies the build's products into the directory"),
		"", "out-dir", wr("copies the build's products into the directory"),
		"", "lockfile-path", wr("reads and writes the lock file"),
		"C", "", act{chdir, ""})
	build := func(what string) *spec {
		return &spec{Options: Options{Long: cargoLong, Short: "vqp:F:rj:Z:C:", AllShort: true, StrictLong: true, Permute: true}, do: do,
			operands: func(r *result, ops []opnd) {
				// Words after -- go to the program or the tests; before
				// it they are test names.
				if m, ok := r.vals["manifest-path"]; ok {
					r.runCode(m.idx, "--manifest-path", "cargo builds the package of the manifest, running its build scripts", CodeFile, m.Value, m.Static)
					return
				}
				why := "cargo " + what + " runs the package's build scripts"
				if what == "test" || what == "run" || what == "bench" {
					why += " and the programs it builds"
				}
				r.implies(0, CodeUp, "Cargo.toml", why)
			}}
	}
	return &spec{
		Options: Options{Long: cargoGlobal, Short: "vqZ:C:hV", AllShort: true, StrictLong: true}, do: do, anySub: true,
		env: []string{"CARGO_*", "RUSTC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTDOC", "RUSTFLAGS", "RUSTDOCFLAGS", "RUSTUP_*", "CC", "CXX", "AR", "LD"},
		sub: map[string]*spec{"build": build("build"), "b": build("build"), "test": build("test"), "t": build("test"),
			"run": build("run"), "r": build("run"), "check": build("check"), "c": build("check"), "clippy": build("clippy"),
			"bench": build("bench"), "doc": build("doc"), "d": build("doc"),
			"--version": {}, "version": {}, "help": {}, "metadata": {}, "tree": {}, "locate-project": {}, "pkgid": {}},
	}
}

// pytestLong are pytest's own options and the common plugins' (cov,
// xdist, timeout, asyncio, django, html); an option a plugin adds
// that is not listed is a flag (its value, if any, is read as a test
// path, which only narrows what the rule pre-approves).
const pytestLong = "help version verbose quiet exitfirst maxfail= strict-markers strict-config strict markers fixtures funcargs fixtures-per-test collect-only co " +
	"setup-only setup-show setup-plan tb= show-capture= full-trace color= code-highlight= capture= runxfail lf last-failed ff failed-first nf new-first sw stepwise " +
	"sw-skip stepwise-skip cache-show[=] cache-clear lfnf= last-failed-no-failures= durations= durations-min= disable-warnings disable-pytest-warnings " +
	"pdb pdbcls= trace import-mode= basetemp= rootdir= confcutdir= noconftest keep-duplicates collect-in-virtualenv doctest-modules doctest-glob= " +
	"doctest-report= doctest-continue-on-collection-errors ignore= ignore-glob= deselect= pyargs continue-on-collection-errors junitxml= junit-xml= junit-prefix= " +
	"result-log= resultlog= report-log= override-ini= config-file= inifile= debug[=] trace-config log-level= log-format= log-date-format= log-cli-level= " +
	"log-file= log-file-level= log-auto-indent= log-disable= show-fixtures-per-test no-header no-summary assert= deselect-glob= " +
	"cov[=] cov-report= cov-config= cov-append cov-branch cov-fail-under= cov-context= no-cov no-cov-on-fail numprocesses= maxprocesses= dist= " +
	"max-worker-restart= looponfail timeout= timeout-method= asyncio-mode= ds= dc= reuse-db create-db nomigrations html= self-contained-html " +
	"benchmark-skip benchmark-only benchmark-disable reruns= reruns-delay= randomly-seed= p= pastebin= runslow run-slow integration"

func newPytestSpec() *spec {
	return &spec{
		Options: Options{Short: "k:m:xsvqr:lhp:c:o:n:W:V", Long: pytestLong, Permute: true},
		do: acts("", "basetemp", act{Delete, "empties the directory and keeps its temporary files there"},
			"", "junitxml", wr("writes the test report to the file"), "", "junit-xml", wr("writes the test report to the file"),
			"", "result-log", wr("writes the test log to the file"), "", "resultlog", wr("writes the test log to the file"),
			"", "report-log", wr("writes the test log to the file"), "", "log-file", wr("writes the log to the file"),
			"", "html", wr("writes the test report to the file"),
			"c", "config-file", rd("reads pytest's configuration from the file"), "", "inifile", rd("reads pytest's configuration from the file"),
			"", "cov-config", rd("reads coverage's configuration from the file"),
			"", "pastebin", act{Unknown, "sends test output to bpaste.net"}),
		env: []string{"PYTEST_*", "PYTHON*", "COVERAGE_*"},
		operands: func(r *result, ops []opnd) {
			for _, v := range r.all["cov-report"] {
				if _, p, ok := strings.Cut(v.Value, ":"); ok && p != "" {
					r.file(Write, opnd{Arg{Value: p, Static: v.Static}, v.idx}, "--cov-report", "writes the coverage report there")
				}
			}
			if _, ok := r.flags["debug"]; ok {
				d := opnd{Arg{Value: "pytestdebug.log", Static: true}, 0}
				if v, ok := r.vals["debug"]; ok {
					d = v
				}
				r.file(Write, d, "--debug", "writes its debug log to the file")
			}
			if r.hasAny("pyargs") || len(ops) == 0 {
				r.implies(0, CodeFile, ".", "pytest runs the project's tests and conftest.py files")
				return
			}
			for _, o := range ops {
				p := o.Value
				if k := strings.Index(p, "::"); k >= 0 {
					p = p[:k]
				}
				r.add(Effect{Kind: Code, Word: o.idx, Code: CodeFile, Path: p, Dynamic: !o.Static, Why: "pytest runs the tests in the path and the conftest.py files above them"})
			}
		},
	}
}

func newMypySpec() *spec {
	return &spec{
		Options: Options{Long: "install-types non-interactive python-executable= config-file= cache-dir= junit-xml= html-report= txt-report= xml-report= linecount-report= any-exprs-report= lineprecision-report= cobertura-xml-report= linecoverage-report= version help", Short: "hVvmpc:", Permute: true},
		do: acts("", "install-types", ex("installs type stub packages with pip"),
			"", "python-executable", ex("runs the Python interpreter named to find its packages"),
			"", "config-file", rd("reads mypy's configuration from the file"),
			"", "cache-dir", wr("writes its cache into the directory"),
			"", "junit-xml", wr("writes the report to the file"),
			"", "html-report", wr("writes the report into the directory"), "", "txt-report", wr("writes the report into the directory"),
			"", "xml-report", wr("writes the report into the directory"), "", "linecount-report", wr("writes the report into the directory"),
			"", "any-exprs-report", wr("writes the report into the directory"), "", "lineprecision-report", wr("writes the report into the directory"),
			"", "cobertura-xml-report", wr("writes the report into the directory"), "", "linecoverage-report", wr("writes the report into the directory")),
		env: []string{"MYPY*", "PYTHON*"},
	}
}

// goCode is the operands of go build, test, vet and run: the module the
// command builds (and, for test and run, runs) is the project's, found
// from the working directory up; a package@version is fetched from
// elsewhere.
func goCode(verb string) func(r *result, ops []opnd) {
	return func(r *result, ops []opnd) {
		if verb == "run" && len(ops) > 1 {
			// The program's own arguments follow the package (or its .go
			// files).
			k := 1
			for k < len(ops) && strings.HasSuffix(ops[k-1].Value, ".go") && strings.HasSuffix(ops[k].Value, ".go") {
				k++
			}
			ops = ops[:k]
		}
		for _, o := range ops {
			if !o.Static {
				continue
			}
			v := o.Value
			switch {
			case strings.Contains(v, "@"):
				r.exec(o.idx, "", fmt.Sprintf("go %s fetches %s and builds it", verb, v))
			case strings.HasSuffix(v, ".go") || v == "." || v == ".." || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "/"):
				// A package directory (./cmd/x, ../lib/...) or a file:
				// code of its own, wherever it lies.
				dir := strings.TrimSuffix(strings.TrimSuffix(v, "..."), "/")
				if dir == "" {
					dir = "."
				}
				r.add(Effect{Kind: Code, Word: o.idx, Code: CodeFile, Path: dir, Why: "go " + verb + " builds the package"})
			}
		}
		// An alternate go.mod and an overlay name the code go builds
		// (replace directives, files put in place of the package's).
		for _, f := range []string{"modfile", "overlay"} {
			if v, ok := r.vals[f]; ok {
				r.add(Effect{Kind: Code, Word: v.idx, Option: "-" + f, Code: CodeFile, Path: v.Value, Dynamic: !v.Static, Why: "go " + verb + " builds the code the file names"})
			}
		}
		why := "go " + verb + " compiles the module's packages"
		switch verb {
		case "test":
			why = "go test builds and runs the module's tests"
		case "run":
			why = "go run builds and runs the module's program"
		}
		r.implies(0, CodeUp, "go.mod", why)
	}
}

// makeOperands are make's operands: targets, and VAR=value, which
// overrides a variable of the Makefile and so the commands its recipes
// run (code given on the command line); and the Makefile itself, which
// is the code make runs.
func makeOperands(r *result, ops []opnd) {
	for _, o := range ops {
		name, _, ok := strings.Cut(o.Value, "=")
		switch {
		case !ok || strings.ContainsAny(name, " /"):
		case name == "SHELL" || name == "MAKESHELL" || name == "MAKEFILES":
			// The program every recipe line runs in, or Makefiles of
			// its own choosing: not code on the command line.
			r.exec(o.idx, name, "overrides a variable of the Makefile that names the shell its recipes run in or the Makefiles it reads")
		default:
			r.runCode(o.idx, name, "overrides a variable of the Makefile, which can change the commands its recipes run", CodeInline, o.Value, o.Static)
		}
	}
	// An include directory is where make looks for the Makefiles the
	// project's includes and does not hold.
	for _, name := range []string{"I", "include-dir"} {
		for _, d := range r.all[name] {
			r.add(Effect{Kind: Code, Word: d.idx, Option: "-I", Code: CodeFile, Path: d.Value, Dynamic: !d.Static, Why: "make reads included Makefiles from the directory"})
		}
	}
	var files []opnd
	for _, name := range []string{"f", "file", "makefile"} {
		files = append(files, r.all[name]...)
	}
	if len(files) == 0 {
		r.implies(0, CodeFirst, "GNUmakefile makefile Makefile", "make runs the Makefile's recipes")
		return
	}
	for _, f := range files {
		if f.Value == "-" {
			r.exec(f.idx, "-f", "make reads the Makefile from its input")
			continue
		}
		r.add(Effect{Kind: Code, Word: f.idx, Option: "-f", Code: CodeFile, Path: f.Value, Dynamic: !f.Static, Why: "make runs the Makefile's recipes"})
	}
}

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

func hasPrefixAny(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func hasSuffixAny(s string, suffixes []string) bool {
	for _, p := range suffixes {
		if strings.HasSuffix(s, p) {
			return true
		}
	}
	return false
}
